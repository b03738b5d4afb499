"""Every PyrEval MATTER pyramid imported into one topic (``import_pyramid_set``), and the
construction agreement the background job stores for it checked against an independent
computation: plain character sets of the stored parts, a linear program for the best matching, the
pair-counting and B-cubed definitions written out, the krippendorff package for alpha; and against
the same figures computed from the files themselves (``agreement_inputs.span_pyramids``, the figures
printed in docs/pyramid-agreement.md)."""

from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.corpus.models import Topic
from annotation.formats.ducview import parse_pyramid
from annotation.pyramids.agreement_inputs import span_pyramids
from annotation.pyramids.models import Contributor, PyramidAgreement
from annotation.transfer.pyramid_sets import import_pyramid_set
from scoring.pyramid_agreement import pairwise

from tests.conftest import shared_data
from tests.pyramids import independent
from tests.scoring.test_pyramid_agreement import _best_matching_total

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]
# path order, the order they are imported in (the first file's texts are the topic's references)
MATTER = (
    "12_10_09_MATTER.pyr",
    "Becky_MATTER.pyr",
    "IA/12_10_09_MATTER_fixed.pyr",
    "IA/Yinghui_12_10_09_MATTER_fixed.pyr",
    "Yinghui_12_10_09_MATTER.pyr",
)


@pytest.fixture(scope="module")
def folder():
    return shared_data("pyreval-matter", "Scoring", "pyrs", "manual_pyramids")


@pytest.fixture
def matter(folder, in_process_jobs):
    report = import_pyramid_set([folder], "PyrEval", "MATTER")
    topic = Topic.objects.get(dataset__name="PyrEval", external_id="MATTER")
    return report, topic


def test_every_matter_pyramid_goes_into_one_topic_on_the_first_files_references(matter, folder):
    report, topic = matter
    assert report.pyramids_created == 5 and report.rejected == ["D0601.pyr: 4 references, the first pyramid has 5"]
    assert list(topic.pyramids.order_by("pk").values_list("source", flat=True)) == list(MATTER)
    first = parse_pyramid((folder / MATTER[0]).read_bytes())[0]
    assert {r.external_id: r.text for r in topic.referencesummarys.all()} == {r.id: r.text for r in first.references}
    assert all(p.references.count() == 5 for p in topic.pyramids.all())
    again = import_pyramid_set([folder / name for name in MATTER], "PyrEval", "MATTER")
    assert (again.pyramids_created, again.pyramids_reused, again.rejected) == (0, 5, []), "re-importing adds nothing"
    with pytest.raises(CommandError, match="1 file\\(s\\) rejected"):
        call_command("import_pyramid_set", str(folder), dataset="PyrEval", topic="MATTER")


