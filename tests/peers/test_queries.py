"""The peers package's SQL (``annotation.peers.queries``) against an ORM formulation of the same
statement, on a populated world (two datasets, three topics, several pyramids and annotations):
both change the same rows, edge cases included."""

import pytest
from django.db import transaction
from django.db.models import F

from annotation.corpus.models import Topic
from annotation.peers import queries
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Pyramid

from tests.foundation import factories


@pytest.fixture
def world(db):
    """Topics T1, T2 (dataset D1) and T3 (D2), each with a pyramid; T1 with a second pyramid; an
    annotation of each of two peers against every pyramid."""
    pyramids, annotations = [], []
    for name, dataset in (("T1", "D1"), ("T2", "D1"), ("T3", "D2")):
        t, references = factories.topic(name, dataset)
        for _ in range(2 if name == "T1" else 1):
            p, _ = factories.pyramid(t, references)
            pyramids.append(p)
            for peer in ("1", "2"):
                annotations.append(factories.annotation(t, p, peer_id=f"{p.pk}.{peer}"))
    return pyramids, annotations


def _state():
    return {
        "scores": sorted(
            AnnotationScore.objects.values_list(
                "annotation_id", "convention", "pyramid_revision", "annotation_revision", "values"
            )
        ),
        "pyramids": sorted(Pyramid.objects.values_list("id", "revision")),
        "annotations": sorted(PeerAnnotation.objects.values_list("id", "revision")),
        "topics": sorted(Topic.objects.values_list("id", "revision")),
    }


def _rolled_back(change):
    """What ``change()`` returns and the rows after it; then everything is as before."""
    with transaction.atomic():
        result = change()
        state = _state()
        transaction.set_rollback(True)
    return result, state


def _store_scores_orm(rows) -> int:
    """The ORM's conditional upsert, a row at a time: written unless a newer state is stored."""
    written = 0
    for annotation, convention, (pyramid_revision, annotation_revision), values in rows:
        fields = {"pyramid_revision": pyramid_revision, "annotation_revision": annotation_revision, "values": values}
        stored = AnnotationScore.objects.filter(annotation_id=annotation, convention=convention)
        if not stored.exists():
            AnnotationScore.objects.create(annotation_id=annotation, convention=convention, **fields)
            written += 1
        else:
            written += stored.filter(
                pyramid_revision__lte=pyramid_revision, annotation_revision__lte=annotation_revision
            ).update(**fields)
    return written


def _same_as_orm(sql, orm):
    assert _rolled_back(sql) == _rolled_back(orm)


def test_storing_scores_into_an_empty_table_writes_every_row(world):
    _, annotations = world
    rows = [
        (a.pk, convention, (1, 2), {"modified": a.pk / 10, "original": None})
        for a in annotations
        for convention in ("nist", "duc")
    ]
    assert not AnnotationScore.objects.exists()
    written, state = _rolled_back(lambda: queries.store_scores(rows))
    assert written == len(rows) == len(state["scores"])
    _same_as_orm(lambda: queries.store_scores(rows), lambda: _store_scores_orm(rows))


def test_storing_scores_keeps_newer_results_and_takes_ties(world):
    _, (a, b, c, d, *rest) = world
    for annotation in (a, b, c, d):
        AnnotationScore.objects.create(
            annotation=annotation,
            convention="nist",
            pyramid_revision=5,
            annotation_revision=5,
            values={"modified": 0.5},
        )
    rows = [
        (a.pk, "nist", (5, 5), {"modified": "tie"}),  # the same state: written
        (b.pk, "nist", (4, 9), {"modified": "older pyramid"}),  # kept as stored
        (c.pk, "nist", (9, 4), {"modified": "older annotation"}),  # kept as stored
        (d.pk, "nist", (6, 7), {"modified": None}),  # newer, with a null figure
        (d.pk, "duc", (1, 1), {}),  # another convention: new
        *((r.pk, "nist", (0, 0), {"modified": 1}) for r in rest),  # never stored
    ]
    written, state = _rolled_back(lambda: queries.store_scores(rows))
    assert written == 3 + len(rest)
    assert {(s[0], s[1]): s[4] for s in state["scores"]}[(b.pk, "nist")] == {"modified": 0.5}
    _same_as_orm(lambda: queries.store_scores(rows), lambda: _store_scores_orm(rows))


