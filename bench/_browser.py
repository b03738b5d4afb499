"""Shared plumbing of the browser benchmarks (bench/builder_ui.py, bench/annotator_ui.py).

A fresh database with DUC 2006 imported, the app served by a real server in a subprocess on
127.0.0.1 (static files included), optionally a real Celery worker subprocess, and Debian's
Chromium driven headless by Playwright. Not a test: the scripts print numbers.
"""

import atexit
import contextlib
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _chromium import CHROMIUM_FLAGS  # bench/ is on sys.path, as for every bench module

REPO = Path(__file__).resolve().parent.parent
DUC2006 = REPO.parent / "shared" / "data" / "duc2006"
PASSWORD = "a-long-bench-password"
VENV_BIN = Path(sys.executable).parent


def add_common_arguments(parser) -> None:
    parser.add_argument(
        "--data", default=str(DUC2006), help="the DUC 2006 pyramids and peer annotations (default: %(default)s)"
    )
    parser.add_argument(
        "--server",
        choices=["gunicorn", "runserver"],
        default="gunicorn",
        help="gunicorn (pyramid_app/gunicorn_conf.py, as docker-compose; static files by WhiteNoise) or "
        "`manage.py runserver --insecure --noreload` (default: %(default)s)",
    )
    parser.add_argument(
        "--chromium", default=os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    )
    parser.add_argument("--keep-db", action="store_true", help="leave the temporary SQLite file (its path is printed)")


def check_prerequisites(args) -> None:
    if not Path(args.data).is_dir():
        sys.exit(
            f"no data at {args.data}: the DUC 2006 pyramids live in ../shared/data/duc2006 (beside the repository)"
        )
    if not Path(args.chromium).exists():
        sys.exit(
            f"no Chromium at {args.chromium}: apt-get install chromium (never `playwright install`), or "
            "set CHROMIUM_PATH"
        )


def setup_django(keep_db: bool = False) -> dict:
    """Configure Django for this process against a fresh database; returns the environment for
    the server and worker subprocesses.

    This process always imports with tasks run in-process (eager: scores are current when the
    import ends, so a worker starts with nothing to catch up on). REDIS_URL, when set, is passed
    on to the server and the worker only.
    """
    global _TMP, _KEEP_DB
    _KEEP_DB = keep_db
    atexit.register(_at_exit)
    if "DATABASE_URL" not in os.environ:
        _TMP = tempfile.mkdtemp(prefix="pyramid-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{_TMP}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DEBUG"] = "1"  # the development secret key is accepted; static files come from the app folders
    child_env = dict(os.environ)
    child_env["PYTHONUNBUFFERED"] = "1"
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    return child_env


def production_env(env: dict) -> dict:
    """The server's and worker's environment: DEBUG off, as deployed, but over plain HTTP on loopback."""
    return {
        **env,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "HSTS_SECONDS": "0",
    }


def collect_static(env: dict) -> None:
    """DEBUG off serves the collected, hashed files (WhiteNoise): collect them as the Dockerfile does
    (the browser libraries must be installed: ``make vendor``)."""
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True
    )


_TMP = None
_KEEP_DB = False
_CLEANED = False
_LOG_DIRS: list[Path] = []


def make_log_dir() -> Path:
    """A temporary folder for the server's and the worker's output (removed by cleanup, or at exit)."""
    path = Path(tempfile.mkdtemp(prefix="pyramid-bench-logs-"))
    _LOG_DIRS.append(path)
    return path


def cleanup(keep_db: bool, log_dir: Path | None = None) -> None:
    """Remove the logs and the temporary SQLite database (unless keep_db: then its path is printed).
    Also run at exit (with setup_django's keep_db) when a script ends without calling it."""
    global _CLEANED
    _CLEANED = True
    for path in [*_LOG_DIRS, *([log_dir] if log_dir else [])]:
        shutil.rmtree(path, ignore_errors=True)
    if _TMP is None:
        return
    with contextlib.suppress(Exception):
        close_db_connections()
    if keep_db:
        print(f"database kept: {_TMP}/bench.sqlite3")
    else:
        shutil.rmtree(_TMP, ignore_errors=True)


def _at_exit() -> None:
    if not _CLEANED:
        cleanup(_KEEP_DB)


def fresh_database_with_duc2006(data: str):
    """Flush (PostgreSQL) or create (SQLite), migrate, import DUC 2006; returns the import report."""
    return fresh_database_with([data], "bench-duc2006", data)


