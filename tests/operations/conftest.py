"""Scores, agreement and dashboards are recomputed in-process after each save (as in the dashboard
page tests), so the data backed up holds current stored results even when REDIS_URL is set."""
from ..dashboard_pages.conftest import _eager_tasks  # noqa: F401  (an autouse fixture, shared)
