"""Benchmark: the CPU cost of a saved match and of opening a peer, ours beside doccano and Label
Studio, everything counted (prints numbers; not a test; issue 33).

Every app runs with its own documented production settings (DEBUG off, PostgreSQL through its
documented variables) in the same server shape, one after the other: ``production`` (gunicorn as
pyramid_app/gunicorn_conf.py sets it) and ``sync`` (one gunicorn sync worker). Each gunicorn reads
bench/_app_profile.py (the production shape, plus the statements of each request counted on its
database connection), so the peers are served exactly as we are. Ours runs as docker-compose runs
it: the scores worker, the dashboards worker and beat, on a Redis server of the bench's own; doccano
with its task worker (``doccano task``) on another; Label Studio has no worker in its default set-up.
The peers live in throw-away virtualenvs outside the repository (``--peers-dir``, made with
``--install`` from PyPI); nothing of them is committed.

The work is the same for every app: ``--texts`` texts of ~``--words`` words (ours: the peers of
synthetic pyramids, bench/api_load.py; the peers get the same texts) and ``--spans`` non-overlapping
spans in each, written in the same order by the same clients. A write is what the page sends for
one match: ours ``POST /api/matches/`` as annotator.js sends it (session cookie, CSRF, If-Match,
Idempotency-Key); doccano the span POST; Label Studio the annotation POST for a text's first span
and a PATCH of the whole annotation for each next one. A read is what the annotator page fetches
to open a peer: ours ``GET /api/annotations/{id}/full/``; doccano the example and its spans; Label
Studio the task (its annotations inside).

Measured for each window, from /proc (user + system time): the app's processes (the gunicorn
master and workers), its workers (ours: both Celery workers and beat), its Redis server, and every
PostgreSQL backend of its database (pg_stat_activity, sampled every half second so a closed
connection's CPU is not lost), divided by the window's writes or reads; the statements per request
come from the app's own database connection (bench/_app_profile.py). A write window of ours closes
only when every derived figure is current (no stale work) and the workers have nothing active,
reserved or scheduled, so the jobs it caused, sweeps included, are counted. Three write shapes: one
client at a human pace (``--pace`` seconds between writes), one and ten clients at full speed;
reads with one and ten clients. The apps alternate within each round (``--rounds``), each round
starting with another app. Before the rounds, all stacks sit idle for ``--idle`` seconds: their
CPU per hour (beat's sweeps, heartbeats, polling) and each process's resident memory are printed.

    python bench/peer_cost.py --install [--peers-dir /work/peers] [--apps pyramid,doccano,label-studio]
        [--shapes production,sync] [--texts 400 --spans 20 --clients 10] [--rounds 3] [--idle 60]
"""

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (database, processes, /proc CPU, gunicorn and worker plumbing)

REPO = b.REPO
APP_PROFILE = REPO / "bench" / "_app_profile.py"
PASSWORD = "a-long-bench-password"
APPS = ("pyramid", "doccano", "label-studio")
PEER_PACKAGES = {"doccano": ["doccano[postgresql]", "marshmallow<4", "numpy<2"], "label-studio": ["label-studio"]}
SERVER_SHAPES = {
    "production": [],  # bench/_app_profile.py: pyramid_app/gunicorn_conf.py's workers, class, threads
    "sync": ["--workers", "1", "--worker-class", "sync", "--threads", "1"],
}
SHAPE_NAMES = {"production": "gunicorn as pyramid_app/gunicorn_conf.py sets it", "sync": "one gunicorn sync worker"}
SETTINGS = {
    "pyramid": "pyramid_app.settings, DEBUG=0, DATABASE_URL (PostgreSQL), REDIS_URL; the scores and dashboards "
    "workers and beat (docker-compose.yml)",
    "doccano": "config.settings.production, DEBUG=False, DATABASE_URL (PostgreSQL), its Celery broker by default "
    "(SQLAlchemy on that database); its task worker as `doccano task` starts it",
    "label-studio": "core.settings.label_studio, DEBUG=false, DJANGO_DB=default + POSTGRE_* (PostgreSQL); "
    "no worker (its default)",
}
WORDS = re.compile(r"\S+")


# --- Pure parts (tests/bench/test_peer_cost.py) ---------------------------------------------------


def span_plan(text: str, count: int, width: int = 3) -> list[tuple[int, int]]:
    """``count`` non-overlapping spans of ``width`` whole words, spread evenly over ``text``, in
    order: (start, end) character offsets. Fewer if the text has fewer than ``count * width`` words."""
    words = [m.span() for m in WORDS.finditer(text)]
    groups = min(count, len(words) // width)
    spans = []
    for i in range(groups):
        first = i * len(words) // groups
        spans.append((words[first][0], words[first + width - 1][1]))
    return spans


def parse_stat(text: str) -> tuple[int, int]:
    """From a /proc/<pid>/stat line: (user + system clock ticks, resident pages). The command name
    (between parentheses) may hold spaces and parentheses: fields are counted after the last ')'."""
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), int(fields[21])


def children_ticks(text: str) -> int:
    """From a /proc/<pid>/stat line: the clock ticks of its children that ended and were waited
    for (cutime + cstime)."""
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[13]) + int(fields[14])


def ratio(ours: float | None, peer: float | None) -> str:
    """ours / peer as ``1.23x``; a dash when either is missing or the peer's is zero."""
    if ours is None or not peer:
        return "–"
    return f"{ours / peer:.2f}x"


def per_hour(cpu_seconds: float, seconds: float) -> float:
    """CPU seconds per hour of a stack that spent ``cpu_seconds`` in ``seconds`` of wall time."""
    return cpu_seconds * 3600 / seconds if seconds > 0 else 0.0


def write_plan(clients: int, texts: int, spans: int) -> list[list[tuple[int, int]]]:
    """Each client's writes in order, as (text index, span index): client c takes the texts
    c, c + clients, c + 2 clients, ... and writes their spans one after the other."""
    return [[(t, s) for t in range(c, texts, clients) for s in range(spans)] for c in range(clients)]


# --- Processes and CPU ----------------------------------------------------------------------------


