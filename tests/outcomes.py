"""``--record-outcomes=PATH``: every test this run reported, one ``<outcome> <node id>`` line for
each test run (passed, failed, skipped, error: the worst of its phases). CI compares them with a
separate ``pytest --collect-only -q`` (``.ci/compare_outcomes.py``), so a test collected but never
reported (a worker lost, a report swallowed) fails the run instead of passing unnoticed. A node id
is counted as often as it runs: schemathesis collects each API operation under one shared node id,
and a scheduler keyed by node id (xdist's ``--dist loadfile``) runs it once. Written by the process
that reports: pytest itself, or xdist's controller (never its workers). Loaded with ``-p``.

``--record-durations=PATH``: for each test run, ``<worker> <seconds> <cpu seconds> <node id>`` (its
phases summed; the worker ``-`` outside xdist): how evenly a parallel run loaded its workers, and
where the machine's CPU went (CI sums both). Wall seconds alone mislead on a 2-core machine running
4 workers: a test that waits on a timeout and one that computes look alike, while only the second
takes a core from the others. The CPU is the test process's and its descendants' (a Chromium, a
fault stack's workers, a pytest it runs), read from /proc as the test starts and ends; the servers
it talks to (the machine's PostgreSQL, a stack's own PostgreSQL once detached) are not counted."""

import os
from pathlib import Path

import pytest

RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def pytest_addoption(parser):
    parser.addoption(
        "--record-outcomes",
        metavar="PATH",
        default=None,
        help="write every reported test's outcome and node id to PATH (CI compares them with --collect-only)",
    )
    parser.addoption(
        "--record-durations",
        metavar="PATH",
        default=None,
        help="write every reported test's worker, seconds and node id to PATH (how a parallel run loaded its workers)",
    )


def pytest_configure(config):
    path = config.getoption("record_outcomes")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(Path(path)), "record-outcomes")
    path = config.getoption("record_durations")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Durations(Path(path)), "record-durations")
    if path:  # where the tests run: this process, or each xdist worker
        config.pluginmanager.register(CpuMeter(), "record-cpu")


def outcome_of(report) -> str | None:
    """What a phase's report says of its test: a failure outside the test's call is an error; a
    skip in its set-up (a missing service) a skip; a passed set-up or teardown nothing."""
    if report.when == "call":
        return "skipped" if report.skipped else report.outcome  # xfail: reported as skipped
    if report.failed:
        return "error"
    return "skipped" if report.skipped else None


class Recorder:
    def __init__(self, path: Path):
        self.path, self.running, self.done = path, {}, []

    def pytest_runtest_logreport(self, report):
        """A test's phases end with its teardown's report: one line then (per worker, should copies
        of one node id run at once on several)."""
        key = (getattr(report, "worker_id", None), report.nodeid)
        outcome = outcome_of(report) or "passed"
        if RANK[outcome] >= RANK[self.running.get(key, "passed")]:
            self.running[key] = outcome
        if report.when == "teardown":
            self.done.append((report.nodeid, self.running.pop(key)))

    def pytest_sessionfinish(self, session):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(f"{outcome} {nodeid}\n" for nodeid, outcome in sorted(self.done)))


def _process_table() -> tuple[dict[int, int], dict[int, int]]:
    """Each living process's parent, and its CPU ticks with what its reaped children used; empty
    without /proc."""
    ticks, parents = {}, {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            # os.open and one os.read, not open(): a scan per test start and end, of every process of the
            # machine (Chromium's included), was 1.3% of the workers' CPU in CI, half of it the file objects
            try:
                stat = os.open(f"/proc/{name}/stat", os.O_RDONLY)
                try:
                    fields = os.read(stat, 4096).rsplit(b")", 1)[1].split()
                finally:
                    os.close(stat)
            except OSError:  # ended while listed
                continue
            parents[int(name)] = int(fields[1])
            ticks[int(name)] = sum(int(field) for field in fields[11:15])  # utime stime cutime cstime
    return parents, ticks


def descendants(root: int, parents: dict[int, int] | None = None) -> list[int]:
    """``root`` and its living descendants."""
    children = {}
    for pid, parent in (parents if parents is not None else _process_table()[0]).items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, ()))
    return found


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its living descendants, each with what its reaped children used
    (a child that ends moves into its parent's count, so the total only grows). 0 without /proc."""
    parents, ticks = _process_table()
    return sum(ticks.get(pid, 0) for pid in descendants(root, parents)) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """Each test's CPU seconds, in its teardown report's ``user_properties`` (which xdist carries to
    the controller)."""

    def __init__(self):
        self.started = {}

    def pytest_runtest_logstart(self, nodeid, location):
        self.started[nodeid] = tree_cpu(os.getpid())

    @pytest.hookimpl(tryfirst=True)  # before pytest's own makes the report from the item's properties
    def pytest_runtest_makereport(self, item, call):
        if call.when == "teardown" and item.nodeid in self.started:
            item.user_properties.append(("cpu", tree_cpu(os.getpid()) - self.started.pop(item.nodeid)))


class Durations:
    def __init__(self, path: Path):
        self.path, self.running, self.done = path, {}, []

    def pytest_runtest_logreport(self, report):
        worker = getattr(report, "worker_id", None) or "-"
        key = (worker, report.nodeid)
        self.running[key] = self.running.get(key, 0.0) + report.duration
        if report.when == "teardown":
            cpu = dict(report.user_properties).get("cpu", 0.0)
            self.done.append((worker, self.running.pop(key), cpu, report.nodeid))

    def pytest_sessionfinish(self, session):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(
            "".join(
                f"{worker} {seconds:.3f} {cpu:.3f} {nodeid}\n" for worker, seconds, cpu, nodeid in sorted(self.done)
            )
        )
