"""``manage.py backup`` taken while people edit, restored by ``manage.py restore`` into a fresh
database, gives an instance that answers the same: every table (scores, agreement, statistics,
charts, progress), the stored results with the moment each was computed (nothing recomputed) and
the edit history, row for row.

Consistency while the app runs: two editors write during the backup, each action one transaction
(a match, its history record and the annotation's revision). One editor holds an action open,
written and not committed, for the whole backup: the backup must not wait for it and must not
contain it. The other keeps committing where the engine lets it (PostgreSQL; SQLite has one writer
at a time, so it waits): the copy must hold whole actions only, as many as were committed when it
was taken.

The tests run on the suite's engine in this process; under PostgreSQL (CI) ``test_the_sqlite_path``
runs them again in a pytest of their own on SQLite, so both engines are tested on every run.
"""

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from annotation.corpus.models import Dataset
from annotation.history.changes import undo
from annotation.history.models import Change
from annotation.peers import actions as peer_actions
from annotation.peers.models import PeerAnnotation
from annotation.peers.recompute import stale_work
from annotation.pyramids import actions as pyramid_actions
from annotation.pyramids.models import SCU

from tests.dashboards import toy
from tests.dashboards.conftest import _eager_tasks  # noqa: F401  (fixtures: Celery tasks in-process)
from tests.dashboards.helpers import build_lived_in, coordinator_of
from tests.transfer.instance import answers, edits

pytestmark = pytest.mark.django_db(transaction=True)  # committed data: what another process (pg_dump, the restore) sees
REPO = Path(__file__).resolve().parents[2]


# --- the world ------------------------------------------------------------------------------


def edited(dataset) -> None:
    """Edits through the actions people use (so they are in the history): an SCU relabelled, a
    match added, another added then undone."""
    editor = get_user_model().objects.get(username="ann1")
    t1 = dataset.topics.get(external_id="T1").pyramids.get()
    pyramid_actions.update_scu(SCU.objects.get(pyramid=t1, uid=3), editor, label="SCU 3, relabelled")
    annotation = PeerAnnotation.objects.get(pyramid=t1, peer__external_id="2", annotator=editor)
    peer_actions.match_span(annotation, editor, scu=SCU.objects.get(pyramid=t1, uid=4), spans=[(20, 24)])
    peer_actions.match_span(annotation, editor, scu=SCU.objects.get(pyramid=t1, uid=1), spans=[(30, 34)])
    undo("annotation", annotation.pk, editor)


class Editor(threading.Thread):
    """Adds a match to one annotation, one action per transaction, until stopped. While ``hold`` is
    set, it keeps its action open (written, not committed) until ``release``."""

    def __init__(self, annotation: PeerAnnotation):
        super().__init__(daemon=True)
        self.annotation, self.scu = annotation, SCU.objects.filter(pyramid=annotation.pyramid).first()
        self.user = annotation.annotator
        self.committed, self.error = 0, None
        self.stop, self.hold, self.held, self.release = (threading.Event() for _ in range(4))

    def run(self):
        try:
            while not self.stop.is_set():
                with transaction.atomic():
                    peer_actions.match_span(self.annotation, self.user, scu=self.scu, spans=[(40, 44)])
                    if self.hold.is_set():
                        self.held.set()
                        self.release.wait(60)
                self.committed += 1
        except BaseException as error:  # reported by the test
            self.error = error
        finally:
            connection.close()


def until(condition, what: str, editors) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert all(e.error is None for e in editors), [e.error for e in editors]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def busy_annotation(name: str) -> PeerAnnotation:
    dataset = toy.build(name)
    return PeerAnnotation.objects.get(
        pyramid__topic__dataset=dataset,
        pyramid__topic__external_id="T1",
        peer__external_id="2",
        annotator__username="ann1",
    )


# --- the restored instance, in processes of its own -----------------------------------------


