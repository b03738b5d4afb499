"""The assisted builder's proposals (annotation/pyramids/proposals.py, proposal_training.py,
manage.py train_proposals): the candidates, the right-counting rule, determinism under reordered
input, the blind rule (training selection and a model never used for references it saw), the
bench's refusal of a model that saw the year measured, and the draft agreement's singletons. Small
hand-made topics; the real-data floor is in test_proposals_realdata.py."""

import importlib.util
import io
import random
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.formats.model import SCU as SCUFile
from annotation.formats.model import Contributor, Part, Reference
from annotation.formats.model import Pyramid as PyramidFile
from annotation.formats.writer import write_pyramid
from annotation.pyramids.proposal_training import (
    ExpertPyramid,
    candidate_reach,
    choose_pair_threshold,
    contributor_right,
    fit,
    from_pyr,
    measure,
    pair_examples,
    scu_counts,
    scu_right,
    seeds,
    span_pyramid,
    training_selection,
)
from annotation.pyramids.proposals import (
    DraftContributor,
    DraftSCU,
    ReferenceText,
    SCUProposal,
    Topic,
    clauses,
    contributor_candidates,
    contributor_proposals,
    grouped,
    load_model,
    save_model,
    scu_proposals,
    topic_fingerprint,
    units,
    usable,
)
from scoring.pyramid_agreement import align_contributors, clustering_agreement, with_unmatched_as_singletons

BENCH = Path(__file__).resolve().parents[2] / "bench" / "builder_proposals.py"
spec = importlib.util.spec_from_file_location("builder_proposals", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)

A = (
    "The dam on the Yellow River flooded the valley in 1998. Farmers lost their crops, and many moved to "
    "Lanzhou. The government paid 40 million yuan in compensation."
)
B = (
    "In 1998 the Yellow River dam flooded the whole valley. Many farmers moved to Lanzhou after losing "
    "their crops. Officials praised the engineers."
)
C = (
    "Officials praised the engineers of the dam. The valley was flooded by the Yellow River dam in 1998. "
    "Compensation of 40 million yuan was paid by the government."
)
REFS = (ReferenceText("A", A), ReferenceText("B", B), ReferenceText("C", C))


def span(text: str, words: str) -> tuple[int, int]:
    start = text.index(words)
    return (start, start + len(words))


def contributor(key: str, words: str) -> DraftContributor:
    return DraftContributor(key, (span(dict((r.key, r.text) for r in REFS)[key], words),))


FLOOD = DraftSCU(
    "The dam flooded the valley in 1998",
    (
        contributor("A", "The dam on the Yellow River flooded the valley in 1998"),
        contributor("B", "In 1998 the Yellow River dam flooded the whole valley"),
        contributor("C", "The valley was flooded by the Yellow River dam in 1998"),
    ),
)
MOVED = DraftSCU(
    "Farmers moved to Lanzhou",
    (contributor("A", "many moved to Lanzhou"), contributor("B", "Many farmers moved to Lanzhou")),
)
PAID = DraftSCU(
    "The government paid 40 million yuan",
    (
        contributor("A", "The government paid 40 million yuan in compensation"),
        contributor("C", "Compensation of 40 million yuan was paid by the government"),
    ),
)
PRAISED = DraftSCU(
    "Officials praised the engineers",
    (
        contributor("B", "Officials praised the engineers"),
        contributor("C", "Officials praised the engineers of the dam"),
    ),
)
EXPERT = ExpertPyramid("hand", "expert", REFS, (FLOOD, MOVED, PAID, PRAISED))


def test_clauses_cut_at_punctuation_and_before_conjunctions():
    text = "Farmers lost their crops, and many moved to Lanzhou while others stayed."
    got = [text[a:b] for a, b in clauses(text, (0, len(text)))]
    assert got == ["Farmers lost their crops", "and many moved to Lanzhou", "while others stayed"]


def test_units_are_clause_runs_and_sentences_each_once():
    found = {A[u.span[0] : u.span[1]] for u in units(ReferenceText("A", A))}
    assert "Farmers lost their crops" in found
    assert "and many moved to Lanzhou" in found
    assert "Farmers lost their crops, and many moved to Lanzhou" in found
    assert len(found) == len(units(ReferenceText("A", A)))


def test_a_contributor_is_right_when_it_covers_half_of_an_expert_contributor_of_that_scu():
    (s, e) = FLOOD.contributors[1].parts[0]
    half = (s + e + 1) // 2 - s  # at least half of its characters
    assert contributor_right("B", ((s, s + half),), FLOOD)
    assert not contributor_right("B", ((s, s + half - 1),), FLOOD)
    assert not contributor_right("C", ((s, s + half),), FLOOD)  # the same offsets in another reference
    # The same words are right for the SCU the expert put them in only.
    assert contributor_right("B", MOVED.contributors[1].parts, MOVED)
    assert not contributor_right("B", MOVED.contributors[1].parts, FLOOD)


def test_an_scu_is_right_when_every_span_maps_to_one_expert_scu():
    expert = EXPERT.scus
    assert scu_right((FLOOD.contributors[1], FLOOD.contributors[2]), expert) == 0
    assert scu_right((MOVED.contributors[1], PAID.contributors[1]), expert) is None  # two SCUs' spans
    assert scu_right((FLOOD.contributors[0],), expert) == 0
    assert scu_right((), expert) is None


def test_rules_propose_the_span_that_says_the_same_in_each_other_reference():
    seed = DraftSCU("The dam flooded the valley in 1998", (FLOOD.contributors[0],))
    found = contributor_proposals(REFS, seed, [seed])
    assert {p.reference for p in found} == {"B", "C"}
    for p in found:
        assert contributor_right(p.reference, p.parts, FLOOD)
    assert [p.confidence for p in found] == sorted((p.confidence for p in found), reverse=True)


def test_scu_proposals_group_spans_of_several_references_with_a_label():
    found = scu_proposals(REFS, [])
    assert found
    right = [p for p in found if scu_right(p.contributors, EXPERT.scus) is not None]
    assert right, found
    for p in found:
        assert len({c.reference for c in p.contributors}) == len(p.contributors) >= 2
        assert p.label
    # Covered text is not proposed again.
    assert all(scu_right(p.contributors, EXPERT.scus) != 0 for p in scu_proposals(REFS, [FLOOD]))


def test_a_candidate_knows_how_much_of_its_reference_other_scus_hold():
    # Independent count: B's characters inside MOVED's and PRAISED's contributors there (disjoint spans).
    seed = DraftSCU("The dam flooded the valley in 1998", (FLOOD.contributors[0],))
    held = sum(e - s for c in (MOVED.contributors[1], PRAISED.contributors[0]) for s, e in c.parts)
    found = contributor_candidates(Topic(REFS), seed, [seed, MOVED, PRAISED])
    by_reference = {c.unit.reference: c.features["reference_covered"] for c in found}
    assert by_reference["B"] == pytest.approx(held / len(B))
    assert by_reference["C"] == pytest.approx(len("Officials praised the engineers of the dam") / len(C))
    # The SCU's own contributors do not count: with nothing else, every reference is free.
    alone = contributor_candidates(Topic(REFS), seed, [seed])
    assert {c.features["reference_covered"] for c in alone} == {0.0}


def test_scu_proposals_count_right_only_when_every_span_maps_to_one_expert_scu():
    proposed = [
        SCUProposal("flood", (FLOOD.contributors[1], FLOOD.contributors[2]), 0.9),  # right: FLOOD
        SCUProposal("flood again", (FLOOD.contributors[0], FLOOD.contributors[1]), 0.8),  # right, FLOOD again
        SCUProposal("mixed", (MOVED.contributors[1], PAID.contributors[1]), 0.7),  # two SCUs' spans: wrong
    ]
    counts = scu_counts(proposed, EXPERT)
    assert (counts.proposed, counts.right) == (3, 2)
    assert (counts.found, counts.expected) == (1, 4)  # FLOOD found once; all four SCUs have weight >= 2


def test_the_pair_threshold_is_chosen_on_the_grouped_proposals():
    _, right, topic, pairs = pair_examples(EXPERT)
    assert 0 < sum(right) < len(right)
    # Every right pair above every wrong one: grouping takes the right pairs first and drops the wrong
    # ones that overlap them, so the proposals are all right at any threshold and the lowest one tried
    # (the most recall) is chosen, though below 0.6 the pairs themselves are mostly wrong.
    conf = [0.6 if r else 0.3 for r in right]
    assert sum(right) / len(right) < 0.8
    chosen = choose_pair_threshold([(EXPERT, topic, pairs, conf)], target=0.8)
    assert chosen == 1 / 40
    at_chosen = scu_counts(grouped(topic, pairs, conf, chosen), EXPERT)
    assert at_chosen.right == at_chosen.proposed == at_chosen.expected
    # Every wrong pair above every right one: above 0.3 only wrong proposals; at 0.3 and below half of
    # them right. No threshold reaches 0.8: the best F1's, the highest threshold giving it.
    conf = [0.3 if r else 0.6 for r in right]
    assert scu_counts(grouped(topic, pairs, conf, 0.31), EXPERT).right == 0
    assert scu_counts(grouped(topic, pairs, conf, 0.3), EXPERT).right > 0
    assert choose_pair_threshold([(EXPERT, topic, pairs, conf)], target=0.8) == 0.3


def _shuffled(seed: int):
    rng = random.Random(seed)
    refs = list(REFS)
    rng.shuffle(refs)
    scus = [DraftSCU(s.label, tuple(rng.sample(s.contributors, len(s.contributors)))) for s in (MOVED, PAID)]
    rng.shuffle(scus)
    return refs, scus


@pytest.fixture(scope="module")
def model():
    # Three copies of the topic with the sentences' words changed (different texts, same structure):
    # enough right and wrong candidates to learn from.
    def variant(k):
        swap = {"Lanzhou": ["Xian", "Wuhan", "Chengdu"][k], "1998": ["1991", "1995", "2003"][k]}
        refs = []
        for r in REFS:
            text = r.text
            for old, new in swap.items():
                text = text.replace(old, new)
            refs.append(ReferenceText(r.key, text))
        scus = []
        for s in EXPERT.scus:
            cs = []
            for c in s.contributors:
                words = dict((r.key, r.text) for r in REFS)[c.reference][c.parts[0][0] : c.parts[0][1]]
                for old, new in swap.items():
                    words = words.replace(old, new)
                text = dict((r.key, r.text) for r in refs)[c.reference]
                cs.append(DraftContributor(c.reference, (span(text, words),)))
            scus.append(DraftSCU(s.label, tuple(cs)))
        return ExpertPyramid(f"variant{k}", "", tuple(refs), tuple(scus))

    return fit([variant(k) for k in range(3)])


@pytest.mark.parametrize("use_model", [False, True])
def test_proposals_do_not_depend_on_the_order_of_references_or_scus(use_model, model):
    m = model if use_model else None
    seed = DraftSCU("The dam flooded the valley in 1998", (FLOOD.contributors[0],))
    refs, scus = list(REFS), [MOVED, PAID]
    first = contributor_proposals(refs, seed, [*scus, seed], m)
    first_scus = scu_proposals(refs, scus, m)
    for k in range(3):
        refs, scus = _shuffled(k)
        assert contributor_proposals(refs, seed, [seed, *scus], m) == first
        assert scu_proposals(refs, scus, m) == first_scus


def test_training_selection_leaves_out_excluded_topics_whatever_their_keys_order_or_spacing(model):
    other = ExpertPyramid("other", "x", (ReferenceText("1", "Something else entirely."),), ())
    # The same references as EXPERT, under other keys, in another order, spaced otherwise.
    same = ExpertPyramid(
        "same-topic-other-annotator",
        "y",
        tuple(ReferenceText(f"ref{k}", r.text.replace(". ", ".\n  ")) for k, r in enumerate(reversed(REFS))),
        (),
    )
    assert same.fingerprint == EXPERT.fingerprint
    chosen = training_selection([EXPERT, other, same, other], excluded={EXPERT.fingerprint})
    assert chosen == [other]
    assert training_selection([same, other, EXPERT]) == training_selection([EXPERT, same, other])


def test_a_model_is_never_used_for_references_it_learnt_from(model):
    assert model.seen and not model.saw(Topic(REFS))
    seen = ExpertPyramid("seen", "", REFS, EXPERT.scus)
    saw_it = type(model)(
        model.contributor,
        model.contributor_threshold,
        model.pair,
        model.pair_threshold,
        model.seen | {seen.fingerprint},
        model.trained_on + ("seen",),
    )
    assert usable(saw_it, Topic(REFS)) is None and usable(model, Topic(REFS)) is model
    seed = DraftSCU("The dam flooded the valley in 1998", (FLOOD.contributors[0],))
    assert contributor_proposals(REFS, seed, [seed], saw_it) == contributor_proposals(REFS, seed, [seed], None)
    assert scu_proposals(REFS, [], saw_it) == scu_proposals(REFS, [], None)


def test_the_bench_refuses_a_model_that_saw_the_year_measured(model):
    saw_it = type(model)(
        model.contributor,
        model.contributor_threshold,
        model.pair,
        model.pair_threshold,
        model.seen | {EXPERT.fingerprint},
        model.trained_on,
    )
    with pytest.raises(bench.SawMeasuredYear):
        bench.evaluate(saw_it, [EXPERT])
    figures = bench.evaluate(model, [EXPERT])
    assert figures["contributors"].expected == 5  # FLOOD 2 + MOVED 1 + PAID 1 + PRAISED 1


def test_the_seeded_draft_starts_each_scu_from_its_first_contributor():
    assert [(EXPERT.scus[k].label, c.reference) for k, c in seeds(EXPERT)] == [
        ("The dam flooded the valley in 1998", "A"),
        ("Farmers moved to Lanzhou", "A"),
        ("The government paid 40 million yuan", "A"),
        ("Officials praised the engineers", "B"),
    ]
    measured = measure(EXPERT, None)
    assert len(measured.draft_seeded) == 4
    assert measured.contributors.right <= measured.contributors.proposed


def test_the_candidates_reach_counts_each_scu_start_and_other_reference():
    reach = candidate_reach(EXPERT)
    # Starts: FLOOD, MOVED, PAID from A and PRAISED from B, two other references each; the expert's
    # contributors there: FLOOD's B and C, MOVED's B, PAID's C, PRAISED's C.
    assert reach["groups"] == 8 and reach["wanted"] == 5
    assert reach["any_span"] == 5  # each of them is a clause or a sentence, or half of one
    assert reach["rules_first"] <= reach["ranked"] <= reach["any_span"]
    assert reach["ranked"] >= 4


def test_unmatched_contributors_count_as_singletons():
    # Expert: FLOOD (3) and MOVED (2). Draft: FLOOD's A and B together, MOVED's B alone, and an extra span.
    extra = contributor("C", "Officials praised the engineers")
    draft = (
        DraftSCU("x", FLOOD.contributors[:2]),
        DraftSCU("y", (MOVED.contributors[1],)),
        DraftSCU("z", (extra,)),
    )
    a = span_pyramid("expert", REFS, (FLOOD, MOVED))
    b = span_pyramid("draft", REFS, draft)
    alignment = align_contributors(a, b)
    assert len(alignment.aligned) == 3 and len(alignment.unmatched_a) == 2 and len(alignment.unmatched_b) == 1
    plain = clustering_agreement(alignment)
    counted = clustering_agreement(with_unmatched_as_singletons(a, b, alignment))
    assert plain.bcubed_precision == 1 and plain.bcubed_recall == 1
    # 6 items. Expert clusters: {fA, fB, fC}, {mA, mB}, {x}; draft: {fA, fB}, {mB}, {fC}, {mA}, {x}.
    # Precision: every draft cluster is pure: 1. Recall: fA, fB 2/3; fC 1/3; mA, mB 1/2; x 1.
    assert counted.items == 6
    assert counted.bcubed_precision == pytest.approx(1.0)
    assert counted.bcubed_recall == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 / 2 + 1 / 2 + 1) / 6)


