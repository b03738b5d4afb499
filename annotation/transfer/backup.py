"""Back up and restore the whole database while the app runs (``manage.py backup`` / ``restore``).

Why these tools and not ``dumpdata``/``loaddata``: ``dumpdata`` reads table after table outside one
snapshot, so an edit committed meanwhile lands in some tables and not in others (a match without its
history record), and ``loaddata`` recomputes nothing but re-saves every row. Each engine has a
tool that copies one consistent state while others write:

- SQLite: the online backup API (``sqlite3.Connection.backup``), copying every page in one step
  inside one read transaction. In WAL mode (the app's) writers carry on meanwhile and the copy is
  the state at its start; in rollback-journal mode writers wait for the copy. Done in steps, a write
  by another connection would restart it, so it is one step.
- PostgreSQL: ``pg_dump --format=custom``, which reads every table in one repeatable-read
  transaction (one snapshot) and takes no lock that blocks the app's reads or writes; restored by
  ``pg_restore`` in a single transaction, so a failed restore leaves the target as it was.

The stored results (scores, agreement, dashboards) and the edit history are rows like the others,
so a restored instance answers the same without recomputing; the stale-results sweep runs anyway,
for whatever the app had not yet recomputed when the backup was taken.

Nothing is half-written: the backup goes to a temporary file beside FILE, renamed onto FILE only
once complete (an older backup at FILE survives a failed one). Passwords go to the PostgreSQL tools
in their environment (``PGPASSWORD``, as Django's ``dbshell`` does), never on a command line that
``ps`` shows, and are never printed.
"""

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection
from django.db.backends.postgresql.client import DatabaseClient

from annotation.transfer import queries

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"
ENGINES = {"sqlite": "a SQLite database file", "postgresql": "a PostgreSQL dump (pg_dump --format=custom)"}
# What ``migrate`` writes into an empty database by itself: a target holding only these holds no data.
MIGRATE_TABLES = {"django_migrations", "django_content_type", "auth_permission", "auth_group", "auth_group_permissions"}
TOOL_SECONDS = 6 * 3600  # a pg_dump or pg_restore that has not ended by then is stuck (a lock it waits for)


class BackupError(Exception):
    """Why a backup or a restore was refused or failed, in words for the person running it."""


@dataclass
class Written:
    path: Path
    size: int
    engine: str


@dataclass
class Restored:
    path: Path
    size: int
    engine: str
    source: list[str] = field(default_factory=list)  # what the file says about itself (PostgreSQL dumps)
    counts: dict[str, int] = field(default_factory=dict)
    pending_migrations: list[str] = field(default_factory=list)


def engine() -> str:
    """The configured database's engine, one of ``ENGINES``."""
    if connection.vendor not in ENGINES:
        raise BackupError(f"backups support SQLite and PostgreSQL, not {connection.vendor}")
    return connection.vendor


def file_engine(path: Path) -> str | None:
    """Which engine wrote the file at ``path``, read from its first bytes (None: neither)."""
    with open(path, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PGDUMP_MAGIC):
        return "postgresql"
    return None


# --- backup ---------------------------------------------------------------------------------


def backup(path: Path) -> Written:
    """Write a consistent copy of the configured database to ``path`` (replaced whole, or not at all)."""
    kind = engine()
    path = Path(path)
    if path.is_dir():
        raise BackupError(f"{path} is a folder: name the backup file to write")
    if not path.parent.is_dir():
        raise BackupError(f"folder {path.parent} does not exist")
    if kind == "postgresql":
        _check_pg_dump()
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    os.close(fd)
    partial = Path(name)
    try:
        (_sqlite_backup if kind == "sqlite" else _pg_dump)(partial)
        _sync(partial)
        os.replace(partial, path)
        _sync(path.parent)
    finally:
        partial.unlink(missing_ok=True)
    return Written(path, path.stat().st_size, kind)


