"""With Redis and a real Celery worker: a save schedules the dashboard after the scores and the
agreement, and the worker (which finds the task through autodiscovery) stores a current one."""

import time

import pytest

from annotation.dashboards import snapshots
from annotation.dashboards.models import DatasetDashboard
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import SCU

from tests.dashboards.helpers import build_toy


@pytest.mark.worker
def test_worker_recomputes_the_dashboard_after_a_save(celery_worker, settings):
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    # The save comes seconds after the toy's own: not the at-most-once-per-interval pacing
    # (tests/jobs/test_queue_coalescing.py), the recomputation after a save, is what is tested here.
    settings.DASHBOARD_INTERVAL_SECONDS = 0
    # Nobody looks at it: the recomputation waits for the data to stay unchanged (shortened here;
    # the rule itself: test_snapshots.py's test_a_dashboard_nobody_looks_at_waits_for_a_quiet_spell).
    settings.DASHBOARD_QUIET_SECONDS = 2
    assert "annotation.recompute_dashboards" in celery_worker.app.tasks
    dataset = build_toy()  # autocommit: every save schedules work for the worker
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        stored = DatasetDashboard.objects.filter(dataset=dataset).first()
        if stored is not None and snapshots.is_current(stored):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the worker did not store a current dashboard")
    annotation = PeerAnnotation.objects.get(
        peer__topic__dataset=dataset, peer__topic__external_id="T2", peer__external_id="3"
    )
    add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    assert not snapshots.is_current(DatasetDashboard.objects.get(dataset=dataset))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        stored = DatasetDashboard.objects.get(dataset=dataset)
        if snapshots.is_current(stored):
            break
        time.sleep(0.2)
    row = next(r for r in stored.data["conventions"]["nist"]["per_topic"] if (r["topic"], r["summary"]) == ("T2", "3"))
    assert snapshots.is_current(stored) and row["modified"] == pytest.approx(0.8)
