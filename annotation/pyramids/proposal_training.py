"""Learning the builder's proposals from expert pyramids, and measuring them (issue 30, section 2).

Pure functions over ``ExpertPyramid`` (a pyramid's reference texts and its expert's SCUs), read from
DUCView .pyr files (``from_pyr``) or from the study's finished pyramids (``study_pyramids``), shared
by ``manage.py train_proposals`` and ``bench/builder_proposals.py``.

**The expert's way, simulated** (``simulate``): the expert reads the references in key order and
starts each SCU from its first contributor there (SCUs in the order of that contributor); the label
is the selected text (nobody types one). Training asks for the candidates at each such start, the
pyramid so far being the expert's earlier SCUs; measuring asks the proposals, the pyramid so far
being the draft (seeds plus every proposal accepted).

**What counts as right** (issue 30): a proposed contributor is right when it covers at least half
of an expert contributor's characters in the SCU the expert put that contributor in
(``contributor_right``); a proposed SCU is right when its spans map that way to one expert SCU
(``scu_right``).

**The blind rule** (``training_selection``): a model never learns from a pyramid of references it
may be asked about by someone else: pyramids of excluded topics (those being built in the study by
another annotator, or, in a bench, the year measured) are left out, and the model records the
fingerprints of every topic it saw so that it is never used for them (``proposals.usable``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from annotation.pyramids.proposals import (
    FEATURES,
    DraftContributor,
    DraftSCU,
    ProposalModel,
    ReferenceText,
    SCUProposal,
    Topic,
    contributor_candidates,
    contributor_proposals,
    grouped,
    pair_candidates,
    scu_proposals,
    topic_fingerprint,
)
from annotation.pyramids.suggestion_features import covers
from annotation.pyramids.suggestion_model import one_thread

TARGET_PRECISION = 0.82  # thresholds: the most recall whose held-out precision reaches this (goal 0.8)
RIGHT_SHARE = 0.5  # a proposal covers at least this share of an expert contributor's characters


@dataclass(frozen=True)
class ExpertPyramid:
    source: str  # where it came from (a file path, "study:<topic>/<pyramid>")
    builder: str  # who built it ("" when unknown)
    references: tuple[ReferenceText, ...]
    scus: tuple[DraftSCU, ...]

    @property
    def fingerprint(self) -> str:
        return topic_fingerprint(self.references)


def from_pyr(path: Path) -> ExpertPyramid:
    """A DUCView .pyr file as an expert pyramid: references keyed by their header line; a legacy
    contributor whose parts lie in two references keeps those of its first part's reference."""
    from annotation.formats.ducview import parse_pyramid

    pyramid, _ = parse_pyramid(path.read_bytes())
    keys = {r.id: r.header.strip() for r in pyramid.references}
    refs = tuple(ReferenceText(keys[r.id], r.text) for r in pyramid.references)
    scus = []
    for scu in pyramid.scus:
        contributors = []
        for c in scu.contributors:
            if not c.parts:
                continue
            home = c.parts[0].reference
            parts = tuple(sorted((p.start, p.end) for p in c.parts if p.reference == home and p.end > p.start))
            if parts:
                contributors.append(DraftContributor(keys[home], parts))
        if contributors:
            scus.append(DraftSCU(scu.label, tuple(contributors)))
    return ExpertPyramid(str(path), "", refs, tuple(scus))


def study_pyramids(status: str = "done") -> list[ExpertPyramid]:
    """The study's pyramids of ``status`` (finished ones by default), with their builders."""
    from annotation.pyramids.models import ContributorPart, Pyramid

    out = []
    for pyramid in Pyramid.objects.filter(status=status).select_related("topic", "creator").order_by("pk"):
        refs = {r.pk: ReferenceText(r.external_id, r.text) for r in pyramid.references.all()}
        parts: dict[tuple[int, int], list] = {}
        labels: dict[int, str] = {}
        for scu, label, contributor, reference, start, end in ContributorPart.objects.filter(
            contributor__scu__pyramid=pyramid
        ).values_list(
            "contributor__scu_id", "contributor__scu__label", "contributor_id", "reference_id", "start", "end"
        ):
            if reference in refs and end > start:
                parts.setdefault((scu, contributor), []).append((refs[reference].key, start, end))
                labels[scu] = label
        scus: dict[int, list[DraftContributor]] = {}
        for (scu, _), found in sorted(parts.items()):
            home = min(found)[0]
            scus.setdefault(scu, []).append(
                DraftContributor(home, tuple(sorted((s, e) for r, s, e in found if r == home)))
            )
        out.append(
            ExpertPyramid(
                f"study:{pyramid.topic.external_id}/{pyramid.pk}",
                pyramid.creator.username if pyramid.creator_id else "",
                tuple(sorted(refs.values(), key=lambda r: r.key)),
                tuple(DraftSCU(labels[k], tuple(v)) for k, v in scus.items()),
            )
        )
    return out


