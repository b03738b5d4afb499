"""Whether the database takes writes, for the health check.

A database that answers reads but refuses writes (a SQLite file made read-only, a full disk, a
PostgreSQL server turned read-only) loses every save while ``SELECT 1`` still answers: the health
check must say so. The probe writes one row back as it is inside a transaction that is rolled
back, so it changes nothing. Its result is kept for :data:`PROBE_SECONDS` per process, so a
client polling ``/healthz`` cannot turn it into a stream of writes.
"""

from __future__ import annotations

import threading
import time

from django.db import DatabaseError, transaction

from annotation.jobs import queries

PROBE_SECONDS = 5.0

_lock = threading.Lock()
_last: tuple[float, str | None] | None = None  # (when, the reason writes fail or None)


def write_failure() -> str | None:
    """Why the database refuses writes (None: it takes them), probed at most every PROBE_SECONDS."""
    global _last
    with _lock:
        if _last is None or time.monotonic() - _last[0] >= PROBE_SECONDS:
            _last = (time.monotonic(), _probe())
        return _last[1]


def check_reads() -> None:
    """Raises when the database does not answer a query (``queries.select_one``)."""
    queries.select_one()


def _probe() -> str | None:
    try:
        with transaction.atomic():
            queries.write_one_row_back()  # a real write of one row (the same value back), never committed
            transaction.set_rollback(True)
    except DatabaseError as error:
        return f"the database refuses writes: {error}"
    return None
