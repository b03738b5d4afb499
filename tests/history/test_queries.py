"""The audit history's SQL (``annotation.history.queries``) against its ORM twin: recording a change
and ending its user's redo stack on the same document, in one statement on PostgreSQL."""

import pytest
from django.db import transaction

from annotation.history import queries
from annotation.history.models import Change

UNDONE, APPLIED, DISCARDED = Change.UndoState.UNDONE, Change.UndoState.APPLIED, Change.UndoState.DISCARDED
FIELDS = ("pyramid_id", "annotation_id", "user_id", "action", "summary", "before", "after", "revision", "undo_state")


def _rows() -> list[tuple]:
    return sorted(Change.objects.values_list(*FIELDS, "reverts_id"), key=repr)


def _made(document, user, state, **fields):
    values = {"action": "a", "summary": "s", "before": {"x": 1}, "after": {"x": 2}, "revision": 1, **fields}
    return Change.objects.create(**document, user=user, undo_state=state, **values)


@pytest.fixture
def history(world):
    """Changes of two users (and of nobody) on the annotation and the pyramid, in every undo state."""
    alice, bob = world.users["alice"], world.users["bob"]
    made = [
        _made(document, user, state)
        for document in ({"annotation": world.annotation}, {"pyramid": world.pyramid})
        for user, state in ((alice, UNDONE), (alice, UNDONE), (alice, APPLIED), (alice, DISCARDED), (bob, UNDONE))
    ]
    own = {"annotation": world.annotation}
    _made(own, None, UNDONE, before={}, after={})
    _made(
        own,
        alice,
        Change.UndoState.NONE,
        action="undo",
        summary="Undo: s",
        before={},
        after={},
        revision=2,
        reverts=made[0],
    )
    return world


def _new(target, user, undo_state, reverts=None):
    return Change(
        **target,
        user=user,
        action="add_match",
        summary="Matched",
        before={"m": [1, [2, 3]]},
        after={"m": []},
        revision=7,
        undo_state=undo_state,
        reverts=reverts,
    )


@pytest.mark.parametrize("discard", [True, False])
def test_a_recorded_change_and_its_redo_stack_end_are_the_orms(history, discard):
    for name in ("annotation", "pyramid"):
        target = {name: getattr(history, name)}
        for user in (history.users["alice"], history.users["bob"], history.users["carol"], None):
            state, reverts = (APPLIED, None) if discard else (Change.UndoState.NONE, Change.objects.last())
            with transaction.atomic():
                made = queries.record(_new(target, user, state, reverts), discard_undone=discard)
                sql_rows, sql_new = _rows(), Change.objects.filter(pk=made.pk).values_list(*FIELDS).get()
                transaction.set_rollback(True)
            with transaction.atomic():  # the ORM's two statements, as history.changes wrote them before
                if discard:
                    Change.objects.filter(**target, user=user, undo_state=UNDONE).update(undo_state=DISCARDED)
                orm = _new(target, user, state, reverts)
                orm.save()
                orm_rows, orm_new = _rows(), Change.objects.filter(pk=orm.pk).values_list(*FIELDS).get()
                transaction.set_rollback(True)
            assert sql_rows == orm_rows, (name, user, discard)
            assert sql_new == orm_new, (name, user, discard)  # the id given back is the new row's
            if discard and user is not None and user.username == "alice":  # the fixture gives her undone changes
                assert sum(r[8] == DISCARDED for r in sql_rows) > Change.objects.filter(undo_state=DISCARDED).count()