def training_selection(pyramids: Iterable[ExpertPyramid], excluded: Iterable[str] = ()) -> list[ExpertPyramid]:
    """The pyramids a model may learn from: none of the topics (fingerprints) in ``excluded`` (topics
    someone is building, or a bench's measured year), each pyramid once (the same source twice is
    one), in content order (fingerprint, source) so the model is a function of the set given."""
    excluded = set(excluded)
    chosen: dict[str, ExpertPyramid] = {}
    for p in pyramids:
        if p.fingerprint not in excluded:
            chosen.setdefault(p.source, p)
    return sorted(chosen.values(), key=lambda p: (p.fingerprint, p.source))


# --- what counts as right --------------------------------------------------------------------------


def contributor_right(reference: str, parts: Sequence[tuple[int, int]], expert_scu: DraftSCU) -> bool:
    """Covers at least half of the characters of one of the expert SCU's contributors (same reference)."""
    return any(c.reference == reference and covers(parts, c.parts) >= RIGHT_SHARE for c in expert_scu.contributors)


def scu_right(proposal: Sequence[DraftContributor], expert: Sequence[DraftSCU]) -> int | None:
    """The index of the expert SCU every span of the proposal maps to (the first in ``expert`` when
    several do), or None."""
    for k, scu in enumerate(expert):
        if proposal and all(contributor_right(c.reference, c.parts, scu) for c in proposal):
            return k
    return None


# --- the expert's way ---------------------------------------------------------------------------------


def seeds(expert: ExpertPyramid) -> list[tuple[int, DraftContributor]]:
    """(expert SCU index, the contributor the expert starts it from), in the order the expert reads:
    each SCU's first contributor by (reference key, offsets), SCUs in that contributor's order."""
    out = []
    for k, scu in enumerate(expert.scus):
        first = min(scu.contributors, key=lambda c: (c.reference, c.parts))
        out.append((k, first))
    return sorted(out, key=lambda kc: (kc[1].reference, kc[1].parts, expert.scus[kc[0]].label))


def seed_scu(topic: Topic, seed: DraftContributor) -> DraftSCU:
    text = topic.references[seed.reference].text
    return DraftSCU(" ".join(" ".join(text[s:e].split()) for s, e in seed.parts), (seed,))


# --- training -------------------------------------------------------------------------------------------


def contributor_examples(expert: ExpertPyramid) -> tuple[list[list[float]], list[int], list[tuple]]:
    """Every candidate at each of the expert's SCU starts: features, right (1) or not, and the group
    (seed, reference) it competes in."""
    topic = Topic(expert.references)
    X, y, groups = [], [], []
    so_far: list[DraftSCU] = []
    for k, seed in seeds(expert):
        scu = seed_scu(topic, seed)
        for c in contributor_candidates(topic, scu, [*so_far, scu]):
            X.append(c.vector())
            y.append(int(contributor_right(c.unit.reference, (c.unit.span,), expert.scus[k])))
            groups.append((expert.fingerprint, k, c.unit.reference))
        so_far.append(DraftSCU(scu.label, expert.scus[k].contributors))
    return X, y, groups


def pair_examples(expert: ExpertPyramid) -> tuple[list[list[float]], list[int], Topic, list]:
    """Every pair of spans of two references on the empty pyramid: right (1) when both map to one
    expert SCU; with the topic and the pairs (``pair_candidates``) for ``choose_pair_threshold``."""
    topic = Topic(expert.references)
    pairs = pair_candidates(topic, [])
    X, y = [], []
    for ua, ub, f in pairs:
        X.append([f[n] for n in FEATURES])
        pair = (DraftContributor(ua.reference, (ua.span,)), DraftContributor(ub.reference, (ub.span,)))
        y.append(int(scu_right(pair, expert.scus) is not None))
    return X, y, topic, pairs


