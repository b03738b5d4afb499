"""``--record-outcomes=PATH``: every test this run reported, one ``<outcome> <node id>`` line for
each test run (passed, failed, skipped, error: the worst of its phases). CI compares them with a
separate ``pytest --collect-only -q`` (``.ci/compare_outcomes.py``), so a test collected but never
reported (a worker lost, a report swallowed) fails the run instead of passing unnoticed. A node id
is counted as often as it runs: schemathesis collects each API operation under one shared node id,
and a scheduler keyed by node id (xdist's ``--dist loadfile``) runs it once. Written by the process
that reports: pytest itself, or xdist's controller (never its workers). Loaded with ``-p``."""

from pathlib import Path

RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


def pytest_addoption(parser):
    parser.addoption(
        "--record-outcomes",
        metavar="PATH",
        default=None,
        help="write every reported test's outcome and node id to PATH (CI compares them with --collect-only)",
    )


def pytest_configure(config):
    path = config.getoption("record_outcomes")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Recorder(Path(path)), "record-outcomes")


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
