"""What a chart page costs a browser, served as `make run` serves it (``COLLECTED_STATIC=1``: the
project's runserver, static files collected, content-hashed, gzipped and served by WhiteNoise, as
in production): Chromium with an empty cache receives at most 300 KB of compressed JavaScript per
chart page (issue 21's goal; plotly.js alone was 1.4 MB), every script gzipped and cacheable for
good, so that the next visit fetches none of them again.

The server is a subprocess (``manage.py runserver --noreload``) reading the test database, hence
PostgreSQL (an SQLite test database lives in memory, out of another process's reach)."""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.db import connection

from annotation.dashboards import snapshots

from tests.browser.dashboards.test_dashboards import PASSWORD, coordinator_of
from tests.dashboards.conftest import _eager_tasks  # noqa: F401  (fixtures)
from tests.dashboards.helpers import build_toy

pytestmark = [pytest.mark.browser, pytest.mark.postgres]
REPO = Path(settings.BASE_DIR)
BUDGET = 300 * 1024
READY = """() => document.readyState === 'complete'
  && [...document.querySelectorAll('[data-chart]')].every((c) => c.dataset.drawn !== undefined ||
    c.classList.contains('empty') || c.dataset.deferred !== undefined)"""
# Every script, module and worker the page fetched: [path, bytes on the wire (body), bytes decoded, bytes transferred].
SCRIPTS = """() => performance.getEntriesByType('resource')
  .filter((e) => /\\.m?js$/.test(new URL(e.name).pathname))
  .map((e) => [new URL(e.name).pathname, e.encodedBodySize, e.decodedBodySize, e.transferSize])"""


def database_url() -> str:
    s = connection.settings_dict
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgres://{s['USER']}{password}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture(autouse=True)
def _the_servers_password_hashing(settings):
    """The test user's password hashed as the server, a process of its own with the app's settings,
    checks it (not with the suite's fast hashing, tests/conftest.py)."""
    from django.conf import global_settings

    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS


@pytest.fixture
def make_run_server(transactional_db, tmp_path):
    """`make run`'s server on a free port, its static files collected into a temporary folder."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **os.environ,
        "DEBUG": "1",
        "COLLECTED_STATIC": "1",
        "STATIC_ROOT": str(tmp_path / "static"),
        "DATABASE_URL": database_url(),
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)  # nothing to enqueue for a worker nobody runs: tasks in-process
    log = open(tmp_path / "server.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def test_chart_pages_send_little_compressed_javascript_cached_for_good(chromium, make_run_server, artifacts):
    dataset = build_toy()
    coordinator_of(dataset)
    snapshots.recompute_dataset(dataset.pk)
    base = make_run_server
    login = chromium.new_context()
    page = login.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "coord")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    state = login.storage_state()
    login.close()

    d = f"/datasets/{dataset.pk}"
    for path in (f"{d}/scores/?references=1", f"{d}/significance/", f"{d}/agreement/T1/", f"{d}/agreement/T1/1/"):
        context = chromium.new_context(storage_state=state)  # its own cache: empty
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        headers = {}
        page.on(
            "response",
            lambda r, headers=headers: (
                headers.__setitem__(urlparse(r.url).path, r.headers) if r.url.endswith(".js") else None
            ),
        )
        page.goto(base + path)
        page.wait_for_function(READY)
        page.locator(
            "[data-chart]"
        ).last.scroll_into_view_if_needed()  # one far below the fold is drawn as it comes near
        page.wait_for_selector("[data-chart][data-drawn]")
        scripts = page.evaluate(SCRIPTS)
        names = [p for p, *_ in scripts]
        assert any(re.fullmatch(r"/static/vendor/chart\.umd\.min\.[0-9a-f]{12}\.js", p) for p in names), names
        assert any(re.fullmatch(r"/static/dashboards/charts\.[0-9a-f]{12}\.js", p) for p in names), names
        wire = sum(size for _, size, _, _ in scripts)
        assert wire <= BUDGET, f"{path}: {wire} bytes of compressed JavaScript ({scripts})"
        for name, size, decoded, _ in scripts:
            if decoded > 2048:  # WhiteNoise leaves alone what gzip would barely shrink
                assert headers[name].get("content-encoding") == "gzip" and size < decoded, (name, headers[name])
            assert "immutable" in headers[name].get("cache-control", ""), (name, headers[name])
        # The next visit takes every script from the cache, not a byte from the server.
        page.goto(base + path)
        page.wait_for_function(READY)
        again = page.evaluate(SCRIPTS)
        assert sorted(p for p, *_ in again) == sorted(names)
        assert [t for *_, t in again] == [0] * len(again), again
        assert not errors, errors
        context.close()