def fresh_database_with(paths: list, dataset_name: str, label: str):
    """Flush (PostgreSQL) or create (SQLite), migrate, import the DUCView files or folders ``paths``
    into the dataset ``dataset_name``; returns the import report."""
    from django.core.management import call_command
    from django.db import connection

    from annotation.transfer.ducview_import import import_paths

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    report = import_paths(paths, dataset_name)
    print(
        f"imported {label}: {report.files} files, {report.annotations_created} peer annotations "
        f"in {time.perf_counter() - start:.1f} s",
        flush=True,
    )
    return report


def create_user(username: str):
    from django.contrib.auth.models import User

    return User.objects.create_user(username, password=PASSWORD)


def close_db_connections() -> None:
    from django.db import connections

    connections.close_all()


def database_label() -> str:
    from django.db import connection

    if connection.vendor == "sqlite":
        name = connection.settings_dict["NAME"]
        return (
            f"SQLite {connection.Database.sqlite_version} "
            f"({'a temporary file' if _TMP and str(name).startswith(_TMP) else name})"
        )
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        version = cursor.fetchone()[0]
    return (
        f"PostgreSQL {version} ({connection.settings_dict['NAME']} on {connection.settings_dict['HOST'] or 'socket'})"
    )


def cpu_seconds(pids) -> dict[int, float]:
    """User + system CPU seconds of each live process among ``pids`` (Linux /proc; gone ones are left out)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return found


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (e.g. a gunicorn master and its workers)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def machine_line(server: str, tasks: str) -> str:
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {database_label()}, server {server}, tasks {tasks}"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_session(process, timeout: float) -> None:
    """Stop a process started in a session of its own (``start_new_session``): TERM to the process and
    its children only, KILL if they are not gone within ``timeout`` seconds."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def _process(command: list[str], env: dict, name: str, log_dir: Path):
    log_path = log_dir / f"{name}.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield process, log_path
    finally:
        stop_session(process, timeout=20)
        log.close()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def server(kind: str, env: dict, log_dir: Path, pids: list | None = None, config: str = "pyramid_app/gunicorn_conf.py"):
    """The app on http://127.0.0.1:<free port>, serving static files; yields its base URL (and
    appends the server's process id to ``pids``, for measuring its CPU time). ``config``:
    gunicorn's configuration file (``bench/_app_profile.py`` measures each request)."""
    port = free_port()
    if kind == "gunicorn":
        command = [
            str(VENV_BIN / "gunicorn"),
            "pyramid_app.wsgi",
            "-c",
            config,
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ]
    else:
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--insecure", "--noreload"]
    base = f"http://127.0.0.1:{port}"
    with _process(command, env, "server", log_dir) as (process, log_path):
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                sys.exit(f"the server ({' '.join(command)}) exited with {process.returncode}:\n{_tail(log_path)}")
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                sys.exit(f"the server did not answer {base}/healthz within 60 s:\n{_tail(log_path)}")
            time.sleep(0.2)
        if pids is not None:
            pids.append(process.pid)
        yield base


