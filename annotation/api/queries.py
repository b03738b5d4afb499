"""The API plumbing's SQL, written out: the taking of an ``Idempotency-Key``, which the ORM cannot
say in one statement (nor set PostgreSQL's lock timeout for it at all). Its twin test is in
tests/api/test_queries.py."""

from __future__ import annotations

from django.db import connection
from django.utils import timezone

from annotation.api.models import IdempotentRequest

_COLUMNS = ("user_id", "endpoint", "key", "body_hash", "headers", "content", "created_at")


def _take_statement(waiting: bool) -> str:
    """The INSERT of ``take_key``; ``waiting`` (PostgreSQL): with ``lock_timeout`` set for its
    wait and given back once the row is in. ``before`` and ``waiting`` are materialized CTEs the
    inserted row is selected from, so the setting is read, then set, before the row's conflict is
    waited for; RETURNING, evaluated once the row is in, sets it back (no row: the key was taken, or
    the wait timed out and the transaction is aborted; either way nothing more is written in it)."""
    quote = connection.ops.quote_name
    table = quote(IdempotentRequest._meta.db_table)
    columns = ", ".join(quote(c) for c in _COLUMNS)
    conflict = f"ON CONFLICT ({quote('user_id')}, {quote('endpoint')}, {quote('key')}) DO NOTHING"
    values = ", ".join(["%s"] * len(_COLUMNS))
    if not waiting:
        return f"INSERT INTO {table} ({columns}) VALUES ({values}) {conflict} RETURNING {quote('id')}"
    return (
        "WITH before AS MATERIALIZED (SELECT current_setting('lock_timeout') AS setting), "
        "waiting AS MATERIALIZED (SELECT set_config('lock_timeout', %s, true) AS setting FROM before) "
        f"INSERT INTO {table} ({columns}) SELECT {values} FROM waiting {conflict} "
        f"RETURNING {quote('id')}, set_config('lock_timeout', (SELECT setting FROM before), true)"
    )


def take_key(user_id: int, endpoint: str, key: str, body_hash: str, *, wait_seconds: float) -> bool:
    """Insert the row of ``key`` (no answer yet) unless the user's endpoint already has one; whether
    it was inserted. On PostgreSQL a row another transaction is inserting is waited for (its commit
    is a conflict, its rollback lets this one in), at most ``wait_seconds`` (``lock_timeout``, for
    this statement only: then ``OperationalError``, lock not available). One statement: ``create``
    raises on the conflict (a savepoint around it: two more statements on every POST with a key),
    ``bulk_create(ignore_conflicts=True)`` does not tell whether the row was inserted, and the lock
    timeout, which no ORM statement sets, would take two statements of its own to set and give back."""
    field = IdempotentRequest._meta.get_field
    params = [
        user_id,
        endpoint,
        key,
        body_hash,
        field("headers").get_db_prep_save({}, connection),
        field("content").get_db_prep_save(b"", connection),
        field("created_at").get_db_prep_save(timezone.now(), connection),
    ]
    waiting = connection.vendor == "postgresql"
    if waiting:
        params.insert(0, f"{int(wait_seconds * 1000)}ms")
    with connection.cursor() as cursor:
        cursor.execute(_take_statement(waiting), params)
        return cursor.fetchone() is not None
