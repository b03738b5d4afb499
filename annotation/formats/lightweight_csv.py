"""Lightweight-pyramid CSV files, as LitePyramids, REALSumm and Amazon Mechanical Turk write them.

- Statement datasets (LitePyramids ``Phase1_SCU_writing/dataset``, REALSumm ``SCUs_list.csv``):
  ``eventId,questionId,questionText,answer,author,sourceSummaryId,forUse``. The key is
  (eventId, questionId): in DUC 2006 ``questionId`` restarts within a file.
- Phase 1 (statement writing) input ``eventId,summId,summary_text``; MTurk results add
  ``Input.*``, ``Answer.s1..s8`` and MTurk's own columns (``WorkerId``, ``AssignmentId``, ...).
- Phase 2 (judging) input ``eventId,summaryId,qIdList,summary_text,statement_1..16``; MTurk results
  add ``Answer.S{k}Answer`` (``p``, ``n`` or blank) answering the k-th id of ``Input.qIdList`` (a
  Python list literal with single quotes). REALSumm's release: no worker ids, statements ``BLANK``
  padding a task to 16 (to be ignored, wherever they sit), a trailing empty header column.

Pure Python: text in, dataclasses out (and back). Bounded: at most ``MAX_ROWS`` rows per file and
16 statements per task; errors name the row.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from annotation.formats import csv_cells
from annotation.formats.errors import LightweightFormatError

MAX_ROWS = 200_000
MAX_STATEMENTS_PER_TASK = 16
PHASE1_STATEMENTS = 8
BLANK_STATEMENT = "BLANK"
PHASE2_INPUT_COLUMNS = ("eventId", "summaryId", "qIdList", "summary_text") + tuple(
    f"statement_{k}" for k in range(1, MAX_STATEMENTS_PER_TASK + 1)
)
_ANSWERS = {"p": True, "n": False, "": None}


@dataclass(frozen=True)
class StatementRow:
    event: str
    question: str
    text: str
    answer: str
    author: str
    source: str
    for_use: bool

    @property
    def is_blank(self) -> bool:
        return self.text.strip() == BLANK_STATEMENT


@dataclass(frozen=True)
class Phase1Result:
    event: str
    summary: str
    summary_text: str
    worker: str
    assignment: str
    statements: tuple[str, ...]  # as written, empty ones included (the filters drop them)


@dataclass(frozen=True)
class Phase2Task:
    """One judging task: a peer summary and its statements (ids and texts, BLANK padding removed)."""

    event: str
    summary: str
    summary_text: str
    statements: tuple[tuple[str, str], ...]  # (question id, text) in task order


@dataclass(frozen=True)
class Phase2Result:
    task: Phase2Task
    worker: str | None
    assignment: str  # MTurk's AssignmentId, else a content key (see ``_content_key``)
    answers: tuple[tuple[str, bool | None], ...]  # (question id, present / absent / blank)
    row: int


def _reader(text: str) -> tuple[list[str], list[dict]]:
    if text.startswith("\ufeff"):
        text = text[1:]
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h for h in (reader.fieldnames or []) if h]  # a trailing empty column is ignored
    rows = []
    for row in reader:
        if len(rows) >= MAX_ROWS:
            raise LightweightFormatError(f"more than {MAX_ROWS} rows: split the file")
        rows.append(row)
    return header, rows


def _need(header: list[str], columns, what: str) -> None:
    missing = [c for c in columns if c not in header]
    if missing:
        raise LightweightFormatError(f"not a {what}: missing column(s) {', '.join(missing)}")


def _cell(row: dict, key: str) -> str:
    value = row.get(key)
    return "" if value is None else str(value)


def read_statements(text: str) -> list[StatementRow]:
    """A LitePyramids statement dataset (or REALSumm's SCU list). ``forUse`` defaults to 1."""
    header, rows = _reader(text)
    _need(header, ("eventId", "questionId", "questionText"), "statement file")
    out, seen = [], set()
    for n, row in enumerate(rows, start=2):
        event, question = _cell(row, "eventId").strip(), _cell(row, "questionId").strip()
        if not event or not question:
            raise LightweightFormatError(f"row {n}: eventId and questionId are required")
        if (event, question) in seen:
            raise LightweightFormatError(f"row {n}: statement {question} of {event} appears twice")
        seen.add((event, question))
        for_use = _cell(row, "forUse").strip()
        if for_use not in ("", "0", "1"):
            raise LightweightFormatError(f"row {n}: forUse must be 0 or 1, not {for_use!r}")
        out.append(
            StatementRow(
                event,
                question,
                _cell(row, "questionText").strip(),
                _cell(row, "answer").strip(),
                _cell(row, "author").strip(),
                _cell(row, "sourceSummaryId").strip(),
                for_use != "0",
            )
        )
    return out


def read_phase1_results(text: str) -> list[Phase1Result]:
    """MTurk Phase-1 results: one assignment (a worker's 8 statements about one reference) per row."""
    header, rows = _reader(text)
    _need(header, ("Input.eventId", "Input.summId"), "Phase-1 results file")
    answer_columns = [f"Answer.s{k}" for k in range(1, PHASE1_STATEMENTS + 1) if f"Answer.s{k}" in header]
    if not answer_columns:
        raise LightweightFormatError("not a Phase-1 results file: no Answer.s1..s8 columns")
    out = []
    for n, row in enumerate(rows, start=2):
        out.append(
            Phase1Result(
                _cell(row, "Input.eventId").strip(),
                _cell(row, "Input.summId").strip(),
                _cell(row, "Input.summary_text"),
                _cell(row, "WorkerId").strip(),
                _cell(row, "AssignmentId").strip() or f"row-{n}",
                tuple(_cell(row, c).strip() for c in answer_columns),
            )
        )
    return out


def parse_qid_list(value: str, row: int) -> list[str]:
    """``Input.qIdList``: a Python list literal (``['928', '929']``); JSON lists are accepted too."""
    value = value.strip()
    if len(value) > 4000:
        raise LightweightFormatError(f"row {row}: qIdList is too long")
    ids = _literal_ids(value)
    if ids is None:
        raise LightweightFormatError(f"row {row}: qIdList is not a list of statement ids: {value[:60]!r}")
    if len(ids) > MAX_STATEMENTS_PER_TASK:
        raise LightweightFormatError(
            f"row {row}: a task has at most {MAX_STATEMENTS_PER_TASK} statements, qIdList lists {len(ids)}"
        )
    return list(ids)


@lru_cache(maxsize=4096)
def _literal_ids(value: str) -> tuple[str, ...] | None:
    """The ids of a list literal, None if it is not one (cached: every assignment of a task repeats it)."""
    try:
        ids = ast.literal_eval(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, (str, int)) for i in ids):
        return None
    return tuple(str(i).strip() for i in ids)


