"""Every concept's SQL written out (``annotation/<concept>/queries.py``) runs on both databases the
app runs on: where the suite runs on PostgreSQL (CI) the ORM twin tests of those queries that are
not PostgreSQL's alone run again on SQLite, in a pytest of their own."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.postgres
def test_the_query_twins_pass_on_sqlite_too(tmp_path):
    files = sorted(str(path.relative_to(REPO)) for path in (REPO / "tests").glob("*/test_queries.py"))
    assert len(files) >= 4, files
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.sqlite3'}"
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *files,
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-m",
            "not postgres",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    passed = re.search(r"(\d+) passed", done.stdout)
    assert done.returncode == 0 and passed and int(passed.group(1)) >= 10 and "skipped" not in done.stdout, (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
