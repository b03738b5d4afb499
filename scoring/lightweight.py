"""Lightweight Pyramid scores (Shapira et al., NAACL 2019), as the released LitePyramids code computes them.

Input: crowd *assignments* — one worker's present / absent / blank answers to one *task* (one peer
summary x up to 16 statements, in the task's order). Output, in one call (:func:`evaluate`):

1. **Worker quality.** For every pair of assignments of the same task (never across tasks), an
   agreement between the two 0/1 answer lists: the share of statements answered alike
   (``positional``, the default) or ``difflib.SequenceMatcher(None, a, b).ratio()`` on the lists in
   the task's statement order (``sequence-matcher``: what the released code does, for reproducing
   published results; it is not a lenient variant of positional agreement, see the docs). A worker's
   agreement is the mean over all their pairs in the whole input, rounded to 3 decimals; workers
   strictly below the threshold (0.5) are removed with all their answers, in one pass (no
   re-computation after a removal); a worker with no pair is kept. Assignments without a worker id
   (REALSumm's release) are partners for others' pairs but can never be removed: nobody to remove.
2. **Labels.** Majority vote per (summary, statement) over the remaining answers; a tie is absent.
3. **Scores.** Summary score = statements present / statements with at least one answer; the
   system is the last ``.``-separated part of the summary id; system score = mean over its summaries.
4. **Optional topic filter.** Krippendorff's nominal alpha per task over its remaining assignments
   (units = statements, blanks missing), averaged per topic; the lowest ``topic_filter`` percent of
   topics (floor of the count) are dropped from the summary and system scores.

Blank answers (the released code counts them as present) are mapped by ``Settings.blank``:
``present``, ``absent`` or ``missing`` (ignored, in agreement as in the vote).
"""

from __future__ import annotations

import difflib
import enum
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from statistics import mean, pstdev


class AgreementMeasure(enum.StrEnum):
    POSITIONAL = "positional"
    SEQUENCE_MATCHER = "sequence-matcher"
    NONE = "none"  # no worker filter


class BlankPolicy(enum.StrEnum):
    PRESENT = "present"
    ABSENT = "absent"
    MISSING = "missing"


DEFAULT_THRESHOLD = 0.5
AGREEMENT_DECIMALS = 3

REMOVED_BELOW = "agreement below the threshold"
KEPT_NO_PAIR = "no other worker answered the same task"  # the pages say "kept: " before it
KEPT_ANONYMOUS = "no worker id: cannot be filtered"


@dataclass(frozen=True)
class Settings:
    agreement: AgreementMeasure = AgreementMeasure.POSITIONAL
    threshold: float = DEFAULT_THRESHOLD
    blank: BlankPolicy = BlankPolicy.PRESENT
    topic_filter: float = 0.0  # percent of topics (lowest crowd alpha) to drop; 0 = keep all

    def __post_init__(self) -> None:
        object.__setattr__(self, "agreement", AgreementMeasure(self.agreement))
        object.__setattr__(self, "blank", BlankPolicy(self.blank))
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"the agreement threshold must lie between 0 and 1, got {self.threshold}")
        if not 0 <= self.topic_filter < 100:
            raise ValueError(f"the topic filter must be a percentage from 0 to below 100, got {self.topic_filter}")


@dataclass(frozen=True)
class Assignment:
    """One worker's answers to one task. ``answers``: (statement, True present / False absent /
    None blank) in the task's statement order. ``task`` identifies the task (same summary, same
    statements); ``summary`` is the peer summary's id and ``topic`` its document / event id."""

    task: Hashable
    topic: str
    summary: str
    worker: str | None
    answers: tuple[tuple[Hashable, bool | None], ...]


@dataclass(frozen=True)
class WorkerQuality:
    worker: str
    agreement: float | None  # rounded to 3 decimals; None without a pair
    pairs: int
    removed: bool
    reason: str | None


@dataclass(frozen=True)
class Label:
    topic: str
    summary: str
    statement: Hashable
    present: bool
    answers: int  # answers counted in the vote
    present_answers: int


@dataclass(frozen=True)
class SummaryScore:
    topic: str
    system: str
    summary: str
    present: int
    statements: int
    score: float


@dataclass(frozen=True)
class SystemScore:
    system: str
    score: float
    summaries: int
    stdev: float  # population standard deviation of its summary scores (the spread)
    minimum: float
    maximum: float


