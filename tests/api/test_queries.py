"""The API plumbing's SQL (``annotation.api.queries``): the taking of an idempotency key, against its
ORM twin, and the lock timeout it sets for its wait, which no ORM statement reads (read back with
``SHOW``)."""

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.api import queries
from annotation.api.models import IdempotentRequest


def _lock_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_taking_a_key_waits_under_its_own_lock_timeout_and_gives_the_setting_back(transactional_db, world):
    """The statement sets ``lock_timeout`` for its wait and, once the row is in, sets back what was
    in force (the server's, or the transaction's own), which the request's later lock waits keep."""
    server, alice = _lock_timeout(), world.users["alice"]
    with transaction.atomic():
        assert queries.take_key(alice.pk, "POST /api/scus/", "k", "a" * 64, wait_seconds=0.25)
        assert _lock_timeout() == server
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '1234ms'")
        assert queries.take_key(alice.pk, "POST /api/scus/", "k2", "a" * 64, wait_seconds=0.25)
        assert _lock_timeout() == "1234ms"
    assert _lock_timeout() == server


def _rows() -> list[tuple]:
    return sorted(
        IdempotentRequest.objects.values_list(
            "user_id", "endpoint", "key", "body_hash", "status", "headers", "content", "created_at"
        )
    )


def _same(sql_rows, orm_rows, since) -> bool:
    """The same rows, a new row's creation time aside (each twin stamps its own ``now``)."""

    def fixed(rows):
        return [(*row[:6], bytes(row[6]), row[7] if row[7] < since else "new") for row in rows]

    return fixed(sql_rows) == fixed(orm_rows)


def test_taking_a_key_inserts_the_row_the_orm_would_unless_the_users_endpoint_has_it(world):
    """``take_key`` against its ORM twin (``exists``, then ``create`` with the model's defaults),
    on rows of two users, two endpoints and an answered, an unanswered and an expired key: the same
    answer to "was it taken here" and the same rows after, whichever user, endpoint and key."""
    alice, bob = world.users["alice"], world.users["bob"]
    old = timezone.now() - timezone.timedelta(days=30)
    IdempotentRequest.objects.create(user=alice, endpoint="POST /api/scus/", key="k1", body_hash="a" * 64)
    IdempotentRequest.objects.create(
        user=alice, endpoint="POST /api/matches/", key="k1", body_hash="b" * 64, status=201, content=b"{}"
    )
    IdempotentRequest.objects.create(user=bob, endpoint="POST /api/scus/", key="k2", body_hash="c" * 64, created_at=old)
    since = timezone.now()
    for user in (alice, bob):
        for endpoint in ("POST /api/scus/", "POST /api/matches/", "POST /api/annotations/1/undo/"):
            for key in ("k1", "k2", "k3", "x" * 255):
                with transaction.atomic():
                    taken = queries.take_key(user.pk, endpoint, key, "d" * 64, wait_seconds=1)
                    sql_rows, sql_new = (
                        _rows(),
                        IdempotentRequest.objects.filter(user=user, endpoint=endpoint, key=key).values_list(
                            "status", "headers", "content"
                        )[0],
                    )
                    transaction.set_rollback(True)
                with transaction.atomic():
                    had = IdempotentRequest.objects.filter(user=user, endpoint=endpoint, key=key).exists()
                    if not had:
                        IdempotentRequest.objects.create(user=user, endpoint=endpoint, key=key, body_hash="d" * 64)
                    orm_rows = _rows()
                    transaction.set_rollback(True)
                assert taken is not had, (user, endpoint, key)
                assert _same(sql_rows, orm_rows, since), (user, endpoint, key)
                if taken:  # read back as the model's defaults (no answer yet)
                    assert (sql_new[0], sql_new[1], bytes(sql_new[2])) == (None, {}, b"")
