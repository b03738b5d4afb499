"""The stored construction agreement and the adjudication of two pyramids must not depend on how the
pyramids are numbered: the same generated pyramids (both kinds of tie, ``tests/scoring/_tied_pyramids``)
are stored twice with other SCU uids, SCUs, contributors and parts inserted in another order (so
other database ids) and the pyramids created in another order, and every stored figure, the SCU
alignment and the adjudication items, named by content, are the same, and equal to the file route's
(``scoring.pyramid_agreement.compare`` on the pyramids as generated)."""

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from hypothesis import HealthCheck, given, settings

from annotation.adjudication import pyramids as adjudication
from annotation.corpus.models import Dataset, ReferenceSummary, Topic
from annotation.pyramids import construction
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid
from scoring.model import Convention
from scoring.pyramid_agreement import compare

from tests.scoring._tied_pyramids import PERMUTATIONS, renumbered, scu_content, span_pyramid, tied_pairs

pytestmark = pytest.mark.django_db
TEXT = " ".join(f"word{i:03d}" for i in range(12))  # 95 characters: every generated segment lies in it


class _Rollback(Exception):
    """Ends an example's transaction: each example starts from the same empty database."""


def store(pyramids, tag):
    """The span pyramids in a new topic, built by ``builder-<name>`` in the order given (the database
    ids follow it): SCUs, contributors and parts inserted in each pyramid's own order."""
    User = get_user_model()
    topic = Topic.objects.create(dataset=Dataset.objects.create(name=f"numbering {tag}"), external_id="T")
    refs = {r: ReferenceSummary.objects.create(topic=topic, external_id=r, text=TEXT) for r in pyramids[0].references}
    out = {}
    for p in pyramids:
        pyramid = Pyramid.objects.create(
            topic=topic,
            creator=User.objects.create_user(f"builder-{p.name}-{tag}"),
            status=Pyramid.Status.DONE,
            last_uid=max(s.uid for s in p.scus),
        )
        pyramid.references.set(refs.values())
        for s in p.scus:
            scu = SCU.objects.create(pyramid=pyramid, uid=s.uid, label=s.label)
            for c in s.contributors:  # (the rows only: the spans are valid by construction, and this is faster)
                contributor = Contributor.objects.create(scu=scu, reference=refs[c.spans[0].reference])
                ContributorPart.objects.bulk_create(
                    ContributorPart(contributor=contributor, reference=contributor.reference, start=x.start, end=x.end)
                    for x in c.spans
                )
        out[p.name] = pyramid
    return topic, out


def stored_in_content(topic, pyramids, spans):
    """The stored pair with SCUs named by content (their uids dropped) and contributors by their SCU's
    content and their spans (their ids dropped)."""
    values, _ = construction.compute(topic)
    [pair] = values["pairs"]
    assert (pair["a"], pair["b"]) == (pyramids["A"].pk, pyramids["B"].pk), "A is the pyramid whose builder comes first"
    ka, kb = scu_content(spans["A"]), scu_content(spans["B"])
    parts = {}
    for pk, reference, start, end in ContributorPart.objects.filter(contributor__scu__pyramid__topic=topic).values_list(
        "contributor_id", "reference__external_id", "start", "end"
    ):
        parts.setdefault(pk, []).append((reference, start, end))
    contributor = {
        pk: ((ka if pyramid_id == pyramids["A"].pk else kb)[uid], tuple(sorted(parts[pk])))
        for pk, pyramid_id, uid in Contributor.objects.filter(scu__pyramid__topic=topic).values_list(
            "pk", "scu__pyramid_id", "scu__uid"
        )
    }
    alignment = pair.pop("scu_alignment")
    names = ("a", "b", "a_name", "b_name", "aligned_contributors", "scores")
    figures = {k: v for k, v in pair.items() if k not in names}
    return figures | {
        "matched_scus": sorted((ka[a], kb[b], shared, wa, wb) for a, b, shared, wa, wb in alignment["matched"]),
        "unmatched_scus_a": sorted((ka[u], w) for u, w in alignment["unmatched_a"]),
        "unmatched_scus_b": sorted((kb[u], w) for u, w in alignment["unmatched_b"]),
        "aligned_contributors": sorted(
            (contributor[a], contributor[b], dice) for a, b, dice in pair["aligned_contributors"]
        ),
    }


def adjudication_in_content(pyramids, spans):
    """The adjudication items, SCUs named by content."""
    ka, kb = scu_content(spans["A"]), scu_content(spans["B"])
    items = adjudication.compare(pyramids["A"], pyramids["B"]).items
    return sorted(
        (i.kind, ka.get(i.uid_a), kb.get(i.uid_b), i.agreed, tuple(i.differences), len(i.elsewhere)) for i in items
    )


@settings(
    max_examples=8,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tied_pairs(), PERMUTATIONS)
def test_stored_figures_and_adjudication_do_not_depend_on_numbering(pair, rnd):
    a, b = pair
    results = []
    try:
        with transaction.atomic():
            for tag in range(2):
                spans = {"A": renumbered(a, rnd), "B": renumbered(b, rnd)}
                order = [spans["A"], spans["B"]]
                rnd.shuffle(order)  # which pyramid (and so which ids) comes first in the database
                topic, pyramids = store(order, tag)
                results.append((stored_in_content(topic, pyramids, spans), adjudication_in_content(pyramids, spans)))
            raise _Rollback
    except _Rollback:
        pass
    (first, items), (second, items2) = results
    assert first == second and items == items2
    # and the stored route gives the file route's figures
    pure = construction._figures(compare(a, b))
    assert {k: first[k] for k in pure} == pure
    ka, kb = scu_content(a), scu_content(b)
    assert first["matched_scus"] == sorted(
        (ka[m.a], kb[m.b], m.shared, m.weight_a, m.weight_b) for m in compare(a, b).scus.matched
    )
    assert sorted((kind, sa, sb) for kind, sa, sb, *_ in items if kind == "matched") == sorted(
        ("matched", sa, sb) for sa, sb, *_ in first["matched_scus"]
    )


def test_contributor_weights_are_stored_and_exported():
    """The per-contributor weight agreement is a stored figure and a column of the downloads."""
    a = span_pyramid("A", ["R0", "R1"], [(1, "", [[("R0", 0, 8)], [("R1", 0, 8)]])])
    b = span_pyramid("B", ["R0", "R1"], [(2, "", [[("R0", 0, 8)]]), (3, "", [[("R1", 0, 8)]])])
    topic, _ = store([a, b], "w")
    assert construction.recompute_topics([topic.pk]) == 1
    stored = construction.stored(Topic.objects.filter(pk=topic.pk))
    rows, columns = construction.table_rows(stored, "pairs", Convention.NIST)
    # items R0 and R1: weight 2 in A, 1 in B -> none equal, mean absolute difference 1
    assert [
        (r["contributor_weight_n"], r["contributor_weight_equal_share"], r["contributor_weight_mad"]) for r in rows
    ] == [(2, 0.0, 1.0)]
    assert {"contributor_weight_n", "contributor_weight_mad"} <= set(columns)