def _content_key(task: Phase2Task, answers, occurrence: int) -> str:
    """An assignment id for files without MTurk's AssignmentId: the task, the answers and which
    identical row of the file this is. Re-importing the file gives the same keys (nothing twice)."""
    digest = hashlib.sha1(repr((task.event, task.summary, task.statements, answers)).encode()).hexdigest()[:20]
    return f"{digest}-{occurrence}"


def read_phase2_results(text: str) -> list[Phase2Result]:
    """MTurk / REALSumm Phase-2 results: one assignment per row.

    ``Answer.S{k}Answer`` answers the k-th id of ``Input.qIdList``; positions whose statement is
    ``BLANK`` (or empty, with no id) are dropped. An answer other than ``p``, ``n`` or blank is an error.
    """
    header, rows = _reader(text)
    _need(header, ("Input.eventId", "Input.summaryId", "Input.qIdList"), "Phase-2 results file")
    out: list[Phase2Result] = []
    occurrences: Counter = Counter()
    for n, row in enumerate(rows, start=2):
        event, summary = _cell(row, "Input.eventId").strip(), _cell(row, "Input.summaryId").strip()
        if not event or not summary:
            raise LightweightFormatError(f"row {n}: Input.eventId and Input.summaryId are required")
        qids = parse_qid_list(_cell(row, "Input.qIdList"), n)
        statements, answers = [], []
        for k, qid in enumerate(qids, start=1):
            text_k = _cell(row, f"Input.statement_{k}").strip()
            if text_k == BLANK_STATEMENT:
                continue
            raw = _cell(row, f"Answer.S{k}Answer").strip().lower()
            if raw not in _ANSWERS:
                raise LightweightFormatError(f"row {n}: answer {k} is {raw[:20]!r}; expected p, n or blank")
            statements.append((qid, text_k))
            answers.append((qid, _ANSWERS[raw]))
        if len(set(q for q, _ in statements)) != len(statements):
            raise LightweightFormatError(f"row {n}: qIdList names a statement twice")
        task = Phase2Task(event, summary, _cell(row, "Input.summary_text"), tuple(statements))
        answers_t = tuple(answers)
        assignment = _cell(row, "AssignmentId").strip()
        if not assignment:
            key = (task, answers_t)
            occurrences[key] += 1
            assignment = _content_key(task, answers_t, occurrences[key])
        out.append(Phase2Result(task, _cell(row, "WorkerId").strip() or None, assignment, answers_t, n))
    return out


