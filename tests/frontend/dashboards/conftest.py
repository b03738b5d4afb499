"""The dashboard pages run Celery tasks in-process (``tests/dashboards/conftest.py``)."""

from tests.dashboards.conftest import _eager_tasks  # noqa: F401  (fixtures)
