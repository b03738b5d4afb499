"""Pairs of span pyramids full of equally good alignments, their renumberings, and the figures of a
comparison written in terms of content only (shared by the file-route, stored-route and
adjudication tests of "figures must not depend on how a pyramid is numbered").

Every generated pair holds both kinds of tie on purpose, besides a random part:

- *the same characters in two SCUs*: A has segment 6 of R0 as a contributor of SCU D1 = {R0:6,
  R1:6} and of SCU D2 = {R0:6, R1:7}; B has E = {R0:6, R1:6} and F = {R1:7}. B's R0:6 overlaps both
  copies equally (Dice 1); only the SCU context tells D1 (two contributors in common with E) from D2;
- *an SCU sharing one contributor with each of two SCUs*: A's X = {R0:5, R1:5}, B's Y1 = {R0:5} and
  Y2 = {R1:5}: X can be matched with either.
"""

import random

from hypothesis import strategies as st

from scoring.pyramid_agreement import Span, SpanContributor, SpanPyramid, SpanSCU

RANDOM_SEGMENTS = 4  # segments 0-3 of every reference are clustered at random; 5-7 hold the ties
LABELS = ("matter has mass", "mass", "matter has volume", "volume and mass", "")
# The random source of ``renumbered``: a generator seeded by one drawn number (shown as ``Random(seed)``
# in a failing example), not a generator whose every call is a draw of hypothesis (``use_true_random=False``):
# shuffling a pyramid's SCUs, contributors and parts made thousands of draws an example, half of these
# tests' CPU, for permutations no more likely to find a bug than uniform ones.
PERMUTATIONS = st.randoms(use_true_random=True)


def segment(reference, s, cut=0):
    return (reference, 10 * s, 10 * s + 8 - cut)


def span_pyramid(name, refs, scus):
    """``scus``: list of (uid, label, contributors), each contributor a list of (reference, start, end)."""
    return SpanPyramid(
        name,
        tuple(refs),
        tuple(
            SpanSCU(uid, tuple(SpanContributor(tuple(Span(*p) for p in parts)) for parts in contributors), label)
            for uid, label, contributors in scus
        ),
    )


@st.composite
def tied_pairs(draw):
    refs = [f"R{i}" for i in range(draw(st.integers(2, 4)))]
    present = {r: sorted(draw(st.sets(st.integers(0, RANDOM_SEGMENTS - 1), min_size=1))) for r in refs}

    def random_part(jitter):
        scus: dict[int, list] = {}
        for r in refs:
            order = draw(st.permutations(range(RANDOM_SEGMENTS)))
            for s in present[r]:
                scus.setdefault(order[s], []).append([segment(r, s, draw(st.integers(0, 3)) if jitter else 0)])
        # a copy of some contributor in a second SCU that has none from its reference (the DUCView rule)
        for k, contributors in list(scus.items()):
            if draw(st.booleans()):
                target = draw(st.sampled_from(sorted(scus)))
                taken = {c[0][0] for c in scus[target]}
                copy = draw(st.sampled_from(contributors))
                if target != k and copy[0][0] not in taken:
                    scus[target].append(copy)
        return [contributors for _, contributors in sorted(scus.items())]

    r0, r1 = refs[0], refs[1]
    ties_a = [
        [[segment(r0, 5)], [segment(r1, 5)]],  # X
        [[segment(r0, 6)], [segment(r1, 6)]],  # D1
        [[segment(r0, 6)], [segment(r1, 7)]],
    ]  # D2: R0:6 again
    ties_b = [
        [[segment(r0, 5)]],
        [[segment(r1, 5)]],  # Y1, Y2
        [[segment(r0, 6)], [segment(r1, 6)]],
        [[segment(r1, 7)]],
    ]  # E, F

    def labelled(groups):
        return [(100 + k, draw(st.sampled_from(LABELS)), contributors) for k, contributors in enumerate(groups)]

    return (
        span_pyramid("A", refs, labelled(ties_a + random_part(False))),
        span_pyramid("B", refs, labelled(ties_b + random_part(True))),
    )


def renumbered(p: SpanPyramid, rnd: random.Random) -> SpanPyramid:
    """The same pyramid with other uids (a random bijection) and its SCUs, contributors and parts
    listed in another order: what a file or a database may do with the same content."""
    scus = list(p.scus)
    rnd.shuffle(scus)
    uids = rnd.sample(range(1, 10 * len(scus) + 10), len(scus))
    return SpanPyramid(
        p.name,
        p.references,
        tuple(
            SpanSCU(
                uid,
                tuple(
                    SpanContributor(tuple(rnd.sample(c.spans, len(c.spans))))
                    for c in rnd.sample(s.contributors, len(s.contributors))
                ),
                s.label,
            )
            for uid, s in zip(uids, scus, strict=True)
        ),
    )


def _spans(c):
    return tuple(sorted((s.reference, s.start, s.end) for s in c.spans))


def scu_content(p: SpanPyramid) -> dict[int, tuple]:
    """uid -> what the SCU is, without its uid: its contributors' spans and its label."""
    return {s.uid: (tuple(sorted(_spans(c) for c in s.contributors)), s.label) for s in p.scus}


def content_figures(result, a: SpanPyramid, b: SpanPyramid) -> dict:
    """Every figure of ``scoring.pyramid_agreement.compare``, with SCUs and contributors named by
    their content (never by uid or position): equal for two numberings of the same pyramids iff
    the comparison does not depend on numbering."""
    ka, kb = scu_content(a), scu_content(b)
    spans_a = {(s.uid, i): _spans(c) for s in a.scus for i, c in enumerate(s.contributors)}
    spans_b = {(s.uid, i): _spans(c) for s in b.scus for i, c in enumerate(s.contributors)}
    c, ca = result.clustering, result.contributors
    out = {
        "aligned": sorted((ka[x.a[0]], spans_a[x.a], kb[x.b[0]], spans_b[x.b], x.dice) for x in ca.aligned),
        "unmatched_a": sorted((ka[k[0]], spans_a[k]) for k in ca.unmatched_a),
        "unmatched_b": sorted((kb[k[0]], spans_b[k]) for k in ca.unmatched_b),
        "mean_dice": ca.mean_dice,
        "exact": ca.exact,
        "matched_scus": sorted((ka[m.a], kb[m.b], m.shared, m.weight_a, m.weight_b) for m in result.scus.matched),
        "unmatched_scus_a": sorted(ka[u] for u in result.scus.unmatched_a),
        "unmatched_scus_b": sorted(kb[u] for u in result.scus.unmatched_b),
        "identical": result.scus.identical,
        "alpha": c.alpha.value,
        "alpha_reason": c.alpha.reason,
    }
    for name in (
        "items",
        "pairs",
        "together_a",
        "together_b",
        "together_both",
        "pairwise_precision",
        "pairwise_recall",
        "pairwise_f1",
        "bcubed_precision",
        "bcubed_recall",
        "bcubed_f1",
        "reason",
    ):
        out[name] = getattr(c, name)
    for prefix, w in (("weight", result.weights), ("contributor_weight", result.contributor_weights)):
        out |= {
            f"{prefix}_n": w.n,
            f"{prefix}_equal": w.exact_share,
            f"{prefix}_mad": w.mean_abs_difference,
            f"{prefix}_pearson": w.pearson.value,
            f"{prefix}_spearman": w.spearman.value,
        }
    return out
