"""On SQLite (the embedded default, and `make test` on a fresh clone) a writer waits for another
connection's write instead of failing: the test database is a file in WAL mode with the busy timeout,
as the embedded default is (an in-memory database with a shared cache answered "database table is
locked" at once when the background runner's thread wrote beside the test's). Checked in a process
of its own on an SQLite file (``sqlite_probe.py``), whatever database the suite runs on."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

PROBE = REPO / "tests" / "jobs" / "sqlite_probe.py"


@pytest.fixture(scope="module")
def on_sqlite(tmp_path_factory):
    """What the probe found on a test database the test runner made from ``DATABASE_URL=sqlite:///...``."""
    app = tmp_path_factory.mktemp("sqlite") / "app.sqlite3"
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"DATABASE_URL": f"sqlite:///{app}", "DEBUG": "1"}
    done = subprocess.run([sys.executable, str(PROBE)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_test_database_is_a_file_in_wal_mode_with_the_busy_timeout(on_sqlite):
    found = on_sqlite["test_database"]
    assert found["vendor"] == "sqlite" and not found["in_memory"], found
    assert found["journal_mode"] == "wal" and found["busy_timeout"] == 20_000, found
    assert not found["left_behind"], found  # the runner deletes the file afterwards


def test_a_second_writer_waits_for_the_first(on_sqlite):
    found = on_sqlite["two_writers"]
    assert not found["failures"], found
    assert found["names"] == ["first", "second"], found
