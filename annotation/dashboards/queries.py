"""The dashboards package's SQL, written out where the ORM spends more than the database does (each
function says why). Each has a twin in the ORM, in tests/dashboards/test_queries.py, that reads the
same rows."""

from __future__ import annotations

import functools

from django.db import connection

from annotation.corpus.models import Topic
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid


def topic_states(dataset_id: int) -> list[tuple]:
    """Per topic of the dataset: (id, external id, revision, annotations: how many, the sum of their
    ids, how many finished; pyramids: how many, the sum of their ids, the sum of their revisions;
    pyramid-reference links: how many, the sum of the references' ids), None where a topic has no
    such row. The per-topic part of a dashboard's fingerprint (``snapshots.fingerprint``).

    SQL because the fingerprint is read at every look at a dataset's dashboard (every ~10 s while
    an annotator saves, issue 33): the ORM's four queries (the topics and three grouped counts) took
    ~3 ms of CPU to compose, this one statement ~0.3 ms."""
    with connection.cursor() as cursor:
        cursor.execute(_topic_states_sql(), [PeerAnnotation.Status.DONE.value] + [dataset_id] * 4)
        return cursor.fetchall()


@functools.cache
def _topic_states_sql() -> str:
    q = connection.ops.quote_name
    topic, pyramid, annotation = (q(m._meta.db_table) for m in (Topic, Pyramid, PeerAnnotation))
    links = q(Pyramid.references.through._meta.db_table)
    in_dataset = f"y.topic_id IN (SELECT id FROM {topic} WHERE dataset_id = %s)"
    return (
        "SELECT t.id, t.external_id, t.revision, a.n, a.ids, a.done, p.n, p.ids, p.revisions, r.n, r.ids "
        f"FROM {topic} t "
        "LEFT JOIN (SELECT y.topic_id, COUNT(x.id) AS n, SUM(x.id) AS ids, "
        "SUM(CASE WHEN x.status = %s THEN 1 ELSE 0 END) AS done "
        f"FROM {annotation} x JOIN {pyramid} y ON y.id = x.pyramid_id WHERE {in_dataset} GROUP BY y.topic_id) a "
        "ON a.topic_id = t.id "
        "LEFT JOIN (SELECT y.topic_id, COUNT(y.id) AS n, SUM(y.id) AS ids, SUM(y.revision) AS revisions "
        f"FROM {pyramid} y WHERE {in_dataset} GROUP BY y.topic_id) p ON p.topic_id = t.id "
        "LEFT JOIN (SELECT y.topic_id, COUNT(l.id) AS n, SUM(l.referencesummary_id) AS ids "
        f"FROM {links} l JOIN {pyramid} y ON y.id = l.pyramid_id WHERE {in_dataset} GROUP BY y.topic_id) r "
        "ON r.topic_id = t.id "
        "WHERE t.dataset_id = %s"
    )
