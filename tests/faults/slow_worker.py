"""A Celery worker whose dashboard recomputations take SLOW_DASHBOARD_SECONDS longer (the fault
tests' stand-in for a meta-evaluation of minutes), each run appended to RUNS_LOG as a JSON line
(``start``/``end``, process id, dataset ids, time). Arguments: Celery's command line after ``celery``.

    python tests/faults/slow_worker.py -A pyramid_app worker -Q dashboards ...
"""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402

django.setup()

from celery.__main__ import main  # noqa: E402

from annotation.dashboards import snapshots as dashboard_snapshots  # noqa: E402

original = dashboard_snapshots.recompute_datasets


def record(event: str, ids: list[int]) -> None:
    with open(os.environ["RUNS_LOG"], "a") as log:
        log.write(json.dumps({"event": event, "pid": os.getpid(), "ids": ids, "at": time.time()}) + "\n")


def slow_recompute_datasets(dataset_ids):
    ids = sorted(dataset_ids)
    record("start", ids)
    try:
        written = original(ids)
        time.sleep(float(os.environ["SLOW_DASHBOARD_SECONDS"]))
        return written
    finally:
        record("end", ids)


dashboard_snapshots.recompute_datasets = slow_recompute_datasets  # the task looks it up when it runs

if __name__ == "__main__":
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
