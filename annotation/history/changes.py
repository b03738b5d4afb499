"""Optimistic concurrency, audit history and undo/redo for pyramids and peer annotations.

A pyramid (or a peer annotation) is edited as one document: every action locks its row, checks
the revision the client last saw (``expected_revision``: a stale one raises ``Conflict`` with
the changes made since), mutates, and records a ``Change`` with the state of what it touched
before and after. Undo and redo apply those states back, refusing when the touched objects have
changed since (someone else's later work is never silently lost).

This layer is below the documents it records: each kind of document is registered here by the
package that owns it (:func:`register`: ``pyramids.document_states``, ``peers.document_states``,
with the reading and writing of its state), and the revisions an action moves are bumped by the
hook the score events register (:func:`bump_revisions_with`), so nothing here imports a concept
above it. ``annotation.apps`` imports the registering modules when the app is ready.
"""

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction

from annotation.history import queries
from annotation.history.models import Change


@dataclass(frozen=True)
class DocumentKind:
    """How the history reads and writes one kind of document. ``state(document, keys)``: the
    state of what the keys name (None: the whole document); ``apply(document, state)``: make it
    so; ``keys(change)``: what a recorded change touched, to compare with the document now."""

    model: type[models.Model]
    state: Callable[[Any, Iterable | None], Any]
    apply: Callable[[Any, Any], None]
    keys: Callable[[Change], Iterable | None]


KINDS: dict[str, DocumentKind] = {}
# (kind, document) -> a context manager around an action's writes that moves the revisions once.
_revision_hook: list[Callable[[str, Any], AbstractContextManager]] = []


def register(kind: str, document: DocumentKind) -> None:
    """A kind of document ``Change`` records (its name is ``Change``'s field that points at it)."""
    KINDS[kind] = document


def bump_revisions_with(hook: Callable[[str, Any], AbstractContextManager]) -> None:
    """The one hook that moves a document's revisions around an action (``peers.score_events``)."""
    _revision_hook[:] = [hook]


def _kind(kind: str) -> DocumentKind:
    try:
        return KINDS[kind]
    except KeyError:
        raise LookupError(
            f"no document kind {kind!r} is registered with the history (known: {sorted(KINDS)}); "
            "its package registers it when the app is ready (annotation.apps)"
        ) from None


class Conflict(Exception):
    """The client's revision is stale: someone changed the document since it last read it."""

    def __init__(self, current_revision: int, changes: list[Change]):
        self.current_revision = current_revision
        self.changes = changes
        super().__init__(
            f"changed since you last loaded it (now at revision {current_revision}): "
            + "; ".join(c.summary for c in changes[:5])
        )


class Gone(Exception):
    """What an action works on was deleted meanwhile (by a concurrent request)."""


def reread(obj, *related: str):
    """``obj`` as it is now, with the rows named in ``related`` (``select_related``: one query).
    Actions call this under the document's lock for everything they depend on, so a concurrent
    change committed while they waited for the lock is seen (never a count or an object read
    before it). Raises ``Gone`` if it was deleted meanwhile."""
    fresh = type(obj).objects.select_related(*related).filter(pk=obj.pk).first()
    if fresh is None:
        raise Gone(f"This {type(obj)._meta.verbose_name} no longer exists: it was deleted meanwhile.")
    return fresh


@dataclass
class Outcome:
    """What an action returned, the document's revision after it, the change recorded (None: none),
    and the document as the action held it locked (its concept may keep on it what it last read)."""

    value: Any
    revision: int
    change: Change | None
    document: Any = None


# --- Actions -------------------------------------------------------------------------------


def _lock(model, pk: int, expected_revision: int | None, *, related: tuple[str, ...] = ()):
    """Lock the document row for the transaction and check the client's revision. ``related``:
    rows read with it (not locked), which the action reads anyway."""
    obj = model.objects.select_for_update(of=("self",)).select_related(*related).get(pk=pk)
    if expected_revision is not None and expected_revision != obj.revision:
        target = {_field_of(model): obj}
        since = list(Change.objects.filter(**target, revision__gt=expected_revision).order_by("id"))
        raise Conflict(obj.revision, since)
    return obj


def _field_of(model) -> str:
    return next(kind for kind, document in KINDS.items() if document.model is model)


def _revisions_bumped_once(kind: str, document) -> AbstractContextManager:
    """The rows an action writes bump the document's (and topic's) revision once, when it ends
    (the registered hook, ``score_events.revisions_bumped_once``); ``document.revision`` is then
    the new one (the row is locked, so nobody else moved it)."""
    if not _revision_hook:
        raise LookupError(
            "no revision hook is registered with the history: annotation.peers.score_events "
            "registers it when the app is ready (annotation.apps)"
        )
    return _revision_hook[0](kind, document)


