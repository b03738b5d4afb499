"""The API plumbing's SQL, written out: a PostgreSQL setting, which has no ORM form."""

from __future__ import annotations

from django.db import connection


def set_lock_timeout(value: str) -> str:
    """PostgreSQL only: set ``lock_timeout`` (``"10000ms"``) for the rest of the current transaction
    (``set_config(..., true)``: it ends with the transaction, so a pooled connection never keeps
    it); returns the value in force before, to set it back. One round trip for both. SQL because
    a server setting is no model's row: the ORM has no way to read or set it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('lock_timeout'), set_config('lock_timeout', %s, true)", [value])
        return cursor.fetchone()[0]
