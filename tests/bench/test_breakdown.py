"""bench/_breakdown.py's phase timing (``request_cpu.py --breakdown``): a phase counts its outermost
calls only, on the handling thread only, and only while on; and every phase it times still names
a function defined where it says (a renamed or moved function would otherwise stop the bench, or
an inherited one be wrapped in the wrong class)."""
import importlib.util
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "_breakdown.py"
spec = importlib.util.spec_from_file_location("_breakdown", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)


class Work:
    def outer(self, depth: int) -> int:
        busy(0.002)
        return self.outer(depth - 1) + 1 if depth else 0


def busy(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_every_phase_names_a_function_defined_where_it_says():
    for _, targets in bench.PHASES:
        for target in targets:
            owner, attribute = bench.located(target)
            assert callable(vars(owner)[attribute]), target


def test_a_phase_counts_its_outermost_calls_on_the_handling_thread_while_on():
    phases = bench.Phases([("work", [f"{__name__}:Work.outer"])])
    Work().outer(2)
    assert phases.spent["work"] == 0   # off
    phases.on = True
    assert Work().outer(2) == 2
    once = phases.spent["work"]
    assert 0.006 <= once < 0.012   # three levels of 2 ms, counted once (nested calls not added again)
    other = threading.Thread(target=Work().outer, args=(2,))
    other.start()
    other.join()
    assert phases.spent["work"] == once   # another thread (the jobs runner) is not the request's phase
