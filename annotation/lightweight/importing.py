"""Import of released lightweight-pyramid files into a run: Phase-2 results CSVs (MTurk, REALSumm),
Lite2-3Pyramid folders, statement datasets (LitePyramids, REALSumm's SCU list) and MTurk Phase-1
results.

Each file is imported in its own transaction (a rejected file writes nothing) and gives a
:class:`FileReport`. Re-importing adds nothing twice: topics, peers, statements, tasks and
assignments are looked up by their natural keys (an assignment by MTurk's AssignmentId, or by a
content key for files without one). Rows are written in bulk: REALSumm's 7,743 assignments take
a few hundred queries, not tens of thousands.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.formats.errors import LightweightFormatError
from annotation.formats.lightweight_csv import (
    Phase1Result,
    Phase2Result,
    StatementRow,
    read_phase1_results,
    read_phase2_results,
    read_statements,
)
from annotation.formats.lite23pyramid import Lite23Dataset, is_lite23_folder, read_lite23
from annotation.lightweight.models import (
    ANSWER_ABSENT,
    ANSWER_BLANK,
    ANSWER_PRESENT,
    LightweightPyramid,
    LiteAssignment,
    LiteStatement,
    LiteTask,
    LiteWriting,
)
from annotation.lightweight.runs import schedule, touch
from scoring.lightweight import system_of

MAX_FILE_BYTES = 50 * 1024 * 1024


@dataclass
class FileReport:
    path: str
    kind: str = ""
    created: dict = field(default_factory=dict)  # what -> how many new rows
    existing_assignments: int = 0
    error: str | None = None

    def line(self) -> str:
        if self.error:
            return f"{self.path}: rejected: {self.error}"
        parts = ", ".join(f"{n} {what}" for what, n in self.created.items() if n)
        again = f"; {self.existing_assignments} assignments already there" if self.existing_assignments else ""
        return f"{self.path} ({self.kind}): {parts or 'nothing new'}{again}"


def answer_code(value: bool | None) -> str:
    return ANSWER_BLANK if value is None else (ANSWER_PRESENT if value else ANSWER_ABSENT)


def task_key(statement_ids) -> str:
    """The task's identity within a peer: its statement ids, in order."""
    return hashlib.sha1("\x1f".join(statement_ids).encode()).hexdigest()[:40]


def get_run(dataset_name: str, name: str, origin: str = LightweightPyramid.Origin.IMPORTED) -> LightweightPyramid:
    """The run named ``name`` of dataset ``dataset_name``, both created when absent."""
    dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
    run, _ = LightweightPyramid.objects.get_or_create(dataset=dataset, name=name, defaults={"origin": origin})
    return run


