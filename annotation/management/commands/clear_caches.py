"""After rows were edited in SQL directly: every cache and stored figure keyed by a revision is made
stale and recomputed (``score_events.touch_topics_wholly``, ``lightweight.runs.touch``). The app
bumps a revision with every change it makes itself; a hand-written UPDATE bumps none, so without
this the old figures keep passing for current (docs/operations.md)."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotation.corpus.models import Dataset, Topic
from annotation.lightweight import runs
from annotation.lightweight.models import LightweightPyramid
from annotation.peers.score_events import touch_topics_wholly


class Command(BaseCommand):
    help = (
        "After editing rows in SQL directly: make every revision-keyed cache and stored figure stale "
        "(scores, agreement, dashboards, lightweight results), in every process, and recompute them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", help="only this dataset (by name); default: every dataset")

    def handle(self, *args, dataset=None, **options):
        datasets = Dataset.objects.all()
        if dataset is not None:
            datasets = datasets.filter(name=dataset)
            if not datasets.exists():
                raise CommandError(f"No dataset named {dataset!r}.")
        with transaction.atomic():
            topic_ids = list(Topic.objects.filter(dataset__in=datasets).values_list("id", flat=True))
            touch_topics_wholly(topic_ids)
            lightweight = list(LightweightPyramid.objects.filter(dataset__in=datasets))
            for run in lightweight:
                runs.touch(run, reload=False)
        self.stdout.write(
            f"Made stale and scheduled: {len(topic_ids)} topic(s) with their pyramids and annotations, "
            f"{len(lightweight)} lightweight run(s)."
        )
