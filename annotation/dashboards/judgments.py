"""Import judgments of summaries made elsewhere, to meta-evaluate the pyramid score against them.

Two formats:

* a CSV with the header ``topic,summary,metric,value`` (any column order, extra columns ignored);
* NIST's DUC score tables (``2006_modified_scores.txt``, ``2007_modified_scores.txt``), whose
  columns are named in a separate header file (``2006-header.txt``): the ``content`` column becomes
  ``content_responsiveness`` and, on request, ``lingqual1..5`` become ``linguistic_quality_1..5``.
  The 2006 table has an annotator column (D0631 appears twice, once per pyramid annotator) that the
  2007 table lacks: columns are found by name, never by position.

Every row is checked before anything is written, in one transaction. A *malformed* file (a bad
header, a line with too few cells, an empty name, a value that is not a finite number, one key
given two different values) is refused whole: nothing is written and every problem is listed once
with the lines it occurs on. A well-formed file is imported as far as it can be *placed*: a row
naming a topic that is not in the dataset is skipped and counted (a published table covers a
whole year, a dataset often only some of its topics), a row naming a summary its topic does not
hold (a topic imported with only some of its peers), or an id both a peer and a reference of the
topic carry, is left and reported with its reason and lines; the rest is written. A file of which
no row can be placed is refused, with the reasons. Re-importing updates values in place (one
value per topic, summary and metric).
Peer ids are compared as numbers, as the DUCView import does (``01`` = ``1``). A key given twice
with the same value (the two D0631 rows of the 2006 table) is accepted once; with different values
it is an error naming both lines.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.wording import count_noun
from annotation.dashboards.models import Judgment

CSV_COLUMNS = ("topic", "summary", "metric", "value")
DUC_CONTENT = {"content": "content_responsiveness"}
DUC_LINGUISTIC = {f"lingqual{i}": f"linguistic_quality_{i}" for i in range(1, 6)}
DUC_KEYS = ("setid", "peerid")
MAX_NAME = 100  # Judgment.summary / Judgment.metric max_length


@dataclass(frozen=True)
class JudgmentRow:
    """One parsed value and the line it came from (for error messages)."""

    line: int
    topic: str
    summary: str
    metric: str
    value: float


@dataclass
class Parsed:
    """What a parser read: the rows, the bad lines, and empty cells (no judgment, not an error)."""

    rows: list[JudgmentRow] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    empty: int = 0


@dataclass(frozen=True)
class ImportResult:
    source: str
    created: int
    updated: int
    unchanged: int
    duplicates: int  # repeated rows with the same value, accepted once
    empty: int  # empty cells of a DUC table (no judgment given)
    metrics: tuple[str, ...]
    skipped_rows: int = 0  # lines of topics that are not in the dataset
    skipped_topics: tuple[str, ...] = ()
    left_rows: int = 0  # lines of the dataset's topics that could not be placed
    left: tuple[str, ...] = ()  # why, each reason once with its lines (``grouped``)

    @property
    def skipped_text(self) -> str:
        """ "2340 rows of 43 topics not in this dataset skipped (D0701, D0702, ...)"."""
        if not self.skipped_rows:
            return ""
        names = ", ".join(self.skipped_topics[:5]) + (", …" if len(self.skipped_topics) > 5 else "")
        return (
            f"{count_noun(self.skipped_rows, 'row')} of {count_noun(len(self.skipped_topics), 'topic')} not in "
            f"this dataset skipped ({names})"
        )

    @property
    def left_text(self) -> str:
        """ "2 rows not placed: line 4: topic T1 has no peer or reference summary '7'; ..."."""
        if not self.left_rows:
            return ""
        shown = "; ".join(self.left[:10]) + ("; …" if len(self.left) > 10 else "")
        return f"{count_noun(self.left_rows, 'row')} not placed: {shown}"

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {
            "metrics": list(self.metrics),
            "skipped_topics": list(self.skipped_topics),
            "left": list(self.left),
        }


class JudgmentImportError(Exception):
    """The file was rejected; ``errors`` lists every problem once, as ``line N: why`` or
    ``lines N, M, ...: why``. Nothing was written."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        shown = "; ".join(self.errors[:20]) + ("; ..." if len(self.errors) > 20 else "")
        super().__init__(f"{count_noun(len(self.errors), 'problem')}, nothing imported: {shown}")


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError
    return value


