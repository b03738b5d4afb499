"""The dashboards package's SQL (``annotation.dashboards.queries``) against an ORM formulation of the
same statement, on a dataset as people leave it (unfinished and empty annotations, two pyramids of a
topic, an adjudicated pyramid), beside a topic with nothing yet and another dataset."""

import pytest
from django.db.models import Count, Q, Sum

from annotation.corpus.models import Dataset, Topic
from annotation.dashboards import queries
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.dashboards.helpers import build_lived_in

pytestmark = pytest.mark.django_db


def orm_topic_states(dataset: Dataset) -> dict[int, tuple]:
    """``queries.topic_states`` in the ORM: the topics, then one grouped count per table."""
    found = {
        pk: [pk, ext, rev, None, None, None, None, None, None, None, None]
        for pk, ext, rev in Topic.objects.filter(dataset=dataset).values_list("id", "external_id", "revision")
    }
    for topic_id, n, ids, done in (
        PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset)
        .values("pyramid__topic")
        .annotate(n=Count("id"), ids=Sum("id"), done=Count("id", filter=Q(status=PeerAnnotation.Status.DONE)))
        .values_list("pyramid__topic", "n", "ids", "done")
    ):
        found[topic_id][3:6] = [n, ids, done]
    for topic_id, n, ids, revisions in (
        Pyramid.objects.filter(topic__dataset=dataset)
        .values("topic")
        .annotate(n=Count("id"), ids=Sum("id"), revisions=Sum("revision"))
        .values_list("topic", "n", "ids", "revisions")
    ):
        found[topic_id][6:9] = [n, ids, revisions]
    for topic_id, n, ids in (
        Pyramid.references.through.objects.filter(pyramid__topic__dataset=dataset)
        .values("pyramid__topic")
        .annotate(n=Count("id"), ids=Sum("referencesummary_id"))
        .values_list("pyramid__topic", "n", "ids")
    ):
        found[topic_id][9:11] = [n, ids]
    return {pk: tuple(row) for pk, row in found.items()}


def normal(row) -> tuple:
    """Sums are numeric on PostgreSQL (Decimal), integers on SQLite: compared as ints."""
    return tuple(v if v is None or isinstance(v, str) else int(v) for v in row)


def test_topic_states_read_what_the_orm_reads():
    dataset = build_lived_in("Lived")
    Topic.objects.create(dataset=dataset, external_id="T9")  # nothing yet: no pyramid, no annotation
    other = build_lived_in("Other")  # another dataset's rows are never counted
    for d in (dataset, other):
        sql = {row[0]: normal(row) for row in queries.topic_states(d.pk)}
        assert sql == {pk: normal(row) for pk, row in orm_topic_states(d).items()}
        assert any(row[5] < row[3] for row in sql.values() if row[3])  # unfinished annotations
        assert any(row[6] > 1 for row in sql.values() if row[6])  # two pyramids of a topic
    [empty] = [row for row in queries.topic_states(dataset.pk) if row[1] == "T9"]
    assert empty[3:] == (None,) * 8
