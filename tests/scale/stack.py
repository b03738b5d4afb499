"""The production shape scaled out (issue 22), on the fault tests' stack (``tests.faults.harness``):
its own PostgreSQL and redis-server, shared by two web nodes (gunicorn process groups with
``pyramid_app/gunicorn_conf.py``, production settings, each its own working directory, port and
collected static files) behind Debian's HAProxy running ``deploy/haproxy.cfg``, two scores
workers, the dashboards worker and one beat.

The scores workers run ``tests/faults/slow_worker.py``: each scores recomputation is recorded
(process, ids, start, end) and takes ``SLOW_SECONDS`` longer, so two copies of one recomputation
would overlap if its lock let them.
"""

import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter

from tests.conftest import REPO
from tests.faults.harness import DASHBOARDS_WORKER, SCORES_WORKER, Process, Stack, wait_for, worker_number

HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
# Apart from the fault tests' ports (both suites may run at once), and from other xdist workers'.
PORTS = range(18100 + 100 * worker_number(), 18200 + 100 * worker_number())
NODES = ("a", "b")
SLOW_SECONDS = "1"
# Production settings (DEBUG off), as docker-compose.yml runs them, over plain HTTP, behind one proxy.
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "SECURE_SSL_REDIRECT": "0",
    "SECURE_COOKIES": "0",
    "TRUSTED_PROXY_COUNT": "1",
    "TRUSTED_PROXIES": "127.0.0.1",
    "WEB_CONCURRENCY": "2",
    "PYTHONPATH": str(REPO),
}


def proxy_config(port: int, servers: dict[str, int]) -> str:
    """deploy/haproxy.cfg with its frontend on ``port`` and a backend of these local servers
    (Docker's DNS names them in the compose file). The backend also says which server answered
    (``X-Served-By``) and takes ``X-Node`` as the server to use while it is up, so a test can
    send a request through the proxy to the node it names."""
    text = (REPO / "deploy" / "haproxy.cfg").read_text()
    head = text.split("\nresolvers ", 1)[0]  # global, defaults, frontend
    head, bound = re.subn(r"(?m)^(\s*)bind \S+$", rf"\1bind 127.0.0.1:{port}", head)
    assert bound == 1, "deploy/haproxy.cfg: one bind line expected in its frontend"
    lines = ["backend web", "    balance roundrobin", "    http-response set-header X-Served-By %[srv_name]"]
    lines += [f"    use-server {name} if {{ req.hdr(X-Node) -m str {name} }}" for name in servers]
    lines += [f"    server {name} 127.0.0.1:{node_port}" for name, node_port in servers.items()]
    return head + "\n" + "\n".join(lines) + "\n"


class FromAddress(HTTPAdapter):
    """Connects from one loopback address (all of 127.0.0.0/8 reaches the proxy): one client."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, source_address=(self.address, 0), **kwargs)


def session_from(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", FromAddress(address))
    return session


class TwoNodes(Stack):
    def __init__(self):
        super().__init__(ports=PORTS, env=PRODUCTION)
        self.runs_log = self.root / "score-runs.jsonl"
        self.node_ports = {name: self.port() for name in NODES}
        self.nodes = {name: self.node(name) for name in NODES}
        slow = {
            "program": str(REPO / "tests" / "faults" / "slow_worker.py"),
            "loglevel": "INFO",
            "env": {
                "RUNS_LOG": str(self.runs_log),
                "SLOW_SECONDS": SLOW_SECONDS,
                "SLOW_FUNCTION": "annotation.peers.recompute:recompute_annotations",
            },
        }
        scores = [[f"scores{i}@%h" if arg == "scores@%h" else arg for arg in SCORES_WORKER] for i in (1, 2)]
        self.workers = [
            self.celery(*args, name=f"scores{i}", cwd=self.workdir(f"worker-{i}"), **slow)
            for i, args in enumerate(scores, 1)
        ]
        self.dashboards = self.celery(
            *DASHBOARDS_WORKER, name="dashboards", loglevel="INFO", cwd=self.workdir("dashboards")
        )
        self.beat = self.celery(
            "beat", "-s", str(self.workdir("beat") / "schedule"), name="beat", loglevel="INFO", cwd=self.workdir("beat")
        )
        config = self.root / "haproxy.cfg"
        config.write_text(proxy_config(self.web_port, self.node_ports))
        self.web = Process([HAPROXY, "-db", "-f", str(config)], self.env, self.root / "haproxy.log", self.root)

    def workdir(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def node(self, name: str) -> Process:
        """A gunicorn process group as the Dockerfile runs it, in a working directory of its own."""
        home = self.workdir(f"node-{name}")
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "pyramid_app.wsgi",
            "-c",
            str(REPO / "pyramid_app" / "gunicorn_conf.py"),
            "--bind",
            f"127.0.0.1:{self.node_ports[name]}",
        ]
        return Process(command, {**self.env, "STATIC_ROOT": str(home / "static")}, self.root / f"node-{name}.log", home)

    def services(self) -> list[Process]:
        return [*self.workers, self.dashboards, self.beat, *self.nodes.values(), self.web]

    def prepare(self):
        """Static files are collected (once, then copied into each node's directory, as each
        image holds its own) while the database is made ready."""
        collected = self.root / "static"
        collect = subprocess.Popen(
            [sys.executable, "manage.py", "collectstatic", "--noinput"],
            cwd=REPO,
            env={**self.env, "STATIC_ROOT": str(collected)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        super().prepare()
        _, errors = collect.communicate(timeout=300)
        assert collect.returncode == 0, errors.decode(errors="replace")
        for name in NODES:
            shutil.copytree(collected, self.root / f"node-{name}" / "static")

    def wait_ready(self):
        for name in NODES:
            wait_for(
                lambda name=name: requests.get(self.node_url(name, "/healthz"), timeout=2).ok, 90, f"node {name} start"
            )
        self.wait_routed(*NODES)

    def wait_routed(self, *names: str, timeout: float = 30):
        """Until the proxy sends requests to each of these nodes (its health checks found them up)."""
        for name in names:
            wait_for(
                lambda name=name: (
                    served_by(requests.get(self.url("/healthz"), headers={"X-Node": name}, timeout=2)) == name
                ),
                timeout,
                f"the proxy routing to node {name}",
            )

    def node_url(self, name: str, path: str) -> str:
        return f"http://127.0.0.1:{self.node_ports[name]}{path}"


def served_by(response: requests.Response) -> str | None:
    return response.headers.get("X-Served-By")
