"""Shared fixtures. Tests that need a real service declare it with a marker (see pyproject.toml).

Unconfigured services make those tests skip with the reason, so `make test` passes on a bare
machine; with REQUIRE_SERVICES=1 (CI) a missing service fails the test instead.
"""

import gc
import os
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations

from bench._chromium import CHROMIUM_FLAGS

from tests.accessibility import FINDINGS, AuditedBrowser

REPO = Path(__file__).resolve().parent.parent
# The real data lives beside the repository; SHARED_DATA points elsewhere (a git worktree in another folder).
SHARED_DATA = Path(os.environ.get("SHARED_DATA") or REPO.parent / "shared" / "data")
ARTIFACTS = REPO / "test-artifacts"


def require(ok, reason: str) -> None:
    """Skip with ``reason`` unless REQUIRE_SERVICES=1, where a missing service is a failure."""
    if ok:
        return
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def redis_available() -> bool:
    if not settings.REDIS_URL:
        return False
    import redis

    try:
        return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        return False


BROWSER_MISSING = (
    "this test needs Debian's Chromium (apt-get install chromium-headless-shell, or chromium) or CHROMIUM_PATH"
)


def chromium_path() -> str | None:
    """The Chromium the browser tests drive: ``CHROMIUM_PATH``, else Debian's headless shell
    (package chromium-headless-shell: the same engine and release as its chromium, without the
    desktop browser's interface, which headless tests never show; the browser Playwright itself runs
    headless tests in), else Debian's chromium. The shell costs a browser test 15-28% less CPU
    (docs/results/test_suite.md). The benchmarks keep the full chromium: they measure what a user sees."""
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium-headless-shell") or shutil.which("chromium")


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; when it is absent the test skips, or fails with REQUIRE_SERVICES=1
    (CI has ../shared beside its clone: a missing folder must not pass for a proof that was never run)."""
    path = SHARED_DATA.joinpath(*parts)
    require(
        path.exists(), f"real data not available: {path} is absent (it lives beside the repository in ../shared/data)"
    )
    return path


def pytest_collection_finish(session):
    """What the collection made (the app, its models, every test module) frozen out of the cyclic
    garbage collector, which otherwise walked it at each full collection, and the young generation
    collected every 50,000 allocations instead of 700: the collector took 6.0 -> 3.6 s of 135 CPU-s
    (tests/api, dashboards and transfer in one process, timed with ``gc.callbacks``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """Before the session's fixtures end (the test database dropped with them), the in-process
    runner's thread, which a module's fixture may have started outside any test, is ended: its
    periodic sweep otherwise ran on the dropped database, logging errors as the process exited."""
    from annotation.jobs.queue import runner

    runner.stop()


def pytest_sessionstart(session):
    """The stacks of an earlier run killed before it could stop them (``tests/faults/cleanup.py``)."""
    from tests.faults import cleanup

    cleanup.sweep()


def pytest_unconfigure(config):
    """Also after this run, once its xdist workers are gone (a worker torn down cannot clean up), with
    what was made once for the run (in the run's process: xdist's controller, or pytest alone)."""
    from tests import template_database
    from tests.faults import cleanup

    ended = not hasattr(config, "workerinput")
    cleanup.sweep(ended=ended)
    if ended:
        template_database.drop_templates(settings.DATABASES["default"], ended=True)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, django_db_keepdb, django_db_blocker):
    """Each xdist worker's test database a copy of one migrated once for the run (tests/template_database.py);
    not with --reuse-db, where each worker keeps its own."""
    from django.db import connection

    from tests import template_database

    if not django_db_keepdb:
        with django_db_blocker.unblock():
            template_database.use_run_template(connection)


TRUNCATING_FLUSH = PostgresOperations.sql_flush
# What Django's post_migrate handlers write after every flush (contenttypes' create_contenttypes and
# auth's create_permissions, the only receivers: tests/foundation/test_flush.py): migrate wrote the same
# rows into the test database, so the flush keeps them and the signal is not sent. Deleting and writing
# them again cost 50 ms of CPU after each transactional test (half of it PostgreSQL's; 100 empty tests,
# alternated: 13.5 -> 8.5 CPU-s of the machine), for rows no test changes.
KEPT_BY_FLUSH = frozenset({"django_content_type", "auth_permission"})


