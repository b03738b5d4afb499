"""gunicorn's production configuration plus per-request measurements (bench/lightweight_crowd.py
``--profile-app DIR``; not a test).

Used as ``gunicorn pyramid_app.wsgi -c bench/_app_profile.py`` (or any Django app's WSGI module:
bench/peer_cost.py serves its peers so) with ``BENCH_APP_PROFILE_DIR``
naming a folder: every request appends one line to ``<dir>/requests.log``: ``<kind> <CPU s>
<wall s> <statements> <database wall s> <slowest statement's wall s> <its first words>``, the CPU being
the handling thread's own (``time.thread_time``: gthread runs one request per thread at a time,
so another thread's request is not counted) and the statements those the thread's database
connection ran (``connection.execute_wrapper``). ``kind`` names the crowd's requests apart:
``GET form`` (no session yet: the worker-id form), ``GET task`` (a judging page: the choice of
task and its hold), ``POST <status>`` (302: the worker id given; 200: answers submitted).
With ``BENCH_APP_PROFILE=1`` each kind also runs under cProfile (timed by the thread's CPU
clock, so waiting for the database or a lock counts nothing; both POSTs together), one profile per kind and process,
written to ``<dir>/<kind>.<pid>.prof`` when the worker exits; the CPU times are then inflated by
the profiler and are not the figures to report.
"""

import cProfile
import os
import runpy
import threading
import time
from pathlib import Path

# The production shape, read from its file rather than imported, so that a peer's gunicorn, in a
# virtualenv without this project on its path, runs in the same shape (bench/peer_cost.py).
_PRODUCTION = runpy.run_path(str(Path(__file__).resolve().parent.parent / "pyramid_app" / "gunicorn_conf.py"))
workers, worker_class, threads = _PRODUCTION["workers"], _PRODUCTION["worker_class"], _PRODUCTION["threads"]
post_worker_init = _PRODUCTION["post_worker_init"]

DIRECTORY = os.environ["BENCH_APP_PROFILE_DIR"]
PROFILE = os.environ.get("BENCH_APP_PROFILE") == "1"
_local = threading.local()
_profiles: dict[tuple[str, int], cProfile.Profile] = {}


class _Statements:
    """The statements of one request on this thread's connection: count, wall time, the slowest."""

    def __init__(self):
        self.count, self.seconds, self.slowest, self.slowest_sql = 0, 0.0, 0.0, ""

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent = time.perf_counter() - start
            self.count += 1
            self.seconds += spent
            if spent > self.slowest:
                self.slowest, self.slowest_sql = spent, " ".join(sql.split()[:6])


def pre_request(worker, req):
    from django.db import connection

    cookies = dict(req.headers).get("COOKIE", "")
    _local.kind = req.method if req.method != "GET" else ("GET task" if "sessionid=" in cookies else "GET form")
    _local.statements = _Statements()
    _local.wrapper = connection.execute_wrapper(_local.statements)
    _local.wrapper.__enter__()
    _local.start = (time.thread_time(), time.perf_counter())
    if PROFILE:  # one profile per kind and thread, enabled for each of its requests (a POST's status is not known yet)
        _local.profile = _profiles.setdefault((_local.kind, threading.get_ident()), cProfile.Profile(time.thread_time))
        _local.profile.enable()


def post_request(worker, req, environ, resp):
    cpu, wall = time.thread_time() - _local.start[0], time.perf_counter() - _local.start[1]
    kind = _local.kind if _local.kind != "POST" else f"POST {resp.status_code if resp else 0}"
    if PROFILE:
        _local.profile.disable()
    _local.wrapper.__exit__(None, None, None)
    s = _local.statements
    line = (
        f"{kind.replace(' ', '_')} {cpu:.6f} {wall:.6f} {s.count} {s.seconds:.6f} {s.slowest:.6f} {s.slowest_sql}\n"
    ).encode()
    fd = os.open(os.path.join(DIRECTORY, "requests.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def worker_exit(server, worker):
    import pstats

    by_kind: dict[str, pstats.Stats] = {}
    for (kind, _), profile in _profiles.items():
        if kind in by_kind:
            by_kind[kind].add(profile)
        else:
            by_kind[kind] = pstats.Stats(profile)
    for kind, stats in by_kind.items():
        stats.dump_stats(os.path.join(DIRECTORY, f"{kind.replace(' ', '_')}.{os.getpid()}.prof"))
