"""What a run will cost and what its page says of a sample: a run whose statements come from the
expert pyramid (or an import) pays for no writing, so its estimate is its judging alone; the sample's
message counts in words ("1 topic", not "1 topics"), and the top-up is offered only when a batch ran short."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.corpus.models import PeerSummary
from annotation.lightweight import work
from annotation.lightweight.models import LightweightPyramid
from annotation.pyramids.models import Pyramid

from tests.foundation.factories import pyramid, topic
from tests.lightweight.world import client_for, small_run

pytestmark = pytest.mark.django_db


def expert_run(statements_per_reference: int = 1) -> LightweightPyramid:
    t, refs = topic("D1", "Expert storms", A="The storm hit the coast on Monday.", B="Ten boats sank in the harbour.")
    PeerSummary.objects.create(topic=t, external_id="D1.M.100.A.7", text="A storm hit the coast.")
    p, _ = pyramid(t, refs, uids=(1, 2, 3, 4))
    Pyramid.objects.filter(pk=p.pk).update(status=Pyramid.Status.DONE)
    run = LightweightPyramid.objects.create(
        dataset=t.dataset,
        name="expert",
        origin=LightweightPyramid.Origin.EXPERT,
        judges_per_task=3,
        statements_per_reference=statements_per_reference,
    )
    work.statements_from_expert(run, Pyramid.objects.filter(pk=p.pk))
    work.sample(run)
    work.create_tasks(run)
    return run


def test_an_expert_statement_run_pays_for_judging_only():
    run = expert_run()
    tasks = run.tasks.count()
    assert tasks > 0
    costs = work.costs(run)
    assert Decimal(costs["estimate"]) == tasks * run.judges_per_task * run.pay_judging
    crowd = small_run(judges=5)  # crowd-written: two references, one writer each, paid too
    expected = 2 * crowd.writers_per_reference * crowd.pay_writing + crowd.tasks.count() * 5 * crowd.pay_judging
    assert Decimal(work.costs(crowd)["estimate"]) == expected
    page = client_for("chief", run.dataset).get(reverse("lightweight:run", args=[run.pk])).content.decode()
    assert "statement-writing assignments" not in page and "statements from the expert pyramids</span>" in page


def test_the_sample_message_counts_in_words_and_the_top_up_shows_only_when_short():
    run = small_run()
    client = client_for("chief", run.dataset)
    page = client.post(reverse("lightweight:action", args=[run.pk, "sample"]), follow=True).content.decode()
    assert "Sampled 4 statements over 1 topic." in page  # 1 per reference and batch: 2 references, 2 batches
    assert "topping short batches up" not in page  # nothing ran short
    run.statements_per_reference = 3  # each reference has 2 statements: both batches run short
    run.save(update_fields=["statements_per_reference"])
    page = client.post(reverse("lightweight:action", args=[run.pk, "sample"]), follow=True).content.decode()
    assert "missing in batch" in page and "topping short batches up" in page
