"""A worker started as the docs say (``celery -A pyramid_app worker``) knows every task the code
defines and every job and beat entry names: each concept's ``tasks`` module is found by the Celery
app itself, not by whatever a test or a service happened to import first (a task sent by name
that no worker registered is dropped as "unregistered")."""

import json
import re
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from annotation.jobs.queue import JOBS

ROOT = Path(__file__).resolve().parents[2]
WORKER_VIEW = """
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
from pyramid_app.celery import app   # what `celery -A pyramid_app` loads
import django; django.setup()
app.loader.import_default_modules()
print(json.dumps(sorted(n for n in app.tasks if not n.startswith("celery."))))
"""


def test_a_worker_registers_every_task_the_code_defines_jobs_send_and_beat_schedules():
    defined = set()
    for path in (ROOT / "annotation").rglob("*.py"):
        defined |= set(re.findall(r'@shared_task\(name="([^"]+)"', path.read_text()))
    out = subprocess.run(
        [sys.executable, "-c", WORKER_VIEW],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "HOME": str(ROOT)},
        check=True,
    ).stdout
    registered = set(json.loads(out.strip().splitlines()[-1]))
    assert defined and registered == defined
    assert {job.task for job in JOBS.values() if job.task} <= registered
    assert {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()} <= registered
