"""The audit history's SQL, written out where the ORM spends a statement more than needed (each
function says why). Each has a twin in the ORM, in tests/history/test_queries.py, that writes the
same rows."""

from __future__ import annotations

from django.db import connection

from annotation.history.models import Change


def undone_by_the_same_user(change: Change):
    """The changes a new ``change`` ends the redo stack of: its user's undone changes of the same
    document (the ORM's statement, which ``record`` folds into its insert on PostgreSQL)."""
    document = {"pyramid_id": change.pyramid_id} if change.pyramid_id else {"annotation_id": change.annotation_id}
    return Change.objects.filter(**document, user_id=change.user_id, undo_state=Change.UndoState.UNDONE)


def record(change: Change, *, discard_undone: bool) -> Change:
    """Insert ``change`` (not saved yet) and, with ``discard_undone``, mark discarded the changes
    ``undone_by_the_same_user`` gives, in one statement on PostgreSQL (the UPDATE in a WITH, which
    sees the rows as they were before the insert, so never the new one); the ORM's two on SQLite,
    which has no data-modifying WITH. Every editing action records one change: this is one round
    trip fewer on each."""
    if connection.vendor != "postgresql":
        if discard_undone:
            undone_by_the_same_user(change).update(undo_state=Change.UndoState.DISCARDED)
        change.save()
        return change
    quote = connection.ops.quote_name
    table = quote(Change._meta.db_table)
    fields = [f for f in Change._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(quote(f.column) for f in fields)
    values = [f.get_db_prep_save(f.pre_save(change, True), connection) for f in fields]
    insert = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote('id')}"
    params = values
    if discard_undone:
        document = "pyramid_id" if change.pyramid_id else "annotation_id"
        user = f"{quote('user_id')} IS NULL" if change.user_id is None else f"{quote('user_id')} = %s"
        discard = (
            f"WITH discarded AS (UPDATE {table} SET {quote('undo_state')} = %s "
            f"WHERE {quote(document)} = %s AND {user} AND {quote('undo_state')} = %s) "
        )
        params = [
            Change.UndoState.DISCARDED.value,
            change.pyramid_id or change.annotation_id,
            *([] if change.user_id is None else [change.user_id]),
            Change.UndoState.UNDONE.value,
            *values,
        ]
        insert = discard + insert
    with connection.cursor() as cursor:
        cursor.execute(insert, params)
        change.pk = cursor.fetchone()[0]
    return change
