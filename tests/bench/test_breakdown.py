"""bench/_breakdown.py's phase timing (``request_cpu.py --breakdown``): a phase counts its outermost
calls only, on the handling thread only, and only while on; and every phase it times still names
a function defined where it says (a renamed or moved function would otherwise stop the bench, or
an inherited one be wrapped in the wrong class)."""

import importlib.util
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "_breakdown.py"
spec = importlib.util.spec_from_file_location("_breakdown", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)


class ThreadClock:
    """Each thread's CPU clock, advanced by the work itself: the phase's sums are exact, whatever
    the machine's load (a real clock counts the wrappers' own time, and load stretches it)."""

    def __init__(self):
        self.spent: dict[int, float] = {}

    def thread_time(self) -> float:
        return self.spent.get(threading.get_ident(), 0.0)

    def work(self, seconds: float) -> None:
        self.spent[threading.get_ident()] = self.thread_time() + seconds


CLOCK = ThreadClock()


class Work:
    def outer(self, depth: int) -> int:
        CLOCK.work(0.002)
        return self.outer(depth - 1) + 1 if depth else 0


def test_every_phase_names_a_function_defined_where_it_says():
    for _, targets in bench.PHASES:
        for target in targets:
            owner, attribute = bench.located(target)
            assert callable(vars(owner)[attribute]), target


def test_a_phase_counts_its_outermost_calls_on_the_handling_thread_while_on(monkeypatch):
    monkeypatch.setattr(bench, "time", SimpleNamespace(thread_time=CLOCK.thread_time))
    phases = bench.Phases([("work", [f"{__name__}:Work.outer"])])
    Work().outer(2)
    assert phases.spent["work"] == 0  # off
    phases.on = True
    assert Work().outer(2) == 2
    once = phases.spent["work"]
    assert once == pytest.approx(0.006)  # three levels of 2 ms, counted once (added again at each level: 12 ms)
    other = threading.Thread(target=Work().outer, args=(2,))
    other.start()
    other.join()
    assert phases.spent["work"] == once  # another thread (the jobs runner) is not the request's phase