def _sync(path: Path) -> None:
    """Flush a file (or a folder's entry of a renamed file) to disk: a backup survives a power loss."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sqlite_name() -> str:
    name = str(connection.settings_dict["NAME"])
    if name == ":memory:" or name.startswith("file::memory:") or "mode=memory" in name:
        raise BackupError("the database is in memory: there is no file to back up or restore into")
    return name


def _sqlite_backup(partial: Path) -> None:
    name = _sqlite_name()
    if not Path(name).is_file():  # sqlite3 would create it, and back up an empty database
        raise BackupError(f"there is no database at {name} (DATABASE_URL)")
    # A connection of its own, not Django's: the copy's read transaction is the backup's alone.
    source = sqlite3.connect(name, timeout=20)
    target = sqlite3.connect(partial)
    try:
        source.backup(target)  # pages=-1: one step, one read transaction (see the module's docstring)
        # The copy carries the source's WAL flag; a backup is one self-contained file.
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()
        source.close()


def _pg_command(tool: str, parameters: list[str]) -> tuple[list[str], dict]:
    """``tool``'s command line and environment for the configured database: Django's own mapping
    of the connection settings (``dbshell``'s), so the password travels in ``PGPASSWORD``."""
    path = shutil.which(tool)
    if path is None:
        raise BackupError(
            f"{tool} is not installed: install the PostgreSQL client tools (Debian: apt-get install postgresql-client)"
        )
    args, env = DatabaseClient.settings_to_cmd_args_env(connection.settings_dict, parameters)
    return [path, *args[1:]], {**os.environ, **(env or {})}


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=TOOL_SECONDS)
    except subprocess.TimeoutExpired:
        raise BackupError(f"{Path(args[0]).name} did not end within {TOOL_SECONDS // 3600} hours") from None


def _major(version_text: str) -> int:
    """The major version in ``pg_dump (PostgreSQL) 15.20 (Debian ...)``: 15."""
    match = re.search(r"\d+", version_text)
    if not match:
        raise BackupError(f"cannot read a version in {version_text!r}")
    return int(match.group())


def _check_pg_dump() -> None:
    """pg_dump dumps servers of its own major version or older: refuse a newer server, saying what to install."""
    args, env = _pg_command("pg_dump", [])
    answer = _run([args[0], "--version"], env)
    tool = _major(answer.stdout)
    connection.ensure_connection()
    server = connection.pg_version // 10000
    if tool < server:
        raise BackupError(
            f"{args[0]} is {answer.stdout.strip()!r}: version {tool} cannot dump this PostgreSQL {server} server; "
            f"install the PostgreSQL {server} client tools or newer (Debian: apt-get install "
            f"postgresql-client-{server})"
        )


def _pg_dump(partial: Path) -> None:
    args, env = _pg_command("pg_dump", ["--format=custom", "--no-password", f"--file={partial}"])
    answer = _run(args, env)
    if answer.returncode != 0:
        raise BackupError(f"pg_dump failed (exit {answer.returncode}): {answer.stderr.strip()}")


# --- restore --------------------------------------------------------------------------------