def scu_counts(proposed: Sequence[SCUProposal], expert: ExpertPyramid) -> Counts:
    """SCU proposals counted as issue 30 counts them: right when every span maps to one expert SCU;
    recall over the expert's SCUs of two or more references that a right proposal maps to."""
    counts = Counts(proposed=len(proposed))
    hit = set()
    for p in proposed:
        k = scu_right(p.contributors, expert.scus)
        if k is not None:
            counts.right += 1
            hit.add(k)
    counts.expected = sum(len({c.reference for c in s.contributors}) >= 2 for s in expert.scus)
    counts.found = sum(len({c.reference for c in expert.scus[k].contributors}) >= 2 for k in hit)
    return counts


PAIR_THRESHOLDS = 40  # ``choose_pair_threshold`` tries the confidences 1/40, 2/40, ... 39/40


def choose_pair_threshold(
    held: Sequence[tuple[ExpertPyramid, Topic, list, Sequence[float]]], target: float | None = TARGET_PRECISION
) -> float:
    """The pair threshold chosen on the SCU proposals themselves, not on the pairs: grouping keeps a
    pair only when its spans are free and fit every member, so the proposals' precision is not the
    pairs'. ``held``: per training pyramid, its pairs with held-out confidences. The lowest threshold
    (of ``PAIR_THRESHOLDS`` evenly spaced) whose pooled proposals reach ``target`` precision; the
    best F1's when none does or ``target`` is None."""
    tried = [k / PAIR_THRESHOLDS for k in range(1, PAIR_THRESHOLDS)]
    best_f1, at_f1, at_target = -1.0, tried[-1], None
    for t in reversed(tried):
        counts = Counts()
        for expert, topic, pairs, conf in held:
            counts.add(scu_counts(grouped(topic, pairs, conf, t), expert))
        precision, recall = counts.precision, counts.recall
        if precision is None or recall is None:
            continue
        if target is not None and precision >= target:
            at_target = t
        if (f := f1(precision, recall)) > best_f1:
            best_f1, at_f1 = f, t
    return float(at_target if at_target is not None else at_f1)


def expert_contributors_to_find(expert: ExpertPyramid) -> int:
    """The recall's denominator: per SCU, its contributors outside the seed's reference."""
    return sum(sum(c.reference != seed.reference for c in expert.scus[k].contributors) for k, seed in seeds(expert))


def _classifier():
    from sklearn.ensemble import HistGradientBoostingClassifier

    # smaller trees, more of them, at least 40 examples a leaf: the other year's ranking gains a little
    # (recall at precision 0.8 0.196 -> 0.227 from DUC 2006 to 2007 main; the other way 0.174 -> 0.152)
    return HistGradientBoostingClassifier(
        max_iter=500, learning_rate=0.03, max_leaf_nodes=15, min_samples_leaf=40, l2_regularization=1.0, random_state=0
    )


def choose_threshold(scored: Sequence[tuple[float, int]], total: int, target: float | None = TARGET_PRECISION) -> float:
    """The lowest threshold whose proposals (``scored``: confidence, right) reach ``target``
    precision, i.e. the most recall at that precision; the best F1's when none does or ``target``
    is None."""
    pairs = sorted(scored, key=lambda pr: -pr[0])
    right, best_f1, at_f1, at_target = 0, -1.0, 0.5, None
    for n, (p, label) in enumerate(pairs, 1):
        right += label
        if n < len(pairs) and pairs[n][0] == p:
            continue
        precision, recall = right / n, right / max(total, 1)
        if target is not None and precision >= target:
            at_target = p
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 > best_f1:
            best_f1, at_f1 = f1, p
    return float(at_target if at_target is not None else at_f1)


def _held_out(X, y, groups) -> list[float]:
    from sklearn.model_selection import GroupKFold, cross_val_predict

    folds = min(5, len(set(groups)))
    if folds < 2:
        return [0.5] * len(y)
    classifier = _classifier()
    with one_thread():
        return list(
            cross_val_predict(classifier, X, y, groups=groups, cv=GroupKFold(folds), method="predict_proba")[:, 1]
        )