def deleting_flush(ops, style, tables, *, reset_sequences=False, allow_cascade=False) -> list[str]:
    """On PostgreSQL, the flush after a transactional test as one DELETE a table (its foreign keys
    deferred to the commit, so in any order) rather than Django's TRUNCATE of them all: a TRUNCATE makes
    new files for every table and index and waits for each, 0.04-0.07 CPU-s of PostgreSQL and 0.12 s of
    wall a test (60 trivial transactional tests, alternated: 13.6-15.4 s against 6.4-6.5), where the
    tables hold a test's few rows. No table has a DELETE trigger. Before it, ``_browser_contexts_closed``
    waits for the live server's requests, and the worker and runner fixtures end theirs, so no
    transaction writes while the rows go (a TRUNCATE would have waited for one). ``KEPT_BY_FLUSH`` stays."""
    tables = [table for table in tables if table not in KEPT_BY_FLUSH]
    if reset_sequences or allow_cascade:
        return TRUNCATING_FLUSH(ops, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
    return ["SET CONSTRAINTS ALL DEFERRED;", *(f"DELETE FROM {ops.quote_name(table)};" for table in tables)]


def _post_migrate_not_sent(verbosity, interactive, db, **kwargs) -> None:
    """The flush's post_migrate: its receivers would write back only the tables of ``KEPT_BY_FLUSH``."""


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete():
    from django.core.management.commands import flush
    from django.db import connection

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PostgresOperations, "sql_flush", deleting_flush)
        if connection.vendor == "postgresql":  # SQLite's flush empties every table: the signal refills them
            patch.setattr(flush, "emit_post_migrate_signal", _post_migrate_not_sent)
        yield


@pytest.fixture(autouse=True)
def _required_services(request):
    marker = request.node.get_closest_marker
    if marker("postgres"):
        from django.db import connection

        require(connection.vendor == "postgresql", "this test needs PostgreSQL: set DATABASE_URL=postgres://...")
    if marker("redis") or marker("worker"):
        require(redis_available(), "this test needs Redis: set REDIS_URL=redis://... to a running server")
    if marker("browser"):
        require(chromium_path(), BROWSER_MISSING)
    if marker("realdata"):
        shared_data()


@pytest.fixture(autouse=True)
def _redis_failures_forgotten():
    """What a process remembers of Redis failing (the breaker's pause, the pages' health check)
    starts afresh in each test: a test that made Redis fail (or a moment's stall under load) would
    otherwise tell the next tests, for seconds, that the scoring service is unreachable."""
    from annotation.jobs import queue
    from annotation.jobs.redis_breaker import breaker

    breaker.reset()
    queue._health.update(checked=float("-inf"), reason=None)
    yield


@pytest.fixture(scope="session", autouse=True)
def _clean_redis():
    """Start from an empty Redis database: no queued task or pending key from an earlier run."""
    if redis_available():
        import redis

        redis.Redis.from_url(settings.REDIS_URL).flushdb()


@contextmanager
def synchronous_recomputation():
    """Recomputation runs in the saving thread (as eager Celery did), so what a save changed is
    computed when it returns."""
    from annotation.jobs.queue import runner

    saved, runner.synchronous = runner.synchronous, True
    try:
        yield
    finally:
        runner.synchronous = saved


@pytest.fixture(autouse=True)
def _synchronous_recomputation():
    """A test reads results right after a save; tests of the background thread itself use
    ``background_runner``."""
    with synchronous_recomputation():
        yield


@contextmanager
def jobs_in_process():
    """Background jobs run in the saving thread, as without REDIS_URL (also when it is set)."""
    if not settings.REDIS_URL:
        yield
        return
    from pyramid_app.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = saved


@pytest.fixture
def in_process_jobs():
    with jobs_in_process():
        yield


@contextmanager
def recomputed_as_in_a_test():
    """For a world a module's fixture builds outside any test: its recomputation runs in the saving
    thread with the jobs in process, as a test's own saves (``_synchronous_recomputation``,
    ``in_process_jobs``). Outside a test the in-process runner is not synchronous: an import's
    scheduling started its thread, which sent the jobs to Redis, racing the first test's fixture that
    turns Celery's eager mode on ("task_always_eager has no effect on send_task")."""
    with synchronous_recomputation(), jobs_in_process():
        yield


@pytest.fixture
def background_runner(transactional_db):
    """The in-process background runner as production runs it (its own thread and connections);
    ``wait()`` for it. Stopped afterwards, so no thread touches the database of a later test."""
    from annotation.jobs.queue import runner

    runner.synchronous = False
    runner.reset()
    yield runner
    runner.stop()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Passwords hashed with MD5 in every test (the live server's thread included), not PBKDF2's
    million iterations: 0.9 s a hash on a 2-core CI machine, paid for each test user made with a
    password and again at each login, minutes over the suite. Nothing here is about the hash's
    strength; the rehash from another hasher at login has its own test (tests/security/test_login_attacks.py)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    try:
        cache.clear()
    except Exception:
        pass


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker thread consuming from Redis (both queues, scores and dashboards: no -Q),
    against the test database."""
    require(redis_available(), "a real Celery worker needs Redis: set REDIS_URL")
    from celery.contrib.testing.worker import start_worker

    from pyramid_app.celery import app

    with start_worker(
        app, pool="solo", concurrency=1, perform_ping_check=False, loglevel="WARNING", shutdown_timeout=10
    ) as worker:
        yield worker


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium driven by Playwright (never a downloaded browser)."""
    path = chromium_path()
    require(path, BROWSER_MISSING)
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)
        yield AuditedBrowser(browser)
        browser.close()


