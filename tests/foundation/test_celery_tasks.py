"""A worker knows every task anything publishes: the jobs of the one background path
(``annotation.jobs.queue.JOBS``) and beat's schedule (the sweeps, also sent by each worker as it
starts). After annotation/ was grouped by concept, Celery's default discovery looked for an
``annotation/tasks.py`` that no longer existed: a real worker registered none of them and discarded
every message as unregistered (tests/scale caught it)."""
import json
import os
import subprocess
import sys

from django.conf import settings

from annotation.jobs.queue import JOBS
from tests.conftest import REPO

WORKER_VIEW = """
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
import django
django.setup()
from pyramid_app.celery import app
app.loader.import_default_modules()  # what `celery -A pyramid_app worker` imports when it starts
print(json.dumps(sorted(app.tasks)))
"""


def test_a_worker_registers_every_task_published():
    # A fresh interpreter, as a worker: nothing imported by this test process helps.
    shown = subprocess.run([sys.executable, "-c", WORKER_VIEW], cwd=REPO, capture_output=True, text=True, timeout=120,
                           env={**os.environ, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert shown.returncode == 0, shown.stderr
    registered = set(json.loads(shown.stdout.strip().splitlines()[-1]))
    published = {job.task for job in JOBS.values() if job.task} | {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert published <= registered, sorted(published - registered)
