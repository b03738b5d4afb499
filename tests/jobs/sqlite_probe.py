"""Run as a script with DATABASE_URL naming an SQLite file: creates the test database as the test
runner does (``setup_databases``, pytest-django's way), checks it, prints JSON, drops it. A process of
its own, so the checks run whatever database the suite itself runs on (``test_sqlite_writers.py``).

    DATABASE_URL=sqlite:///PATH python tests/jobs/sqlite_probe.py
"""

import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402  (the repository on sys.path and the settings module set first)

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test.utils import setup_databases, setup_test_environment, teardown_databases  # noqa: E402

from annotation.corpus.models import Dataset  # noqa: E402


def test_database() -> dict:
    """Where the test database is and the pragmas its connections run with."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        journal_mode = cursor.fetchone()[0]
        cursor.execute("PRAGMA busy_timeout")
        busy_timeout = cursor.fetchone()[0]
    return {
        "vendor": connection.vendor,
        "name": str(connection.settings_dict["NAME"]),
        "in_memory": connection.is_in_memory_db(),
        "journal_mode": journal_mode,
        "busy_timeout": busy_timeout,
    }


def two_writers() -> dict:
    """A second writer starts while the first holds the write lock: it waits (the names both
    written), or fails (the error)."""
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
            failures.append(repr(error))
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return {"failures": failures, "names": sorted(Dataset.objects.values_list("name", flat=True))}


def main() -> dict:
    setup_test_environment()
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        found = {"test_database": test_database(), "two_writers": two_writers()}
    finally:
        connection.close()
        teardown_databases(databases, verbosity=0)
    found["test_database"]["left_behind"] = Path(found["test_database"]["name"]).exists()
    return found


if __name__ == "__main__":
    print(json.dumps(main()))
