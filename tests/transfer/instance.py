"""What an instance of the app answers about a dataset, as JSON data, so that two instances (the
source of a backup, in the test's process, and the restored copy, in a process of its own pointed at
it by DATABASE_URL) can be compared:

- every table the pages, the API and the export commands offer (``every_table.tables``: scores,
  agreement, statistics, charts, meta-evaluation, progress);
- the stored results as rows (scores, agreement, the dashboard snapshot), with the moment each was
  computed: equal only if the copy recomputed nothing;
- the edit history rows (``Change``), every field.

``main([DATASET, COORDINATOR, ANNOTATION_ID...])``, called in a process where Django is set up,
prints them, plus ``edits``: what the given annotations hold of their edit actions (the backup
test's writers).
"""

import json

from django.db.models import Q

from annotation.corpus.models import Dataset
from annotation.dashboards.models import DatasetDashboard
from annotation.history.models import Change
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement

from tests.dashboards.every_table import tables


def _rows(queryset, *fields) -> list:
    return json.loads(json.dumps(list(queryset.order_by("pk").values_list(*fields)), default=str))


def answers(dataset_name: str, coordinator) -> dict:
    dataset = Dataset.objects.get(name=dataset_name)
    mine = Q(pyramid__topic__dataset=dataset) | Q(annotation__pyramid__topic__dataset=dataset)
    history_fields = [f.attname for f in Change._meta.concrete_fields]
    return {
        "tables": tables(dataset, coordinator),
        "scores": _rows(
            AnnotationScore.objects.filter(annotation__pyramid__topic__dataset=dataset),
            "annotation_id",
            "convention",
            "pyramid_revision",
            "annotation_revision",
            "values",
            "computed_at",
        ),
        "agreement": _rows(
            TopicAgreement.objects.filter(topic__dataset=dataset), "topic_id", "topic_revision", "values", "computed_at"
        ),
        "dashboard": _rows(
            DatasetDashboard.objects.filter(dataset=dataset), "payload", "fingerprint", "state_at", "computed_at"
        ),
        "history": _rows(Change.objects.filter(mine), *history_fields),
    }


def edits(annotation_id: int) -> dict:
    """An edited annotation's matches, its recorded match actions and revisions: one action writes
    all of them in one transaction, so a consistent copy has as many matches as actions (beyond the
    ``initial`` ones) and the annotation's revision is its last action's."""
    annotation = PeerAnnotation.objects.get(pk=annotation_id)
    actions = Change.objects.filter(annotation=annotation, action="add_match")
    return {
        "matches": annotation.matches.count(),
        "actions": actions.count(),
        "revision": annotation.revision,
        "last_action_revision": actions.order_by("-revision").values_list("revision", flat=True).first(),
    }


def main(argv: list[str]) -> None:
    from django.contrib.auth import get_user_model
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test client's host and the rendered pages' context, as under pytest
    dataset_name, username, *annotation_ids = argv
    print(
        json.dumps(
            {
                "answers": answers(dataset_name, get_user_model().objects.get(username=username)),
                "edits": {pk: edits(int(pk)) for pk in annotation_ids},
            }
        )
    )
