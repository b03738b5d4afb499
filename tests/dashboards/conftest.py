"""Dashboard page tests run Celery tasks in-process (eager) even when REDIS_URL is set (CI), so a
page sees the recomputation a save or an upload caused; ``test_worker.py`` covers the real worker."""

import pytest


@pytest.fixture(autouse=True)
def _eager_tasks(request):
    if request.node.get_closest_marker("worker"):
        yield
        return
    from pyramid_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved
