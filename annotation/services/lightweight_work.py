"""Running the Lightweight Pyramid protocol in the app: statement writing, filtering, sampling,
judging tasks, crowd submissions, costs.

Phase 1: each reference is shown to ``writers_per_reference`` workers, each writes
``statements_per_writer`` statements (all required). The released filters mark statements kept or
dropped with the reason; a seeded sample puts ``statements_per_reference`` of each reference into
batch 1 and as many more into batch 2, reporting references that run short and offering the
top-up from the topic's other references.

Phase 2: one task per peer summary and batch (16 statements with 4 references), judged by
``judges_per_task`` workers. A crowd link (token) opens the work of one phase / batch; a worker
id is captured, every statement needs an answer, and a completion code is shown at the end.
Each worker answers a task at most once (a database constraint): a double submission stores
nothing twice and returns the first submission's completion code.
"""
from __future__ import annotations

import secrets
import zlib
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Subquery

from scoring.lite_statements import Statement, chunk, filter_statements, sample_batches, top_up

from ..models import (
    SCU,
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteStatement,
    LiteTask,
    LiteWriting,
    PeerSummary,
    ReferenceSummary,
    Topic,
)
from ..models.lightweight import ANSWER_ABSENT, ANSWER_PRESENT
from .lightweight_import import task_key
from .lightweight_runs import touch

MAX_WORKER_ID = 100
MAX_STATEMENT_CHARS = 500


class WorkError(ValueError):
    """A request the protocol cannot take (the message is shown to the worker or coordinator)."""


def completion_code() -> str:
    return secrets.token_hex(4).upper()


def clean_worker_id(value) -> str:
    worker = value.strip() if isinstance(value, str) else ""
    if not worker:
        raise WorkError("Please enter your worker id.")
    if len(worker) > MAX_WORKER_ID or any(ch.isspace() for ch in worker):
        raise WorkError(f"A worker id is one word of at most {MAX_WORKER_ID} characters.")
    return worker


def topics_of(run: LightweightPyramid):
    return Topic.objects.filter(dataset=run.dataset).order_by("external_id")


# --- Phase 1: statements -------------------------------------------------------------------------

def next_reference(run: LightweightPyramid, worker: str) -> ReferenceSummary | None:
    """A reference that still needs writers and that this worker has not written about."""
    return (ReferenceSummary.objects.filter(topic__dataset=run.dataset)
            .exclude(lite_writings__pyramid=run, lite_writings__worker_id=worker)
            .annotate(writers=Count("lite_writings", filter=Q(lite_writings__pyramid=run)))
            .filter(writers__lt=run.writers_per_reference)
            .order_by("writers", "topic__external_id", "external_id").first())


def submit_writing(run: LightweightPyramid, reference: ReferenceSummary, worker: str, texts: list[str]) -> LiteWriting:
    """Store one worker's statements about one reference (all of them required)."""
    worker = clean_worker_id(worker)
    texts = [(t or "").strip() for t in texts]
    if len(texts) != run.statements_per_writer or not all(texts):
        raise WorkError(f"Please write all {run.statements_per_writer} statements.")
    if any(len(t) > MAX_STATEMENT_CHARS for t in texts):
        raise WorkError(f"A statement has at most {MAX_STATEMENT_CHARS} characters.")
    if reference.topic.dataset_id != run.dataset_id:
        raise WorkError("This reference is not part of this evaluation.")
    try:
        with transaction.atomic():
            writing = LiteWriting.objects.create(pyramid=run, reference=reference, worker_id=worker,
                                                 completion_code=completion_code())
            LiteStatement.objects.bulk_create([
                LiteStatement(pyramid=run, topic_id=reference.topic_id, external_id=f"w{writing.pk}.{k}", text=text,
                              reference=reference, source=reference.external_id, author=worker, writing=writing)
                for k, text in enumerate(texts, start=1)
            ])
            touch(run)
    except IntegrityError:
        return LiteWriting.objects.get(pyramid=run, reference=reference, worker_id=worker)
    return writing