def _write(columns, rows) -> str:
    """CSV text; user text that a spreadsheet would run as a formula is neutralised (``csv_cells``)."""
    buffer = io.StringIO()
    writer = csv_cells.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def format_qid_list(ids) -> str:
    """``['1', '2']``: MTurk templates and the released scripts read the Python literal."""
    return repr([str(i) for i in ids])


def write_phase2_input(tasks: list[Phase2Task]) -> str:
    """The MTurk batch file for judging: one row per task, statements past the task's own empty."""
    rows = []
    for task in tasks:
        if len(task.statements) > MAX_STATEMENTS_PER_TASK:
            raise LightweightFormatError(
                f"task {task.event}/{task.summary} has more than {MAX_STATEMENTS_PER_TASK} statements"
            )
        texts = [t for _, t in task.statements]
        texts += [""] * (MAX_STATEMENTS_PER_TASK - len(texts))
        rows.append(
            [task.event, task.summary, format_qid_list(q for q, _ in task.statements), task.summary_text, *texts]
        )
    return _write(PHASE2_INPUT_COLUMNS, rows)


MAX_CODE_CHARS = 64
MAX_WORKER_CHARS = 100
# Columns of the platforms' submission lists: MTurk's batch results (the external question posts
# the completion code as ``surveycode``; survey-link HITs name the field after their template) and
# Prolific's submissions export.
_WORKER_COLUMNS = ("WorkerId", "Participant id", "participant_id", "PROLIFIC_PID")
_CODE_COLUMNS = ("Answer.surveycode", "Answer.surveyCode", "Completion code", "completion_code")


def read_code_pairs(text: str) -> list[tuple[str, str]]:
    """(worker id, completion code) pairs from a platform's submissions: MTurk's batch results CSV
    (``WorkerId`` and ``Answer.surveycode``, or the one other ``Answer.*code*`` column), Prolific's
    export (``Participant id``, ``Completion code``), or a pasted list of two columns (a worker and
    a code per line, separated by a tab, a comma, a semicolon or spaces). Bounded: ``MAX_ROWS``
    lines, ids of ``MAX_WORKER_CHARS`` and codes of ``MAX_CODE_CHARS`` characters at most;
    errors name the line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    first = text.split("\n", 1)[0]
    if any(column in first for column in _WORKER_COLUMNS):
        header, rows = _reader(text)
        worker = next((c for c in _WORKER_COLUMNS if c in header), None)
        code = next((c for c in _CODE_COLUMNS if c in header), None) or _only_code_column(header)
        pairs = [(_cell(row, worker).strip(), _cell(row, code).strip()) for row in rows]
        start = 2
    else:
        pairs, start = [], 1
        for n, line in enumerate(text.splitlines(), start=1):
            if n > MAX_ROWS:
                raise LightweightFormatError(f"more than {MAX_ROWS} lines: split the list")
            fields = [f.strip().strip('"') for f in _PAIR_SEPARATORS.split(line.strip())] if line.strip() else []
            if not fields:
                pairs.append(("", ""))  # skipped below, but keeps line numbers right
                continue
            if len(fields) != 2:
                raise LightweightFormatError(
                    f"line {n}: expected a worker id and a completion code, found {len(fields)} field(s)"
                )
            pairs.append((fields[0], fields[1]))
        if pairs and "code" in pairs[0][1].lower():  # a header line ("worker,code")
            pairs[0] = ("", "")
    out = []
    for n, (worker, code) in enumerate(pairs, start=start):
        if not worker and not code:
            continue
        if not worker or not code:
            raise LightweightFormatError(f"line {n}: the {'worker id' if not worker else 'completion code'} is empty")
        if len(worker) > MAX_WORKER_CHARS or len(code) > MAX_CODE_CHARS:
            raise LightweightFormatError(
                f"line {n}: a worker id has at most {MAX_WORKER_CHARS} characters "
                f"and a completion code at most {MAX_CODE_CHARS}"
            )
        out.append((worker, code))
    if not out:
        raise LightweightFormatError("no (worker id, completion code) pair found")
    return out


_PAIR_SEPARATORS = re.compile(r"\s*[\t,;]\s*|\s+")


def _only_code_column(header: list[str]) -> str:
    codes = [c for c in header if c.startswith("Answer.") and "code" in c.lower()]
    if len(codes) != 1:
        raise LightweightFormatError(
            "not a submissions list: no Answer.surveycode column (or several Answer.*code* columns)"
            if not codes
            else f"several completion code columns ({', '.join(codes)}): keep one"
        )
    return codes[0]