def env_for(database_url: str) -> dict:
    """A process of the app on ``database_url``, without a broker: the restore's stale-results sweep
    recomputes in that process and leaves no task queued for a worker of the test's Redis."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    return env | {"DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "pyramid_app.settings", "DEBUG": "1"}


def manage(database_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env_for(database_url),
        capture_output=True,
        text=True,
        timeout=300,
    )


def instance_answers(database_url: str, *args) -> dict:
    code = "import sys, django; django.setup(); from tests.transfer.instance import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=REPO,
        env=env_for(database_url),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture
def fresh_database(tmp_path):
    """The URL of a new, empty database of the suite's engine (dropped afterwards)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    import psycopg
    from psycopg import sql

    s = connection.settings_dict
    name = f"{s['NAME']}_restored"
    server = {
        "host": s["HOST"] or None,
        "port": s["PORT"] or None,
        "user": s["USER"] or None,
        "password": s["PASSWORD"] or None,
    }

    def run(*statements):
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
            for statement in statements:
                admin.execute(sql.SQL(statement).format(sql.Identifier(name)))

    run("DROP DATABASE IF EXISTS {} WITH (FORCE)", "CREATE DATABASE {}")
    credentials = quote(s["USER"] or "") + (f":{quote(s['PASSWORD'])}" if s["PASSWORD"] else "")
    yield f"postgres://{credentials}@{s['HOST'] or 'localhost'}:{s['PORT'] or 5432}/{name}"
    run("DROP DATABASE IF EXISTS {} WITH (FORCE)")


# --- the tests ------------------------------------------------------------------------------


def test_a_backup_taken_while_people_edit_restores_to_the_same_instance(tmp_path, fresh_database):
    dataset = build_lived_in("Backed up")
    coordinator = coordinator_of(dataset)
    edited(dataset)
    held, busy = busy_annotation("Busy 1"), busy_annotation("Busy 2")
    assert stale_work() == ([], []), "every result is stored before the backup"
    before = answers(dataset.name, coordinator)
    assert len(before["history"]) == 6 and Change.objects.filter(undo_state="undone").count() == 1, (
        "history (an adjudication, a pyramid adjudication, 4 edits), an action undone"
    )
    assert len(before["scores"]) > 10 and before["agreement"] and before["dashboard"]

    backup = tmp_path / "backups" / "pyramid.backup"
    backup.parent.mkdir()
    holder, writer = Editor(held), Editor(busy)
    editors = (holder, writer)
    for editor in editors:
        editor.start()
    try:
        until(lambda: holder.committed >= 2 and writer.committed >= 2, "both editors to commit", editors)
        holder.hold.set()
        assert holder.held.wait(60), "the holder's action is open"
        holder_committed, writer_before = holder.committed, writer.committed
        out, started = StringIO(), time.monotonic()
        call_command("backup", str(backup), stdout=out)  # while the holder's action is open
        seconds, writer_after = time.monotonic() - started, writer.committed
        assert holder.committed == holder_committed and holder.is_alive(), "the backup never waited for the open action"
        holder.release.set()
        until(
            lambda: holder.committed > holder_committed and writer.committed > writer_after,
            "the editors to go on",
            editors,
        )
    finally:
        holder.hold.clear()
        holder.release.set()
        for editor in editors:
            editor.stop.set()
            editor.join(60)
    assert holder.error is None and writer.error is None, (holder.error, writer.error)
    assert out.getvalue().strip() == f"Wrote {backup} ({backup.stat().st_size:,} bytes, {connection.vendor} backup)."
    assert [p.name for p in backup.parent.iterdir()] == ["pyramid.backup"], "no temporary file left behind"
    print(
        f"backup: {seconds:.2f} s, {backup.stat().st_size:,} bytes, the writer committed "
        f"{writer_after - writer_before} action(s) meanwhile"
    )

    first = manage(fresh_database, "restore", str(backup))
    assert first.returncode == 0, first.stderr
    assert f"Restored {backup}" in first.stdout and "datasets 3" in first.stdout and "Stale results:" in first.stdout, (
        first.stdout
    )
    forced = manage(
        fresh_database, "restore", "--force", str(backup)
    )  # over a populated database (refused without --force: below)
    assert forced.returncode == 0, forced.stderr

    restored = instance_answers(fresh_database, dataset.name, coordinator.username, held.pk, busy.pk)
    for part in before:
        assert restored["answers"][part] == before[part], part
    holder_edits, writer_edits = restored["edits"][str(held.pk)], restored["edits"][str(busy.pk)]
    assert holder_edits["actions"] == holder_committed, (
        "the action open during the backup is not in it, every committed one is"
    )
    assert writer_before <= writer_edits["actions"] <= writer_after + 1
    initial_matches = len(toy.MATCHES["T1"]["2"]["ann1"])
    for copy in (holder_edits, writer_edits):  # whole actions only: each match with its record and revision
        assert (
            copy["matches"] == initial_matches + copy["actions"] and copy["revision"] == copy["last_action_revision"]
        ), copy
    live = edits(held.pk)
    assert live["actions"] > holder_committed and live["matches"] == initial_matches + live["actions"], (
        "the source went on"
    )


def test_a_file_of_the_other_engine_or_no_backup_is_refused(tmp_path):
    other = tmp_path / "other.backup"
    if connection.vendor == "postgresql":
        sqlite3.connect(other).execute("CREATE TABLE django_migrations (id integer)").connection.close()
        expected = "is a SQLite database file, but the configured database (DATABASE_URL) is postgresql"
    else:
        other.write_bytes(b"PGDMP\x01\x0e\x00\x04\x08\x01\x01" + bytes(100))  # a custom-format dump's header
        expected = (
            "is a PostgreSQL dump (pg_dump --format=custom), but the configured database (DATABASE_URL) is sqlite"
        )
    with pytest.raises(CommandError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        call_command("restore", str(other), force=True)
    junk = tmp_path / "notes.txt"
    junk.write_text("not a backup")
    with pytest.raises(CommandError, match="is not a backup: neither a SQLite database file nor a PostgreSQL dump"):
        call_command("restore", str(junk), force=True)


def test_a_database_holding_data_is_not_replaced_without_force(tmp_path):
    dataset = build_lived_in("Live")
    backup = tmp_path / "live.backup"
    call_command("backup", str(backup), stdout=StringIO())
    Dataset.objects.create(name="Written after the backup")
    with pytest.raises(CommandError, match=r"already holds data \(annotation_.*\): a restore replaces it all.*--force"):
        call_command("restore", str(backup), stdout=StringIO())
    assert set(Dataset.objects.values_list("name", flat=True)) == {dataset.name, "Written after the backup"}, (
        "nothing replaced"
    )


@pytest.mark.postgres
def test_a_pg_dump_older_than_the_server_or_failing_writes_nothing(tmp_path, monkeypatch):
    """pg_dump refuses newer servers in words few understand: the version is checked first. A pg_dump
    failing half-way leaves the previous backup at FILE as it was, and no partial file. The password
    reaches pg_dump in its environment, never on its command line nor in the message."""
    bin_dir, log = tmp_path / "bin", tmp_path / "pg_dump.log"
    bin_dir.mkdir()
    fake = bin_dir / "pg_dump"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setitem(connection.settings_dict, "PASSWORD", "pa55-word")
    backups = tmp_path / "backups"
    backups.mkdir()
    previous = backups / "pyramid.backup"
    previous.write_bytes(b"PGDMP the previous backup")

    fake.write_text('#!/bin/sh\necho "pg_dump (PostgreSQL) 14.10 (Debian 14.10-1)"\n')
    fake.chmod(0o755)
    with pytest.raises(
        CommandError, match="version 14 cannot dump this PostgreSQL 15 server; install the PostgreSQL 15 client"
    ):
        call_command("backup", str(previous))

    fake.write_text(f"""#!/bin/sh
[ "$1" = --version ] && exec echo "pg_dump (PostgreSQL) 15.20"
echo "$@" >> {log}; echo "PGPASSWORD=$PGPASSWORD" >> {log}
for a in "$@"; do case "$a" in --file=*) printf 'PGDMP half' > "${{a#--file=}}";; esac; done
echo "pg_dump: error: connection lost" >&2; exit 1
""")
    with pytest.raises(CommandError) as refused:
        call_command("backup", str(previous))
    assert "pg_dump failed (exit 1): pg_dump: error: connection lost" in str(refused.value)
    assert "pa55-word" not in str(refused.value)
    command_line, environment = log.read_text().splitlines()
    assert (
        "--format=custom" in command_line and "pa55-word" not in command_line and environment == "PGPASSWORD=pa55-word"
    )
    assert previous.read_bytes() == b"PGDMP the previous backup" and [p.name for p in backups.iterdir()] == [
        "pyramid.backup"
    ]


@pytest.mark.postgres
def test_the_sqlite_path(tmp_path):
    """The tests above, on SQLite, in a pytest of their own (the suite runs on PostgreSQL)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'app.sqlite3'}"
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider", "-m", "not postgres", "-s"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(done.stdout[-3000:])
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