def resident(pids) -> dict[int, tuple[str, int]]:
    """Each live process's short command line and resident bytes."""
    page = os.sysconf("SC_PAGE_SIZE")
    found = {}
    for pid in pids:
        try:
            _, pages = parse_stat(Path(f"/proc/{pid}/stat").read_text())
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [
            Path(a.decode(errors="replace")).name if i == 0 else a.decode(errors="replace")
            for i, a in enumerate(argv)
            if a
        ]
        found[pid] = (" ".join(words)[:70], pages * page)
    return found


PROBE = "peercost_probe"  # the bench's own role: its queries are left out of the statement counts


def cluster_cpu(postmaster: int) -> float:
    """CPU seconds of a PostgreSQL server: every live process of it (the postmaster, its
    background processes and backends) plus what its exited children spent (the postmaster's
    cutime + cstime: a backend's CPU moves there when it ends, e.g. a connection per request)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = sum(b.cpu_seconds(b.process_tree(postmaster)).values())
    try:
        total += children_ticks(Path(f"/proc/{postmaster}/stat").read_text()) / ticks
    except OSError:
        pass
    return total


class Cluster:
    """A PostgreSQL server of one stack's own, on a free port (the machine's server is shared:
    there a backend that ends between two samples of pg_stat_activity takes its CPU with it, as
    Label Studio's connection per request does): initdb, the same version and defaults, plus
    pg_stat_statements. Its whole CPU is the stack's database's."""

    def __init__(self, log_dir: Path, name: str):
        import psycopg

        bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
        if not bins:
            sys.exit("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)")
        pg_bin = bins[-1]
        self.data = Path(tempfile.mkdtemp(prefix=f"peercost-pg-{name}-", dir=log_dir))
        as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if as_postgres:
            shutil.chown(log_dir, "postgres")
            shutil.chown(self.data, "postgres")
        subprocess.run(
            [*as_postgres, str(pg_bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8"],
            check=True,
            capture_output=True,
        )
        self.port = b.free_port()
        options = [
            "-p", str(self.port), "-k", str(self.data), "-c", "listen_addresses=127.0.0.1",
            "-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track_utility=off",
        ]  # fmt: skip
        self.log = open(log_dir / f"postgres-{name}.log", "wb")
        self.process = subprocess.Popen(
            [*as_postgres, str(pg_bin / "postgres"), "-D", str(self.data), *options],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.admin = psycopg.connect(self.url_of("postgres", "postgres"), autocommit=True)
                break
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"PostgreSQL ({name}) did not start: see {self.log.name}")
                time.sleep(0.2)
        self.postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        self.admin.execute("CREATE EXTENSION pg_stat_statements")
        self.admin.execute(f"CREATE ROLE {PROBE} SUPERUSER LOGIN")
        self.admin.close()
        self.probe = psycopg.connect(self.url_of("postgres", PROBE), autocommit=True)
        self.lock = threading.Lock()

    def url_of(self, database: str, user: str = "postgres") -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"

    def create(self, database: str) -> None:
        with self.lock:
            self.probe.execute(f'CREATE DATABASE "{database}" OWNER postgres')

    def query(self, sql: str, params=()):
        with self.lock:
            return self.probe.execute(sql, params).fetchall()

    def statements(self, database: str) -> int:
        """Statements run so far in ``database`` by anyone but the bench (pg_stat_statements)."""
        return self.query(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
            "WHERE d.datname = %s AND s.userid <> (SELECT oid FROM pg_roles WHERE rolname = %s)",
            [database, PROBE],
        )[0][0]

    def own_backends(self) -> list[int]:
        return [pid for (pid,) in self.query("SELECT pid FROM pg_stat_activity WHERE usename = %s", [PROBE])]

    def backends(self) -> list[int]:
        return [pid for (pid,) in self.query("SELECT pid FROM pg_stat_activity WHERE usename <> %s", [PROBE])]

    def version(self) -> str:
        return self.query("SHOW server_version")[0][0]

    def close(self) -> None:
        import signal

        with contextlib.suppress(Exception):
            self.probe.close()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.postmaster, signal.SIGINT)  # fast shutdown of the server this bench started
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


class DatabaseCpu:
    """A stack's database over a window: its server's CPU (``cluster_cpu``) less the bench's own
    backends' (its checks between writes), and the statements run (pg_stat_statements)."""

    def __init__(self, cluster: Cluster, database: str):
        self.cluster, self.database = cluster, database
        self.own = cluster.own_backends()
        self.before = cluster_cpu(cluster.postmaster) - sum(b.cpu_seconds(self.own).values())
        self.own_before = b.cpu_seconds(self.own)
        self.statements = cluster.statements(database)

    def stop(self) -> tuple[float, int]:
        own = sum(after - self.own_before.get(pid, 0.0) for pid, after in b.cpu_seconds(self.own).items())
        used = cluster_cpu(self.cluster.postmaster) - sum(self.own_before.values()) - own - self.before
        return used, self.cluster.statements(self.database) - self.statements