def _record(
    target: dict, user, action: str, summary: str, before, after, *, undo_state=Change.UndoState.APPLIED, reverts=None
) -> Change:
    document = target.get("pyramid") or target.get("annotation")
    change = Change(
        **target,
        user=user if user and user.is_authenticated else None,
        action=action,
        summary=summary[:500],
        before=before,
        after=after,
        revision=document.revision,
        undo_state=undo_state,
        reverts=reverts,
    )
    # A new action ends the redo stack of this user on this document (with the insert: one statement).
    return queries.record(change, discard_undone=undo_state == Change.UndoState.APPLIED and reverts is None)


def _unchanged(document) -> None:
    """An action that changed nothing (e.g. a PATCH with the current values) records no change and
    keeps the revision, so nobody else's next write gets a spurious 409."""
    return None


def pyramid_action(
    pyramid_id: int,
    user,
    *,
    action: str,
    uids: Callable[[Any], Iterable[int]],
    mutate: Callable[[Any], Any],
    summary: Callable[[Any], str],
    expected_revision: int | None = None,
) -> Outcome:
    """Run ``mutate`` on a locked pyramid and record the states of the SCUs ``uids`` names."""
    kind = _kind("pyramid")
    with transaction.atomic():
        pyramid = _lock(kind.model, pyramid_id, expected_revision)
        touched = set(uids(pyramid))
        before = kind.state(pyramid, touched)
        with _revisions_bumped_once("pyramid", pyramid):
            value = mutate(pyramid)
        after = kind.state(pyramid, touched)
        change = (
            _record({"pyramid": pyramid}, user, action, summary(value), before, after)
            if after != before
            else _unchanged(pyramid)
        )
        return Outcome(value, pyramid.revision, change, pyramid)


def annotation_action(
    annotation_id: int,
    user,
    *,
    action: str,
    mutate: Callable[[Any], Any],
    summary: Callable[[Any], str],
    expected_revision: int | None = None,
) -> Outcome:
    kind = _kind("annotation")
    with transaction.atomic():
        annotation = _lock(
            kind.model, annotation_id, expected_revision, related=("peer",)
        )  # spans are checked against its text
        before = kind.state(annotation, None)
        with _revisions_bumped_once("annotation", annotation):
            value = mutate(annotation)
        after = kind.state(annotation, None)
        change = (
            _record({"annotation": annotation}, user, action, summary(value), before, after)
            if after != before
            else _unchanged(annotation)
        )
        return Outcome(value, annotation.revision, change, annotation)


# --- Undo / redo ---------------------------------------------------------------------------


def _revert(target_kind: str, document_id: int, user, *, redo: bool, expected_revision: int | None) -> Outcome:
    kind = _kind(target_kind)
    with transaction.atomic():
        document = _lock(kind.model, document_id, expected_revision)
        target = {target_kind: document}
        wanted_state = Change.UndoState.UNDONE if redo else Change.UndoState.APPLIED
        candidates = Change.objects.filter(**target, user=user, undo_state=wanted_state, reverts__isnull=True)
        if redo:
            # The most recently undone first: order by the undo record that undid it.
            undo_records = (
                Change.objects.filter(**target, user=user, action="undo")
                .order_by("-id")
                .values_list("reverts_id", flat=True)
            )
            undone = set(candidates.values_list("id", flat=True))
            change = next((Change.objects.get(pk=pk) for pk in undo_records if pk in undone), None)
        else:
            change = candidates.order_by("-id").first()
        if change is None:
            raise ValidationError({"history": "Nothing to redo." if redo else "Nothing to undo."})
        source, destination = (change.before, change.after) if redo else (change.after, change.before)
        if kind.state(document, kind.keys(change)) != source:
            raise ValidationError(
                {
                    "history": f"Cannot {'redo' if redo else 'undo'} “{change.summary}”: "
                    "what it touched has changed since."
                }
            )
        with _revisions_bumped_once(target_kind, document):
            kind.apply(document, destination)
        change.undo_state = Change.UndoState.APPLIED if redo else Change.UndoState.UNDONE
        change.save(update_fields=["undo_state"])
        verb = "Redo" if redo else "Undo"
        record = _record(
            target,
            user,
            "redo" if redo else "undo",
            f"{verb}: {change.summary}",
            source,
            destination,
            undo_state=Change.UndoState.NONE,
            reverts=change,
        )
        return Outcome(change, document.revision, record, document)


def undo(target_kind: str, document_id: int, user, expected_revision: int | None = None) -> Outcome:
    return _revert(target_kind, document_id, user, redo=False, expected_revision=expected_revision)


def redo(target_kind: str, document_id: int, user, expected_revision: int | None = None) -> Outcome:
    return _revert(target_kind, document_id, user, redo=True, expected_revision=expected_revision)