def _row(line: int, topic: str, summary: str, metric: str, value: str, errors: list[str]) -> JudgmentRow | None:
    """Check one row's fields; append a message per problem and return None if any."""
    topic, summary, metric, value = (v.strip() for v in (topic, summary, metric, value))
    problems = [f"{name} is empty" for name, v in (("topic", topic), ("summary", summary), ("metric", metric)) if not v]
    problems += [
        f"{name} is longer than {MAX_NAME} characters"
        for name, v in (("summary", summary), ("metric", metric))
        if len(v) > MAX_NAME
    ]
    try:
        number = _number(value)
    except ValueError:
        problems.append(f"value {value!r} is not a finite number")
    if problems:
        errors.append(f"line {line}: " + "; ".join(problems))
        return None
    return JudgmentRow(line, topic, summary, metric, number)


def parse_judgments_csv(text: str) -> Parsed:
    """Rows of a ``topic,summary,metric,value`` CSV; line numbers are physical lines of the file."""
    parsed = Parsed()
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    names = [h.strip().lower() for h in header or []]
    missing = [c for c in CSV_COLUMNS if c not in names]
    if missing:
        parsed.errors.append(
            f"line 1: the header must name the columns {', '.join(CSV_COLUMNS)} (missing: {', '.join(missing)})"
        )
        return parsed
    index = [names.index(c) for c in CSV_COLUMNS]
    for fields in reader:
        line = reader.line_num
        if not any(f.strip() for f in fields):
            continue
        if len(fields) < len(names):
            parsed.errors.append(f"line {line}: {len(fields)} field(s), the header has {len(names)}")
            continue
        row = _row(line, *(fields[i] for i in index), parsed.errors)
        if row:
            parsed.rows.append(row)
    return parsed


def read_duc_header(text: str) -> list[str]:
    """Column names of a DUC score table, lower-cased, from its header file (first non-blank line)."""
    for line in text.splitlines():
        if line.strip():
            return [name.lower() for name in line.split()]
    return []


def duc_metrics(linguistic: bool = False) -> dict[str, str]:
    """DUC column -> metric name imported: content responsiveness, plus the five quality questions."""
    return DUC_CONTENT | (DUC_LINGUISTIC if linguistic else {})


def parse_duc_table(text: str, columns: list[str], *, linguistic: bool = False) -> Parsed:
    """Rows of a DUC score table. Cells are tab-separated; an empty cell is no judgment (DUC 2006
    D0647 has none), counted in ``empty``. Lines without tabs are split on whitespace."""
    parsed = Parsed()
    wanted = {c: m for c, m in duc_metrics(linguistic).items() if c in columns}
    missing = [c for c in (*DUC_KEYS, *duc_metrics(linguistic)) if c not in columns]
    if missing:
        parsed.errors.append(f"header: no column named {', '.join(missing)} (columns: {' '.join(columns)})")
        return parsed
    topic_at, peer_at = (columns.index(c) for c in DUC_KEYS)
    needed = max(columns.index(c) for c in (*DUC_KEYS, *wanted)) + 1
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        cells = [c.strip() for c in (raw.split("\t") if "\t" in raw else raw.split())]
        if len(cells) < needed:
            parsed.errors.append(f"line {line}: {len(cells)} cell(s), expected at least {needed}")
            continue
        for column, metric in wanted.items():
            cell = cells[columns.index(column)]
            if not cell:
                parsed.empty += 1
                continue
            row = _row(line, cells[topic_at], cells[peer_at], metric, cell, parsed.errors)
            if row:
                parsed.rows.append(row)
    return parsed


def _summary_key(external_id: str) -> str:
    """Numeric ids compare as numbers (``01`` = ``1``), as in the DUCView import's peer ids."""
    return str(int(external_id)) if external_id.isdigit() else external_id


