"""Each pytest-xdist worker's test database is a copy of one migrated once for the run (PostgreSQL's
``CREATE DATABASE ... TEMPLATE``, Django's ``TEST["TEMPLATE"]``), instead of each worker migrating its
own: 3.6 CPU-s of Django's a worker (and 20 s of wall on a loaded machine) for a copy's 0.1. The
template is made as a worker's test database always was (Django's ``create_test_db``: the migrations
run for real, once a run); a worker's ``migrate`` then finds nothing to apply on its copy. Named by
the run and a hash of the app's sources (``tests/run_scoped.py``), dropped at the run's end (or by
the next run, should it be killed). Outside xdist, or on SQLite, nothing changes: one database."""

import os

from tests import run_scoped
from tests.faults import cleanup

MARK = "_tmpl_"


def prefix(settings_dict: dict) -> str:
    """The start of the names of this database's templates (``test_`` and its name, cut short: a
    PostgreSQL name has at most 63 characters)."""
    return f"test_{settings_dict['NAME']}"[:20] + MARK


def template_name(settings_dict: dict, owner: str, digest: str) -> str:
    """The template of the run whose process is ``owner`` (``pid:start``), made from sources ``digest``."""
    return f"{prefix(settings_dict)}{owner.replace(':', '_')}_{digest[:8]}"


def owner_of(name: str, settings_dict: dict) -> str:
    pid, start, _ = name.removeprefix(prefix(settings_dict)).split("_")
    return f"{pid}:{start}"


def use_run_template(connection) -> None:
    """This worker's test database made as a copy of the run's template (made first, if no worker has)."""
    if connection.vendor != "postgresql" or not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    name = template_name(connection.settings_dict, cleanup.ident(cleanup.run_owner()), run_scoped.sources_digest())
    run_scoped.made_once(f"database-{name}", lambda folder, record: _migrate(connection, name))
    connection.settings_dict["TEST"]["TEMPLATE"] = name


def _migrate(connection, name: str) -> None:
    """Database ``name`` made and migrated as a test database, then left as it is (not dropped) and
    the connection back on its own settings."""
    test, database = connection.settings_dict["TEST"], connection.settings_dict["NAME"]
    worker_name = test.get("NAME")
    test["NAME"] = name
    try:
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    finally:
        connection.creation.destroy_test_db(database, verbosity=0, keepdb=True)
        test["NAME"] = worker_name


def server(settings_dict: dict):
    """A connection (autocommit) to the server of ``settings_dict``'s database, to its ``postgres``
    database; None if it does not answer."""
    import psycopg

    params = {key.lower(): settings_dict[key] for key in ("HOST", "PORT", "USER", "PASSWORD") if settings_dict[key]}
    try:
        return psycopg.connect(dbname="postgres", autocommit=True, **params)
    except psycopg.OperationalError:
        return None


def drop_templates(settings_dict: dict, ended: bool) -> list[str]:
    """Drop the templates of runs gone (killed before their end) and, with ``ended`` (the run's
    process, at its end), this run's own; the names dropped."""
    from psycopg import sql

    conn = server(settings_dict) if "postgresql" in settings_dict["ENGINE"] else None
    if conn is None:  # no server: no template made either
        return []
    me, dropped = cleanup.ident(os.getpid()), []
    with conn:
        names = conn.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s) ORDER BY datname", [prefix(settings_dict)]
        ).fetchall()
        for (name,) in names:
            try:
                owner = owner_of(name, settings_dict)
            except ValueError:  # not a template's name
                continue
            if not cleanup.alive(owner) or (ended and owner == me):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
                dropped.append(name)
    return dropped
