"""`make test` passes in both of its shapes: no services configured (a fresh clone: a test needing
PostgreSQL, Redis, a browser or ../shared/data skips with the reason) and CI's (REQUIRE_SERVICES=1:
the same tests fail when what they need is missing, so a proof never passes for having been skipped).
Each shape runs in a pytest of its own, on tests that name what they need by marker or by
``shared_data()``."""

import os
import re
import subprocess
import sys

from tests.conftest import REPO

SERVICE_TESTS = [
    "tests/corpus/test_untouched_peers.py::test_two_tabs_acting_at_once_create_one_annotation",  # PostgreSQL
    "tests/api/test_idempotency.py::test_a_key_held_too_long_answers_409_to_retry",  # PostgreSQL
    "tests/formats/test_realdata.py::test_pyreval_pyramids_with_other_headers",  # ../shared/data
    "tests/dashboards/test_real_data_2007.py",  # ../shared/data (module fixture)
]
NOT_CONFIGURED = ("DATABASE_URL", "REDIS_URL", "REQUIRE_SERVICES")


def run(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """The service tests with nothing configured (SQLite, no Redis) and no real data, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if k not in NOT_CONFIGURED}
    base |= {"SHARED_DATA": str(tmp_path / "no-data-here"), **env}
    return subprocess.run(
        [sys.executable, "-m", "pytest", *SERVICE_TESTS, "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rsf"],
        cwd=REPO,
        env=base,
        capture_output=True,
        text=True,
        timeout=600,
    )


def counts(done) -> dict[str, int]:
    last = done.stdout.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|error)", last)}


def test_without_services_the_tests_that_need_them_skip_with_the_reason(tmp_path):
    done = run(tmp_path)
    assert done.returncode == 0, done.stdout[-4000:]
    found = counts(done)
    assert found.get("failed", 0) == 0 and found.get("passed", 0) == 0 and found["skipped"] >= 4, done.stdout[-4000:]
    assert "this test needs PostgreSQL: set DATABASE_URL=postgres://" in done.stdout
    assert f"real data not available: {tmp_path / 'no-data-here'}" in done.stdout


def test_with_require_services_a_missing_service_or_data_folder_fails(tmp_path):
    done = run(tmp_path, REQUIRE_SERVICES="1")
    assert done.returncode == 1, done.stdout[-4000:]
    found = counts(done)
    assert found.get("skipped", 0) == 0 and found.get("passed", 0) == 0, done.stdout[-4000:]
    assert "REQUIRE_SERVICES=1 but this test needs PostgreSQL" in done.stdout
    assert f"REQUIRE_SERVICES=1 but real data not available: {tmp_path / 'no-data-here'}" in done.stdout


def test_no_test_decides_on_the_database_by_itself():
    """A test that needs PostgreSQL says so with the ``postgres`` marker (skipped, or failed under
    REQUIRE_SERVICES=1), never by asserting or skipping on ``connection.vendor`` itself: an assertion
    fails a fresh clone's `make test`, a skip hides a missing database from CI."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"assert connection\.vendor\b|skipif\(connection\.vendor", line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []
