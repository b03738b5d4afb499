"""Pyramid construction agreement stored per topic (``annotation.pyramids.construction``): the figures
of a topic worked out by hand (``construction_world``), the practical test against the stored
scores, and the stored row following the data through the background path."""

import krippendorff
import numpy as np
import pytest
from django.db import transaction
from scipy import stats

from annotation.corpus.models import Topic
from annotation.peers.editing import add_match
from annotation.peers.models import AnnotationScore, PeerAnnotation
from annotation.pyramids import construction
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Contributor, Pyramid, PyramidAgreement
from scoring.correlation import NOISE
from scoring.pyramid_agreement import ALGORITHM

from tests.pyramids import construction_world as world
from tests.pyramids import independent

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic(django_capture_on_commit_callbacks, in_process_jobs):
    with django_capture_on_commit_callbacks(execute=True):  # what every commit schedules runs, as in production
        dataset = world.build()
    return dataset.topics.get()


def stored_pair(topic):
    agreement = PyramidAgreement.objects.get(topic=topic)
    [pair] = agreement.values["pairs"]
    return agreement, pair


def test_the_stored_figures_are_those_worked_out_by_hand(topic):
    agreement, pair = stored_pair(topic)
    assert agreement.is_current
    p1, p2 = topic.pyramids.order_by("pk")
    assert (pair["a"], pair["b"]) == (p1.pk, p2.pk) and pair["a_name"] == f"#{p1.pk} builder1"
    for key, value in world.HAND.items():
        assert pair[key] == pytest.approx(value), key
    assert pair["scu_alignment"] == world.HAND_SCUS
    assert agreement.pyramid_revisions == {str(p.pk): p.revision for p in (p1, p2)}


def test_alpha_and_the_aligned_contributors_against_an_independent_computation(topic):
    """Recomputed from the stored parts with plain sets: the aligned contributors cover the same
    characters, and alpha over the pairs is the krippendorff package's."""
    _, pair = stored_pair(topic)
    chars = independent.contributor_characters(topic)
    scu_of = dict(Contributor.objects.filter(scu__pyramid__topic=topic).values_list("id", "scu__uid"))
    aligned = pair["aligned_contributors"]
    assert len(aligned) == world.HAND["aligned"]
    assert all(chars[a] == chars[b] and dice == 1 for a, b, dice in aligned)
    same_a, same_b = independent.same_scu_pairs(aligned, chars, scu_of)
    assert len(same_a) == pair["pairs"] == 12
    expected = krippendorff.alpha(
        reliability_data=np.array([same_a, same_b], dtype=float), level_of_measurement="nominal"
    )
    assert pair["alpha"] == pytest.approx(expected)


@pytest.mark.parametrize("convention, max_weight", [("nist", 5), ("sacrerouge", 6)])
def test_the_practical_test_compares_the_stored_scores_of_the_peers_annotated_against_both(
    topic, convention, max_weight
):
    _, pair = stored_pair(topic)
    scores = {}
    for peer, pyramid_id, values in AnnotationScore.objects.filter(
        annotation__pyramid__topic=topic, convention=convention
    ).values_list("annotation__peer__external_id", "annotation__pyramid_id", "values"):
        scores.setdefault(pyramid_id, {})[peer] = values["modified"]
    xs = [scores[pair["a"]][p] for p in sorted(world.MATCHES)]
    ys = [scores[pair["b"]][p] for p in sorted(world.MATCHES)]
    # by hand: both pyramids weigh 7 over 3 references, Xa = 2.33 -> 2 (NIST: 3 + 2) or 3 (SacreROUGE: 3 + 2 + 1)
    assert xs == pytest.approx([w / max_weight for w in (3, 5, 1, 3)]) and ys == pytest.approx(
        [w / max_weight for w in (3, 3, 1, 5)]
    )
    practical = pair["scores"][convention]
    assert practical["n"] == 4
    assert practical["pearson"] == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert practical["mad"] == pytest.approx(np.mean(np.abs(np.array(xs) - np.array(ys))))
    assert practical["above_noise"] == sum(abs(x - y) > NOISE for x, y in zip(xs, ys, strict=True)) == 2
    z, half = np.arctanh(practical["pearson"]), 1.959963984540054 / np.sqrt(4 - 3)
    assert (practical["ci_low"], practical["ci_high"]) == pytest.approx((np.tanh(z - half), np.tanh(z + half)))


