"""What a test run makes once (``tests/run_scoped.py``): the demo cluster each fault and scale stack
copies (``harness.demo_cluster``) and the template of the xdist workers' test databases
(``tests/template_database.py``). Made once for a run, shared by its processes, never reused once
what it is made from has changed, never left half made, and swept or dropped with the run."""

import multiprocessing
import os
import tempfile
import time

import pytest

from tests import run_scoped, template_database
from tests.conftest import REPO
from tests.faults import cleanup, harness


@pytest.fixture
def run(tmp_path, monkeypatch):
    """A test run of its own: its folders and records under ``tmp_path``, this process its owner."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(cleanup, "RECORDS", tmp_path / "records")
    owner = os.getpid()
    monkeypatch.setattr(cleanup, "run_owner", lambda: owner)
    return tmp_path


def counting_make(made_log):
    """A make that takes a while (the others must wait, not make their own) and logs each make."""

    def make(folder, record):
        with open(made_log, "a") as log:
            log.write(f"{os.getpid()}\n")
        time.sleep(0.5)
        (folder / "content").write_text(str(os.getpid()))

    return make


def _ask(name, made_log, answers):
    with open(answers, "a") as out:
        out.write(f"{run_scoped.made_once(name, counting_make(made_log))}\n")


def test_made_once_for_the_run_whoever_asks_first(run):
    """Processes asking at once (xdist workers) wait for the first one's make and share its folder."""
    made_log, answers = run / "makes", run / "answers"
    fork = multiprocessing.get_context("fork")
    askers = [fork.Process(target=_ask, args=("shared", made_log, answers)) for _ in range(3)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join(30)
        assert asker.exitcode == 0
    assert len(made_log.read_text().splitlines()) == 1
    assert len(set(answers.read_text().splitlines())) == 1
    _ask("shared", made_log, answers)  # later: still that one
    assert len(made_log.read_text().splitlines()) == 1


def test_a_make_that_failed_midway_is_made_afresh(run):
    def broken(folder, record):
        (folder / "half").write_text("")
        raise RuntimeError("killed midway")

    with pytest.raises(RuntimeError):
        run_scoped.made_once("demo", broken)
    made = run_scoped.made_once("demo", counting_make(run / "makes"))
    assert sorted(p.name for p in made.iterdir()) == ["content"]


def test_a_change_to_what_the_cluster_is_made_from_makes_another(run, monkeypatch):
    """A migration added (or the demo loader changed) after a cluster was made: the next stack gets a
    cluster made from the new sources, not the stale one."""
    sources = run / "sources"
    (sources / "annotation" / "migrations").mkdir(parents=True)
    (sources / "annotation" / "migrations" / "0001_initial.py").write_text("operations = []\n")
    (sources / "annotation" / "demo.py").write_text("USERS = ['bob']\n")
    digest = run_scoped.sources_digest
    monkeypatch.setattr(run_scoped, "sources_digest", lambda *also: digest(*also, root=sources))
    monkeypatch.setattr(harness, "_build_demo_cluster", counting_make(run / "makes"))

    first = harness.demo_cluster()
    assert harness.demo_cluster() == first
    (sources / "annotation" / "migrations" / "0002_more.py").write_text("operations = ['AddField']\n")
    after_migration = harness.demo_cluster()
    (sources / "annotation" / "demo.py").write_text("USERS = ['bob', 'carol']\n")
    after_loader = harness.demo_cluster()
    assert len({first, after_migration, after_loader}) == 3
    assert len((run / "makes").read_text().splitlines()) == 3


def test_the_digest_reads_the_apps_migrations_and_demo_loader():
    """The real sources: the files a cluster's content comes from are among those hashed."""
    hashed = run_scoped.hashed_sources(REPO)
    assert REPO / "annotation" / "migrations" / "0001_initial.py" in hashed
    assert REPO / "annotation" / "management" / "commands" / "load_demo.py" in hashed
    assert REPO / "annotation" / "peers" / "demo.py" in hashed


def test_swept_with_the_run_not_before(run):
    made = run_scoped.made_once("demo", counting_make(run / "makes"))
    cleanup.sweep()  # a stack's start, mid-run: the run's process is alive
    assert made.exists()
    cleanup.sweep(ended=True)  # the run's end, in its process
    assert not made.parent.exists() and not list(cleanup.RECORDS.iterdir())


class Creation:
    """A connection's ``creation`` recording what it made (Django's makes the database and migrates it)."""

    def __init__(self, connection):
        self.connection, self.made = connection, []

    def create_test_db(self, verbosity, autoclobber, serialize):
        self.made.append(self.connection.settings_dict["TEST"]["NAME"])
        self.connection.settings_dict["NAME"] = self.connection.settings_dict["TEST"]["NAME"]

    def destroy_test_db(self, old_database_name, verbosity, keepdb):
        assert keepdb, "the template is dropped at the run's end, not once made"
        self.connection.settings_dict["NAME"] = old_database_name


class Connection:
    vendor = "postgresql"

    def __init__(self, worker: str):
        self.settings_dict = {"NAME": "pyramid", "TEST": {"NAME": f"test_pyramid_{worker}"}}
        self.creation = Creation(self)


def test_each_worker_database_a_copy_of_one_template_made_once_and_anew_after_a_change(run, monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    digest = run_scoped.sources_digest
    sources = run / "sources"
    (sources / "annotation" / "migrations").mkdir(parents=True)
    (sources / "annotation" / "migrations" / "0001_initial.py").write_text("operations = []\n")
    monkeypatch.setattr(run_scoped, "sources_digest", lambda *also: digest(*also, root=sources))
    workers = [Connection("gw0"), Connection("gw1")]
    for worker in workers:
        template_database.use_run_template(worker)
    template = workers[0].settings_dict["TEST"]["TEMPLATE"]
    assert [w.creation.made for w in workers] == [[template], []]  # the second copies the first's
    assert workers[1].settings_dict["TEST"]["TEMPLATE"] == template
    assert [w.settings_dict["NAME"] for w in workers] == ["pyramid", "pyramid"]
    assert [w.settings_dict["TEST"]["NAME"] for w in workers] == ["test_pyramid_gw0", "test_pyramid_gw1"]
    assert template_database.owner_of(template, workers[0].settings_dict) == cleanup.ident(os.getpid())

    (sources / "annotation" / "migrations" / "0002_more.py").write_text("operations = ['AddField']\n")
    later = Connection("gw1")
    template_database.use_run_template(later)
    assert later.creation.made == [later.settings_dict["TEST"]["TEMPLATE"]] and later.creation.made != [template]


def test_no_template_outside_xdist(run, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    alone = Connection("gw0")
    template_database.use_run_template(alone)
    assert alone.creation.made == [] and "TEMPLATE" not in alone.settings_dict["TEST"]


@pytest.mark.postgres
def test_the_templates_of_runs_gone_are_dropped_and_the_runs_own_at_its_end():
    from django.db import connection
    from psycopg import sql

    settings = {**connection.settings_dict, "NAME": f"scoped{os.getpid()}"}  # apart from real templates
    dead = "999999999:1"  # no such process
    live_other = cleanup.ident(os.getppid())  # another run's process, alive
    me = cleanup.ident(os.getpid())
    names = {owner: template_database.template_name(settings, owner, "abcdef0123") for owner in (dead, live_other, me)}
    with template_database.server(settings) as conn:
        for name in names.values():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            assert template_database.drop_templates(settings, ended=False) == [names[dead]]
            assert template_database.drop_templates(settings, ended=True) == [names[me]]
            left = conn.execute("SELECT datname FROM pg_database WHERE datname = ANY(%s)", [list(names.values())])
            assert left.fetchall() == [(names[live_other],)]
        finally:
            for name in names.values():
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
