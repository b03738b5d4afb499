"""On SQLite (the embedded default, and `make test` on a fresh clone) a writer waits for another
connection's write instead of failing: the test database is a file in WAL mode with the busy timeout,
as the embedded default is (an in-memory database with a shared cache answered "database table is
locked" at once when the background runner's thread wrote beside the test's). Where the suite runs
on PostgreSQL (CI) these tests are deselected, and run on SQLite in a pytest of their own."""

import os
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection, transaction

from annotation.corpus.models import Dataset

from tests.conftest import REPO


@pytest.mark.postgres
def test_on_sqlite_in_a_pytest_of_its_own(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.sqlite3'}"
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", "sqlite"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and "2 passed" in done.stdout and "skipped" not in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )


@pytest.mark.sqlite
def test_the_test_database_is_a_file_in_wal_mode_with_the_busy_timeout(db):
    assert not connection.is_in_memory_db()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20_000


@pytest.mark.sqlite
def test_a_second_writer_waits_for_the_first(transactional_db):
    holding, failures = threading.Event(), []

    def first():
        try:
            with transaction.atomic():
                Dataset.objects.create(name="first")
                holding.set()
                time.sleep(0.5)  # the write lock is held meanwhile
        finally:
            holding.set()
            connection.close()

    def second():
        holding.wait(10)
        try:
            Dataset.objects.create(name="second")
        except Exception as error:  # noqa: BLE001 - the failure is the finding
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
