"""With Redis and a real Celery worker: pyramids saved in autocommit publish the construction job,
and the worker (which finds ``annotation.recompute_construction`` through autodiscovery, on the
dashboards queue) stores a current result; a pyramid edit makes it stale until the worker has
stored the new figures."""

import time

import pytest

from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, PyramidAgreement

from tests.pyramids import construction_world as world


def wait_for_current(topic, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stored = PyramidAgreement.objects.filter(topic=topic).select_related("topic").first()
        if stored is not None and stored.is_current:
            return stored
        time.sleep(0.2)
    pytest.fail("the worker did not store current construction agreement")


@pytest.mark.worker
def test_the_worker_stores_the_construction_agreement_and_follows_an_edit(celery_worker, settings):
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    assert "annotation.recompute_construction" in celery_worker.app.tasks
    topic = world.build().topics.get()  # autocommit: every save publishes work for the worker
    [pair] = wait_for_current(topic).values["pairs"]
    assert (pair["aligned"], pair["pairwise_f1"], pair["scores"]["nist"]["n"]) == (6, 0.5, 4)
    p2 = topic.pyramids.order_by("pk").last()
    add_contributor(SCU.objects.get(pyramid=p2, uid=5), topic.referencesummarys.get(external_id="A"), [(12, 17)])
    assert not PyramidAgreement.objects.select_related("topic").get(topic=topic).is_current
    [pair] = wait_for_current(topic).values["pairs"]
    assert (pair["aligned"], pair["unmatched_a"]) == (7, 0)