@pytest.fixture(autouse=True)
def _accessible_pages(request):
    """Every page a browser test loads is checked by axe-core (tests/accessibility.py): any WCAG 2
    A/AA violation fails the test, whatever the test itself asserts."""
    if "chromium" not in request.fixturenames:
        yield
        return
    FINDINGS.lines.clear()
    yield
    found, FINDINGS.lines[:] = list(FINDINGS.lines), []
    assert not found, "accessibility violations (axe-core, WCAG 2 A/AA):\n" + "\n".join(found)


class _RequestsInFlight:
    """The requests the live server is answering: each in a thread of its own, from Django's
    request_started to its request_finished. Only threads other than the main one count: the test
    client answers in the main thread, and a view's exception raised through it never finishes its
    request (a count of every request then never came back to 0)."""

    def __init__(self):
        self._threads = set()
        self._changed = threading.Condition()

    def started(self, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            with self._changed:
                self._threads.add(threading.current_thread())

    def finished(self, **kwargs):
        with self._changed:
            self._threads.discard(threading.current_thread())
            self._changed.notify_all()

    def wait_none(self, timeout: float) -> bool:
        """Wait until no living thread is answering a request (a thread that died is not waited for)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while any(thread.is_alive() for thread in self._threads):
                if time.monotonic() > deadline:
                    return False
                self._changed.wait(0.05)
            return True


REQUESTS_IN_FLIGHT = _RequestsInFlight()


def pytest_configure(config):
    from django.core.signals import request_finished, request_started

    request_started.connect(REQUESTS_IN_FLIGHT.started, dispatch_uid="tests-requests-in-flight")
    request_finished.connect(REQUESTS_IN_FLIGHT.finished, dispatch_uid="tests-requests-in-flight")


@pytest.fixture(autouse=True)
def _browser_contexts_closed(request):
    """Every browser context a test opened is closed when it ends, and the live server's answers to
    its pages are finished, before the test's database is flushed. The browser lives for the whole
    run (one per worker): a context left open kept its pages running, polling the live server from
    later tests (whose database was then closed to them: "Database access not allowed" in CI's log)
    and using the CPU every later test shares. And a page closed with a save in flight leaves the
    server answering it: the flush's TRUNCATE then deadlocked with that request's transaction
    (test_next_peer.py, "Database couldn't be flushed: deadlock detected")."""
    yield
    if "chromium" in request.fixturenames:
        for context in request.getfixturevalue("chromium").contexts:
            context.close()
        assert REQUESTS_IN_FLIGHT.wait_none(timeout=60), "the live server was still answering a request 60 s on"


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def screenshots_wanted() -> bool:
    return os.environ.get("SCREENSHOTS") == "1"


@pytest.fixture(scope="session", autouse=True)
def _screenshots_when_asked():
    """The screenshots browser tests save into test-artifacts/ (to look at a page a change touched)
    are taken only with SCREENSHOTS=1: nobody looks at a whole run's (CI throws its clone away), and
    they cost the browser 0.1 CPU-s each, 0.5 s and more for a long page in full (119 of them). A
    screenshot saved anywhere else, or returned as bytes, is taken as always."""
    if screenshots_wanted():
        yield
        return
    from playwright.sync_api import ElementHandle, Locator, Page

    def gated(take):
        def screenshot(self, *args, path=None, **options):
            if path is not None and Path(path).resolve().is_relative_to(ARTIFACTS):
                return b""
            return take(self, *args, path=path, **options)

        return screenshot

    with pytest.MonkeyPatch.context() as patch:
        for kind in (Page, Locator, ElementHandle):
            patch.setattr(kind, "screenshot", gated(kind.screenshot))
        yield


def without_provenance(content, fmt: str) -> str:
    """A download's text without the provenance columns every download carries
    (``services.downloads``: ``app_version``, ``settings``), as the management commands write it."""
    import csv
    import io
    import json

    text = content.decode() if isinstance(content, bytes) else content
    if fmt == "json":
        rows = [{k: v for k, v in row.items() if k not in ("app_version", "settings")} for row in json.loads(text)]
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0][-2:] == ["app_version", "settings"], lines[0]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(line[:-2] for line in lines)
    return out.getvalue()