def compose_worker_options(service: str) -> list[str]:
    """The options docker-compose.yml gives the Celery worker of ``service`` (queue, pool, what it
    leaves out), less its name and log level, which a bench sets itself: benches that measure the
    production shape run the workers exactly as deployed."""
    import shlex

    import yaml

    command = shlex.split(yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"][service]["command"])
    options = command[command.index("worker") + 1 :]
    kept, skip = [], False
    for option in options:
        if skip:
            skip = False
        elif option in ("-n", "--hostname"):
            skip = True
        elif not option.startswith("--loglevel"):
            kept.append(option)
    return kept


@contextlib.contextmanager
def celery_worker(
    env: dict, log_dir: Path, redis_url: str, task_cpu_log: Path | None = None, profile_dir: Path | None = None
):
    """A real Celery worker subprocess (as docker-compose runs it), ready when this yields.
    ``task_cpu_log``: each task's CPU time is appended there (``bench/_task_cpu.py``), and with
    ``profile_dir`` each task kind's cProfile is written there."""
    from celery import Celery

    hostname = f"bench-{os.getpid()}@{socket.gethostname()}"
    command = [
        str(VENV_BIN / "celery"),
        "-A",
        "pyramid_app",
        "worker",
        "--concurrency=2",
        "--loglevel=warning",
        "--hostname",
        hostname,
    ]
    if task_cpu_log is not None:
        command[0:1] = [sys.executable, str(Path(__file__).resolve().parent / "_task_cpu.py")]
        env = {
            **env,
            "BENCH_TASK_CPU_LOG": str(task_cpu_log),
            **({"BENCH_TASK_PROFILE_DIR": str(profile_dir)} if profile_dir else {}),
        }
    control = Celery("bench-control", broker=redis_url, backend=redis_url)
    control.bench_worker = hostname
    with _process(command, env, "worker", log_dir) as (process, log_path):
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                sys.exit(f"the Celery worker exited with {process.returncode}:\n{_tail(log_path)}")
            if control.control.ping(destination=[hostname], timeout=1.0):
                break
            if time.monotonic() > deadline:
                sys.exit(f"the Celery worker did not answer a ping within 60 s:\n{_tail(log_path)}")
        control.bench_pid = process.pid
        yield control
        if process.poll() is not None:
            print(f"warning: the Celery worker exited early ({process.returncode}):\n{_tail(log_path)}")


def wait_worker_idle(control, timeout: float = 120.0) -> float:
    """Wait until the worker has nothing active, reserved or scheduled (e.g. its start-up sweep);
    returns seconds waited."""
    start = time.monotonic()
    quiet = 0
    while time.monotonic() - start < timeout:
        inspect = control.control.inspect(destination=[control.bench_worker], limit=1, timeout=2.0)
        busy = 0
        for method in (inspect.active, inspect.reserved, inspect.scheduled):
            busy += sum(len(v) for v in (method() or {}).values())
        quiet = quiet + 1 if busy == 0 else 0
        if quiet >= 2:
            return time.monotonic() - start
        time.sleep(0.3)
    sys.exit(f"the Celery worker was still busy after {timeout:.0f} s")


@contextlib.contextmanager
def chromium(path: str):
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, errors: list):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(30_000)
    return context, page


def login(page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")


def word_windows(page, selector: str, size: int = 2) -> list[tuple[int, int, str]]:
    """Successive non-overlapping windows of ``size`` words of the element's text:
    [(start, end, phrase)] in UTF-16 offsets of its textContent."""
    return [
        tuple(w)
        for w in page.evaluate(
            """([selector, size]) => {
            const text = document.querySelector(selector).textContent;
            const words = [...text.matchAll(/[\\p{L}\\p{N}]+(?:['’.-][\\p{L}\\p{N}]+)*/gu)]
                .map((m) => [m.index, m.index + m[0].length]);
            const out = [];
            for (let i = 0; i + size <= words.length; i += size) {
                const [start, end] = [words[i][0], words[i + size - 1][1]];
                out.push([start, end, text.slice(start, end)]);
            }
            return out;
        }""",
            [selector, size],
        )
    ]


def select_range(page, selector: str, start: int, end: int) -> None:
    """Select [start, end) (UTF-16 offsets of the element's textContent) programmatically and
    send the mouseup the editors listen to (as tests/browser/editors/browser.py program_select)."""
    page.evaluate(
        """([selector, start, end]) => {
            const root = document.querySelector(selector);
            const locate = (u16) => { const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
                for (let n = w.nextNode(); n; n = w.nextNode()) { if (off + n.data.length >= u16) return [n,
                  u16 - off]; off += n.data.length; }
                throw new Error(`offset ${u16} outside the text`); };
            const r = document.createRange(); r.setStart(...locate(start)); r.setEnd(...locate(end));
            getSelection().removeAllRanges(); getSelection().addRange(r);
            root.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
        }""",
        [selector, start, end],
    )


SAVED_JS = (
    "document.querySelector('.save-status')?.dataset.status === 'saved' && document.querySelector('.editor.ready') "
    "&& !document.querySelector('.editor').dataset.busy"
)


def wait_saved(page) -> None:
    page.wait_for_function(f"() => {SAVED_JS}")


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil
    return ordered[int(rank) - 1]


def median(values: list[float]) -> float:
    import statistics

    return statistics.median(values)


def summary(values_ms: list[float]) -> str:
    return (
        f"median {median(values_ms):.0f} ms, p95 {percentile(values_ms, 95):.0f} ms "
        f"(min {min(values_ms):.0f}, max {max(values_ms):.0f}, n={len(values_ms)})"
    )
