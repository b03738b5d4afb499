"""On SQLite (the embedded default, and `make test` on a fresh clone) a writer waits for another
connection's write instead of failing: the test database is a file in WAL mode with the busy timeout,
as the embedded default is (an in-memory database with a shared cache answered "database table is
locked" at once when the background runner's thread wrote beside the test's)."""
import threading
import time

import pytest
from django.db import connection, transaction

from annotation.models import Dataset

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="checks the SQLite test database (DATABASE_URL names another)")


def test_the_test_database_is_a_file_in_wal_mode_with_the_busy_timeout(db):
    assert not connection.is_in_memory_db()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20_000


def test_a_second_writer_waits_for_the_first(transactional_db):
    holding, failures = threading.Event(), []

    def first():
        try:
            with transaction.atomic():
                Dataset.objects.create(name="first")
                holding.set()
                time.sleep(0.5)   # the write lock is held meanwhile
        finally:
            holding.set()
            connection.close()

    def second():
        holding.wait(10)
        try:
            Dataset.objects.create(name="second")
        except Exception as error:   # noqa: BLE001 - the failure is the finding
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not failures, failures
    assert sorted(Dataset.objects.values_list("name", flat=True)) == ["first", "second"]