class _Writer:
    """Bulk get-or-create of the rows one file needs, keyed by natural keys."""

    def __init__(self, run: LightweightPyramid, report: FileReport):
        self.run, self.report = run, report

    def _count(self, what: str, n: int) -> None:
        self.report.created[what] = self.report.created.get(what, 0) + n

    def topics(self, external_ids) -> dict[str, int]:
        """Topic ids by external id, the missing ones created."""
        wanted = set(external_ids)

        def existing():
            return dict(
                Topic.objects.filter(dataset=self.run.dataset, external_id__in=wanted).values_list("external_id", "id")
            )

        have = existing()
        new = [Topic(dataset=self.run.dataset, external_id=e) for e in sorted(wanted - set(have))]
        Topic.objects.bulk_create(new)
        self._count("topics", len(new))
        return existing() if new else have

    def peers(self, wanted: dict[tuple[int, str], str]) -> dict[tuple[int, str], int]:
        """(topic id, summary id) -> text; returns (topic id, summary id) -> peer id."""
        topic_ids = {t for t, _ in wanted}

        def existing():
            return {
                (t, e): pk
                for pk, t, e in PeerSummary.objects.filter(topic_id__in=topic_ids).values_list(
                    "id", "topic_id", "external_id"
                )
            }

        have = existing()
        new = [
            PeerSummary(topic_id=t, external_id=s, text=text, system_id=system_of(s))
            for (t, s), text in wanted.items()
            if (t, s) not in have
        ]
        PeerSummary.objects.bulk_create(new)
        self._count("peer summaries", len(new))
        return existing() if new else have

    def statements(self, wanted: dict[tuple[int, str], dict]) -> dict[tuple[int, str], int]:
        """(topic id, external id) -> field values for a new statement; returns the keys -> statement ids."""
        topic_ids = {t for t, _ in wanted}

        def existing():
            return {
                (t, e): pk
                for pk, t, e in LiteStatement.objects.filter(pyramid=self.run, topic_id__in=topic_ids).values_list(
                    "id", "topic_id", "external_id"
                )
            }

        have = existing()
        new = [
            LiteStatement(pyramid=self.run, topic_id=t, external_id=e, **values)
            for (t, e), values in wanted.items()
            if (t, e) not in have
        ]
        LiteStatement.objects.bulk_create(new, batch_size=2000)
        self._count("statements", len(new))
        return existing() if new else have

    def tasks(self, wanted: dict[tuple[int, str], tuple[int, list[int], int]]) -> dict[tuple[int, str], int]:
        """(peer id, key) -> (topic id, statement ids, batch); returns (peer id, key) -> task id."""
        peer_ids = {p for p, _ in wanted}

        def existing():
            return {
                (p, k): pk
                for pk, p, k in LiteTask.objects.filter(pyramid=self.run, peer_id__in=peer_ids).values_list(
                    "id", "peer_id", "key"
                )
            }

        have = existing()
        new = [
            LiteTask(pyramid=self.run, topic_id=topic, peer_id=peer, key=key, statement_ids=ids, batch=batch)
            for (peer, key), (topic, ids, batch) in wanted.items()
            if (peer, key) not in have
        ]
        LiteTask.objects.bulk_create(new, batch_size=2000)
        self._count("tasks", len(new))
        return existing() if new else have

    def assignments(self, rows: list[LiteAssignment]) -> None:
        task_ids = {a.task_id for a in rows}
        have = set(LiteAssignment.objects.filter(task_id__in=task_ids).values_list("task_id", "external_id"))
        new, seen = [], set()
        for a in rows:
            key = (a.task_id, a.external_id)
            if key in have or key in seen:
                self.report.existing_assignments += key in have
                continue
            seen.add(key)
            new.append(a)
        LiteAssignment.objects.bulk_create(new, batch_size=2000)
        self._count("assignments", len(new))


def import_phase2(run: LightweightPyramid, results: list[Phase2Result], report: FileReport) -> None:
    w = _Writer(run, report)
    topics = w.topics(r.task.event for r in results)
    peers = w.peers({(topics[r.task.event], r.task.summary): r.task.summary_text for r in results})
    statements = w.statements(
        {(topics[r.task.event], qid): {"text": text} for r in results for qid, text in r.task.statements}
    )
    task_of = {}
    wanted_tasks = {}
    for r in results:
        topic = topics[r.task.event]
        qids = [q for q, _ in r.task.statements]
        key = task_key(qids)
        peer = peers[(topic, r.task.summary)]
        wanted_tasks[(peer, key)] = (topic, [statements[(topic, q)] for q in qids], 1)
        task_of[r.row] = (peer, key)
    tasks = w.tasks(wanted_tasks)
    w.assignments(
        [
            LiteAssignment(
                task_id=tasks[task_of[r.row]],
                worker_id=r.worker or "",
                external_id=r.assignment,
                origin=LiteAssignment.Origin.MTURK,
                answers="".join(answer_code(v) for _, v in r.answers),
            )
            for r in results
        ]
    )


def import_lite23(run: LightweightPyramid, data: Lite23Dataset, report: FileReport) -> None:
    """Statements are numbered by position in ``SCUs.txt``; one aggregated assignment per label line."""
    w = _Writer(run, report)
    topics = w.topics(data.documents)
    statements = w.statements(
        {
            (topics[d], str(i)): {"text": text}
            for d, texts in zip(data.documents, data.statements, strict=True)
            for i, text in enumerate(texts)
        }
    )
    peers = w.peers(
        {
            (topics[d], system.system): (system.summaries[n] if system.summaries else "")
            for system in data.systems
            for n, d in enumerate(data.documents)
        }
    )
    wanted, rows = {}, []
    for system in data.systems:
        for d, labels in zip(data.documents, system.labels, strict=True):
            topic = topics[d]
            ids = [str(i) for i in range(len(labels))]
            peer = peers[(topic, system.system)]
            wanted[(peer, task_key(ids))] = (topic, [statements[(topic, i)] for i in ids], 1)
            rows.append(((peer, task_key(ids)), "".join(answer_code(v) for v in labels)))
    tasks = w.tasks(wanted)
    w.assignments(
        [
            LiteAssignment(
                task_id=tasks[key],
                external_id="released-label",
                origin=LiteAssignment.Origin.AGGREGATED,
                answers=answers,
            )
            for key, answers in rows
        ]
    )