def _bump_orm(document_model, document_id, topic_id):
    """The bump as the ORM writes it (the path SQLite takes in ``score_events._bump``)."""
    if topic_id is None:
        topic_id = Pyramid.objects.filter(annotations=document_id).values_list("topic_id", flat=True).get()
    document_model.objects.filter(pk=document_id).update(revision=F("revision") + 1)
    Topic.objects.filter(pk=topic_id).update(revision=F("revision") + 1)
    return topic_id


@pytest.mark.postgres
def test_bumping_revisions_moves_the_same_rows_as_the_orm(world):
    pyramids, annotations = world
    t1_second, a_of_t3 = pyramids[1], annotations[-1]
    cases = [
        (Pyramid, t1_second.pk, t1_second.topic_id),  # a second pyramid of a topic
        (PeerAnnotation, a_of_t3.pk, a_of_t3.pyramid.topic_id),  # the topic given
        (PeerAnnotation, a_of_t3.pk, None),  # the topic looked up
        (PeerAnnotation, annotations[2].pk, None),  # of T1's second pyramid
        (Pyramid, max(p.pk for p in pyramids) + 1, pyramids[0].topic_id),  # no such pyramid: its topic still moves
    ]
    for case in cases:
        _same_as_orm(lambda case=case: queries.bump_revisions(*case), lambda case=case: _bump_orm(*case))
        topic, state = _rolled_back(lambda case=case: queries.bump_revisions(*case))
        assert topic == (case[2] if case[2] is not None else case[0].objects.get(pk=case[1]).pyramid.topic_id)
        assert sum(r for _, r in state["topics"]) == sum(r for _, r in _state()["topics"]) + 1  # one topic moved


@pytest.mark.postgres
def test_bumping_a_pyramid_without_its_topic_is_refused(world):
    pyramids, _ = world
    with pytest.raises(ValueError, match="topic of a pyramid"):
        queries.bump_revisions(Pyramid, pyramids[0].pk, None)


def _match_rows_orm(annotation_id: int) -> list[tuple]:
    return list(
        PeerMatch.objects.filter(annotation_id=annotation_id)
        .order_by("id", "parts__start", "parts__end", "parts__id")
        .values_list("id", "scu_id", "scu__uid", "review_note", "parts__id", "parts__start", "parts__end")
    )


def test_match_rows_are_the_orms_rows(world):
    """Matches of several annotations: of an SCU or of none, with a review note, parts given out of
    order and two starting at the same character, a match without parts, an annotation without
    matches: the statement reads the ORM's rows in the ORM's order, and only the annotation's."""
    pyramids, annotations = world
    first, second, empty = annotations[0], annotations[1], annotations[2]
    scu = SCU.objects.create(pyramid=first.pyramid, uid=5, label="Five")
    spread = PeerMatch.objects.create(annotation=first, scu=scu, review_note="checked")
    PeerMatchPart.objects.bulk_create(
        PeerMatchPart(match=spread, start=s, end=e) for s, e in [(10, 14), (0, 3), (10, 12)]
    )
    unmatched = PeerMatch.objects.create(annotation=first, scu=None)
    PeerMatchPart.objects.create(match=unmatched, start=4, end=8)
    PeerMatch.objects.create(annotation=first, scu=scu)  # no parts
    other = PeerMatch.objects.create(annotation=second, scu=scu)
    PeerMatchPart.objects.create(match=other, start=1, end=2)
    rows = queries.match_rows(first.pk)
    assert rows == _match_rows_orm(first.pk)
    assert [r[0] for r in rows] == [spread.pk] * 3 + [unmatched.pk] + [rows[-1][0]]
    assert [(r[5], r[6]) for r in rows[:3]] == [(0, 3), (10, 12), (10, 14)] and rows[-1][4:] == (None, None, None)
    assert (
        queries.match_rows(second.pk) == _match_rows_orm(second.pk) == [(other.pk, scu.pk, 5, "", *other_part(other))]
    )
    assert queries.match_rows(empty.pk) == _match_rows_orm(empty.pk) == []


def other_part(match) -> tuple:
    part = match.parts.get()
    return part.pk, part.start, part.end
