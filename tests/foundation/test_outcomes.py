"""CI's proof that every collected test ran (``tests/outcomes.py``, ``.ci/compare_outcomes.py``):
``--record-outcomes`` writes each reported test's outcome, serially and from xdist's controller alike;
the comparison with ``--collect-only`` fails on a test collected but never reported (or reported
fewer times than collected under one node id, as schemathesis's operations are), on a failure,
and (``--no-skips``, REQUIRE_SERVICES=1) on a skip. Run on a small suite of its own."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SUITE = """
import pytest

def test_passes():
    pass

def test_skips():
    pytest.skip("not here")

def test_fails():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("set-up failed")

def test_errors(broken):
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_each(n):
    pass
"""
# A second item under test_passes's node id, as schemathesis collects its API operations.
CONFTEST = """
def pytest_collection_modifyitems(items):
    items.append(next(item for item in items if item.name == "test_passes"))
"""
EXPECTED = sorted(
    [
        ("test_each[1]", "passed"),
        ("test_each[2]", "passed"),
        ("test_errors", "error"),
        ("test_fails", "failed"),
        ("test_passes", "passed"),
        ("test_passes", "passed"),
        ("test_skips", "skipped"),
    ]
)


def pytest_in(folder, *args) -> subprocess.CompletedProcess:
    """pytest on the small suite, with the outcomes plugin, xdist and none of the project's settings
    or other plugins: without the installed plugins' loading (Django's, hypothesis', schemathesis') a
    run costs 0.2 CPU-s instead of 0.8, and one with two xdist workers 0.6 instead of 2.2."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(folder / "pytest.ini"),
            "--rootdir",
            str(folder),
            "-p",
            "tests.outcomes",
            "-p",
            "xdist",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=REPO,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def compare(collected, outcomes, *args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / ".ci" / "compare_outcomes.py"), str(collected), str(outcomes), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_small.py").write_text(SUITE)
    (tmp_path / "conftest.py").write_text(CONFTEST)
    collected = tmp_path / "collected.txt"
    collected.write_text(pytest_in(tmp_path, "--collect-only", "-q", str(tmp_path)).stdout)
    return tmp_path, collected


@pytest.mark.parametrize("parallel", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_every_reported_test_is_recorded_with_its_outcome(suite, parallel):
    folder, collected = suite
    if parallel:
        pytest.importorskip("xdist", reason="pytest-xdist is not installed (pip install -e '.[test]')")
    run = pytest_in(
        folder,
        str(folder),
        f"--record-outcomes={folder / 'outcomes.txt'}",
        f"--record-durations={folder / 'durations.txt'}",
        *parallel,
    )
    assert run.returncode == 1, run.stdout[-3000:]  # one test fails
    lines = (folder / "outcomes.txt").read_text().splitlines()
    assert sorted(tuple(reversed(line.split(" ", 1))) for line in lines) == [
        (f"test_small.py::{n}", o) for n, o in EXPECTED
    ]
    durations = [line.split(" ", 3) for line in (folder / "durations.txt").read_text().splitlines()]
    assert sorted(nodeid for *_, nodeid in durations) == [f"test_small.py::{n}" for n, _ in EXPECTED]
    workers = {worker for worker, *_ in durations}
    assert workers <= ({"gw0", "gw1"} if parallel else {"-"}) and workers, durations
    assert all(float(seconds) >= 0 and float(cpu) >= 0 for _, seconds, cpu, _ in durations), durations
    checked = compare(collected, folder / "outcomes.txt")
    assert checked.returncode == 1 and checked.stdout.splitlines()[1:] == [
        "error: test_small.py::test_errors",
        "failed: test_small.py::test_fails",
    ], checked.stdout


CPU_SUITE = """
import subprocess, sys, time

SPIN = "import time\\nend = time.process_time() + 0.6\\nwhile time.process_time() < end: pass"

def test_computes():
    subprocess.run([sys.executable, "-c", SPIN], check=True)

def test_waits():
    time.sleep(0.6)
"""


@pytest.mark.parametrize("parallel", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_durations_tell_a_test_that_computes_from_one_that_waits(tmp_path, parallel):
    """The CPU column counts what a test's own processes computed (here in a child it started and
    ended), not the seconds it waited: the figure CI sums to say where a loaded machine's cores went."""
    if parallel:
        pytest.importorskip("xdist", reason="pytest-xdist is not installed (pip install -e '.[test]')")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_cpu.py").write_text(CPU_SUITE)
    run = pytest_in(tmp_path, str(tmp_path), f"--record-durations={tmp_path / 'durations.txt'}", *parallel)
    assert run.returncode == 0, run.stdout[-3000:]
    recorded = {
        nodeid.split("::")[1]: (float(seconds), float(cpu))
        for _, seconds, cpu, nodeid in (
            line.split(" ", 3) for line in (tmp_path / "durations.txt").read_text().splitlines()
        )
    }
    assert recorded["test_computes"][1] >= 0.5, recorded
    assert recorded["test_waits"][0] >= 0.6 and recorded["test_waits"][1] < 0.3, recorded


def test_a_test_collected_but_never_reported_fails_the_comparison(suite):
    folder, collected = suite
    outcomes = folder / "outcomes.txt"
    outcomes.write_text(
        "passed test_small.py::test_passes\npassed test_small.py::test_each[1]\npassed test_small.py::test_each[2]\n"
        "skipped test_small.py::test_skips\npassed test_small.py::test_errors\n"
    )  # test_fails lost, test_passes once
    checked = compare(collected, outcomes)
    assert checked.returncode == 1 and checked.stdout.splitlines()[1:] == [
        "collected, never reported: test_small.py::test_fails",
        "collected 2, reported 1: test_small.py::test_passes",
    ], checked.stdout
    assert checked.stdout.splitlines()[0] == "7 collected, 5 reported: 4 passed, 1 skipped, 0 failed, 0 error"
    outcomes.write_text(outcomes.read_text() + "passed test_small.py::test_fails\npassed test_small.py::test_passes\n")
    assert compare(collected, outcomes).returncode == 0
    no_skips = compare(collected, outcomes, "--no-skips")
    assert (
        no_skips.returncode == 1
        and "skipped (REQUIRE_SERVICES=1 allows none): test_small.py::test_skips" in no_skips.stdout
    )
