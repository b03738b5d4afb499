"""``manage.py clear_caches``: after rows were edited in SQL directly (no revision bumped), every
stored figure and every revision-keyed memory still passed for current; the command makes them stale
in every process and recomputes them, here checked against a fresh computation."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import Count

from annotation.corpus.models import Dataset
from annotation.peers import recompute
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch
from annotation.peers.results import score_annotations
from annotation.pyramids.models import SCU
from scoring.model import Convention

from tests.dashboards.helpers import build_toy

pytestmark = pytest.mark.django_db


def stored(annotation_id: int) -> dict:
    return AnnotationScore.objects.get(annotation_id=annotation_id, convention="nist").values


@pytest.mark.django_db(transaction=True)  # the recomputation is scheduled on commit
def test_figures_of_rows_edited_in_sql_are_recomputed(capsys, in_process_jobs):
    dataset = build_toy()
    other = build_toy("Other")
    everything = list(PeerAnnotation.objects.values_list("id", flat=True))
    recompute.recompute_annotations(everything)  # warms each process's prepared pyramids too
    annotation = (
        PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset, matches__scu__isnull=False)
        .order_by("peer__topic__external_id", "peer__external_id", "annotator__username")
        .first()
    )
    before = stored(annotation.pk)
    # By hand, as an operator's repair would: the matches now all point at one SCU whose weight is not
    # the weight the annotation observes now, so its score must change (the pyramid's heaviest SCU,
    # chosen before, was sometimes the one SCU the annotation already matched: the test then failed
    # on which rows the database returned first).
    by_weight = SCU.objects.filter(pyramid=annotation.pyramid).annotate(
        weight=Count("contributors__reference", distinct=True)
    )
    target = by_weight.exclude(weight=before["observed_weight"]).order_by("-weight", "uid").first()
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {PeerMatch._meta.db_table} SET scu_id = %s WHERE annotation_id = %s AND scu_id IS NOT NULL",
            [target.pk, annotation.pk],
        )
    fresh = score_annotations([annotation], Convention.NIST)[annotation.pk].as_dict()
    assert fresh != before
    assert (
        recompute.recompute_annotations([annotation.pk]) == 0 and stored(annotation.pk) == before
    )  # passes for current

    other_annotation = PeerAnnotation.objects.filter(pyramid__topic__dataset=other).first()
    other_revision = other_annotation.revision
    call_command("clear_caches", "--dataset", "Toy")
    assert stored(annotation.pk) == json.loads(json.dumps(fresh))
    assert PeerAnnotation.objects.get(pk=other_annotation.pk).revision == other_revision  # another dataset untouched
    assert "Made stale and scheduled: 2 topic(s)" in capsys.readouterr().out


def test_an_unknown_dataset_is_refused_and_nothing_changes():
    build_toy()
    revisions = list(PeerAnnotation.objects.order_by("id").values_list("revision", flat=True))
    with pytest.raises(CommandError, match="No dataset named 'Nope'"):
        call_command("clear_caches", "--dataset", "Nope")
    assert list(PeerAnnotation.objects.order_by("id").values_list("revision", flat=True)) == revisions
    assert Dataset.objects.count() == 1