def import_statement_rows(run: LightweightPyramid, rows: list[StatementRow], batch: int, report: FileReport) -> None:
    """A statement dataset; ``forUse=1`` rows are marked as sampled into ``batch``. BLANK padding is skipped."""
    rows = [r for r in rows if not r.is_blank]
    w = _Writer(run, report)
    topics = w.topics(r.event for r in rows)
    statements = w.statements(
        {(topics[r.event], r.question): {"text": r.text, "author": r.author, "source": r.source} for r in rows}
    )
    chosen = [statements[(topics[r.event], r.question)] for r in rows if r.for_use]
    LiteStatement.objects.filter(id__in=chosen, batch__isnull=True).update(batch=batch)


def import_phase1(run: LightweightPyramid, results: list[Phase1Result], report: FileReport) -> None:
    """MTurk statement-writing results: the references (created if absent) and each worker's statements."""
    w = _Writer(run, report)
    topics = w.topics(r.event for r in results)
    references = {}
    for r in results:
        ref, created = ReferenceSummary.objects.get_or_create(
            topic_id=topics[r.event], external_id=r.summary, defaults={"text": r.summary_text}
        )
        references[(r.event, r.summary)] = ref
        w._count("references", int(created))
    wanted = {}
    for r in results:
        ref = references[(r.event, r.summary)]
        writing, created = LiteWriting.objects.get_or_create(
            pyramid=run, reference=ref, worker_id=r.worker or r.assignment, defaults={"external_id": r.assignment}
        )
        w._count("writing assignments", int(created))
        for k, text in enumerate(r.statements, start=1):
            if text:
                wanted[(topics[r.event], f"{r.assignment}:{k}")] = {
                    "text": text,
                    "reference": ref,
                    "source": r.summary,
                    "author": r.worker,
                    "writing": writing,
                }
    w.statements(wanted)


def _kind(text: str) -> str:
    header = text.lstrip("\ufeff").split("\n", 1)[0]
    if "Input.qIdList" in header:
        return "phase2"
    if "Input.summId" in header:
        return "phase1"
    if "questionText" in header:
        return "statements"
    raise LightweightFormatError(
        "not a lightweight-pyramid file: expected Phase-2 results (Input.qIdList), "
        "Phase-1 results (Input.summId) or a statement list (questionText)"
    )


def import_text(run: LightweightPyramid, text: str, name: str, notify: bool = True) -> FileReport:
    """One file's content (its kind told by its header), in one transaction."""
    report = FileReport(name)
    try:
        report.kind = _kind(text)
        with transaction.atomic():
            if report.kind == "phase2":
                import_phase2(run, read_phase2_results(text), report)
            elif report.kind == "phase1":
                import_phase1(run, read_phase1_results(text), report)
            else:
                match = re.search(r"batch\s*(\d+)", Path(name).stem, re.I)
                import_statement_rows(run, read_statements(text), int(match.group(1)) if match else 1, report)
            touch(run, notify)
    except LightweightFormatError as exc:
        report.error = str(exc)
    return report


def import_file(run: LightweightPyramid, path: Path, notify: bool = True) -> FileReport:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise LightweightFormatError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        text = path.read_text(encoding="utf-8")
    except (LightweightFormatError, UnicodeDecodeError, OSError) as exc:
        return FileReport(str(path), error=str(exc))
    return import_text(run, text, str(path), notify)


def import_folder_lite23(run: LightweightPyramid, folder: Path, notify: bool = True) -> FileReport:
    report = FileReport(str(folder), kind="lite2-3pyramid")
    try:
        data = read_lite23(folder)
        with transaction.atomic():
            import_lite23(run, data, report)
            touch(run, notify)
    except (LightweightFormatError, UnicodeDecodeError, OSError) as exc:
        report.error = str(exc)
    return report


def import_paths(run: LightweightPyramid, paths) -> list[FileReport]:
    """Files, folders of CSV files (recursively, sorted) and Lite2-3Pyramid folders; one
    recomputation of the scores at the end."""
    reports = []
    for path in map(Path, paths):
        if path.is_dir() and is_lite23_folder(path):
            reports.append(import_folder_lite23(run, path, notify=False))
        elif path.is_dir():
            files = sorted(p for p in path.rglob("*.csv") if p.is_file())
            if not files:
                reports.append(FileReport(str(path), error="no .csv file and not a Lite2-3Pyramid folder"))
            reports.extend(import_file(run, p, notify=False) for p in files)
        elif path.is_file():
            reports.append(import_file(run, path, notify=False))
        else:
            reports.append(FileReport(str(path), error="no such file or folder"))
    if any(not r.error for r in reports):
        schedule([run.pk])
    return reports