def _pyr_file(expert: ExpertPyramid) -> bytes:
    refs = [Reference(r.key, f"D0001.M.250.A.{r.key}", r.text) for r in expert.references]
    scus = [
        SCUFile(
            k + 1,
            s.label,
            "",
            [Contributor("", "", [Part(c.reference, a, b) for a, b in c.parts]) for c in s.contributors],
        )
        for k, s in enumerate(expert.scus)
    ]
    return write_pyramid(PyramidFile(refs, scus, None))


@pytest.mark.django_db
def test_train_proposals_writes_a_model_that_saw_its_files(tmp_path):
    path = tmp_path / "D0001.pyr"
    path.write_bytes(_pyr_file(EXPERT))
    parsed = from_pyr(path)
    assert parsed.fingerprint == EXPERT.fingerprint and len(parsed.scus) == 4
    out = io.StringIO()
    call_command("train_proposals", str(tmp_path), "--output", str(tmp_path / "m.joblib"), stdout=out)
    model = load_model(tmp_path / "m.joblib")
    assert model is not None and model.trained_on == (str(path),)
    assert model.saw(Topic(REFS))
    assert "D0001.pyr" in out.getvalue()
    save_model(model, tmp_path / "again.joblib")
    assert load_model(tmp_path / "again.joblib").seen == model.seen
    assert load_model(tmp_path / "none.joblib") is None


def test_the_fingerprint_is_the_texts_not_their_keys_or_order():
    assert topic_fingerprint(REFS) == topic_fingerprint(tuple(ReferenceText(r.text[:1], r.text) for r in REFS[::-1]))
    assert topic_fingerprint(REFS) != topic_fingerprint(REFS[:2])


def _study_pyramid(name, expert, status, username):
    from django.contrib.auth.models import User

    from annotation.pyramids.editing import add_contributor
    from annotation.pyramids.models import SCU, Pyramid

    from tests.foundation.factories import topic

    t, references = topic(name, **{r.key: r.text for r in expert.references})
    p = Pyramid.objects.create(topic=t, status=status, creator=User.objects.create(username=username))
    p.references.set(references.values())
    for uid, s in enumerate(expert.scus, 1):
        scu = SCU.objects.create(pyramid=p, uid=uid, label=s.label)
        for c in s.contributors:
            add_contributor(scu, references[c.reference], list(c.parts))
    return p


@pytest.mark.django_db
def test_train_proposals_learns_the_studys_finished_pyramids_and_never_a_topic_being_built(tmp_path):
    from annotation.pyramids.proposal_training import study_pyramids

    # Another topic (other texts), which annotator y is building in the study.
    other = ExpertPyramid("", "", tuple(ReferenceText(r.key, r.text.replace("Yellow", "Huai")) for r in REFS), ())
    _study_pyramid("T1", EXPERT, "done", "x")
    _study_pyramid("T2", other, "in_progress", "y")
    found = study_pyramids()
    assert [(p.builder, p.fingerprint, len(p.scus)) for p in found] == [("x", EXPERT.fingerprint, 4)]
    assert found[0].scus[0].contributors == FLOOD.contributors
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "D0002.pyr").write_bytes(_pyr_file(other))
    call_command(
        "train_proposals", str(tmp_path / "files"), "--output", str(tmp_path / "m.joblib"), stdout=io.StringIO()
    )
    model = load_model(tmp_path / "m.joblib")
    # The file is of the topic someone is building: left out, and the model may serve that topic.
    assert model.trained_on == (found[0].source,)
    assert model.saw(Topic(REFS)) and not model.saw(Topic(other.references))