def _summaries(topic_ids) -> dict[int, dict[str, str | None]]:
    """topic id -> comparable id -> stored external id; None when a peer and a reference share it."""
    found: dict[int, dict[str, str | None]] = {t: {} for t in topic_ids}
    for model in (PeerSummary, ReferenceSummary):
        for topic_id, external_id in model.objects.filter(topic_id__in=topic_ids).values_list(
            "topic_id", "external_id"
        ):
            key = _summary_key(external_id)
            found[topic_id][key] = None if key in found[topic_id] else external_id
    return found


def _resolve(
    dataset: Dataset,
    rows: list[JudgmentRow],
    errors: list[str],
    left: list[tuple[int, str]],
    skipped: dict[str, set[int]],
) -> tuple[dict[tuple, tuple[float, int]], int]:
    """(topic id, stored summary id, metric) -> (value, line); appends errors (the file contradicts
    itself), rows that cannot be placed to ``left`` (line, why) and the lines of other topics
    to ``skipped``; returns duplicates too."""
    topics = dict(Topic.objects.filter(dataset=dataset).values_list("external_id", "id"))
    summaries = _summaries(topics.values())
    resolved: dict[tuple, tuple[float, int]] = {}
    duplicates = 0
    for row in rows:
        if row.topic not in topics:
            skipped.setdefault(row.topic, set()).add(row.line)
            continue
        known = summaries[topics[row.topic]]
        key = _summary_key(row.summary)
        if key not in known:
            left.append((row.line, f"topic {row.topic} has no peer or reference summary {row.summary!r}"))
            continue
        if known[key] is None:
            left.append((row.line, f"{row.summary!r} names both a peer and a reference of topic {row.topic}"))
            continue
        target = (topics[row.topic], known[key], row.metric)
        if target in resolved:
            value, first = resolved[target]
            if value != row.value:
                errors.append(
                    f"line {row.line}: {row.topic}/{row.summary}/{row.metric} = {row.value:g}, "
                    f"but line {first} gives {value:g}"
                )
            else:
                duplicates += 1
            continue
        resolved[target] = (row.value, row.line)
    return resolved, duplicates


def _write(resolved: dict[tuple, tuple[float, int]], source: str) -> tuple[int, int, int]:
    """Create new judgments and update changed ones in bulk; returns (created, updated, unchanged)."""
    topic_ids = {t for t, _, _ in resolved}
    existing = {(j.topic_id, j.summary, j.metric): j for j in Judgment.objects.filter(topic_id__in=topic_ids)}
    new, changed, unchanged = [], [], 0
    for (topic_id, summary, metric), (value, _) in resolved.items():
        j = existing.get((topic_id, summary, metric))
        if j is None:
            new.append(Judgment(topic_id=topic_id, summary=summary, metric=metric, value=value, source=source))
        elif j.value != value or j.source != source:
            j.value, j.source = value, source
            changed.append(j)
        else:
            unchanged += 1
    Judgment.objects.bulk_create(new, batch_size=500)
    Judgment.objects.bulk_update(changed, ["value", "source"], batch_size=500)
    return len(new), len(changed), unchanged


def _check_cost(dataset: Dataset, resolved: dict[tuple, tuple[float, int]]) -> None:
    """Refuse judgments that would make the dataset's meta-evaluation cost more than the settings
    allow (``METAEVAL_MAX_JUDGMENTS``, ``METAEVAL_MAX_METRICS``): every dashboard recomputation
    correlates each metric, with bootstrap intervals, in the background."""
    stored = set(Judgment.objects.filter(topic__dataset=dataset).values_list("topic_id", "summary", "metric"))
    total = len(stored | resolved.keys())
    metrics = {m for _, _, m in stored} | {m for _, _, m in resolved}
    problems = []
    if total > settings.METAEVAL_MAX_JUDGMENTS:
        problems.append(f"{total:,} judgments (at most {settings.METAEVAL_MAX_JUDGMENTS:,}: METAEVAL_MAX_JUDGMENTS)")
    if len(metrics) > settings.METAEVAL_MAX_METRICS:
        problems.append(f"{len(metrics)} metrics (at most {settings.METAEVAL_MAX_METRICS}: METAEVAL_MAX_METRICS)")
    if problems:
        raise JudgmentImportError(
            [
                f"with this file dataset {dataset.name!r} would hold {' and '.join(problems)}. "
                "Every metric is meta-evaluated, with bootstrap intervals, each time the dashboard is recomputed; "
                "import fewer rows or metrics, or ask the administrator to raise the limits."
            ]
        )