def statements_from_expert(run: LightweightPyramid, pyramids) -> int:
    """Statements from expert pyramids' SCU labels (one per SCU), so both methods meet on the same topics."""
    new = []
    have = set(LiteStatement.objects.filter(pyramid=run).values_list("topic_id", "external_id"))
    for scu in SCU.objects.filter(pyramid__in=pyramids, pyramid__topic__dataset=run.dataset).select_related("pyramid"):
        key = (scu.pyramid.topic_id, f"scu{scu.pyramid_id}.{scu.uid}")
        if key not in have:
            new.append(LiteStatement(pyramid=run, topic_id=key[0], external_id=key[1], text=scu.label, scu=scu,
                                     source=f"pyramid {scu.pyramid_id}"))
    with transaction.atomic():
        LiteStatement.objects.bulk_create(new)
        touch(run)
    return len(new)


def _reference_key(statement: LiteStatement):
    return statement.reference_id or statement.source or f"topic{statement.topic_id}"


def apply_filters(run: LightweightPyramid) -> dict[str, int]:
    """Mark every statement kept or dropped with the released filters; returns counts by reason."""
    statements = list(LiteStatement.objects.filter(pyramid=run).order_by("topic_id", "id"))
    decisions = filter_statements([Statement(s.pk, (s.topic_id, _reference_key(s)), s.text) for s in statements])
    by_id = {s.pk: s for s in statements}
    counts: dict[str, int] = defaultdict(int)
    for d in decisions:
        s = by_id[d.id]
        s.kept, s.filter_reason = d.kept, d.reason or ""
        counts[d.reason or "kept"] += 1
    with transaction.atomic():
        LiteStatement.objects.bulk_update(statements, ["kept", "filter_reason"], batch_size=2000)
        touch(run)
    return dict(counts)


@dataclass
class SampleReport:
    topic: str
    batches: list[int]          # statements per batch
    target: int
    short: list[dict]           # {reference, batch, missing}; reference None = the topic ran out


def sample(run: LightweightPyramid, top_up_short: bool = False) -> list[SampleReport]:
    """Seeded sample of every topic's kept statements into batches 1 and 2 (replacing a previous sample)."""
    reports = []
    references = dict(ReferenceSummary.objects.filter(topic__dataset=run.dataset).values_list("id", "external_id"))
    with transaction.atomic():
        LiteStatement.objects.filter(pyramid=run).update(batch=None)
        for topic in topics_of(run):
            kept: dict = defaultdict(list)
            for s in LiteStatement.objects.filter(pyramid=run, topic=topic, kept=True).order_by("id"):
                kept[_reference_key(s)].append(s.pk)
            if not kept:
                continue
            seed = run.seed * 1_000_003 + topic.pk
            result = sample_batches(kept, seed, per_reference=run.statements_per_reference)
            if top_up_short and result.short:
                result = top_up(result, kept, seed)
            for number, batch in enumerate(result.batches, start=1):
                LiteStatement.objects.filter(pk__in=[s for _, s in batch]).update(batch=number)
            reports.append(SampleReport(
                topic.external_id, [len(b) for b in result.batches], result.target,
                [{"reference": references.get(x.reference, x.reference) if x.reference is not None else None,
                  "batch": x.batch, "missing": x.missing} for x in result.short],
            ))
        touch(run)
    return reports


def create_tasks(run: LightweightPyramid) -> int:
    """One task per peer summary and batch (split into tasks of 16 statements); existing tasks stay."""
    have = set(LiteTask.objects.filter(pyramid=run).values_list("peer_id", "key"))
    new = []
    peers = defaultdict(list)
    for peer in PeerSummary.objects.filter(topic__dataset=run.dataset).order_by("id"):
        peers[peer.topic_id].append(peer)
    batches = defaultdict(list)
    for pk, topic, external, batch in LiteStatement.objects.filter(pyramid=run, batch__isnull=False).order_by("id").values_list(
            "id", "topic_id", "external_id", "batch"):
        batches[(topic, batch)].append((pk, external))
    for (topic, batch), statements in sorted(batches.items()):
        for part in chunk(statements):
            key = task_key([e for _, e in part])
            for peer in peers[topic]:
                if (peer.pk, key) not in have:
                    new.append(LiteTask(pyramid=run, topic_id=topic, peer=peer, batch=batch, key=key,
                                        statement_ids=[pk for pk, _ in part]))
    with transaction.atomic():
        LiteTask.objects.bulk_create(new, batch_size=2000)
        touch(run)
    return len(new)


# --- Phase 2: judging ----------------------------------------------------------------------------