def fit(pyramids: Sequence[ExpertPyramid], target: float | None = TARGET_PRECISION) -> ProposalModel:
    """Train both classifiers on the pyramids (``training_selection``'s choice); thresholds chosen on
    topics held out (5-fold by topic) for the precision ``target`` (None: the best F1)."""
    if not pyramids:
        raise ValueError("no expert pyramid to learn from")
    cX, cy, cgroups, total = [], [], [], 0
    pX, py, pgroups = [], [], []
    pair_sets: list[tuple[ExpertPyramid, Topic, list]] = []
    for p in pyramids:
        X, y, g = contributor_examples(p)
        cX += X
        cy += y
        cgroups += g
        total += expert_contributors_to_find(p)
        X, y, topic, pairs = pair_examples(p)
        pX += X
        py += y
        pgroups += [p.fingerprint] * len(y)
        pair_sets.append((p, topic, pairs))
    if len(set(cy)) < 2 or len(set(py)) < 2:
        raise ValueError("the pyramids give no right and wrong candidates to learn from")
    held = _held_out(cX, cy, [g[0] for g in cgroups])
    tops: dict[tuple, tuple[float, int]] = {}
    for p, label, g in zip(held, cy, cgroups, strict=True):
        if g not in tops or p > tops[g][0]:
            tops[g] = (p, label)
    contributor_threshold = choose_threshold(list(tops.values()), total, target)
    pheld = _held_out(pX, py, pgroups)
    held, at = [], 0
    for p, topic, pairs in pair_sets:
        held.append((p, topic, pairs, pheld[at : at + len(pairs)]))
        at += len(pairs)
    pair_threshold = choose_pair_threshold(held, target)
    with one_thread():
        contributor = _classifier().fit(cX, cy)
        pair = _classifier().fit(pX, py)
    return ProposalModel(
        contributor,
        contributor_threshold,
        pair,
        pair_threshold,
        frozenset(p.fingerprint for p in pyramids),
        tuple(p.source for p in pyramids),
    )


def candidate_reach(expert: ExpertPyramid) -> dict[str, int]:
    """Where the contributor proposals' recall is lost before any model ranks, at each of the
    expert's SCU starts (the pyramid so far: the expert's earlier SCUs) and each other reference:
    ``groups`` (seed, reference) in all, ``wanted`` those where the expert has a contributor; of
    those, ``any_span`` where some candidate span of the reference (``proposals.units``) would be
    right, ``ranked`` where one of the candidates the model is asked about is right, ``rules_first``
    where the rules' first candidate is."""
    topic = Topic(expert.references)
    out = dict.fromkeys(("groups", "wanted", "any_span", "ranked", "rules_first"), 0)
    so_far: list[DraftSCU] = []
    for k, seed in seeds(expert):
        scu = seed_scu(topic, seed)
        found: dict[str, list] = {}
        for c in contributor_candidates(topic, scu, [*so_far, scu]):
            found.setdefault(c.unit.reference, []).append(c)
        for key, reference in topic.references.items():
            if key == seed.reference:
                continue
            out["groups"] += 1
            if not any(c.reference == key for c in expert.scus[k].contributors):
                continue
            out["wanted"] += 1
            out["any_span"] += any(contributor_right(key, (u.span,), expert.scus[k]) for u in reference.units)
            right = [contributor_right(key, (c.unit.span,), expert.scus[k]) for c in found.get(key, [])]
            out["ranked"] += any(right)
            out["rules_first"] += bool(right) and right[0]
        so_far.append(DraftSCU(scu.label, expert.scus[k].contributors))
    return out


def ranking_curve(model: ProposalModel | None, pyramids: Sequence[ExpertPyramid]) -> dict:
    """How well the confidences rank, whatever the threshold: each reference's most confident
    candidate at each of the expert's SCU starts (the pyramid so far: the expert's earlier SCUs),
    swept from the most confident down. Recall at precision 0.8, precision at recall 0.6, the best
    F1, and the recall of taking every reference's top candidate (the candidates' ceiling)."""
    tops: dict[tuple, tuple[float, int]] = {}
    total = 0
    for p in pyramids:
        X, y, groups = contributor_examples(p)
        total += expert_contributors_to_find(p)
        if model is not None:
            conf = model.confidences(model.contributor, X)
        else:
            conf = [row[FEATURES.index("dice")] for row in X]
        for c, label, g in zip(conf, y, groups, strict=True):
            if g not in tops or c > tops[g][0]:
                tops[g] = (c, label)
    ordered = sorted(tops.values(), key=lambda cl: -cl[0])
    right, at_p8, at_r6, best = 0, 0.0, 0.0, 0.0
    for n, (_, label) in enumerate(ordered, 1):
        right += label
        precision, recall = right / n, right / max(total, 1)
        if precision >= 0.8:
            at_p8 = max(at_p8, recall)
        if recall >= 0.6:
            at_r6 = max(at_r6, precision)
        best = max(best, f1(precision, recall) or 0.0)
    return {"recall_at_p80": at_p8, "precision_at_r60": at_r6, "best_f1": best, "ceiling": right / max(total, 1)}


