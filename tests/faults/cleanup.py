"""No stack outlives the test run that started it (the fault and scale suites' PostgreSQL, Redis,
HAProxy, gunicorn, Celery workers and beat), also when the run is interrupted:

- Ctrl+C (SIGINT) and a timeout's SIGTERM both raise ``KeyboardInterrupt`` in the test process, so
  pytest unwinds through the stacks' fixtures and each stack's ``close()`` runs;
- at exit, any stack still open (an interrupted teardown) is closed;
- a run killed outright (SIGKILL, or an xdist worker torn down) cannot clean up: each stack keeps a
  record (``RECORDS``) of its owner (the test process's pid and start time), its folder, its
  PostgreSQL cluster and the process group of every process it started (each runs in a session of
  its own, children included); ``sweep()``, at each session's start and end, kills what the records
  of gone owners name. A live run's stacks (another checkout's suite) are left alone.

What a run makes once for all its processes (``tests/run_scoped.py``: the stacks' demo cluster, the
lock of the workers' template database) is recorded the same way, owned by the run's process (xdist's
controller): swept at the run's end by that process (``sweep(ended=True)``), or by the next run.

Processes are found by their process group, not by name or environment: redis-server and
PostgreSQL's backends rewrite their command line, and with it the environment /proc shows.
"""

import atexit
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

RECORD = "PYRAMID_STACK_RECORD"  # in a stack's environment: its record, for the processes it starts
RECORDS = Path(tempfile.gettempdir()) / "pyramid-stacks"
# What is made once for a whole test run (``tests/run_scoped.made_once``), owned by the run's process.
RUN_SCOPED = "pyramid-faults-run-"
OPEN: list = []  # the stacks of this process not closed yet


def started_at(pid: int) -> str | None:
    """The process's start time (clock ticks since boot), telling it apart from a later one with its
    pid; None once it has exited (a zombie no parent reaped yet included: orphans wait for init)."""
    stat = _stat(pid)
    return stat[19] if stat and stat[0] != "Z" else None


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name (state first)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def ident(pid: int) -> str:
    return f"{pid}:{started_at(pid)}"


def alive(ident_: str) -> bool:
    pid, _, start = ident_.partition(":")
    return pid.isdigit() and started_at(int(pid)) == start


def open_record(root: Path, owner: int | None = None) -> Path:
    """A new stack's record, owned by ``owner`` (default: this process)."""
    RECORDS.mkdir(exist_ok=True)
    record = RECORDS / root.name
    record.write_text(f"owner {ident(owner or os.getpid())}\nroot {root}\n")
    return record


def run_owner() -> int:
    """The process of this test run: pytest-xdist's controller (each worker's parent), else this one."""
    return os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()


def note(record: str | Path | None, line: str) -> None:
    """Add ``line`` to a stack's record (nothing for a process started outside a stack)."""
    if record:
        with open(record, "a") as file:
            file.write(line + "\n")


def read(record: Path) -> dict[str, list[str]]:
    entries: dict[str, list[str]] = {}
    for line in record.read_text().splitlines():
        key, _, value = line.partition(" ")
        entries.setdefault(key, []).append(value)
    return entries


def processes(record: Path) -> list[int]:
    """The live processes of a record's stack: the members of its process groups (those started after
    the group's leader, should the leader be gone and its pid reused) and its PostgreSQL cluster's."""
    entries = read(record)
    groups = {}
    for group in entries.get("group", []):
        pid, _, start = group.partition(":")
        groups[int(pid)] = int(start)
    for pgdata in entries.get("postgres", []):
        try:
            pid = int((Path(pgdata) / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        start = started_at(pid)
        if start and pgdata in command_line(pid):
            groups[pid] = int(start)  # pg_ctl starts the postmaster in a session of its own
    found = []
    for entry in Path("/proc").iterdir():
        stat = _stat(int(entry.name)) if entry.name.isdigit() else None
        if stat and stat[0] != "Z" and int(stat[2]) in groups and int(stat[19]) >= groups[int(stat[2])]:
            found.append(int(entry.name))
    return found


def sweep(ended: bool = False) -> list[int]:
    """Kill the processes of the stacks whose owner is gone, remove their folders; the pids killed.
    ``ended``: this process's test run is over, what was made once for it (``RUN_SCOPED``) goes too."""
    killed, me = [], ident(os.getpid())
    for record in RECORDS.glob("pyramid-faults-*") if RECORDS.is_dir() else []:
        try:
            entries = read(record)
        except OSError:
            continue
        owner = entries.get("owner", [""])[0]
        if alive(owner) and not (ended and owner == me and record.name.startswith(RUN_SCOPED)):
            continue
        for pid in processes(record):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
        for root in entries.get("root", []):
            shutil.rmtree(root, ignore_errors=True)
        record.unlink(missing_ok=True)
    return killed


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def _close_open():
    for stack in list(OPEN):
        try:
            stack.close()
        except BaseException:
            pass


def watch(stack) -> None:
    """``stack`` is closed even if the run is interrupted (see the module's docstring)."""
    if not OPEN and not getattr(watch, "installed", False):
        watch.installed = True
        atexit.register(_close_open)
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _interrupt)
    OPEN.append(stack)


def closed(stack, record: Path) -> None:
    """``stack`` closed: nothing of it left to sweep."""
    if stack in OPEN:
        OPEN.remove(stack)
    record.unlink(missing_ok=True)