def save_judgments(dataset: Dataset | str, parsed: Parsed, source: str = "") -> ImportResult:
    """Write every row that can be placed (``ImportResult`` says what was skipped or left, and
    why), or raise and write nothing: for a malformed file, and for one of which nothing can be
    placed."""
    if not isinstance(dataset, Dataset):
        found = Dataset.objects.filter(name=dataset).first()
        if found is None:
            raise JudgmentImportError([f"no dataset named {dataset!r}"])
        dataset = found
    errors = list(parsed.errors)
    left: list[tuple[int, str]] = []
    skipped: dict[str, set[int]] = {}
    with transaction.atomic():
        resolved, duplicates = _resolve(dataset, parsed.rows, errors, left, skipped)
        if errors:
            raise JudgmentImportError(grouped(errors))
        if not resolved:
            raise JudgmentImportError(_nothing_placed(dataset, skipped, left))
        _check_cost(dataset, resolved)
        created, updated, unchanged = _write(resolved, source)
    metrics = tuple(sorted({m for _, _, m in resolved}))
    skipped_rows = sum(len(lines) for lines in skipped.values())
    return ImportResult(
        source,
        created,
        updated,
        unchanged,
        duplicates,
        parsed.empty,
        metrics,
        skipped_rows,
        tuple(sorted(skipped)),
        len({line for line, _ in left}),
        tuple(_grouped_left(left)),
    )


def _grouped_left(left: list[tuple[int, str]]) -> list[str]:
    return grouped([f"line {line}: {why}" for line, why in left])


def _nothing_placed(dataset: Dataset, skipped: dict[str, set[int]], left: list[tuple[int, str]]) -> list[str]:
    """Why no row of a well-formed file can be placed: the topics it names that the dataset lacks,
    and the rows of the dataset's topics that name no summary of theirs."""
    reasons = []
    if skipped and not left:
        names = sorted(skipped)
        reasons.append(
            f"none of the file's {count_noun(len(names), 'topic')} ({', '.join(names[:5])}"
            f"{', …' if len(names) > 5 else ''}) is a topic of dataset {dataset.name!r}"
        )
    elif skipped:
        reasons.append(
            f"{count_noun(sum(map(len, skipped.values())), 'row')} of "
            f"{count_noun(len(skipped), 'topic')} not in dataset {dataset.name!r}"
        )
    reasons += _grouped_left(left)
    return reasons or ["the file holds no judgment"]


def grouped(errors: list[str], shown_lines: int = 10) -> list[str]:
    """Each problem once, with the lines it occurs on (``lines 4, 9, 12: why``), in line order
    (problems without a line, such as the header's, first)."""
    lines_of: dict[str, list[int]] = {}
    for message in errors:
        head, sep, why = message.partition(": ")
        if sep and head.startswith("line ") and head[5:].isdigit():
            lines_of.setdefault(why, []).append(int(head[5:]))
        else:
            lines_of.setdefault(message, [])
    out = []
    for why, lines in sorted(lines_of.items(), key=lambda item: min(item[1], default=0)):
        lines = sorted(set(lines))
        if not lines:
            out.append(why)
        elif len(lines) == 1:
            out.append(f"line {lines[0]}: {why}")
        else:
            more = f" and {len(lines) - shown_lines} more" if len(lines) > shown_lines else ""
            out.append(f"lines {', '.join(map(str, lines[:shown_lines]))}{more}: {why}")
    return out


def import_duc_table(
    dataset: Dataset | str, table: str | Path, header: str | Path | None = None, *, linguistic: bool = False
) -> ImportResult:
    """Import a DUC score table; ``header`` defaults to ``<year>-header.txt`` beside
    ``<year>_modified_scores.txt``. Content responsiveness always, linguistic quality on request."""
    table = Path(table)
    header = Path(header) if header else table.with_name(table.name.split("_", 1)[0] + "-header.txt")
    columns = read_duc_header(header.read_text(encoding="utf-8", errors="replace"))
    parsed = parse_duc_table(table.read_text(encoding="utf-8", errors="replace"), columns, linguistic=linguistic)
    return save_judgments(dataset, parsed, table.name)
