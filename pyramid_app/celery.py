"""The Celery application.

Configuration comes from Django settings (``CELERY_*``). Without ``REDIS_URL`` the settings switch
Celery to eager mode, so a bare checkout runs every task in-process and needs nothing installed.
With Redis: kombu's transport with a fix that keeps workers alive through a Redis outage
(``pyramid_app/broker.py``); scores and dashboards on queues of their own, beat a process of its own
(settings, docker-compose.yml).
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

app = Celery("pyramid")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each concept owns its tasks module (annotation/<concept>/tasks.py, see annotation.jobs.queue):
# Django's app list names only ``annotation``, whose own ``tasks`` module no longer exists.
CONCEPTS_WITH_TASKS = ("api", "dashboards", "lightweight", "peers", "pyramids")
app.autodiscover_tasks([f"annotation.{concept}" for concept in CONCEPTS_WITH_TASKS])