@dataclass(frozen=True)
class TopicAlpha:
    topic: str
    alpha: float | None  # mean over the tasks with a computable alpha
    tasks: int  # tasks in that mean
    dropped: bool


@dataclass(frozen=True)
class Result:
    settings: Settings
    workers: tuple[WorkerQuality, ...]
    labels: tuple[Label, ...]
    summaries: tuple[SummaryScore, ...]
    systems: tuple[SystemScore, ...]
    topics: tuple[TopicAlpha, ...]


def system_of(summary_id: str) -> str:
    """The system that wrote a summary: the last ``.``-separated part of its id (``D0601.M.250.A.12`` -> ``12``)."""
    return str(summary_id).rsplit(".", 1)[-1]


def round_agreement(value: float) -> float:
    """Round to 3 decimals as the released code does (Python's ``round``)."""
    return round(value, AGREEMENT_DECIMALS)


def _value(answer: bool | None, blank: BlankPolicy) -> int | None:
    if answer is None:
        if blank is BlankPolicy.MISSING:
            return None
        return 1 if blank is BlankPolicy.PRESENT else 0
    return 1 if answer else 0


def pair_agreement(a: Sequence[int | None], b: Sequence[int | None], measure: AgreementMeasure) -> float | None:
    """Agreement of two answer lists over the same statements in the same order.

    Positions where either list is missing (None) are left out first; None when nothing is left.
    """
    if len(a) != len(b):
        raise ValueError("two assignments of one task must answer the same statements")
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not both:
        return None
    if measure is AgreementMeasure.SEQUENCE_MATCHER:
        return difflib.SequenceMatcher(None, [x for x, _ in both], [y for _, y in both]).ratio()
    if measure is AgreementMeasure.POSITIONAL:
        return sum(x == y for x, y in both) / len(both)
    raise ValueError(f"no pairwise agreement for {measure.value!r}")


def _vector(assignment: Assignment, blank: BlankPolicy) -> tuple[tuple[Hashable, ...], list[int | None]]:
    return (
        tuple(s for s, _ in assignment.answers),
        [_value(v, blank) for _, v in assignment.answers],
    )


def worker_quality(assignments: Sequence[Assignment], settings: Settings) -> tuple[WorkerQuality, ...]:
    """Agreement per identified worker over all their within-task pairs, and who is removed (one pass)."""
    workers = list(dict.fromkeys(a.worker for a in assignments if a.worker is not None))
    if settings.agreement is AgreementMeasure.NONE:
        return tuple(WorkerQuality(w, None, 0, False, None) for w in workers)
    by_task: dict[Hashable, list[Assignment]] = defaultdict(list)
    for a in assignments:
        by_task[a.task].append(a)
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for task, group in by_task.items():
        vectors = [_vector(a, settings.blank) for a in group]
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                wi, wj = group[i].worker, group[j].worker
                if wi is not None and wi == wj:
                    continue  # the same worker twice on one task is no pair
                if vectors[i][0] != vectors[j][0]:
                    raise ValueError(f"task {task!r}: assignments list different statements")
                value = pair_agreement(vectors[i][1], vectors[j][1], settings.agreement)
                if value is None:
                    continue
                for w in (wi, wj):
                    if w is not None:
                        sums[w] += value
                        counts[w] += 1
    out = []
    for w in workers:
        if not counts[w]:
            out.append(WorkerQuality(w, None, 0, False, KEPT_NO_PAIR))
            continue
        agreement = round_agreement(sums[w] / counts[w])
        removed = agreement < settings.threshold
        out.append(WorkerQuality(w, agreement, counts[w], removed, REMOVED_BELOW if removed else None))
    return tuple(out)


def majority_labels(assignments: Iterable[Assignment], blank: BlankPolicy) -> tuple[Label, ...]:
    """Majority per (topic, summary, statement); a tie (and a statement with no counted answer) is absent.

    Statements whose every answer is missing get no label (they do not count in the score).
    """
    votes: dict[tuple[str, str, Hashable], list[int]] = {}
    for a in assignments:
        for statement, answer in a.answers:
            v = _value(answer, blank)
            slot = votes.setdefault((a.topic, a.summary, statement), [0, 0])
            if v is not None:
                slot[0] += 1
                slot[1] += v
    return tuple(
        Label(topic, summary, statement, 2 * present > n, n, present)
        for (topic, summary, statement), (n, present) in votes.items()
        if n
    )


