"""The API plumbing's SQL (``annotation.api.queries``): a PostgreSQL setting, which no ORM
statement reads or sets, so the test reads it back with ``SHOW``."""

import pytest
from django.db import connection, transaction

from annotation.api import queries


def _lock_timeout() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_the_lock_timeout_is_set_for_the_transaction_and_given_back(transactional_db):
    server = _lock_timeout()
    with transaction.atomic():
        assert queries.set_lock_timeout("1234ms") == server
        assert _lock_timeout() == "1234ms"
        assert queries.set_lock_timeout("5s") == "1234ms"
        assert _lock_timeout() == "5s"
    assert _lock_timeout() == server  # it ended with the transaction
