"""The demo's lightweight pyramid: a run over the demo dataset whose statements are the expert
pyramid's SCU labels, sampled, with its judging tasks and a judging link, so a fresh install shows the
crowd steps as the crowd guide does (docs/crowd.md). Idempotent, like the demo dataset it extends."""

from django.db import transaction

from annotation.corpus.models import Dataset
from annotation.lightweight import work
from annotation.lightweight.models import CrowdLink, LightweightPyramid
from annotation.pyramids.models import Pyramid

RUN = "Crowd pilot"


@transaction.atomic
def load_demo_run(dataset: Dataset) -> LightweightPyramid:
    """The demo run of ``dataset`` (created on the first call, left as it is after)."""
    run, created = LightweightPyramid.objects.get_or_create(
        dataset=dataset,
        name=RUN,
        defaults={"origin": LightweightPyramid.Origin.EXPERT, "judges_per_task": 3, "statements_per_reference": 2},
    )
    if created:
        work.statements_from_expert(run, Pyramid.objects.filter(topic__dataset=dataset, status=Pyramid.Status.DONE))
        work.apply_filters(run)
        work.sample(run)
        work.create_tasks(run)
        CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)
    return run
