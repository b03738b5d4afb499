"""Celery tasks in-process (``tests/dashboards/conftest.py``), so pages see the recomputation a save caused."""

from tests.dashboards.conftest import _eager_tasks  # noqa: F401  (fixtures)
