"""``/healthz`` says 503 when the database refuses writes (issue 24: it said ok while a SQLite file
could not be written, and every save failed), and probes writes at most every few seconds."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.jobs import health

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import json, sys, django
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    call_command("migrate", verbosity=0)
    answers = [Client(HTTP_HOST="localhost").get("/healthz")]
    connection.close()
    from annotation.jobs import health
    health._last = None  # the writable answer above is cached: probe again
    connection.settings_dict["NAME"] = "file:" + sys.argv[1] + "?mode=ro"  # the file, read-only
    answers.append(Client(HTTP_HOST="localhost").get("/healthz"))
    print(json.dumps([[a.status_code, a.json()] for a in answers]))
""")


def test_a_read_only_sqlite_file_is_unhealthy(tmp_path):
    db = tmp_path / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update({"DEBUG": "1", "DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "pyramid_app.settings"})
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(db)], env=env, cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    writable, read_only = json.loads(done.stdout.strip().splitlines()[-1])
    assert writable == [200, {"status": "ok"}]
    assert read_only[0] == 503 and read_only[1]["status"] == "error"
    assert "refuses writes" in read_only[1]["reason"] and "readonly" in read_only[1]["reason"]


def test_the_write_probe_runs_at_most_every_few_seconds_and_changes_nothing(client, db, monkeypatch):
    monkeypatch.setattr(health, "_last", None)
    before = _migrations()
    with CaptureQueriesContext(connection) as first:
        assert client.get("/healthz").status_code == 200
    with CaptureQueriesContext(connection) as again:
        for _ in range(20):
            assert client.get("/healthz").json() == {"status": "ok"}
    writes = [q for q in first.captured_queries + again.captured_queries if q["sql"].startswith("UPDATE")]
    assert len(writes) == 1 and writes[0] in first.captured_queries
    assert _migrations() == before


def _migrations():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, app, name FROM django_migrations ORDER BY id")
        return cursor.fetchall()