@pytest.mark.django_db(transaction=True)
def test_a_pyramid_edit_makes_the_row_stale_and_the_commit_recomputes_it(in_process_jobs):
    """Autocommit, as in production: every commit publishes its work after it (``score_events``)."""
    topic = world.build().topics.get()
    agreement, pair = stored_pair(topic)
    assert agreement.is_current and pair["aligned"] == 6
    p2 = topic.pyramids.order_by("pk").last()
    with transaction.atomic():
        add_contributor(
            SCU.objects.get(pyramid=p2, uid=5), topic.referencesummarys.get(external_id="A"), [(12, 17)]
        )  # A12
        agreement, pair = stored_pair(topic)
        assert not agreement.is_current and pair["aligned"] == 6, "nothing recomputed before the commit"
        assert construction.stale_topics() == [topic.pk]
    agreement, pair = stored_pair(topic)
    assert agreement.is_current and construction.stale_topics() == []
    assert (pair["aligned"], pair["unmatched_a"], pair["unmatched_b"]) == (7, 0, 1)
    assert [4, 5, 1, 1, 2] in pair["scu_alignment"]["matched"]  # SCU 4 (weight 1) now matches SCU 5 (weight 2)


def test_an_older_result_never_overwrites_a_newer_one(topic):
    agreement, _ = stored_pair(topic)
    newer = agreement.topic_revision + 5
    PyramidAgreement.objects.filter(pk=agreement.pk).update(topic_revision=newer, values={"pairs": [], "marker": 1})
    assert construction.recompute_topics([topic.pk]) == 0
    assert PyramidAgreement.objects.get(pk=agreement.pk).values["marker"] == 1


def test_topics_without_two_comparable_pyramids(topic):
    """(The commit's publication is tested above: here the service is called as the job calls it.)"""
    p1, p2 = topic.pyramids.order_by("pk")
    p2.references.remove(topic.referencesummarys.get(external_id="C"))  # no longer of the same references
    assert construction.stale_topics() == [topic.pk]
    construction.recompute_topics([topic.pk])
    values = PyramidAgreement.objects.get(topic=topic).values
    assert values["pairs"] == [] and "same references" in values["reason"]
    assert construction.stale_topics() == [], "a topic of pyramids of other references keeps a row: it is not pending"
    Pyramid.objects.filter(pk=p2.pk).delete()
    assert construction.stale_topics() == [topic.pk], "a row of a topic left with one pyramid is stale"
    construction.recompute_topics([topic.pk])
    assert not PyramidAgreement.objects.filter(topic=topic).exists()
    assert construction.stale_topics() == []
    single = Topic.objects.create(dataset=topic.dataset, external_id="single")
    Pyramid.objects.create(topic=single)
    assert (
        construction.recompute_topics([single.pk]) == 0 and not PyramidAgreement.objects.filter(topic=single).exists()
    )


def test_an_annotation_edit_recomputes_the_practical_test_and_reuses_the_pyramid_figures(topic, monkeypatch):
    agreement, before = stored_pair(topic)
    annotation = PeerAnnotation.objects.get(peer__external_id="p3", pyramid_id=before["b"])
    add_match(
        annotation, SCU.objects.get(pyramid_id=before["b"], uid=3), [(20, 23)]
    )  # p3 under pyramid 2: 1 + 3 = 4 of 5
    assert not PyramidAgreement.objects.get(topic=topic).is_current

    def no_comparison(*args, **kwargs):
        raise AssertionError("no pyramid changed: the construction figures are reused")

    monkeypatch.setattr(construction, "compare", no_comparison)
    assert construction.recompute_topics([topic.pk]) == 1
    agreement, after = stored_pair(topic)
    assert agreement.is_current
    assert {k: v for k, v in after.items() if k != "scores"} == {k: v for k, v in before.items() if k != "scores"}
    assert after["scores"]["nist"]["mad"] == pytest.approx(before["scores"]["nist"]["mad"] + (4 / 5 - 1 / 5) / 4)
    monkeypatch.undo()
    SCU.objects.filter(pyramid_id=before["a"], uid=4).delete()  # a pyramid changed: everything is computed again
    assert construction.recompute_topics([topic.pk]) == 1
    _, changed = stored_pair(topic)
    assert changed["unmatched_a"] == 0 and changed["scus_a"] == 3


def test_rows_of_an_older_algorithm_are_stale_and_recomputed(topic):
    """Rows stored before ties were broken on content (no ``algorithm`` in their values) are not
    current, the sweeps find them, and their figures are not reused though no pyramid changed."""
    agreement, pair = stored_pair(topic)
    assert agreement.values["algorithm"] == ALGORITHM and construction.stale_topics() == []
    old = {k: v for k, v in agreement.values.items() if k != "algorithm"} | {"pairs": [pair | {"pairwise_f1": 0.123}]}
    PyramidAgreement.objects.filter(pk=agreement.pk).update(values=old)  # same topic revision, same pyramid revisions
    assert not PyramidAgreement.objects.get(pk=agreement.pk).is_current
    assert construction.stale_topics() == [topic.pk]
    assert construction.recompute_topics([topic.pk]) == 1
    agreement, pair = stored_pair(topic)
    assert agreement.is_current and agreement.values["algorithm"] == ALGORITHM
    assert pair["pairwise_f1"] == world.HAND["pairwise_f1"] and construction.stale_topics() == []
