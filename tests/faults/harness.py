"""A whole production stack of our own for the fault tests: a PostgreSQL cluster and a redis-server
started from the machine's binaries on ports of their own (never the shared services), gunicorn,
the two Celery workers (scores; dashboards, their own queue) and beat, as docker-compose.yml runs
them, with the production timings. Each piece can be stopped, killed and started again."""

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import requests

from tests import run_scoped
from tests.conftest import REPO
from tests.faults import cleanup


def worker_number() -> int:
    """This pytest-xdist worker's number (gw2 -> 2; 0 outside xdist): the stacks of workers running at
    once look for ports in ranges of their own, never racing for the same free port."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


REDIS_PORTS = range(6391 + 10 * worker_number(), 6396 + 10 * worker_number())
# The Celery processes, as docker-compose.yml runs them (the scores worker in one process here).
SCORES_WORKER = ("worker", "-Q", "celery", "-n", "scores@%h", "--pool", "solo")
DASHBOARDS_WORKER = ("worker", "-Q", "dashboards", "-n", "dashboards@%h", "--concurrency", "2")
POSTGRES_PORTS = range(55433 + 10 * worker_number(), 55436 + 10 * worker_number())


def postgres_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return Path(found[-1]).parent if found else None


def missing_binaries() -> str | None:
    if not shutil.which("redis-server"):
        return "redis-server is not installed"
    if postgres_bin() is None:
        return "PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed"
    return None


def free_port(candidates=None, taken=()) -> int:
    for port in candidates or [0]:
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError(f"no free port among {list(candidates)}")


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception:
            value = None
        if value:
            return value
        time.sleep(interval)
    raise TimeoutError(f"{what} did not happen within {timeout:.0f} s")


@contextmanager
def running(stack, settle: float | None = None):
    """``stack`` started (and, with ``settle``, everything current within that many seconds) for the
    ``with`` block, its logs printed if anything fails, always closed: the fault and scale suites'
    module fixtures."""
    try:
        stack.start()
        if settle:
            stack.current(settle)
        yield stack
    except BaseException:
        print(stack.logs())
        raise
    finally:
        stack.close()


def log_ends(stack, *names: str) -> dict[str, int]:
    """Where each of these processes' logs ends now (``assert_no_task_given_up`` reads what follows)."""
    return {
        name: (stack.root / f"{name}.log").stat().st_size if (stack.root / f"{name}.log").exists() else 0
        for name in names
    }


def assert_no_task_given_up(stack, since: dict[str, int]):
    """No task ended in an error in these logs since ``log_ends``: e.g. a request retried while a
    copy ran, then dropped with its ids still marked pending (Celery's default retry limit,
    ``annotation/jobs/task_lock.py``)."""
    for name, offset in since.items():
        with (stack.root / f"{name}.log").open("rb") as log:
            log.seek(offset)
            text = log.read().decode(errors="replace")
        assert "raised unexpected" not in text and "MaxRetriesExceeded" not in text, f"{name}.log: {text[-3000:]}"


def together(*calls):
    """Run the calls at the same moment from their own threads; their responses."""
    barrier, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(i, call):
        barrier.wait()
        results[i] = call()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class Postgres:
    def __init__(self, root: Path, port: int, record: Path | None = None):
        self.port = port
        self.dir = root / "pg"
        self.bin = postgres_bin()
        cleanup.note(record, f"postgres {self.dir}")

    def create(self, copied: Path | None = None):
        """The cluster's data directory: a new empty cluster (initdb), or a copy of ``copied``'s
        (a cluster stopped cleanly: the copy starts without recovery)."""
        if copied:
            subprocess.run(["cp", "-a", str(copied), str(self.dir)], check=True, capture_output=True)
            return
        self.dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        subprocess.run(
            _as_postgres([str(self.bin / "initdb"), "-D", str(self.dir), "-A", "trust", "-U", "postgres", "--no-sync"]),
            check=True,
            capture_output=True,
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/pyramid"

    def start(self):
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.dir),
                    "-o",
                    options,
                    "-l",
                    str(self.dir / "log"),
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def createdb(self):
        subprocess.run(
            [str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "pyramid"],
            check=True,
            capture_output=True,
        )

    def stop(self, mode: str = "immediate"):
        subprocess.run(
            _as_postgres([str(self.bin / "pg_ctl"), "-D", str(self.dir), "-m", mode, "-w", "stop"]),
            capture_output=True,
        )
        try:  # pg_ctl could not stop it: the postmaster's session (pg_ctl starts it in one of its own)
            os.killpg(int((self.dir / "postmaster.pid").read_text().split()[0]), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass

    def sql(self, statement: str):
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=pyramid", autocommit=True) as conn:
            return conn.execute(statement).fetchall()


class Process:
    """A child process we started (and only those are ever signalled)."""

    def __init__(self, cmd: list[str], env: dict, log: Path, cwd: Path = REPO, piped: bool = False):
        """``piped``: its standard input and output are pipes of ours (its errors go to the log)."""
        self.cmd, self.env, self.log, self.cwd, self.piped = cmd, env, log, cwd, piped
        self.proc: subprocess.Popen | None = None
        self.started: float | None = None  # time.time() of the last start

    def start(self):
        self.started = time.time()
        self.proc = subprocess.Popen(
            self.cmd,
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.PIPE if self.piped else None,
            stdout=subprocess.PIPE if self.piped else self.log.open("ab"),
            stderr=self.log.open("ab") if self.piped else subprocess.STDOUT,
            text=self.piped,
            start_new_session=True,
        )
        cleanup.note(self.env.get(cleanup.RECORD), f"group {cleanup.ident(self.proc.pid)}")

    def send(self, sig=signal.SIGTERM) -> bool:
        """Send ``sig`` to the process and its children (its own session, nothing else); False if it had exited."""
        if self.proc is None or self.proc.poll() is not None:
            return False
        os.killpg(self.proc.pid, sig)
        return True

    def stop(self, sig=signal.SIGTERM, timeout: float = 20):
        if self.send(sig):
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None:
            try:  # what is left of its session once it is gone (a shell's children, a master's workers)
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout) if self.piped else ():
                pipe.close()

    def kill(self):
        self.stop(signal.SIGKILL)