def next_task(link: CrowdLink, worker: str) -> LiteTask | None:
    """The link's task with the fewest answers that still needs judges and this worker has not done.

    Among equally answered tasks each worker has its own fixed order (task id scrambled by a hash
    of the worker id): a crowd arriving together spreads over the tasks instead of all 200 taking
    the same one (which would end with that task judged 200 times and the rest not at all), and a
    worker who reloads the page keeps the task it was shown. One query: the choice is made on task
    ids alone (counting over whole rows with the summary text sorted them on disk) and the chosen
    task is read with its peer summary.
    """
    run = link.pyramid
    tasks = LiteTask.objects.filter(pyramid=run)
    if link.batch:
        tasks = tasks.filter(batch=link.batch)
    spread = (F("id") * 2654435761 + zlib.crc32(worker.encode())) % 1_000_003   # Knuth's multiplicative hash
    chosen = (tasks.exclude(assignments__worker_id=worker)
              .values("id").annotate(n=Count("assignments"))
              .filter(n__lt=run.judges_per_task)
              .order_by("n", spread, "id").values("id")[:1])
    return LiteTask.objects.select_related("peer").filter(pk__in=Subquery(chosen)).first()


def task_statements(task: LiteTask) -> list[LiteStatement]:
    """The task's statements in the order shown (one query, only what the page shows)."""
    by_id = {s.pk: s for s in LiteStatement.objects.filter(pk__in=task.statement_ids).only("id", "text")}
    return [by_id[pk] for pk in task.statement_ids]


def submit_judgments(link: CrowdLink, task: LiteTask, worker: str, answers: dict) -> LiteAssignment:
    """Store one worker's answers to one task: ``answers`` maps every statement id to present / absent."""
    worker = clean_worker_id(worker)
    if task.pyramid_id != link.pyramid_id or (link.batch and task.batch != link.batch):
        raise WorkError("This task is not part of this link.")
    codes = []
    for pk in task.statement_ids:
        value = answers.get(str(pk), answers.get(pk))
        if value not in ("present", "absent", ANSWER_PRESENT, ANSWER_ABSENT):
            raise WorkError("Please answer every statement: present or not present.")
        codes.append(ANSWER_PRESENT if value in ("present", ANSWER_PRESENT) else ANSWER_ABSENT)
    try:
        with transaction.atomic():
            assignment = LiteAssignment.objects.create(
                task=task, worker_id=worker, external_id=f"app:{worker}", origin=LiteAssignment.Origin.APP,
                answers="".join(codes), completion_code=completion_code())
            touch(link.pyramid, reload=False)   # last before the commit: the run's row is locked briefly
    except IntegrityError:   # the same worker submitted this task already (a retry): nothing twice
        return LiteAssignment.objects.get(task=task, external_id=f"app:{worker}")
    return assignment


# --- Progress and costs --------------------------------------------------------------------------

def progress(run: LightweightPyramid) -> dict:
    tasks = LiteTask.objects.filter(pyramid=run).annotate(n=Count("assignments"))
    total = tasks.count()
    statements = LiteStatement.objects.filter(pyramid=run)
    references = ReferenceSummary.objects.filter(topic__dataset=run.dataset).count()
    return {
        "references": references,
        "writings": LiteWriting.objects.filter(pyramid=run).count(),
        "writings_wanted": references * run.writers_per_reference,
        "statements": statements.count(),
        "kept": statements.filter(kept=True).count(),
        "sampled": statements.filter(batch__isnull=False).count(),
        "tasks": total,
        "tasks_done": tasks.filter(n__gte=run.judges_per_task).count(),
        "assignments": LiteAssignment.objects.filter(task__pyramid=run).count(),
        "assignments_wanted": total * run.judges_per_task,
    }


def costs(run: LightweightPyramid, figures: dict | None = None) -> dict:
    """Cost so far (paid assignments) and the estimate for the whole run, in USD."""
    p = figures or progress(run)
    paid_judging = LiteAssignment.objects.filter(task__pyramid=run).exclude(origin=LiteAssignment.Origin.AGGREGATED).count()
    so_far = p["writings"] * run.pay_writing + paid_judging * run.pay_judging
    estimate = p["writings_wanted"] * run.pay_writing + p["assignments_wanted"] * run.pay_judging
    return {"so_far": str(so_far.quantize(Decimal("0.01"))), "estimate": str(Decimal(estimate).quantize(Decimal("0.01"))),
            "pay_writing": str(run.pay_writing), "pay_judging": str(run.pay_judging)}
