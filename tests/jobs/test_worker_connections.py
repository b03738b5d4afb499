"""A worker keeps its database connection between tasks (``CELERY_DB_REUSE_MAX`` and the prerun
handler of ``pyramid_app/celery.py``), as a web process does between requests: Celery's default
closed it around every task, so each of the several tasks an editor's write causes opened a new
PostgreSQL connection. A broken connection is still replaced before the next task."""

from types import SimpleNamespace

from celery.fixups.django import DjangoWorkerFixup
from django.db import connection

from pyramid_app.celery import _close_old_database_connections, app

TASK = SimpleNamespace(request=SimpleNamespace(is_eager=False))


def run_task_signals():
    fixup = DjangoWorkerFixup(app)
    fixup.on_task_prerun(TASK)
    _close_old_database_connections(task=TASK)
    connection.ensure_connection()  # the task's queries
    fixup.on_task_postrun(TASK)


def test_the_connection_outlives_the_task(transactional_db):
    # A connection of its own: one an earlier test opened may be past CONN_MAX_AGE already, and is
    # then rightly replaced before the first task (CI: the suite's worker had held it over 60 s).
    connection.close()
    connection.ensure_connection()
    before = connection.connection
    for _ in range(3):
        run_task_signals()
    assert connection.connection is before


def test_a_broken_connection_is_replaced_before_the_next_task(transactional_db):
    connection.ensure_connection()
    before = connection.connection
    connection.errors_occurred = True
    connection.is_usable = lambda: False  # as after the server dropped it
    try:
        run_task_signals()
    finally:
        del connection.is_usable
    assert connection.connection is not None and connection.connection is not before