def summary_scores(labels: Iterable[Label]) -> tuple[SummaryScore, ...]:
    """present / labelled statements per (topic, summary)."""
    counts: dict[tuple[str, str], list[int]] = {}
    for label in labels:
        slot = counts.setdefault((label.topic, label.summary), [0, 0])
        slot[0] += label.present
        slot[1] += 1
    return tuple(
        SummaryScore(topic, system_of(summary), summary, present, n, present / n)
        for (topic, summary), (present, n) in counts.items()
    )


def system_scores(summaries: Iterable[SummaryScore]) -> tuple[SystemScore, ...]:
    """Mean of each system's summary scores (over topics), with their spread, sorted by system."""
    by_system: dict[str, list[float]] = defaultdict(list)
    for s in summaries:
        by_system[s.system].append(s.score)
    return tuple(
        SystemScore(system, mean(values), len(values), pstdev(values), min(values), max(values))
        for system, values in sorted(by_system.items())
    )


def binary_nominal_alpha(units: Iterable[tuple[int, int]]) -> float | None:
    """Krippendorff's nominal alpha for 0/1 values, from (zeros, ones) counted per unit.

    With two categories the coincidence matrix has one off-diagonal cell, so
    alpha = 1 - (n - 1) * sum_u 2 z_u o_u / (m_u - 1) / (2 Z O), over units with m_u >= 2 values
    (float arithmetic: thousands of tasks are scored at once). None when it is undefined (fewer
    than 2 pairable values, or every value identical). Equals ``scoring.agreement.alpha_dice`` and
    ``krippendorff.alpha(level_of_measurement="nominal")`` on such data (tested).
    """
    disagreement = 0.0
    zeros = ones = 0
    for z, o in units:
        m = z + o
        if m < 2:
            continue
        disagreement += 2 * z * o / (m - 1)
        zeros += z
        ones += o
    n = zeros + ones
    if n < 2 or zeros == 0 or ones == 0:
        return None
    return 1 - (n - 1) * disagreement / (2 * zeros * ones)


def topic_alphas(assignments: Sequence[Assignment]) -> dict[str, tuple[float | None, int]]:
    """Per topic: the mean nominal alpha of its tasks (blanks missing) and how many tasks it rests on."""
    counts: dict[Hashable, dict[Hashable, list[int]]] = defaultdict(dict)
    topic_of: dict[Hashable, str] = {}
    for a in assignments:
        topic_of[a.task] = a.topic
        units = counts[a.task]
        for statement, answer in a.answers:
            if answer is not None:
                units.setdefault(statement, [0, 0])[1 if answer else 0] += 1
    per_topic: dict[str, list[float]] = {}
    for task, units in counts.items():
        values = per_topic.setdefault(topic_of[task], [])
        alpha = binary_nominal_alpha((z, o) for z, o in units.values())
        if alpha is not None:
            values.append(alpha)
    return {t: ((sum(v) / len(v)) if v else None, len(v)) for t, v in per_topic.items()}


def dropped_topics(alphas: dict[str, tuple[float | None, int]], percent: float) -> set[str]:
    """The floor(n * percent / 100) topics with the lowest alpha (ties broken by topic id).

    Topics without a computable alpha (every answer identical, or one assignment per task) rank
    as perfectly agreeing: they are never dropped.
    """
    count = int(len(alphas) * percent / 100)
    ranked = sorted(
        alphas,
        key=lambda t: (alphas[t][0] if alphas[t][0] is not None else float("inf"), t),
    )
    return set(ranked[:count])


def evaluate(assignments: Iterable[Assignment], settings: Settings = Settings()) -> Result:
    """The whole computation: worker filter, labels, topic filter, summary and system scores."""
    assignments = list(assignments)
    workers = worker_quality(assignments, settings)
    removed = {w.worker for w in workers if w.removed}
    kept = [a for a in assignments if a.worker not in removed]
    labels = majority_labels(kept, settings.blank)
    alphas = topic_alphas(kept)
    dropped = dropped_topics(alphas, settings.topic_filter) if settings.topic_filter else set()
    summaries = tuple(s for s in summary_scores(labels) if s.topic not in dropped)
    return Result(
        settings=settings,
        workers=workers,
        labels=labels,
        summaries=summaries,
        systems=system_scores(summaries),
        topics=tuple(TopicAlpha(t, a, n, t in dropped) for t, (a, n) in alphas.items()),
    )
