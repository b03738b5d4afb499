"""The set-up world (``tests/corpus/world.py``) and Celery tasks in-process (``tests/dashboards/conftest.py``)."""

from tests.corpus.world import people, topic  # noqa: F401  (fixtures)
from tests.dashboards.conftest import _eager_tasks  # noqa: F401  (fixtures)
