"""The health check's SQL, written out: each statement here has no ORM form (see each docstring)."""

from __future__ import annotations

from django.db import connection


def select_one() -> int:
    """``SELECT 1``: the database answers a query. SQL because the check must read no table (the ORM
    only queries a model's): it says the server answers, whatever state the schema is in."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone()[0]


def write_one_row_back() -> int:
    """Write the first row of ``django_migrations`` back as it is (inside the caller's transaction,
    which rolls it back); returns the rows written (0 only when the table is empty). A real write,
    so a database that refuses writes raises. SQL because the table has no model of the app (the
    one Django's migration recorder builds is no public API), and it is the one table every
    migrated database holds rows of."""
    with connection.cursor() as cursor:
        cursor.execute("UPDATE django_migrations SET app = app WHERE id = (SELECT MIN(id) FROM django_migrations)")
        return cursor.rowcount
