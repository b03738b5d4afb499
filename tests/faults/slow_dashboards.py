"""The long dashboards of the fault tests: a stack's workers swapped for ones whose runs take longer
(``swapped``, ``slow_worker.py``) and the runs they recorded (``dashboard_runs``)."""

import json
from contextlib import contextmanager
from pathlib import Path

SLOW_WORKER = str(Path(__file__).with_name("slow_worker.py"))


def dashboard_runs(log: Path) -> list[dict]:
    """The dashboard runs slow_worker.py recorded: one per start, with its end (None: still running)."""
    runs, open_ = [], {}
    for line in log.read_text().splitlines() if log.exists() else []:
        event = json.loads(line)
        if event["event"] == "start":
            open_[event["pid"]] = {"ids": event["ids"], "start": event["at"], "end": None}
            runs.append(open_[event["pid"]])
        else:
            open_.pop(event["pid"])["end"] = event["at"]
    return runs


def stop_together(processes) -> None:
    """Each asked to stop at the same moment, then each waited for (a minute less than one by one)."""
    for process in processes:
        process.send()
    for process in processes:
        process.stop()


@contextmanager
def swapped(stack, **processes):
    """The stack's processes named (``worker``, ``dashboards``) replaced by the ones given for the
    ``with`` block, the usual ones back after; the others keep running (their settings are the
    stack's, the module's ``STACK_SETTINGS``: conftest.py)."""
    normal = {name: getattr(stack, name) for name in processes}
    stop_together(normal.values())
    for name, process in processes.items():
        setattr(stack, name, process)
        process.start()
    try:
        yield
    finally:
        stop_together(processes.values())
        for name, process in normal.items():
            setattr(stack, name, process)
            process.start()
