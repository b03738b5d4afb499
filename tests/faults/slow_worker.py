"""A Celery worker whose runs of one computation take SLOW_SECONDS longer (the fault tests' stand-in
for a meta-evaluation of minutes; the scale tests' for two workers running the same scores), each run
appended to RUNS_LOG as a JSON line (``start``/``end``, process id, the ids, time). SLOW_FUNCTION
names the function looked up when it runs (``module:name``), called with a list of ids or with one
model instance (its id is recorded). Default: the computation of a dashboard's figures, which a
job runs only for a dataset whose snapshot is not current: a run recorded is a full run, a copy of
a message that finds its work done records nothing.
Arguments: Celery's command line after ``celery``.

    python tests/faults/slow_worker.py -A pyramid_app worker -Q dashboards ...
"""

import importlib
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402  (the repository on sys.path and the settings module set first)

django.setup()

from celery.__main__ import main  # noqa: E402  (the repository on sys.path and the settings module set first)

DEFAULT = "annotation.dashboards.snapshots:compute_payload"
module_name, function_name = os.environ.get("SLOW_FUNCTION", DEFAULT).split(":")
module = importlib.import_module(module_name)
original = getattr(module, function_name)


def record(event: str, ids: list[int]) -> None:
    with open(os.environ["RUNS_LOG"], "a") as log:
        log.write(json.dumps({"event": event, "pid": os.getpid(), "ids": ids, "at": time.time()}) + "\n")


def slow(given, *args, **kwargs):
    ids = [given.pk] if hasattr(given, "pk") else sorted(given)
    record("start", ids)
    try:
        done = original(given, *args, **kwargs)
        time.sleep(float(os.environ["SLOW_SECONDS"]))
        return done
    finally:
        record("end", ids)


setattr(module, function_name, slow)  # the task looks it up when it runs

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