RECOVERY_TIMINGS = ("CELERY_VISIBILITY_TIMEOUT", "SWEEP_SECONDS", "TASK_LOCK_SECONDS", "DASHBOARD_DEBOUNCE_SECONDS")


def app_env(database_url: str, redis_port: int, record: Path, env: dict | None = None) -> dict:
    """The settings of a stack's processes: this environment's, on the stack's own database and Redis,
    in development mode unless ``env`` says otherwise. The recovery timings are the defaults' (the
    bounds asserted are production's), whatever this environment says; only ``env`` may set them (the
    long dashboards' scaled timings: a module's ``STACK_SETTINGS``, conftest.py)."""
    not_inherited = {"DATABASE_URL", "REDIS_URL", *RECOVERY_TIMINGS}
    return {
        **{k: v for k, v in os.environ.items() if k not in not_inherited},
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "DEBUG": "1",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SETTINGS_MODULE": "pyramid_app.settings",
        **(env or {}),
        cleanup.RECORD: str(record),
    }


def redis_server(port: int, env: dict, log: Path) -> Process:
    return Process(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], env, log
    )


def demo_cluster() -> Path:
    """The data directory of a PostgreSQL cluster migrated and loaded with the demo (``manage.py
    migrate``, ``load_demo``, as a deployment starts), made once for the test run
    (``run_scoped.made_once``), which each stack copies instead of making its own: 13 CPU-s of
    Django's a stack (migrate 6.9, load_demo 5.5, initdb 0.8) and PostgreSQL's own, 4 stacks a run.
    Made in development mode, which the demo's rows do not depend on (the scale stack, in production
    mode, copies it too)."""
    return run_scoped.made_once(f"demo-{run_scoped.sources_digest(str(postgres_bin()))}", _build_demo_cluster) / "pg"


def _build_demo_cluster(folder: Path, record: Path):
    """migrate and load_demo with a redis-server of their own, then the cluster stopped cleanly. What
    the demo's saves published is dropped with that Redis: a stack's workers find the demo's results
    stale at their start (their start's sweep), where they found its messages queued before."""
    postgres = Postgres(folder, free_port(POSTGRES_PORTS), record)
    redis_port = free_port(REDIS_PORTS)
    env = app_env(postgres.url, redis_port, record)
    redis = redis_server(redis_port, env, folder / "redis.log")
    postgres.create()
    postgres.start()
    redis.start()
    try:
        postgres.createdb()
        wait_for(lambda: socket.create_connection(("127.0.0.1", redis_port), 1).close() or True, 20, "redis start")
        for command in (["migrate", "--noinput"], ["load_demo"]):
            subprocess.run([sys.executable, "manage.py", *command], env=env, cwd=REPO, check=True, capture_output=True)
    finally:
        redis.stop()
        postgres.stop("fast")


