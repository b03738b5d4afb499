"""The transfer package's SQL, written out where the ORM has no statement for it or spends more than
the database does (each function says which). Each has a twin in the ORM, in
tests/transfer/test_queries.py, that gives the same rows."""

from __future__ import annotations

from django.db import connection


def insert_rows(model, fields: tuple[str, ...], rows: list[tuple], *, returning: bool = False) -> list[int]:
    """``bulk_create`` of rows of values ready for the database (ids, integers, prepared
    timestamps) without a model instance per row (no signals, as with ``bulk_create``). With
    ``returning`` the new ids, in the order of ``rows`` (``RETURNING``, on which ``bulk_create``
    relies as well).

    On PostgreSQL one statement whatever the number of rows: the columns as arrays, ``INSERT ...
    SELECT * FROM UNNEST(...)`` as ``bulk_create`` does since Django 5.2 (a multi-row VALUES of
    thousands of literals spent most of its time in the server's parser: DUC 2006's 13,000
    contributor parts took 0.34 s in 26 statements). Elsewhere a few multi-row INSERTs, each
    within every backend's limit on parameters."""
    if not rows:
        return []
    quote = connection.ops.quote_name
    table, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    columns = [model._meta.get_field(name) for name in fields]
    names = ", ".join(quote(field.column) for field in columns)
    tail = f" RETURNING {pk}" if returning else ""
    ids: list[int] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in columns)
            cursor.execute(
                f"INSERT INTO {table} ({names}) SELECT * FROM UNNEST({arrays}){tail}",
                [list(column) for column in zip(*rows, strict=True)],
            )
            return [pk for (pk,) in cursor.fetchall()] if returning else []
        row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        per_statement = 900 // len(fields)
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            cursor.execute(
                f"INSERT INTO {table} ({names}) VALUES {', '.join([row] * len(chunk))}{tail}",
                [value for values in chunk for value in values],
            )
            if returning:
                ids += [pk for (pk,) in cursor.fetchall()]
    return ids


def tables_with_rows(skipped: set[str]) -> list[str]:
    """The database's tables, but ``skipped``, that hold a row, by name. SQL because it reads every
    table the database has by its name, those no model describes included (a newer version's, an
    older one's left behind, Django's own): the ORM reads only the tables of this code's models."""
    with connection.cursor() as cursor:
        names = [t for t in connection.introspection.table_names(cursor) if t not in skipped]
        held = []
        for name in sorted(names):
            cursor.execute(f"SELECT 1 FROM {connection.ops.quote_name(name)} LIMIT 1")
            if cursor.fetchone():
                held.append(name)
    return held
