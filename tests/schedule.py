"""How a parallel run (``pytest -n N --dist loadfile``, `make test`) hands its test files to the
pytest-xdist workers (loaded with ``-p``; outside xdist nothing changes). Each file still runs whole
on one worker (its module fixtures, e.g. a fault stack, set up once; ``ONE_BY_ONE`` excepted), in two
lanes:

- the files that wait on production's timings (``WAITING``: the fault and scale stacks, mostly idle
  while a recovery or a visibility timeout runs its course) go to the last workers (``waiting_workers``),
  the other files to the first ones, so the waits overlap the CPU-bound files instead of taking a
  core's turn; a worker whose lane is empty takes from the other, so no worker idles while files wait;
- in each lane the longest files first (``LONGEST``, measured), then the others by their number of
  tests: a long file handed out last is the run's tail;
- the tests of a file in ``ONE_BY_ONE`` are handed out one at a time: each waits minutes on its own,
  and two of them on two workers wait at once (each worker starts the module's stack for its own).

xdist's own ``loadfile`` orders every file by its number of tests, which handed the 7-test fault file
(minutes of waiting) out midway, to end the run alone on one worker.
"""

import pytest

WAITING = ("tests/faults/", "tests/scale/")
# The files that take longest alone (--durations, issue 32), longest first in each lane.
LONGEST = (
    "tests/faults/test_redelivered_dashboard.py",
    "tests/scale/test_two_nodes.py",
    "tests/faults/test_faults.py",
    "tests/faults/test_long_dashboard.py",
    "tests/faults/test_interrupted.py",
    "tests/faults/test_redis_unreachable.py",
    "tests/api/test_schemathesis.py",
    "tests/access/test_permissions.py",
    "tests/access/test_per_dataset_roles.py",
    "tests/dashboards/test_score_listings.py",
    "tests/browser/dashboards/test_dashboards.py",
    "tests/dashboards/test_real_data_2007.py",
    "tests/transfer/test_backup.py",
    "tests/transfer/test_archive_round_trip.py",
)
# Files whose every test waits minutes on the broker's timings (each parametrization runs a stack's
# long dashboard job through redelivery): whole on one worker, its two tests were the run's floor
# (161 + 132 s one after the other, CI on 2 cores).
ONE_BY_ONE = ("tests/faults/test_redelivered_dashboard.py",)


def unit(nodeid: str) -> str:
    """The work unit a test belongs to: its file, or itself for a file of ``ONE_BY_ONE``."""
    path = nodeid.split("::", 1)[0]
    return nodeid if path in ONE_BY_ONE else path


def waiting(path: str) -> bool:
    return path.startswith(WAITING)


def waiting_workers(workers: int) -> int:
    """How many workers (the last ones) take the waiting files first: two where there are cores to
    spare for the others (the fault and scale files then run in two streams), else one."""
    return 0 if workers < 2 else 1 if workers < 4 else 2


def rank(work_unit: str, tests: int) -> tuple:
    """The order work units are handed out in: the measured longest files first, then by number of tests."""
    path = work_unit.split("::", 1)[0]
    return (LONGEST.index(path), 0) if path in LONGEST else (len(LONGEST), -tests)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Lanes(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit(nodeid)

        def _waiting_lane(self, node) -> bool:
            number = int(node.gateway.id.removeprefix("gw"))
            return number >= self.numnodes - waiting_workers(self.numnodes)

        def _reschedule(self, node) -> None:
            """As xdist's, but a waiting worker is handed its next file only once it holds just the
            last test of the current one (xdist keeps one test back until more arrive): the next
            long file stays free for the other waiting worker meanwhile."""
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > (1 if self._waiting_lane(node) else 2):
                return
            self._assign_work_unit(node)

        def _assign_work_unit(self, node) -> None:
            lane = self._waiting_lane(node)
            ranked = sorted(self.workqueue, key=lambda path: rank(path, len(self.workqueue[path])))
            path = next((path for path in ranked if waiting(path) == lane), ranked[0])
            work_unit = self.workqueue.pop(path)
            self.assigned_work.setdefault(node, {})[path] = work_unit
            collection = self.registered_collections[node]
            node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

    return Lanes(config, log)