class RequestLog:
    """bench/_app_profile.py's lines of one server (``<kind> <CPU s> <wall s> <statements> ...``),
    read from an offset: the statements of the window's writes and reads."""

    def __init__(self, directory: Path):
        self.path, self.offset = directory / "requests.log", 0

    def mark(self) -> None:
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def statements(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        if not self.path.exists():
            return counts
        with open(self.path, "rb") as log:
            log.seek(self.offset)
            for line in log.read().decode().splitlines():
                fields = line.split()
                if len(fields) >= 4:
                    counts["read" if fields[0].startswith("GET") else "write"] += int(fields[3])
        return counts


class Stack:
    """One app's running processes: its server, workers and Redis, and its database's server."""

    def __init__(self, name: str, version: str, cluster: Cluster, database: str, settings: str):
        self.name, self.version, self.cluster, self.database, self.settings = name, version, cluster, database, settings
        self.server_pid = 0
        self.worker_pids: list[int] = []
        self.redis_pid: int | None = None
        self.base = ""
        self.log: RequestLog | None = None
        self.drain = None  # ours: wait until every derived figure is current

    def groups(self) -> dict[str, list[int]]:
        workers = [pid for root in self.worker_pids for pid in b.process_tree(root)]
        return {
            "app": b.process_tree(self.server_pid),
            "worker": workers,
            "redis": [self.redis_pid] if self.redis_pid else [],
        }

    def processes(self) -> list[int]:
        """Every process of the stack, its database server's included."""
        own = set(self.cluster.own_backends())
        server = [pid for pid in b.process_tree(self.cluster.postmaster) if pid not in own]
        return [pid for group in self.groups().values() for pid in group] + server


class Window:
    """The CPU of a stack's process groups and database over one window, and the statements: those
    the app's requests ran (bench/_app_profile.py) and all its database ran (pg_stat_statements)."""

    def __init__(self, stack: Stack):
        self.stack, self.groups = stack, stack.groups()
        self.before = {kind: b.cpu_seconds(pids) for kind, pids in self.groups.items()}
        if stack.log:
            stack.log.mark()
        self.database = DatabaseCpu(stack.cluster, stack.database)

    def stop(self) -> tuple[dict[str, float], dict[str, int]]:
        used = {
            kind: sum(after - self.before[kind].get(pid, 0.0) for pid, after in b.cpu_seconds(pids).items())
            for kind, pids in self.groups.items()
        }
        used["db"], server = self.database.stop()
        statements = dict(self.stack.log.statements()) if self.stack.log else {}
        statements["server"] = server
        return used, statements


# --- The peers' virtualenvs -----------------------------------------------------------------------


def venv_of(peers_dir: Path, app: str) -> Path:
    return peers_dir / f"{app}-venv"


def install(peers_dir: Path, app: str) -> None:
    """A throw-away virtualenv for ``app`` (its PyPI package and gunicorn), unless there already."""
    venv = venv_of(peers_dir, app)
    if (venv / "bin" / "gunicorn").exists() and (venv / "bin" / "python").exists():
        return
    print(f"installing {app} into {venv} (pip, PyPI)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *PEER_PACKAGES[app], "gunicorn", "psycopg2-binary"], check=True)


def venv_run(venv: Path, code: str, env: dict, cwd: Path, given) -> object:
    """Run ``code`` in the peer's Python (its Django set up by ``code``); ``given`` is its JSON
    input on stdin, and the last line it prints is its JSON answer."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    if done.returncode:
        sys.exit(f"{venv.name}: the set-up failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def package_version(venv: Path, distribution: str) -> str:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", f"import importlib.metadata as m; print(m.version({distribution!r}))"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "?"


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


# --- doccano --------------------------------------------------------------------------------------

DOCCANO_SETUP = """
import json, sys, django
django.setup()
from django.contrib.auth.models import User
from django.core.management import call_command
call_command("migrate", verbosity=0)
call_command("create_roles", verbosity=0)
from projects.models import Project, Member, SequenceLabelingProject
from roles.models import Role
from examples.models import Example
from label_types.models import SpanType
given = json.load(sys.stdin)
admin = User.objects.create_superuser("bench-admin", "admin@example.com", given["password"])
project = SequenceLabelingProject.objects.create(name="bench", description="bench", created_by=admin,
    project_type="SequenceLabeling", allow_overlapping=False)
Member.objects.create(user=admin, project=project, role=Role.objects.get(name="project_admin"))
annotator = Role.objects.get(name="annotator")
for c in range(given["clients"]):
    user = User.objects.create_user(f"bench-{c}", f"bench-{c}@example.com", given["password"])
    Member.objects.create(user=user, project=project, role=annotator)
SpanType.objects.bulk_create([SpanType(project=project, text=f"L{i + 1}") for i in range(given["labels"])])
Example.objects.bulk_create([Example(project=project, text=t) for t in given["texts"]])
labels = list(SpanType.objects.filter(project=project).order_by("id").values_list("id", flat=True))
examples = list(Example.objects.filter(project=project).order_by("id").values_list("id", flat=True))
print(json.dumps({"project": project.pk, "labels": labels, "examples": examples}))
"""


def doccano_env(venv: Path, cluster: Cluster, database: str, media: Path) -> dict:
    """doccano's production settings as its docs and its ``doccano`` command set them:
    config.settings.production (DEBUG off), DATABASE_URL (PostgreSQL), a secret key, STANDALONE; the
    Celery broker left to its default, SQLAlchemy on that same database (no CELERY_BROKER_URL)."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": cluster.url_of(database) + "?sslmode=disable",
        "DEBUG": "False",
        "STANDALONE": "True",
        "SECRET_KEY": uuid.uuid4().hex * 2,
        "MEDIA_ROOT": str(media),
        "PYTHONPATH": str(site_packages(venv) / "backend"),
        "PYTHONUNBUFFERED": "1",
    }


# --- Label Studio ---------------------------------------------------------------------------------

LABEL_STUDIO_SETUP = """
import json, sys, django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from users.models import User
from organizations.models import Organization
from projects.models import Project
from tasks.models import Task
given = json.load(sys.stdin)
owner = User.objects.create_user(email="owner@example.com", password=given["password"], username="owner")
organization = Organization.create_organization(created_by=owner, title="bench")
owner.active_organization = organization
owner.save()
for c in range(given["clients"]):
    user = User.objects.create_user(email=f"bench-{c}@example.com", password=given["password"], username=f"bench-{c}")
    organization.add_user(user)
    user.active_organization = organization
    user.save()
labels = "".join(f'<Label value="L{i + 1}"/>' for i in range(given["labels"]))
config = f'<View><Labels name="label" toName="text">{labels}</Labels><Text name="text" value="$text"/></View>'
project = Project.objects.create(title="bench", label_config=config, created_by=owner, organization=organization)
tasks = Task.objects.bulk_create(Task(project=project, data={"text": t}) for t in given["texts"])
project.update_tasks_states(maximum_annotations_changed=False, overlap_cohort_percentage_changed=False,
    tasks_number_changed=True)
print(json.dumps({"project": project.pk, "tasks": [t.pk for t in Task.objects.filter(project=project).order_by("id")]}))
"""


def label_studio_env(venv: Path, cluster: Cluster, database: str, data_dir: Path) -> dict:
    """Label Studio's production settings as its docs set them: DJANGO_DB=default with POSTGRE_*
    (PostgreSQL), DEBUG off, its data folder, its settings module."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
        "DJANGO_DB": "default",
        "POSTGRE_NAME": database,
        "POSTGRE_USER": "postgres",
        "POSTGRE_PASSWORD": "",
        "POSTGRE_HOST": "127.0.0.1",
        "POSTGRE_PORT": str(cluster.port),
        "DEBUG": "false",
        "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
        "SENTRY_DSN": "",  # no error reports sent out (this machine reaches no such host)
        "FRONTEND_SENTRY_DSN": "",
        "COLLECT_ANALYTICS": "false",
        "SECRET_KEY": uuid.uuid4().hex * 2,
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(site_packages(venv) / "label_studio"),
        "PYTHONUNBUFFERED": "1",
    }


# --- The clients ----------------------------------------------------------------------------------


class Client:
    """One annotator of one app: a logged-in session (cookie and CSRF, as the page) and its plan."""

    def __init__(self, app: str, base: str, number: int, plan, ids, rng_seed: int):
        import requests

        self.app, self.base, self.number, self.plan, self.ids = app, base, number, plan, ids
        self.session = requests.Session()
        self.cursor = 0
        self.rng = random.Random(rng_seed)
        self.revisions: dict[int, str] = {}  # ours: text -> ETag of its annotation
        self.annotations: dict[int, int] = {}  # Label Studio: text -> annotation id
        self.results: dict[int, list] = defaultdict(list)  # Label Studio: text -> its regions so far
        self.written: list[int] = []  # texts written to, in order (what the reads open)
        self.login()

    def reconnect(self, base: str) -> None:
        """The same annotator, logged in anew on another server of the same data."""
        import requests

        self.base, self.session = base, requests.Session()
        self.login()

    def csrf(self) -> dict:
        return {"X-CSRFToken": self.session.cookies.get("csrftoken", "")}

    def login(self) -> None:
        user = f"bench-{self.number}"
        if self.app == "pyramid":
            url = f"{self.base}/accounts/login/"
            self.session.get(url, timeout=60).raise_for_status()
            data = {"username": user, "password": PASSWORD, "csrfmiddlewaretoken": self.session.cookies["csrftoken"]}
            self.session.post(url, data=data, headers={"Referer": url}, timeout=60).raise_for_status()
        elif self.app == "doccano":
            self.session.get(f"{self.base}/v1/me", timeout=60)  # its CSRF cookie, as the page's first call
            response = self.session.post(
                f"{self.base}/v1/auth/login/",
                json={"username": user, "password": PASSWORD},
                headers=self.csrf(),
                timeout=60,
            )
            response.raise_for_status()
        else:
            url = f"{self.base}/user/login/"
            self.session.get(url, timeout=60).raise_for_status()
            data = {
                "email": f"{user}@example.com",
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.csrf()["X-CSRFToken"],
            }
            self.session.post(url, data=data, headers={"Referer": url}, timeout=60).raise_for_status()
        if "sessionid" not in self.session.cookies:
            sys.exit(f"{self.app}: bench-{self.number} could not log in")

    def prepare(self, count: int) -> None:
        """Ours: read the revision (ETag) of each annotation the next ``count`` writes go to, before
        the window, as the page has when it opens a peer (not a write's cost)."""
        if self.app != "pyramid":
            return
        for text, _ in self.plan[self.cursor : self.cursor + count]:
            if text not in self.revisions:
                url = f"{self.base}/api/annotations/{self.ids.annotations[text]}/full/"
                self.revisions[text] = self.session.get(url, timeout=60).headers["ETag"]

    def write(self) -> None:
        text, span = self.plan[self.cursor]
        self.cursor += 1
        start, end = self.ids.spans[text][span]
        label = span % self.ids.labels
        headers = {**self.csrf(), "Referer": self.base + "/"}
        if self.app == "pyramid":
            annotation = self.ids.annotations[text]
            if text not in self.revisions:
                self.revisions[text] = self.session.get(
                    f"{self.base}/api/annotations/{annotation}/full/", timeout=60
                ).headers["ETag"]
            response = self.session.post(
                f"{self.base}/api/matches/",
                json={
                    "annotation": annotation,
                    "scu": self.ids.scus[text][label],
                    "parts": [{"start": start, "end": end}],
                },
                headers={**headers, "If-Match": self.revisions[text], "Idempotency-Key": str(uuid.uuid4())},
                timeout=120,
            )
            expected = 201
            self.revisions[text] = response.headers.get("ETag", self.revisions[text])
        elif self.app == "doccano":
            response = self.session.post(
                f"{self.base}/v1/projects/{self.ids.project}/examples/{self.ids.examples[text]}/spans",
                json={"label": self.ids.labels_of[label], "start_offset": start, "end_offset": end},
                headers=headers,
                timeout=120,
            )
            expected = 201
        else:
            region = {
                "id": f"r{span}",
                "from_name": "label",
                "to_name": "text",
                "type": "labels",
                "origin": "manual",
                "value": {
                    "start": start,
                    "end": end,
                    "text": self.ids.texts[text][start:end],
                    "labels": [f"L{label + 1}"],
                },
            }
            self.results[text].append(region)
            task = self.ids.tasks[text]
            if text not in self.annotations:
                response = self.session.post(
                    f"{self.base}/api/tasks/{task}/annotations/?project={self.ids.project}",
                    json={"result": self.results[text], "task": task, "lead_time": 2.0},
                    headers=headers,
                    timeout=120,
                )
                expected = 201
                if response.status_code == expected:
                    self.annotations[text] = response.json()["id"]
            else:
                response = self.session.patch(
                    f"{self.base}/api/annotations/{self.annotations[text]}/?taskID={task}&project={self.ids.project}",
                    json={"result": self.results[text], "lead_time": 2.0},
                    headers=headers,
                    timeout=120,
                )
                expected = 200
        if response.status_code != expected:
            raise RuntimeError(f"{self.app} write: {response.status_code} {response.text[:300]}")
        if not self.written or self.written[-1] != text:
            self.written.append(text)

    def read(self, k: int) -> None:
        text = self.written[k % len(self.written)]
        if self.app == "pyramid":
            urls = [f"{self.base}/api/annotations/{self.ids.annotations[text]}/full/"]
        elif self.app == "doccano":
            p = self.ids.project
            urls = [
                f"{self.base}/v1/projects/{p}/examples?limit=1&offset={text}",
                f"{self.base}/v1/projects/{p}/examples/{self.ids.examples[text]}/spans",
            ]
        else:
            urls = [f"{self.base}/api/tasks/{self.ids.tasks[text]}/?project={self.ids.project}"]
        for url in urls:
            response = self.session.get(url, timeout=120)
            if response.status_code != 200:
                raise RuntimeError(f"{self.app} read {url}: {response.status_code} {response.text[:300]}")


def run_clients(clients: list[Client], action, count: int, pace: tuple[float, float] | None) -> tuple[int, list[str]]:
    """Each client does ``action(client, k)`` ``count`` times (k = 0..count-1), all clients at once;
    ``pace``: a random pause of that many seconds between two actions of a client (a human)."""
    errors: list[str] = []
    done = [0]
    lock = threading.Lock()

    def run(client):
        for k in range(count):
            try:
                action(client, k)
                with lock:
                    done[0] += 1
            except Exception as error:  # counted, not raised: the others go on
                where = traceback.extract_tb(error.__traceback__)[-1]
                errors.append(f"{error!r} (line {where.lineno})"[:300])
            if pace and k + 1 < count:
                time.sleep(client.rng.uniform(*pace))  # the human's think time: the window's point

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0], errors


# --- Our stack ------------------------------------------------------------------------------------


def our_data(texts: int, words: int, scus: int, spans: int, clients: int) -> SimpleNamespace:
    """The synthetic pyramids (bench/api_load.py) with ``texts`` peers of ~``words`` words; each
    client an annotator assigned to every topic, with its own annotation of each of its texts."""
    import api_load
    from django.contrib.auth.models import User

    from annotation.corpus.models import Assignment, PeerSummary, Topic
    from annotation.peers.models import PeerAnnotation
    from annotation.pyramids.models import SCU

    per_topic = 20
    api_load.synthetic_dataset(-(-texts // per_topic), scus, per_topic)
    peers = list(PeerSummary.objects.select_related("topic").order_by("topic__external_id", "id"))[:texts]
    users = [User.objects.create_user(f"bench-{c}", password=PASSWORD) for c in range(clients)]
    for topic in Topic.objects.all():
        Assignment.objects.bulk_create(
            Assignment(topic=topic, annotator=u, task=Assignment.Task.ANNOTATE_PEERS) for u in users
        )
    pyramid_of = {}
    scus_of = {}
    for peer in peers:
        if peer.topic_id not in pyramid_of:
            pyramid = peer.topic.pyramids.get()
            pyramid_of[peer.topic_id] = pyramid
            scus_of[peer.topic_id] = list(
                SCU.objects.filter(pyramid=pyramid).order_by("uid").values_list("id", flat=True)
            )
    plan_owner = {t: c for c, plan in enumerate(write_plan(clients, len(peers), 1)) for t, _ in plan}
    annotations = [
        PeerAnnotation.objects.create(peer=peer, pyramid=pyramid_of[peer.topic_id], annotator=users[plan_owner[i]]).pk
        for i, peer in enumerate(peers)
    ]
    texts_ = [p.text for p in peers]
    return SimpleNamespace(
        texts=texts_,
        spans=[span_plan(t, spans) for t in texts_],
        annotations=annotations,
        scus=[scus_of[p.topic_id] for p in peers],
        labels=min(len(s) for s in scus_of.values()),
    )


@contextlib.contextmanager
def redis_server(log_dir: Path, name: str):
    """A Redis server of the stack's own on a free port (its CPU is then the stack's alone), no
    persistence; yields (url, pid)."""
    port = b.free_port()
    command = [
        shutil.which("redis-server") or "redis-server",
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    with b._process(command, dict(os.environ), f"redis-{name}", log_dir) as (process, log_path):
        import redis

        deadline = time.monotonic() + 30
        client = redis.Redis(port=port)
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"redis-server did not start:\n{b._tail(log_path)}")
                time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}/0", process.pid


@contextlib.contextmanager
def gunicorn(venv_bin: Path, wsgi: str, shape: str, env: dict, cwd: Path, log_dir: Path, name: str, health: str):
    """The app under gunicorn in ``shape``, with bench/_app_profile.py's request log; yields
    (base URL, master pid, the log)."""
    port = b.free_port()
    profile_dir = log_dir / f"requests-{name}"
    profile_dir.mkdir(exist_ok=True)
    command = [
        str(venv_bin / "python"),
        "-m",
        "gunicorn",
        wsgi,
        "-c",
        str(APP_PROFILE),
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
    ]
    command += SERVER_SHAPES[shape]
    env = {**env, "BENCH_APP_PROFILE_DIR": str(profile_dir)}
    log_path = log_dir / f"{name}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        base = f"http://127.0.0.1:{port}"
        try:
            import requests

            deadline = time.monotonic() + 120
            while True:
                if process.poll() is not None:
                    sys.exit(f"{name}: gunicorn exited with {process.returncode}:\n{b._tail(log_path)}")
                with contextlib.suppress(requests.RequestException):
                    if requests.get(base + health, timeout=5).status_code < 500:
                        break
                if time.monotonic() > deadline:
                    sys.exit(f"{name}: no answer from {base}{health} within 120 s:\n{b._tail(log_path)}")
                time.sleep(0.3)
            yield base, process.pid, RequestLog(profile_dir)
        finally:
            b.stop_session(process, timeout=30)


@contextlib.contextmanager
def our_workers(env: dict, log_dir: Path, redis_url: str):
    """Our workers as docker-compose runs them (its options: ``b.compose_worker_options``): scores
    (``-Q celery``), dashboards (``-Q dashboards``) and beat, each task's CPU noted (bench/_task_cpu.py); yields
    (pids, drain): ``drain()`` returns when every derived figure is current and the workers are idle."""
    from celery import Celery

    env = {**env, "REDIS_URL": redis_url, "BENCH_TASK_CPU_LOG": str(log_dir / "task-cpu.log")}
    host = f"peercost-{os.getpid()}"
    worker = [sys.executable, str(REPO / "bench" / "_task_cpu.py"), "-A", "pyramid_app", "worker", "--loglevel=warning"]
    commands = {
        "scores": [*worker, *b.compose_worker_options("worker"), "-n", f"scores@{host}"],
        "dashboards": [*worker, *b.compose_worker_options("dashboards"), "-n", f"dashboards@{host}"],
        "beat": [
            str(b.VENV_BIN / "celery"),
            "-A",
            "pyramid_app",
            "beat",
            "--loglevel=warning",
            "--schedule",
            str(log_dir / "celerybeat-schedule"),
        ],
    }
    import redis

    control = Celery("peercost-control", broker=redis_url, backend=redis_url)
    broker = redis.Redis.from_url(redis_url)
    with contextlib.ExitStack() as stack:
        processes = {
            name: stack.enter_context(b._process(command, env, f"worker-{name}", log_dir))[0]
            for name, command in commands.items()
        }
        for name in ("scores", "dashboards"):
            deadline = time.monotonic() + 90
            while not control.control.ping(destination=[f"{name}@{host}"], timeout=1.0):
                if time.monotonic() > deadline:
                    sys.exit(f"the worker {name}@{host} did not answer a ping within 90 s")

        def drain():
            from annotation.peers.recompute import stale_work

            deadline = time.monotonic() + 300
            quiet = 0
            while quiet < 2:  # twice in a row: a task may publish the next one as it ends
                busy = any(stale_work()) or jobs_pending(broker)
                quiet = 0 if busy else quiet + 1
                if time.monotonic() > deadline:
                    sys.exit("jobs still pending 300 s after the window")
                time.sleep(0.2)

        yield [p.pid for p in processes.values()], drain


def jobs_pending(broker) -> bool:
    """Whether a task is queued, reserved, running or held for later, read from the broker
    (kombu's Redis transport: the queues' lists, and the ``unacked`` hash that holds every
    message a worker took until it is acknowledged, after the task with acks_late): asking the
    workers themselves (inspect) would cost them CPU that the window counts."""
    if broker.hlen("unacked"):
        return True
    return any(broker.llen(key) for key in broker.scan_iter(match="*") if broker.type(key) == b"list")


# --- Running it -----------------------------------------------------------------------------------


def measure(stack: Stack, clients: list[Client], action, count: int, pace, drain) -> dict:
    window = Window(stack)
    start = time.perf_counter()
    done, errors = run_clients(clients, action, count, pace)
    busy = time.perf_counter() - start
    if drain:
        drain()
    seconds = time.perf_counter() - start
    used, statements = window.stop()
    return {"done": done, "errors": errors, "busy": busy, "seconds": seconds, "cpu": used, "statements": statements}


def print_table(title: str, rows: dict, kind: str, idle_rate: dict) -> None:
    """One table: CPU ms per request of each group and in total, the total less what the stack
    spends idle over as long (``idle_rate``: CPU s per s), statements per request, requests per
    second of the clients' time, and ours / peer of the total and of the app's CPU."""
    print(f"\n{title}")
    print(
        f"| app | {kind}s | app ms | worker ms | Redis ms | database ms | total ms | total above idle ms | "
        "statements: app | statements: database | req/s | errors | ours / app: total | ours / app: app |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ours = None
    for app, merged in rows.items():
        n = merged["done"]
        if not n:
            continue
        ms = {k: v * 1000 / n for k, v in merged["cpu"].items()}
        ms["total"] = sum(ms.values())
        above = ms["total"] - idle_rate.get(app, 0.0) * merged["seconds"] * 1000 / n
        ours = ours or ms
        statements = merged["statements"].get(kind, 0) / n
        everywhere = merged["statements"].get("server", 0) / n
        print(
            f"| {app} | {n} | {ms['app']:.1f} | {ms['worker']:.1f} | {ms['redis']:.2f} | {ms['db']:.1f} | "
            f"**{ms['total']:.1f}** | {above:.1f} | {statements:.1f} | {everywhere:.1f} | {n / merged['busy']:.1f} | "
            f"{len(merged['errors'])} | {ratio(ours['total'], ms['total'])} | {ratio(ours['app'], ms['app'])} |"
        )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def merge(into: dict, result: dict) -> None:
    into.setdefault("done", 0)
    into["done"] += result["done"]
    for key in ("busy", "seconds"):
        into[key] = into.get(key, 0.0) + result[key]
    into.setdefault("errors", []).extend(result["errors"])
    cpu = into.setdefault("cpu", defaultdict(float))
    for k, v in result["cpu"].items():
        cpu[k] += v
    statements = into.setdefault("statements", defaultdict(int))
    for k, v in result["statements"].items():
        statements[k] += v


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--peers-dir",
        default="/work/peers",
        help="the peers' throw-away virtualenvs, outside the repository (default: %(default)s)",
    )
    parser.add_argument("--install", action="store_true", help="create a missing peer virtualenv from PyPI (pip)")
    parser.add_argument("--apps", default=",".join(APPS), help=f"comma-separated, of {', '.join(APPS)} (default: all)")
    parser.add_argument(
        "--shapes", default="production,sync", help="server shapes, of production, sync (default: %(default)s)"
    )
    parser.add_argument("--texts", type=int, default=400, help="texts (default: %(default)s)")
    parser.add_argument("--words", type=int, default=250, help="words per text (default: %(default)s)")
    parser.add_argument("--spans", type=int, default=20, help="non-overlapping spans per text (default: %(default)s)")
    parser.add_argument(
        "--scus", type=int, default=120, help="SCUs per pyramid, labels of the peers' projects (default: %(default)s)"
    )
    parser.add_argument(
        "--writes",
        type=int,
        default=60,
        help="writes per full-speed window, shared by its clients (default: %(default)s)",
    )
    parser.add_argument(
        "--human-writes", type=int, default=8, help="writes per human-pace window (default: %(default)s)"
    )
    parser.add_argument(
        "--pace", default="1,3", help="seconds between a human's writes, min,max (default: %(default)s)"
    )
    parser.add_argument(
        "--reads", type=int, default=40, help="reads per window, shared by its clients (default: %(default)s)"
    )
    parser.add_argument(
        "--clients", type=int, default=10, help="clients of the concurrent windows (default: %(default)s)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (default: %(default)s)")
    parser.add_argument(
        "--idle", type=float, default=60.0, help="seconds every stack sits idle, measured (default: %(default)s)"
    )
    args = parser.parse_args()
    apps = sorted(dict.fromkeys(a for a in args.apps.split(",") if a), key=lambda a: a != "pyramid")  # ours first
    shapes = [s for s in args.shapes.split(",") if s]
    pace = tuple(float(x) for x in args.pace.split(","))
    if not set(apps) <= set(APPS) or not set(shapes) <= set(SERVER_SHAPES) or "pyramid" not in apps:
        sys.exit(
            f"--apps of {APPS} (pyramid among them: the ratios are ours / peer), --shapes of {tuple(SERVER_SHAPES)}"
        )
    peers_dir = Path(args.peers_dir).resolve()
    if REPO in peers_dir.parents or peers_dir == REPO:
        sys.exit("--peers-dir must be outside the repository: nothing of the peers is committed")
    for app in apps[1:] if apps[0] == "pyramid" else [a for a in apps if a != "pyramid"]:
        if args.install:
            peers_dir.mkdir(parents=True, exist_ok=True)
            install(peers_dir, app)
        elif not (venv_of(peers_dir, app) / "bin" / "gunicorn").exists():
            sys.exit(f"no {app} virtualenv at {venv_of(peers_dir, app)}: run with --install")
    total_writes = args.rounds * len(shapes) * (args.human_writes + 2 * args.writes) + 2 * args.clients
    if total_writes > (args.texts // args.clients) * args.spans:
        sys.exit("not enough texts for the writes: raise --texts or lower --writes / --rounds")

    log_dir = b.make_log_dir()
    clusters: dict[str, Cluster] = {}
    try:
        for app in apps:
            clusters[app] = Cluster(log_dir, app)
        run(args, apps, shapes, pace, peers_dir, clusters, log_dir)
    finally:
        for cluster in clusters.values():
            cluster.close()
        b.cleanup(False, log_dir)


def run(
    args, apps: list[str], shapes: list[str], pace: tuple[float, float], peers_dir: Path, clusters: dict, log_dir: Path
):
    """Set every stack's data up, then run each server shape's idle window and alternated rounds."""
    ours_cluster = clusters["pyramid"]
    ours_cluster.create("pyramid")
    os.environ["DATABASE_URL"] = ours_cluster.url_of("pyramid", PROBE)  # the bench's own checks
    env = b.production_env(b.setup_django())
    env["DATABASE_URL"] = ours_cluster.url_of("pyramid")  # the app's and workers'
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    b.collect_static(env)
    started = time.perf_counter()
    ours = our_data(args.texts, args.words, args.scus, args.spans, args.clients)
    print(
        f"our data: {len(ours.texts)} texts, {sum(map(len, ours.spans))} spans "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    # The same texts and spans for the peers; the labels as many as our SCUs per pyramid.
    given = {"texts": ours.texts, "clients": args.clients, "labels": ours.labels, "password": PASSWORD}
    peers = {}
    for app in apps[1:]:
        venv, database = venv_of(peers_dir, app), app.replace("-", "")
        clusters[app].create(database)
        started = time.perf_counter()
        if app == "doccano":
            penv = doccano_env(venv, clusters[app], database, log_dir / "doccano-media")
            ids = venv_run(venv, DOCCANO_SETUP, penv, log_dir, given)
            version = package_version(venv, "doccano")
        else:
            data_dir = log_dir / "label-studio-data"
            data_dir.mkdir()
            penv = label_studio_env(venv, clusters[app], database, data_dir)
            ids = venv_run(venv, LABEL_STUDIO_SETUP, penv, log_dir, given)
            version = package_version(venv, "label-studio")
        peers[app] = SimpleNamespace(venv=venv, database=database, env=penv, version=version, ids=ids)
        print(f"{app} {version}: data set up in {time.perf_counter() - started:.0f} s", flush=True)

    plans = write_plan(args.clients, args.texts, args.spans)
    print(
        f"\nmachine: {os.cpu_count()} cores, load {load()} at the start; PostgreSQL {ours_cluster.version()} "
        f"(a server of each stack's own, its defaults + pg_stat_statements); Python {sys.version.split()[0]} (ours)"
    )
    print(
        f"work: {len(ours.texts)} texts of ~{args.words} words, {args.spans} spans each, "
        f"{ours.labels} labels (SCUs) per text"
    )
    results: dict[tuple[str, str, str], dict] = {}  # (server shape, window kind, app) -> merged
    idle: dict[tuple[str, str], tuple[float, dict, float, dict]] = {}
    clients: dict[str, list[Client]] = {}  # kept across the server shapes: no span is written twice
    for shape in shapes:
        with contextlib.ExitStack() as running:
            stacks: dict[str, Stack] = {}
            for app in apps:
                if app == "pyramid":
                    stack = Stack(
                        "pyramid",
                        "this checkout",
                        ours_cluster,
                        "pyramid",
                        SETTINGS["pyramid"],
                    )
                    redis_url, stack.redis_pid = running.enter_context(redis_server(log_dir, f"pyramid-{shape}"))
                    stack.worker_pids, stack.drain = running.enter_context(our_workers(env, log_dir, redis_url))
                    stack.base, stack.server_pid, stack.log = running.enter_context(
                        gunicorn(
                            b.VENV_BIN,
                            "pyramid_app.wsgi",
                            shape,
                            {**env, "REDIS_URL": redis_url},
                            REPO,
                            log_dir,
                            f"pyramid-{shape}",
                            "/healthz",
                        )
                    )
                elif app == "doccano":
                    peer = peers[app]
                    stack = Stack(
                        app,
                        peer.version,
                        clusters[app],
                        peer.database,
                        SETTINGS["doccano"],
                    )
                    backend = site_packages(peer.venv) / "backend"
                    worker = running.enter_context(
                        b._process(
                            [
                                str(peer.venv / "bin" / "python"),
                                "-m",
                                "celery",
                                "--app=config",
                                f"--workdir={backend}",
                                "worker",
                                "--loglevel=info",
                                "--concurrency=2",
                            ],
                            peer.env,
                            f"doccano-worker-{shape}",
                            log_dir,
                        )
                    )[0]
                    stack.worker_pids = [worker.pid]
                    stack.base, stack.server_pid, stack.log = running.enter_context(
                        gunicorn(
                            peer.venv / "bin",
                            "config.wsgi",
                            shape,
                            peer.env,
                            backend,
                            log_dir,
                            f"doccano-{shape}",
                            "/v1/health/",
                        )
                    )
                else:
                    peer = peers[app]
                    stack = Stack(
                        app,
                        peer.version,
                        clusters[app],
                        peer.database,
                        SETTINGS["label-studio"],
                    )
                    stack.base, stack.server_pid, stack.log = running.enter_context(
                        gunicorn(
                            peer.venv / "bin",
                            "core.wsgi",
                            shape,
                            peer.env,
                            site_packages(peer.venv) / "label_studio",
                            log_dir,
                            f"label-studio-{shape}",
                            "/health",
                        )
                    )
                stacks[app] = stack
            print(f"\n## server shape: {shape} ({SHAPE_NAMES[shape]})")
            for app, stack in stacks.items():
                print(
                    f"- {app} {stack.version}: {stack.settings}; "
                    f"gunicorn {' '.join(SERVER_SHAPES[shape]) or '(production shape)'}"
                )
            for app, stack in stacks.items():
                ids = (
                    ours
                    if app == "pyramid"
                    else SimpleNamespace(
                        texts=ours.texts,
                        spans=ours.spans,
                        labels=ours.labels,
                        project=peers[app].ids["project"],
                        examples=peers[app].ids.get("examples"),
                        labels_of=peers[app].ids.get("labels"),
                        tasks=peers[app].ids.get("tasks"),
                    )
                )
                if app in clients:  # a later server shape: the same clients go on where they stopped
                    for client in clients[app]:
                        client.reconnect(stack.base)
                else:
                    clients[app] = [Client(app, stack.base, c, plans[c], ids, 1000 + c) for c in range(args.clients)]
                # Warm-up, not measured: every client writes once and reads once (every server process has served).
                done, errors = run_clients(clients[app], lambda c, k: c.write(), 1, None)
                run_clients(clients[app], lambda c, k: c.read(k), 1, None)
                if errors:
                    sys.exit(f"{app}: the warm-up failed: {errors[:3]}")
                if stack.drain:
                    stack.drain()
            # Idle: every stack at once, nothing asked of them.
            windows = {app: Window(stack) for app, stack in stacks.items()}
            time.sleep(args.idle)  # the idle window's length is what is measured
            for app, window in windows.items():
                used, _ = window.stop()
                idle[(shape, app)] = (sum(used.values()), dict(used), args.idle, resident(stacks[app].processes()))
            for r in range(args.rounds):
                order = apps[r % len(apps) :] + apps[: r % len(apps)]
                for kind, n_clients, count, human in (
                    ("human", 1, args.human_writes, True),
                    ("1 client", 1, args.writes, False),
                    (f"{args.clients} clients", args.clients, args.writes // args.clients, False),
                ):
                    for app in order:
                        chosen = clients[app][:n_clients]
                        for client in chosen:
                            client.prepare(count)
                        result = measure(
                            stacks[app],
                            chosen,
                            lambda c, k: c.write(),
                            count,
                            pace if human else None,
                            stacks[app].drain,
                        )
                        merge(results.setdefault((shape, f"writes, {kind}", app), {}), result)
                        if not human:
                            reads = args.reads // n_clients
                            result = measure(stacks[app], chosen, lambda c, k: c.read(k), reads, None, None)
                            merge(results.setdefault((shape, f"reads, {kind}", app), {}), result)
                print(f"round {r + 1} of {args.rounds} done (load {load()})", flush=True)
        print(f"\n### {shape}: CPU per request (ms), {args.rounds} alternated rounds")
        rates = {app: idle[(shape, app)][0] / idle[(shape, app)][2] for app in apps}
        for kind in dict.fromkeys(k for (s, k, _) in results if s == shape):
            rows = {app: results[(shape, kind, app)] for app in apps if (shape, kind, app) in results}
            print_table(f"{kind} ({shape})", rows, "write" if kind.startswith("writes") else "read", rates)
        print(f"\nidle ({shape}): {args.idle:.0f} s with nothing asked, every stack at once")
        print("| app | CPU s per hour | app | worker | Redis | database | resident MB | of each process |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for app in apps:
            total, used, seconds, memory = idle[(shape, app)]
            rss = "; ".join(
                f"{name} {size / 2**20:.0f} MB" for name, size in sorted(memory.values(), key=lambda x: -x[1])
            )
            resident_mb = sum(size for _, size in memory.values()) / 2**20
            print(
                f"| {app} | {per_hour(total, seconds):.1f} | {per_hour(used['app'], seconds):.1f} | "
                f"{per_hour(used['worker'], seconds):.1f} | {per_hour(used['redis'], seconds):.1f} | "
                f"{per_hour(used['db'], seconds):.1f} | {resident_mb:.0f} | {rss} |"
            )
        errors = [e for (s, _, _), m in results.items() if s == shape for e in m["errors"]]
        if errors:
            print(f"first errors: {errors[:5]}")
    print(f"\nload at the end: {load()}")


if __name__ == "__main__":
    main()
