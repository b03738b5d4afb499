"""The fault tests' production stack (``harness.Stack``: PostgreSQL, redis-server, gunicorn with 2
workers, the scores and dashboards workers, beat), one per test module: a file's tests share it, and
the files run at once on xdist workers of their own, each with its own stack (the long dashboard
tests of ``test_long_dashboard.py`` and ``test_redelivered_dashboard.py`` wait minutes on the
broker's timings).

A module's ``STACK_SETTINGS`` (a dict) are set over production's in every process of its stack from
its start: the long dashboards' scaled broker timings, which every process must share (the web
derives its countdowns from the visibility timeout). A test then swaps only the workers it slows
(``slow_dashboards.swapped``) instead of starting the whole app again with them, and again after
(Django's start in five processes, twice a test)."""

import pytest

from tests.conftest import require
from tests.faults.harness import Stack, missing_binaries, running


@pytest.fixture(scope="module")
def stack(request):
    reason = missing_binaries()
    require(reason is None, f"the fault tests start their own services: {reason}")
    with running(Stack(env=getattr(request.module, "STACK_SETTINGS", None)), settle=90) as stack:
        yield stack


@pytest.fixture(scope="module")
def ids(stack):
    return stack.probe("ids")