# --- measuring -------------------------------------------------------------------------------------------


@dataclass
class Counts:
    proposed: int = 0
    right: int = 0
    expected: int = 0  # the recall's denominator
    found: int = 0  # the recall's numerator

    @property
    def precision(self) -> float | None:
        return self.right / self.proposed if self.proposed else None

    @property
    def recall(self) -> float | None:
        return self.found / self.expected if self.expected else None

    def add(self, other: Counts) -> None:
        self.proposed += other.proposed
        self.right += other.right
        self.expected += other.expected
        self.found += other.found


@dataclass
class Measured:
    contributors: Counts
    scus: Counts
    draft_seeded: tuple[DraftSCU, ...]  # the expert starts every SCU, accepting every contributor proposal
    draft: tuple[DraftSCU, ...]  # every SCU proposal accepted first, then the expert's starts as needed


def _covered_by(draft: Sequence[DraftSCU], contributor: DraftContributor) -> bool:
    return any(
        c.reference == contributor.reference and covers(c.parts, contributor.parts) >= RIGHT_SHARE
        for s in draft
        for c in s.contributors
    )


def _grow(topic, references, scu: DraftSCU, draft: list[DraftSCU], model) -> tuple[DraftSCU, list]:
    proposals = contributor_proposals(references, scu, [*draft, scu], model, topic=topic)
    grown = DraftSCU(scu.label, scu.contributors + tuple(DraftContributor(p.reference, p.parts) for p in proposals))
    return grown, proposals


def measure(expert: ExpertPyramid, model: ProposalModel | None) -> Measured:
    """Both proposal kinds on one expert pyramid (module docstring), and the two drafts."""
    topic = Topic(expert.references)
    refs = expert.references
    contributors = Counts()
    seeded: list[DraftSCU] = []
    for k, seed in seeds(expert):
        grown, proposals = _grow(topic, refs, seed_scu(topic, seed), seeded, model)
        rights = [contributor_right(p.reference, p.parts, expert.scus[k]) for p in proposals]
        contributors.proposed += len(proposals)
        contributors.right += sum(rights)
        contributors.found += sum(rights)
        contributors.expected += sum(c.reference != seed.reference for c in expert.scus[k].contributors)
        seeded.append(grown)

    proposed = scu_proposals(refs, [], model, topic=topic)
    scus = scu_counts(proposed, expert)

    draft: list[DraftSCU] = []
    for p in proposed:
        grown, _ = _grow(topic, refs, DraftSCU(p.label, p.contributors), draft, model)
        draft.append(grown)
    for k, _ in seeds(expert):
        missing = sorted(
            (c for c in expert.scus[k].contributors if not _covered_by(draft, c)), key=lambda c: (c.reference, c.parts)
        )
        if not missing:
            continue
        grown, _ = _grow(topic, refs, seed_scu(topic, missing[0]), draft, model)
        draft.append(grown)
    return Measured(contributors, scus, tuple(seeded), tuple(draft))


def span_pyramid(name: str, references: Sequence[ReferenceText], scus: Sequence[DraftSCU]):
    """The pyramid as ``scoring.pyramid_agreement`` compares it (uids: content order)."""
    from scoring.pyramid_agreement import Span, SpanContributor, SpanPyramid, SpanSCU

    ordered = sorted(scus, key=lambda s: (sorted((c.reference, c.parts) for c in s.contributors), s.label))
    return SpanPyramid(
        name,
        tuple(r.key for r in references),
        tuple(
            SpanSCU(
                uid,
                tuple(SpanContributor(tuple(Span(c.reference, a, b) for a, b in c.parts)) for c in s.contributors),
                s.label,
            )
            for uid, s in enumerate(ordered, 1)
        ),
    )


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return math.fsum(values) / len(values) if values else None


def pyramid_files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*") if p.suffix.lower() == ".pyr")
