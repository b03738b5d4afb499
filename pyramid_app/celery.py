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
# Each concept of the annotation app owns its tasks (``<concept>/tasks.py``): they are packages
# inside one Django app, not apps of their own, so they are named here.
app.autodiscover_tasks(["annotation.peers", "annotation.dashboards", "annotation.lightweight", "annotation.api"])
