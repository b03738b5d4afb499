"""Completion codes: listed per submission for the coordinator, and checked against the platform's.

A worker hands a completion code to the platform (MTurk's batch results carry it, a pasted list
can too); a forged code is one that matches no submission of that worker here. :func:`check` takes
the platform's (worker, code) pairs, marks the run's submissions whose worker and code both match
as verified (``verified_at``; later lists add to it), and reports what does not fit: a code handed
in by several workers, and pairs that match nothing (an unknown code, or another worker's). With
the run's ``verified_only`` setting the scores count only verified answers, as a requester approves
assignments before paying for them; imported results came from the platform and always count.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.lightweight.models import LightweightPyramid, LiteAssignment, LiteWriting
from annotation.lightweight.privacy import pseudonym
from annotation.lightweight.runs import touch

MAX_LISTED = 200  # problems listed on the page (all are counted)
NO_SUCH_CODE = "no submission here has this code"
OTHER_WORKER = "this code belongs to another worker's submission"


@dataclass
class CodeCheck:
    pairs: int
    verified: int  # submissions newly found verified
    already: int  # submissions of the list verified before
    shared: list[dict] = field(default_factory=list)  # {code, workers}: one code, several workers
    unmatched: list[dict] = field(default_factory=list)  # {worker, code, reason}
    unmatched_count: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


def counted_assignments(run: LightweightPyramid, verified_only: bool):
    """The run's answers that the scores count: all, or only verified ones (imported always count)."""
    answers = LiteAssignment.objects.filter(task__pyramid=run)
    if verified_only:
        answers = answers.filter(~Q(origin=LiteAssignment.Origin.APP) | Q(verified_at__isnull=False))
    return answers


def unverified(run: LightweightPyramid):
    """The app's answers not (yet) found among the platform's submissions."""
    return LiteAssignment.objects.filter(task__pyramid=run, origin=LiteAssignment.Origin.APP, verified_at__isnull=True)


def _submission_querysets(run: LightweightPyramid, verified: bool | None):
    writings = LiteWriting.objects.filter(pyramid=run)
    answers = LiteAssignment.objects.filter(task__pyramid=run, origin=LiteAssignment.Origin.APP)
    if verified is not None:
        writings = writings.filter(verified_at__isnull=not verified)
        answers = answers.filter(verified_at__isnull=not verified)
    return writings, answers


def count_submissions(run: LightweightPyramid, verified: bool | None = None) -> int:
    return sum(queryset.count() for queryset in _submission_querysets(run, verified))


def submissions(run: LightweightPyramid, verified: bool | None = None, limit: int | None = None) -> list[dict]:
    """The crowd submissions made in the app (statement writing and judging), newest first (the
    first ``limit``): worker, platform ids, what was done, completion code, when verified."""
    writings, answers = _submission_querysets(run, verified)
    writings = writings.select_related("reference__topic").order_by("-submitted_at", "-id")
    answers = (
        answers.select_related("task__topic", "task__peer").defer("task__peer__text").order_by("-submitted_at", "-id")
    )
    rows = [
        _row(w, "writing", w.reference.topic.external_id, f"reference {w.reference.external_id}")
        for w in writings[:limit]
    ]
    rows += [
        _row(a, "judging", a.task.topic.external_id, f"summary {a.task.peer.external_id}") for a in answers[:limit]
    ]
    return sorted(rows, key=lambda r: r["submitted_at"], reverse=True)[:limit]


SUBMISSION_COLUMNS = (
    "kind",
    "worker",
    "platform",
    "platform_assignment",
    "platform_task",
    "topic",
    "work",
    "completion_code",
    "submitted_at",
    "verified_at",
)


def _row(item, kind: str, topic: str, work: str) -> dict:
    return {
        "kind": kind,
        "worker": item.worker_id,
        "platform": item.platform or "typed id",
        "platform_assignment": item.platform_assignment,
        "platform_task": item.platform_task,
        "topic": topic,
        "work": work,
        "completion_code": item.completion_code,
        "submitted_at": item.submitted_at,
        "verified_at": item.verified_at,
    }


def check(run: LightweightPyramid, pairs: list[tuple[str, str]]) -> CodeCheck:
    """Verify the run's submissions named by the platform's (worker, code) pairs (see the module)."""
    by_code = defaultdict(list)  # code -> [(model, pk, worker, verified)]
    for model, rows in (
        (LiteWriting, LiteWriting.objects.filter(pyramid=run)),
        (LiteAssignment, LiteAssignment.objects.filter(task__pyramid=run, origin=LiteAssignment.Origin.APP)),
    ):
        for pk, worker, code, verified_at in rows.exclude(completion_code="").values_list(
            "id", "worker_id", "completion_code", "verified_at"
        ):
            by_code[code.upper()].append((model, pk, worker, verified_at is not None))
    workers_of = defaultdict(set)
    for worker, code in pairs:
        workers_of[code.upper()].add(worker)
    report = CodeCheck(pairs=len(pairs), verified=0, already=0)
    report.shared = [
        {"code": code, "workers": sorted(workers)} for code, workers in sorted(workers_of.items()) if len(workers) > 1
    ]
    found = defaultdict(set)  # model -> pks
    for worker, code in pairs:
        names = {worker, pseudonym(run, worker)}  # the list names workers by id, the run may hold pseudonyms
        matches = [m for m in by_code.get(code.upper(), []) if m[2] in names]
        if not matches:
            report.unmatched_count += 1
            if len(report.unmatched) < MAX_LISTED:
                reason = OTHER_WORKER if by_code.get(code.upper()) else NO_SUCH_CODE
                report.unmatched.append({"worker": worker, "code": code, "reason": reason})
            continue
        for model, pk, _, verified in matches:
            if verified:
                report.already += 1
            elif pk not in found[model]:
                found[model].add(pk)
                report.verified += 1
    if report.verified:
        with transaction.atomic():
            now = timezone.now()
            for model, pks in found.items():
                model.objects.filter(pk__in=pks).update(verified_at=now)
            touch(run)
    return report
