"""The Celery application.

Configuration comes from Django settings (``CELERY_*``). Without ``REDIS_URL`` the settings switch
Celery to eager mode, so a bare checkout runs every task in-process and needs nothing installed.
With Redis: kombu's transport with a fix that keeps workers alive through a Redis outage
(``pyramid_app/broker.py``); scores and dashboards on queues of their own, beat a process of its own
(settings, docker-compose.yml).
"""

import os

from celery import Celery
from celery.signals import task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

app = Celery("pyramid")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each concept owns its tasks module (annotation/<concept>/tasks.py, see annotation.jobs.queue):
# Django's app list names only ``annotation``, whose own ``tasks`` module no longer exists.
CONCEPTS_WITH_TASKS = ("api", "dashboards", "lightweight", "peers", "pyramids")
app.autodiscover_tasks([f"annotation.{concept}" for concept in CONCEPTS_WITH_TASKS])


@task_prerun.connect(weak=False)
def _close_old_database_connections(task=None, **kwargs):
    """A worker keeps its database connection between tasks (``CELERY_DB_REUSE_MAX``, settings):
    before each task Django's own rule closes it if it is broken or older than CONN_MAX_AGE, as
    ``request_started`` does for a request."""
    if task is not None and not task.request.is_eager:  # an eager task runs inside its caller's transaction
        from django.db import close_old_connections

        close_old_connections()
