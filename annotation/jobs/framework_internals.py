"""The private parts of Django (and of django-csp) the app relies on, each behind one function.

Each is used on a hot path where the public API costs a round trip or a query's composing per
request (each function says which). None is promised to stay as it is: a test of each
(tests/jobs/test_framework_internals.py) fails when an upgrade changes what the function relies
on, so the upgrade that breaks one says so instead of a page going slow or wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from django.db import connection, transaction
from django.db.models import Model, QuerySet
from django.db.models.sql import Query

Batch = TypeVar("Batch")


def redis_client(backend, key: str | None = None):
    """The redis-py client Django's ``RedisCache`` ``backend`` uses for writing ``key`` (None: any
    key; the client of the key's server when several are configured): for pipelines of several
    commands in one round trip (SET NX of a burst of keys; INCR with its expiry set atomically),
    which the cache API (one round trip per call) has no form of. Relies on ``RedisCache._cache``
    (its ``RedisCacheClient``) and its ``get_client(key, write=...)``."""
    return backend._cache.get_client(key, write=True)


def transaction_batch(name: str, make: Callable[[], Batch]) -> Batch:
    """The object ``make()`` built for the current transaction (of the default database) under
    ``name``, whose ``flush`` runs once when the transaction commits: the same object for every call
    until then, a new one once the transaction is over or the savepoint that made it is rolled back
    (with its callback, and with the object).

    Django has no rollback hook and no public way to ask whether a callback is still registered:
    the object is kept on the connection and found again only while its callback is in the
    connection's ``run_on_commit`` list (entries ``(savepoint ids, callback, robust)``)."""
    connection = transaction.get_connection()
    batch = getattr(connection, name, None)
    if batch is None or not any(entry[1] == batch.flush for entry in connection.run_on_commit):
        batch = make()
        setattr(connection, name, batch)
        transaction.on_commit(batch.flush)
    return batch


def queryset_of(model: type[Model], query: Query) -> QuerySet:
    """A queryset of ``model`` running a copy of ``query`` (a ``Query`` composed once and kept, never
    run itself), which it may filter further without changing the kept one: composing the access
    rule's nested subqueries anew took a fifth of the app's CPU of every write. Relies on
    ``QuerySet(model=..., query=...)`` and ``Query.chain()`` (the copy Django makes for every
    ``filter``)."""
    return QuerySet(model=model, query=query.chain())


# Stand-ins for the ids a kept statement is composed with (``kept_rows``): no id is negative.
_STAND_IN = -(2**31) + 104729


def kept_rows(build: Callable[..., QuerySet], **ids: int) -> list[tuple]:
    """The rows of ``build(**ids)`` (a ``values_list`` queryset whose only variables are the integer
    ``ids``) as the database driver returns them (no converters: on SQLite a boolean is 0 or 1),
    the statement composed and compiled once per process with stand-ins for the ids, then run
    with the ids in their place. Composing a query with nested subqueries (a peer's progress,
    counted as every page counts it) took more CPU than running it, on every request that reads
    it. ``build`` is a module-level function of the ids alone: its other values are kept as they
    were the first time (never the clock, a setting or a row read). Relies on ``Query.sql_with_params``
    (the statement and its parameters, each id's parameter being the id itself)."""
    if any(type(value) is not int for value in ids.values()):
        raise TypeError(f"kept_rows takes integer ids only: {ids}")
    sql, slots = _kept(build, tuple(sorted(ids)), connection.vendor)
    params = [ids[slot[1]] if slot[0] else slot[1] for slot in slots]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.lru_cache(maxsize=64)
def _kept(build: Callable[..., QuerySet], names: tuple[str, ...], vendor: str) -> tuple[str, tuple]:
    """``build``'s statement with stand-ins for ``names``, and each parameter as (True, an id's
    name) or (False, the constant it is)."""
    stand_ins = {_STAND_IN - 7919 * i: name for i, name in enumerate(names)}
    sql, params = build(**{name: value for value, name in stand_ins.items()}).query.sql_with_params()
    slots = tuple((True, stand_ins[p]) if type(p) is int and p in stand_ins else (False, p) for p in params)
    missing = set(names) - {slot[1] for slot in slots if slot[0]}
    if missing:
        raise ValueError(f"{build.__name__}: the ids {sorted(missing)} are not parameters of its statement")
    return sql, slots


def password_being_set(user) -> bool:
    """Whether ``user.set_password`` was called since the user was last saved: a save without it
    that writes only the password is Django re-hashing the same password at login
    (``check_password``), which is no password change. Relies on ``AbstractBaseUser._password``,
    the raw password kept until ``save``."""
    return getattr(user, "_password", None) is not None


def replace_csp(response, directives: dict[str, list[str]]) -> None:
    """django-csp: ``directives`` replace the policy's for this one response only (a crowd page shown
    in MTurk's frame), which its decorators do for every response of a view. Relies on the
    middleware reading ``response._csp_replace``."""
    response._csp_replace = directives


def update_csp(response, directives: dict[str, list[str]]) -> None:
    """django-csp: ``directives`` added to the policy's for this one response only (a form posting
    to MTurk's site), as ``replace_csp``. Relies on the middleware reading ``response._csp_update``."""
    response._csp_update = directives
