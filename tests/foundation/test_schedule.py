"""A parallel run hands the files that wait (the fault and scale stacks) to the last workers and the
others to the first ones, each file whole on one worker but the tests of ``ONE_BY_ONE`` (each on a
worker of its own while the other waits), every test reported (``tests/schedule.py``).
Checked on a small suite of its own in a pytest of its own (``-n 4 --dist loadfile``)."""

import re
from collections import defaultdict

import pytest

from tests.conftest import REPO
from tests.foundation.test_outcomes import pytest_in
from tests.schedule import LONGEST, ONE_BY_ONE, rank, unit, waiting_workers

ONE_AT_A_TIME = ONE_BY_ONE[0]
FILES = {
    ONE_AT_A_TIME: 2,
    "tests/faults/test_stack.py": 3,
    "tests/scale/test_nodes.py": 2,
    "tests/access/test_rules.py": 4,
    "tests/api/test_views.py": 3,
    "tests/corpus/test_topics.py": 2,
    "tests/jobs/test_queue.py": 1,
}


@pytest.fixture
def small_suite(tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist is not installed (pip install -e '.[test]')")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    for path, tests in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("".join(f"def test_{i}():\n    pass\n\n\n" for i in range(tests)))
    return tmp_path


def test_the_waiting_files_go_to_the_last_workers_each_file_whole(small_suite):
    outcomes = small_suite / "outcomes.txt"
    run = pytest_in(
        small_suite,
        "-p",
        "tests.schedule",
        "-n",
        "4",
        "--dist",
        "loadfile",
        "-v",
        f"--record-outcomes={outcomes}",
        str(small_suite),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    ran_on = defaultdict(set)
    # Each test's line: "[gw2] [ 46%] PASSED <the small suite's folder>/tests/faults/test_stack.py::test_0".
    for worker, path in re.findall(r"^\[(gw\d)\] .*? PASSED \S*?(tests/\S+?\.py)::", run.stdout, re.M):
        ran_on[path].add(worker)
    assert set(ran_on) == set(FILES), run.stdout[-3000:]
    whole = {path: workers for path, workers in ran_on.items() if path != ONE_AT_A_TIME}
    assert all(len(workers) == 1 for workers in whole.values()), ran_on  # each file whole on one worker
    assert ran_on[ONE_AT_A_TIME] == {"gw2", "gw3"}, ran_on  # its two tests at once, one on each waiting worker
    assert ran_on["tests/faults/test_stack.py"] | ran_on["tests/scale/test_nodes.py"] <= {"gw2", "gw3"}, ran_on
    reported = sorted(line.split(" ", 1)[1] for line in outcomes.read_text().splitlines())
    assert reported == sorted(f"{path}::test_{i}" for path, tests in FILES.items() for i in range(tests))


def test_the_lanes_and_the_order():
    assert [waiting_workers(n) for n in (1, 2, 3, 4, 8)] == [0, 1, 1, 2, 2]
    assert all((REPO / path).is_file() for path in LONGEST), LONGEST  # a file renamed is ranked again
    measured = sorted(LONGEST[::-1], key=lambda path: rank(path, 1))
    assert measured == list(LONGEST)  # the measured longest first, in their order
    assert rank(LONGEST[-1], 1) < rank("tests/api/test_views.py", 500) < rank("tests/api/test_other.py", 3)
    assert all((REPO / path).is_file() and path.startswith("tests/faults/") for path in ONE_BY_ONE), ONE_BY_ONE
    assert unit(f"{ONE_AT_A_TIME}::test_a[1]") == f"{ONE_AT_A_TIME}::test_a[1]"
    assert unit("tests/api/test_views.py::test_a[1]") == "tests/api/test_views.py"
    assert rank(f"{ONE_AT_A_TIME}::test_a[2]", 1) == rank(ONE_AT_A_TIME, 2) < rank(LONGEST[1], 1)
