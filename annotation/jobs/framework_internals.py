"""The private parts of Django (and of django-csp) the app relies on, each behind one function.

Each is used on a hot path where the public API costs a round trip or a query's composing per
request (each function says which). None is promised to stay as it is: a test of each
(tests/jobs/test_framework_internals.py) fails when an upgrade changes what the function relies
on, so the upgrade that breaks one says so instead of a page going slow or wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import transaction
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