def check_file(path: Path) -> str:
    """The engine of the backup at ``path``, refused unless it is the configured database's."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"{path} is not a file")
    kind, found = engine(), file_engine(path)
    if found is None:
        raise BackupError(f"{path} is not a backup: neither {ENGINES['sqlite']} nor {ENGINES['postgresql']}")
    if found != kind:
        raise BackupError(
            f"{path} is {ENGINES[found]}, but the configured database (DATABASE_URL) is {kind}: "
            f"restore it into a {found} database, or use a backup of this one"
        )
    return kind


def tables_with_data() -> list[str]:
    """Tables of the configured database that hold rows ``migrate`` did not write itself."""
    return queries.tables_with_rows(MIGRATE_TABLES)


def restore(path: Path, *, force: bool = False) -> Restored:
    """Replace the configured database's contents with the backup at ``path``.

    Refused when the database already holds data, unless ``force``: a restore over the live
    database (a typo in DATABASE_URL) loses everything written since the backup."""
    path = Path(path)
    kind = check_file(path)
    source = _sqlite_check(path) if kind == "sqlite" else _pg_describe(path)
    held = tables_with_data()
    if held and not force:
        listed = ", ".join(held[:5]) + (f" and {len(held) - 5} more" if len(held) > 5 else "")
        raise BackupError(
            f"the configured database already holds data ({listed}): a restore replaces it all. "
            "Restore into an empty database, or add --force to replace it"
        )
    connection.close()  # the copy replaces tables under this connection's feet
    (_sqlite_restore if kind == "sqlite" else _pg_restore)(path)
    pending = pending_migrations()
    # An older backup lacks the tables of newer models: nothing to count before ``migrate``.
    return Restored(path, path.stat().st_size, kind, source, {} if pending else counts(), pending)


def _sqlite_check(path: Path) -> list[str]:
    """Refuse a damaged file or one that is not this app's database, before the target is touched."""
    backup_file = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        problems = [row[0] for row in backup_file.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise BackupError(f"{path} is damaged: {'; '.join(problems[:3])}")
        if not backup_file.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'django_migrations'"
        ).fetchone():
            raise BackupError(f"{path} is a SQLite file but not a database of this app (no django_migrations table)")
    except sqlite3.DatabaseError as error:
        raise BackupError(f"{path} cannot be read as a SQLite database: {error}") from None
    finally:
        backup_file.close()
    return []


def _sqlite_restore(path: Path) -> None:
    # Through the backup API too: the target is written in one transaction (a failure leaves it as
    # it was) and under SQLite's locks, never by replacing a file some process may hold open.
    backup_file = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(_sqlite_name(), timeout=20)
    try:
        backup_file.backup(target)
    except sqlite3.Error as error:
        raise BackupError(f"restoring {path} failed, the database is unchanged: {error}") from None
    finally:
        target.close()
        backup_file.close()


def _pg_describe(path: Path) -> list[str]:
    """The dump's own header (database, server version, date), read by pg_restore: a pg_restore too
    old for the dump's format says so here, before the target is touched."""
    args, env = _pg_command("pg_restore", [])
    answer = _run([args[0], "--list", str(path)], env)
    if answer.returncode != 0:
        raise BackupError(f"pg_restore cannot read {path}: {answer.stderr.strip()}")
    wanted = ("Archive created at", "dbname:", "Dumped from database version:", "Dumped by pg_dump version:")
    header = (line.lstrip("; ").strip() for line in answer.stdout.splitlines() if line.startswith(";"))
    return [line for line in header if line.startswith(wanted)]


def _pg_restore(path: Path) -> None:
    # --clean --if-exists: drop what the dump recreates (nothing to drop in an empty database);
    # --no-owner --no-privileges: the objects belong to the configured user, whoever owned them in
    # the source; --single-transaction: all or nothing.
    args, env = _pg_command("pg_restore", ["--dbname"])
    args += [
        "--clean",
        "--if-exists",
        "--no-owner",
        "--no-privileges",
        "--single-transaction",
        "--exit-on-error",
        "--no-password",
        str(path),
    ]
    answer = _run(args, env)
    if answer.returncode != 0:
        raise BackupError(
            f"pg_restore failed (exit {answer.returncode}), the database is unchanged: {answer.stderr.strip()}"
        )


def counts() -> dict[str, int]:
    """What the database holds, in the words of the app's pages."""
    from django.contrib.auth import get_user_model

    from annotation.corpus.models import Dataset, Topic
    from annotation.history.models import Change
    from annotation.lightweight.models import LightweightPyramid
    from annotation.peers.models import AnnotationScore, PeerAnnotation
    from annotation.pyramids.models import Pyramid

    models = {
        "datasets": Dataset,
        "topics": Topic,
        "pyramids": Pyramid,
        "peer annotations": PeerAnnotation,
        "stored scores": AnnotationScore,
        "history records": Change,
        "lightweight pyramids": LightweightPyramid,
        "users": get_user_model(),
    }
    return {label: model.objects.count() for label, model in models.items()}


def pending_migrations() -> list[str]:
    """Migrations of this code the restored database lacks (a backup made by an older version)."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
