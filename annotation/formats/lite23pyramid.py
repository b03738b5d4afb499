"""The Lite2-3Pyramid packaging of a lightweight-pyramid dataset (Zhang & Bansal 2021), read from a folder.

- ``ids.txt``: one document id a line;
- ``SCUs.txt``: that document's statements, tab-separated, one line per document;
- ``summaries/SYSTEM.summary``: one summary a line (document order);
- ``labels/SYSTEM.label``: tab-separated 0/1 per statement of the document (aggregated crowd
  labels: the answers themselves are not released).

Every line count and label count is checked against ``ids.txt`` / ``SCUs.txt``; a mismatch is an
error naming the file and line. Pure Python (pathlib only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.formats.errors import LightweightFormatError

MAX_FILE_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class SystemLabels:
    system: str  # the file stem, e.g. ``abs_bart_out``
    summaries: tuple[str, ...] | None  # one per document, None without a summaries file
    labels: tuple[tuple[bool, ...], ...]  # per document, per statement


@dataclass(frozen=True)
class Lite23Dataset:
    documents: tuple[str, ...]
    statements: tuple[tuple[str, ...], ...]  # per document
    systems: tuple[SystemLabels, ...]


def is_lite23_folder(path: Path) -> bool:
    return (path / "ids.txt").is_file() and (path / "SCUs.txt").is_file() and (path / "labels").is_dir()


def _lines(path: Path) -> list[str]:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise LightweightFormatError(f"{path.name} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def read_lite23(folder: Path) -> Lite23Dataset:
    folder = Path(folder)
    if not is_lite23_folder(folder):
        raise LightweightFormatError(
            f"{folder} is not a Lite2-3Pyramid folder (ids.txt, SCUs.txt and labels/ are required)"
        )
    documents = tuple(line.strip() for line in _lines(folder / "ids.txt"))
    if len(set(documents)) != len(documents) or not all(documents):
        raise LightweightFormatError("ids.txt: every line must be a distinct document id")
    statement_lines = _lines(folder / "SCUs.txt")
    if len(statement_lines) != len(documents):
        raise LightweightFormatError(
            f"SCUs.txt has {len(statement_lines)} lines for {len(documents)} documents in ids.txt"
        )
    statements = tuple(tuple(s.strip() for s in line.split("\t")) for line in statement_lines)
    systems = []
    for label_file in sorted((folder / "labels").glob("*.label")):
        system = label_file.stem
        lines = _lines(label_file)
        if len(lines) != len(documents):
            raise LightweightFormatError(
                f"labels/{label_file.name} has {len(lines)} lines for {len(documents)} documents"
            )
        labels = []
        for n, (line, doc_statements) in enumerate(zip(lines, statements, strict=True), start=1):
            values = line.split("\t")
            if len(values) != len(doc_statements):
                raise LightweightFormatError(
                    f"labels/{label_file.name} line {n}: {len(values)} labels for {len(doc_statements)} statements"
                )
            if any(v not in ("0", "1") for v in values):
                raise LightweightFormatError(f"labels/{label_file.name} line {n}: labels must be 0 or 1")
            labels.append(tuple(v == "1" for v in values))
        summary_file = folder / "summaries" / f"{system}.summary"
        summaries = None
        if summary_file.is_file():
            summaries = tuple(_lines(summary_file))
            if len(summaries) != len(documents):
                raise LightweightFormatError(
                    f"summaries/{summary_file.name} has {len(summaries)} lines for {len(documents)} documents"
                )
        systems.append(SystemLabels(system, summaries, tuple(labels)))
    if not systems:
        raise LightweightFormatError(f"{folder}/labels holds no .label file")
    return Lite23Dataset(documents, statements, tuple(systems))
