"""The long dashboards of the fault tests: every process of the app restarted with other settings
(``replaced``), a dashboards worker whose runs take longer (``slow_worker.py``) and the runs it
recorded (``dashboard_runs``)."""

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
def replaced(stack, env: dict, **processes):
    """Every process of the app restarted with ``env`` over its settings, those named in
    ``processes`` (``worker``, ``dashboards``) replaced by the ones given; the usual ones back after."""
    names = ("worker", "dashboards", "beat", "web")
    normal = [getattr(stack, name) for name in names]
    stop_together(stack.services())
    for name, process in zip(names, normal, strict=True):
        setattr(stack, name, processes.get(name) or process.with_settings(env))
    try:
        for process in stack.services():
            process.start()
        stack.wait_ready()
        yield
    finally:
        stop_together(stack.services())
        for name, process in zip(names, normal, strict=True):
            setattr(stack, name, process)
        for process in stack.services():
            process.start()
        stack.wait_ready()