def test_the_stored_figures_match_an_independent_computation(matter):
    _, topic = matter
    agreement = PyramidAgreement.objects.get(topic=topic)
    assert agreement.is_current and len(agreement.values["pairs"]) == 10
    chars, scu_of = independent.contributor_characters(topic), {}
    for contributor_id, pyramid_id, uid in Contributor.objects.filter(scu__pyramid__topic=topic).values_list(
        "id", "scu__pyramid_id", "scu__uid"
    ):
        scu_of[contributor_id] = (pyramid_id, uid)
    by_pyramid = {}
    for contributor_id, (pyramid_id, _) in scu_of.items():
        by_pyramid.setdefault(pyramid_id, []).append(contributor_id)
    for pair in agreement.values["pairs"]:
        ca, cb = sorted(by_pyramid[pair["a"]]), sorted(by_pyramid[pair["b"]])
        assert (len(ca), len(cb)) == (pair["contributors_a"], pair["contributors_b"])
        dice = [[2 * len(chars[x] & chars[y]) / (len(chars[x]) + len(chars[y])) for y in cb] for x in ca]
        eligible = [[d if d >= 0.5 else 0.0 for d in row] for row in dice]
        aligned = pair["aligned_contributors"]
        index_a, index_b = {c: i for i, c in enumerate(ca)}, {c: j for j, c in enumerate(cb)}
        assert len({a for a, _, _ in aligned}) == len({b for _, b, _ in aligned}) == len(aligned) == pair["aligned"]
        assert [d for _, _, d in aligned] == pytest.approx([eligible[index_a[a]][index_b[b]] for a, b, _ in aligned])
        assert all(d >= 0.5 for _, _, d in aligned)
        assert sum(d for _, _, d in aligned) == pytest.approx(_best_matching_total(eligible))
        assert pair["exact"] == sum(chars[a] == chars[b] for a, b, _ in aligned)
        # clustering, from the definitions
        same_a, same_b = independent.same_scu_pairs(aligned, chars, scu_of)
        both = sum(x and y for x, y in zip(same_a, same_b, strict=True))
        assert (pair["pairs"], pair["together_a"], pair["together_b"], pair["together_both"]) == (
            len(same_a),
            sum(same_a),
            sum(same_b),
            both,
        )
        assert pair["pairwise_precision"] == pytest.approx(both / sum(same_b))
        assert pair["pairwise_recall"] == pytest.approx(both / sum(same_a))
        cluster_a = {a: {x for x, _, _ in aligned if scu_of[x] == scu_of[a]} for a, _, _ in aligned}
        cluster_b = {b: {y for _, y, _ in aligned if scu_of[y] == scu_of[b]} for _, b, _ in aligned}
        partner = {b: a for a, b, _ in aligned}
        precision = np.mean(
            [len(cluster_a[a] & {partner[y] for y in cluster_b[b]}) / len(cluster_b[b]) for a, b, _ in aligned]
        )
        recall = np.mean(
            [len(cluster_a[a] & {partner[y] for y in cluster_b[b]}) / len(cluster_a[a]) for a, b, _ in aligned]
        )
        assert (pair["bcubed_precision"], pair["bcubed_recall"]) == pytest.approx((precision, recall))
        data = np.array([same_a, same_b], dtype=float)
        if len(np.unique(data)) > 1:
            assert pair["alpha"] == pytest.approx(
                krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
            )
        # SCUs: as many shared aligned contributors as the best one-to-one matching of SCUs allows
        scus_a = sorted({scu_of[c] for c in ca})
        scus_b = sorted({scu_of[c] for c in cb})
        shared = [[sum(scu_of[a] == s and scu_of[b] == t for a, b, _ in aligned) for t in scus_b] for s in scus_a]
        assert sum(m[2] for m in pair["scu_alignment"]["matched"]) == pytest.approx(_best_matching_total(shared))
        assert pair["scores"]["nist"]["n"] == pair["scores"]["sacrerouge"]["n"] == 0, "no peer of MATTER is annotated"


def test_the_stored_figures_are_those_of_the_files(matter, folder):
    """The database route (one copy of the texts) and the file route (every file's own copy, moved
    onto the first's) give the same figures: those printed in docs/pyramid-agreement.md."""
    _, topic = matter
    pairs = {(p["a"], p["b"]): p for p in PyramidAgreement.objects.get(topic=topic).values["pairs"]}
    ids = list(topic.pyramids.order_by("pk").values_list("pk", flat=True))
    files = pairwise(span_pyramids([(name, parse_pyramid((folder / name).read_bytes())[0]) for name in MATTER]))
    assert len(files) == len(pairs) == 10
    for (na, nb), result in files.items():
        stored = pairs[(ids[MATTER.index(na)], ids[MATTER.index(nb)])]
        c = result.clustering
        assert (
            stored["aligned"],
            stored["exact"],
            stored["pairs"],
            stored["scus_matched"],
            stored["scus_identical"],
        ) == (
            len(result.contributors.aligned),
            result.contributors.exact,
            c.pairs,
            len(result.scus.matched),
            result.scus.identical,
        )
        for key in ("pairwise_precision", "pairwise_recall", "bcubed_precision", "bcubed_recall"):
            assert stored[key] == pytest.approx(getattr(c, key)), (na, nb, key)
        assert stored["alpha"] == pytest.approx(c.alpha.value)
        assert stored["weight_mad"] == pytest.approx(result.weights.mean_abs_difference)
    # and they are the figures docs/pyramid-agreement.md prints ("In the app")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "pyramid-agreement.md").read_text().split("## In the app")[1]
    printed = [line.split() for line in docs.split("```")[1].splitlines()[2:]]
    assert len(printed) == 10
    for (a, b), stored, words in zip(sorted(pairs), [pairs[k] for k in sorted(pairs)], printed, strict=True):

        def f(key, stored=stored):
            return f"{stored[key]:.3f}"

        assert words[0] == f"#{ids.index(a) + 1}" and words[2] == f"#{ids.index(b) + 1}"
        assert words[4:] == [
            str(stored["aligned"]),
            "/".join(f(k) for k in ("pairwise_precision", "pairwise_recall", "pairwise_f1")),
            "/".join(f(k) for k in ("bcubed_precision", "bcubed_recall", "bcubed_f1")),
            f"{stored['alpha']:.2f}",
            f"{stored['scus_matched']}/{stored['scus_identical']}",
            str(stored["scores"]["nist"]["n"]),
        ]