class Stack:
    """``ports``: where to look for free ports (PostgreSQL, Redis, the web); ``env``: settings over
    the fault tests' (development mode), e.g. production's (tests/scale)."""

    def __init__(self, ports: range | None = None, env: dict | None = None):
        cleanup.sweep()  # the stacks of a run killed before it could close them
        self.root = Path(tempfile.mkdtemp(prefix="pyramid-faults-"))
        os.chmod(self.root, 0o755)
        self.record = cleanup.open_record(self.root)
        cleanup.watch(self)
        self.ports, self.taken = ports, []
        self.postgres = Postgres(self.root, self.port(POSTGRES_PORTS), self.record)
        self.redis_port = self.port(REDIS_PORTS)
        self.web_port = self.port()
        self.env = app_env(self.postgres.url, self.redis_port, self.record, env)
        self.redis = redis_server(self.redis_port, self.env, self.root / "redis.log")
        self.prober: Process | None = None  # probe.py serving, once asked (``probe``)
        self.probing = threading.Lock()
        self.web = Process(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "pyramid_app.wsgi",
                "-w",
                "2",
                "-b",
                f"127.0.0.1:{self.web_port}",
                "--timeout",
                "30",
            ],
            self.env,
            self.root / "web.log",
        )
        self.worker = self.celery(*SCORES_WORKER, name="scores")
        self.dashboards = self.celery(*DASHBOARDS_WORKER, name="dashboards")
        self.beat = self.celery("beat", "-s", str(self.root / "beat"), name="beat")

    def port(self, default: range | None = None) -> int:
        """A free port (from ``ports``, else ``default``, else any), never one handed out before."""
        port = free_port(self.ports or default, self.taken)
        self.taken.append(port)
        return port

    def celery(
        self,
        *args: str,
        name: str,
        program: str | None = None,
        env: dict | None = None,
        loglevel: str = "WARNING",
        cwd: Path = REPO,
    ) -> Process:
        """A Celery process logging to ``name``.log (``program``: a script taking Celery's command line)."""
        command = [sys.executable, program] if program else [sys.executable, "-m", "celery"]
        return Process(
            [*command, "-A", "pyramid_app", *args, "--loglevel", loglevel],
            {**self.env, **(env or {})},
            self.root / f"{name}.log",
            cwd,
        )

    def probe(self, *args: str) -> dict:
        """``probe.py``'s answer to ``args``, each in a process of its own forked by one probe.py serving
        this stack: a new process (nothing kept from an earlier probe), without Django's start (1 CPU-s)
        for each, which ``current`` pays every second it waits."""
        with self.probing:
            if self.prober is None or self.prober.proc.poll() is not None:
                self.prober = Process(
                    [sys.executable, str(REPO / "tests" / "faults" / "probe.py"), "serve"],
                    self.env,
                    self.root / "probe.log",
                    piped=True,
                )
                self.prober.start()
            self.prober.proc.stdin.write(json.dumps(args) + "\n")
            self.prober.proc.stdin.flush()
            line = self.prober.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"probe.py {' '.join(args)}: exited; {(self.root / 'probe.log').read_text()[-3000:]}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"probe.py {' '.join(args)}: {answer['error']}")
        return answer["answer"]

    def services(self) -> list[Process]:
        """The app's processes, in the order they start (and stop the other way round)."""
        return [self.worker, self.dashboards, self.beat, self.web]

    def start(self):
        self.redis.start()
        self.prepare()
        wait_for(lambda: socket.create_connection(("127.0.0.1", self.redis_port), 1).close() or True, 20, "redis start")
        for process in self.services():
            process.start()
        self.wait_ready()

    def prepare(self):
        """The database, before any process of the app starts: a copy of this run's demo cluster
        (``demo_cluster``: migrated, the demo loaded) started; a stack's own, whatever it does to it."""
        self.postgres.create(demo_cluster())
        self.postgres.start()

    def wait_ready(self):
        wait_for(lambda: requests.get(self.url("/healthz"), timeout=2).ok, 60, "gunicorn start")

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.web_port}{path}"

    def current(self, timeout: float = 60) -> dict:
        """Wait until nothing is stale; the probe's last state."""
        state = {}

        def settled():
            state.update(self.probe("state"))
            return not (state["stale_annotations"] or state["stale_topics"] or state["stale_dashboards"])

        try:
            wait_for(settled, timeout, "every score, agreement and dashboard current", interval=1)
        except TimeoutError as late:  # say what is still stale: the next step of whoever reads it
            raise TimeoutError(
                f"{late}; still stale: annotations {state.get('stale_annotations')}, "
                f"topics {state.get('stale_topics')}, dashboards {state.get('stale_dashboards')}"
            ) from None
        return state

    def close(self):
        processes = [*reversed(self.services()), self.redis, *([self.prober] if self.prober else [])]
        for process in processes:  # all shut down at once, then each waited for
            process.send()
        for process in processes:
            process.stop(timeout=5)
        self.postgres.stop()
        shutil.rmtree(self.root, ignore_errors=True)
        cleanup.closed(self, self.record)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in self.root.glob("*.log"))


def client(stack, username: str) -> requests.Session:
    """An API client of ``username`` (its token) on ``stack``, sending ``If-Match: *``."""
    session = requests.Session()
    session.headers.update({"Authorization": f"Token {stack.probe('token', username)['token']}", "If-Match": "*"})
    return session
