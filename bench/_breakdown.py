"""Where one request's CPU goes, and the stack's floor (``bench/request_cpu.py --breakdown``; not a test).

Run by request_cpu.py as a child process with the production environment (DEBUG off, PostgreSQL,
Redis, the Celery worker it started), on the data it made (``BENCH_BREAKDOWN``: JSON of the
editors' tokens, pyramids and annotations, and the crowd link). Every request is handed to
Django's WSGI handler in this process (no HTTP server: gunicorn's own parsing and writing are not
counted), one at a time, the URLconf being ``bench/_floor_urls.py``: the app's routes plus views
that do nothing, the floor.

Per endpoint class, two passes after a warm-up:

- **measured**: the handling thread's CPU clock around each handler call (``time.thread_time``),
  the process's (``time.process_time``: adds the jobs runner's thread, which publishes to Redis
  after the answer; read over the whole pass, settled), the statements (Django's
  ``execute_wrapper``: count, the wall time inside the driver's execute and the thread's CPU in
  it: the rest is waiting on PostgreSQL) and the PostgreSQL backend's own CPU (user + system
  ticks of the connection's server process in /proc, summed per request; 10 ms ticks, so only
  the pass's sum means something). pg_stat_statements is not loaded on this server.
- **profiled**: cProfile on the thread's CPU clock; each phase's cumulative time (``PHASES``:
  the outermost call of the named functions) as a share of the handler's, and the self time by
  library (``LIBRARIES``). Shares, applied to the measured pass's CPU: the profiler inflates
  small calls, so these are estimates, the measured pass the figure.
"""

import cProfile
import functools
import importlib
import json
import os
import pstats
import re
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]

# (label, ["module:qualified name", ...]): each function (defined there, not inherited) is wrapped
# and its outermost calls in the handling thread are timed on the thread's CPU clock.
PHASES = [
    ("view, with the middleware's view hooks (all below)", ["django.core.handlers.base:BaseHandler._get_response"]),
    ("DRF authentication (token / session user)", ["rest_framework.views:APIView.perform_authentication"]),
    (
        "DRF permissions + throttles",
        ["rest_framework.views:APIView.check_permissions", "rest_framework.views:APIView.check_throttles"],
    ),
    ("input validation (serializer.is_valid)", ["rest_framework.serializers:BaseSerializer.is_valid"]),
    ("write check (rules.check_create)", ["annotation.access.rules:check_create"]),
    ("the action (serializer.save)", ["rest_framework.serializers:BaseSerializer.save"]),
    (
        "history: document states before + after",
        ["annotation.pyramids.document_states:scu_states", "annotation.peers.document_states:annotation_state"],
    ),
    ("history: the change record", ["annotation.history.changes:_record"]),
    ("the answer: created object re-read", ["annotation.api.viewsets:ScopedViewSet._reload"]),
    ("the answer: ETag + delta (finalize_response)", ["annotation.history.api:VersionedMixin.finalize_response"]),
    ("JSON rendering", ["rest_framework.renderers:JSONRenderer.render"]),
    ("job publishing in the request (queue.publish)", ["annotation.jobs.queue:publish"]),
    ("crowd: the client's throttle", ["frontend.lightweight.views:_throttled"]),
    ("crowd: the link", ["annotation.lightweight.work:link_of"]),
    ("crowd: the judging (task chosen and held, or answers stored; its page)", ["frontend.lightweight.views:_judging"]),
    ("session read", ["django.contrib.sessions.backends.db:SessionStore.load"]),
    ("CSRF check (the view's own)", ["django.middleware.csrf:CsrfViewMiddleware.process_view"]),
    ("template rendering", ["django.template.backends.django:Template.render"]),
    (
        "SQL compiling (every as_sql)",
        [
            f"django.db.models.sql.compiler:{c}.as_sql"
            for c in (
                "SQLCompiler",
                "SQLInsertCompiler",
                "SQLUpdateCompiler",
                "SQLDeleteCompiler",
                "SQLAggregateCompiler",
            )
        ],
    ),
]
STATEMENT_TABLE = re.compile(r'(?:FROM|INTO|UPDATE)\s+"(\w+)"')
# Self time by library: the first matching path fragment names the group.
LIBRARIES = [
    ("Django ORM: SQL compiling", "django/db/models/sql/"),
    ("Django ORM: models, querysets", "django/db/models/"),
    ("database driver (Django backend + psycopg)", "django/db/backends/"),
    ("database driver (Django backend + psycopg)", "psycopg"),
    ("Django templates", "django/template/"),
    ("Django: other (handler, middleware, request, sessions, auth)", "django/"),
    ("DRF", "rest_framework/"),
    ("middleware libraries (CSP, axes, WhiteNoise)", "csp/"),
    ("middleware libraries (CSP, axes, WhiteNoise)", "axes/"),
    ("middleware libraries (CSP, axes, WhiteNoise)", "whitenoise/"),
    ("Redis client", "redis/"),
    ("the app's code", str(REPO)),
]


def located(target: str) -> tuple[object, str]:
    """``"module:Class.name"`` -> (the module or class that defines it, its name)."""
    module, _, qualname = target.partition(":")
    owner = importlib.import_module(module)
    *path, attribute = qualname.split(".")
    for name in path:
        owner = getattr(owner, name)
    return owner, attribute


class Phases:
    """The CPU of each phase (``PHASES``) while ``on``: installed before the handlers are built (they
    keep bound methods); off, a wrapper costs one call and a test."""

    def __init__(self, phases=PHASES):
        self.on, self.thread = False, threading.get_ident()
        self.spent: dict[str, float] = defaultdict(float)
        self.depth: dict[str, int] = defaultdict(int)
        for label, targets in phases:
            for target in targets:
                owner, attribute = located(target)
                setattr(owner, attribute, self._timed(label, vars(owner)[attribute]))

    def _timed(self, label: str, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            if not self.on or self.depth[label] or threading.get_ident() != self.thread:
                return function(*args, **kwargs)
            self.depth[label] += 1
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[label] += time.thread_time() - start
                self.depth[label] -= 1

        return timed


class Response:
    """What bench/request_cpu.py's clients read of a response (as requests' is)."""

    def __init__(self, response, body: bytes):
        self.status_code, self.headers, self.content = response.status_code, response.headers, body

    @property
    def text(self) -> str:
        return self.content.decode()

    def json(self):
        return json.loads(self.content)

    def raise_for_status(self):
        if self.status_code >= 400:
            raise RuntimeError(f"{self.status_code}: {self.content[:300]!r}")


class Meter:
    """Sums over the measured requests (see the module's docstring)."""

    def __init__(self):
        self.requests, self.thread, self.statements, self.execute_wall, self.execute_cpu = 0, 0.0, 0, 0.0, 0.0
        self.backend_ticks, self.unmatched_backend = 0, 0
        self.sql: list[str] = []  # every statement, classified when reported (not in the measured time)

    def __call__(self, execute, sql, params, many, context):  # Django's execute_wrapper
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.execute_wall += time.perf_counter() - wall
            self.execute_cpu += time.thread_time() - cpu
            self.statements += 1
            self.sql.append(sql)


def backend() -> tuple[int | None, int]:
    """This thread's PostgreSQL server process and its user + system ticks so far."""
    from django.db import connection

    if connection.connection is None:
        return None, 0
    pid = connection.connection.info.backend_pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return pid, int(fields[11]) + int(fields[12])


CURRENT: list = [
    None,
    None,
    None,
]  # the pass under way: its Meter (measured, phased), cProfile.Profile (profiled), Phases (phased)


class Session:
    """A client calling the WSGI handler in-process: cookies kept, redirects followed, one
    address (``REMOTE_ADDR``); with a meter, each request's CPU goes into it."""

    def __init__(self, handler, address: str = "127.0.0.1"):
        self.handler, self.address = handler, address
        self.headers, self.cookies = {}, {}
        self.metered = True  # whether this session's requests count in the pass under way (CURRENT)

    def close(self):
        pass

    def get(self, url, **kwargs):
        return self.request("GET", url, **kwargs)

    def request(self, method, url, headers=None, json=None, data=None, timeout=None):
        from django.db import connection
        from django.test import RequestFactory

        parts = urlsplit(url)
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in {**self.headers, **(headers or {})}.items()}
        extra["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        extra.update(SERVER_NAME="127.0.0.1", HTTP_HOST="127.0.0.1", REMOTE_ADDR=self.address, QUERY_STRING=parts.query)
        if json is not None:
            body, content_type = globals()["json"].dumps(json), "application/json"
        elif data is not None:
            from urllib.parse import urlencode

            body, content_type = urlencode(data), "application/x-www-form-urlencoded"
        else:
            body, content_type = "", "application/octet-stream"
        environ = RequestFactory().generic(method, parts.path, body, content_type, **extra).environ
        meter, profile, phases = CURRENT if self.metered else (None, None, None)
        if meter:
            wrapper = connection.execute_wrapper(meter)
            wrapper.__enter__()
            pid, ticks = backend()
            start = time.thread_time()
        if profile:
            profile.enable()
        if phases:
            phases.on = True
        response = self.handler(environ, lambda status, headers, exc_info=None: None)
        body = b"".join(response)
        response.close()
        if profile:
            profile.disable()
        if phases:
            phases.on = False
        if meter:
            meter.thread += time.thread_time() - start
            meter.requests += 1
            wrapper.__exit__(None, None, None)
            after_pid, after_ticks = backend()
            if pid == after_pid and pid is not None:
                meter.backend_ticks += after_ticks - ticks
            else:
                meter.unmatched_backend += 1
        for name, morsel in response.cookies.items():
            if morsel["max-age"] == 0:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = morsel.value
        if response.status_code in (301, 302, 303):
            return self.request(
                "GET",
                response["Location"] if "://" in response["Location"] else f"http://127.0.0.1{response['Location']}",
            )
        return Response(response, body)


def measure(name: str, run, count: int, results: list, phases: Phases) -> None:
    """Warm up, then the measured, the phased and the profiled pass of ``run(i)``
    (one metered request each) ``count`` times."""
    for i in range(min(20, count)):
        run(i)
    meter = CURRENT[0] = Meter()
    process, thread = time.process_time(), time.thread_time()
    for i in range(count):
        run(i)
    CURRENT[0] = None
    time.sleep(1)  # the runner thread's publishing after the last answer
    runner = (time.process_time() - process) - (time.thread_time() - thread)
    phased = CURRENT[0] = Meter()
    CURRENT[2] = phases
    phases.spent.clear()
    for i in range(count):
        run(count + i)
    CURRENT[0] = CURRENT[2] = None
    spent = {label: seconds / max(1, phased.requests) for label, seconds in phases.spent.items()}
    profile = CURRENT[1] = cProfile.Profile(time.thread_time)
    for i in range(count):
        run(2 * count + i)
    CURRENT[1] = None
    results.append((name, meter, runner, (phased.thread / max(1, phased.requests), spent), pstats.Stats(profile)))
    print(f"  {name}: {meter.requests} measured requests", file=sys.stderr, flush=True)


def report(results) -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    print(
        "\n| request | requests | handler CPU (thread) | runner thread (publishing) | statements | in "
        "execute: wall / client CPU | waiting on PostgreSQL | PostgreSQL backend CPU | app + database |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, m, runner, _, _ in results:
        n = max(1, m.requests)
        app, db = (m.thread + runner) * 1000 / n, m.backend_ticks / ticks * 1000 / n
        print(
            f"| {name} | {m.requests} | {m.thread * 1000 / n:.2f} | {runner * 1000 / n:.2f} | {m.statements / n:.1f} | "
            f"{m.execute_wall * 1000 / n:.2f} / {m.execute_cpu * 1000 / n:.2f} | "
            f"{(m.execute_wall - m.execute_cpu) * 1000 / n:.2f} | "
            f"{db:.2f}{f' ({m.unmatched_backend} unmatched)' if m.unmatched_backend else ''} | {app + db:.2f} |"
        )
    for name, m, _, (handler, spent), stats in results:
        print(
            f"\n{name}: CPU ms per request by phase (the phased pass: handler {handler * 1000:.2f} ms; "
            "nested phases are part of the view's)"
        )
        print("| phase | ms per request |")
        print("|---|---:|")
        view = spent.get(PHASES[0][0], 0.0)
        print(f"| middleware, routing, request and response (handler - view) | {(handler - view) * 1000:.2f} |")
        for label, _ in PHASES:
            if spent.get(label, 0.0) >= 0.00001:
                print(f"| {label} | {spent[label] * 1000:.2f} |")
        if name.startswith("floor"):
            continue
        kinds = Counter(
            f"{sql.split(None, 1)[0]} {' '.join(STATEMENT_TABLE.findall(sql)[:1])}".strip() for sql in m.sql
        )
        kinds = ", ".join(f"{kind} x{count / max(1, m.requests):.2g}" for kind, count in kinds.most_common())
        print(f"\n{name}: statements per request (verb, first table): {kinds}")
        groups: dict[str, float] = {}
        for (path, _, _), (_, _, tottime, _, _) in stats.stats.items():
            group = next((label for label, fragment in LIBRARIES if fragment in path), "Python itself, stdlib, others")
            groups[group] = groups.get(group, 0.0) + tottime
        everything = sum(groups.values())
        print(f"\n{name}: self time by library (share of all profiled CPU)")
        print("| library | share |")
        print("|---|---:|")
        for label, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
            print(f"| {label} | {seconds / everything:.0%} |")


def main():
    import django

    django.setup()
    import request_cpu
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import Client
    from django.test.utils import override_settings
    from rest_framework.authtoken.models import Token

    given = json.loads(os.environ["BENCH_BREAKDOWN"])
    count = given["requests"]
    override_settings(ROOT_URLCONF="_floor_urls").enable()
    phases = Phases()
    handler = WSGIHandler()
    with override_settings(MIDDLEWARE=[]):
        minimal = WSGIHandler()
    base = "http://127.0.0.1"
    results = []

    token_user = Token.objects.get(key=given["tokens"][0]).user
    login = Client()
    login.force_login(token_user)
    logged_in = Session(handler)
    logged_in.cookies[settings.SESSION_COOKIE_NAME] = login.cookies[settings.SESSION_COOKIE_NAME].value
    token = Session(handler)
    token.headers["Authorization"] = f"Token {given['tokens'][0]}"
    anonymous, bare_stack = Session(handler), Session(minimal)
    for name, session, path in [
        ("floor: no middleware, bare view", bare_stack, "/__floor/bare/"),
        ("floor: full middleware, bare view", anonymous, "/__floor/bare/"),
        ("floor: DRF {} (session auth)", logged_in, "/__floor/api/"),
        ("floor: DRF {} (token auth)", token, "/__floor/api/"),
        ("floor: DRF + 1 ORM statement (token auth)", token, "/__floor/api-query/"),
    ]:
        measure(name, lambda i, s=session, p=path: s.get(base + p), count, results, phases)

    editors = [
        request_cpu.Editor(base, t, p, seed, Session(handler))
        for seed, (t, p) in enumerate(zip(given["tokens"], given["pyramids"], strict=True))
    ]
    for editor, annotation in zip(editors, given["annotations"], strict=True):
        editor.annotate(annotation)
    errors: list[str] = []
    measure(
        "add contributor",
        lambda i: editors[i % len(editors)].add_contributors(0, [], errors, at_least=1),
        count,
        results,
        phases,
    )
    measure(
        "match create",
        lambda i: editors[i % len(editors)].add_matches(0, [], errors, at_least=1),
        count,
        results,
        phases,
    )

    url = f"{base}/lightweight/crowd/{given['crowd']}/"
    workers = []
    for number in range(given["workers"]):
        worker = request_cpu.CrowdWorker(url, number, Session(handler, request_cpu.crowd.worker_address(number)))
        worker.arrive([], errors)
        workers.append(worker)

    def judge(i: int, submit_metered: bool) -> None:
        """A worker's submit, then its next task's page (as the crowd alternates), one of them metered."""
        worker = workers[i % len(workers)]
        worker.session.metered = submit_metered
        worker.submit([], errors)
        worker.session.metered = not submit_metered
        worker.load([], errors)

    measure("crowd submit", lambda i: judge(i, True), count, results, phases)
    measure("crowd judging page", lambda i: judge(i, False), count, results, phases)
    if errors:
        sys.exit(f"{len(errors)} errors, first: {errors[:3]}")
    report(results)


if __name__ == "__main__":
    main()
