"""A table saying who annotated the peers of each topic (or of each peer), read for the releases
that say it outside their file names: DUC 2007 main in ``annotator-table.txt``, other releases in
an annotator column of their score table. (DUC 2006 says it in the file names' leading number,
which ``identity`` reads first; where nothing says it, the annotator is unknown.)

The format, lenient like the real ``annotator-table.txt`` but bounded (``MAX_BYTES``, ``MAX_ROWS``):

* text (UTF-8), one row per line; fields separated by tabs, else commas (CSV quoting allowed),
  else runs of blanks; empty fields are skipped (DUC 2007 writes two tabs in a row); blank lines
  and lines starting with ``#`` are skipped;
* header-less: ``TOPIC ANNOTATOR`` or ``TOPIC PEER ANNOTATOR`` on each line;
* headed: a first line whose first field is ``topic``, naming the columns: ``peer`` (or
  ``summary``, ``system``) if rows are per peer, and the annotator's column, ``annotator`` or
  ``peer-annotator`` (``peer_annotator``); other columns are ignored, so DUC 2007's
  ``Topic  Pyramid-creator  Peer-annotator`` reads as it is.

A topic (or a peer) given two different annotators is an error: one table cannot say that two
people annotated the same peers (DUC 2006 topic D0631), only their files' names can. Every error
names its line.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from annotation.formats.errors import DucViewError
from annotation.formats.nist_names import peer_key

__all__ = ["AnnotatorTable", "parse_annotator_table", "MAX_BYTES", "MAX_ROWS"]

MAX_BYTES = 1024 * 1024
MAX_ROWS = 100_000
MAX_ID = 100  # topic and peer ids (the columns' length)
_ANNOTATOR_RE = re.compile(r"[\w.@+-]{1,150}")  # a user name
_PEER_COLUMNS = {"peer", "summary", "system"}
_ANNOTATOR_COLUMNS = {"annotator", "peer-annotator"}


class AnnotatorTableError(DucViewError):
    """The table cannot be read; the message names the line."""


@dataclass
class AnnotatorTable:
    """Annotators by (topic, peer) and by topic, keys compared case-insensitively (peers as numbers)."""

    by_peer: dict[tuple[str, str], str] = field(default_factory=dict)
    by_topic: dict[str, str] = field(default_factory=dict)

    def annotator(self, topic: str, peer: str | None) -> str | None:
        """Who annotated this peer of this topic, if the table says it (a row for the peer first)."""
        if peer is not None:
            found = self.by_peer.get((topic.lower(), peer_key(peer)))
            if found is not None:
                return found
        return self.by_topic.get(topic.lower())

    def __len__(self) -> int:
        return len(self.by_peer) + len(self.by_topic)


def _fields(line: str) -> list[str]:
    if "\t" in line:
        values = line.split("\t")
    elif "," in line:
        values = next(csv.reader([line]))
    else:
        values = line.split()
    return [v.strip() for v in values if v.strip()]


def _column(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def parse_annotator_table(data: bytes, name: str = "annotator table") -> AnnotatorTable:
    """Read a table (see the module's docstring); :class:`AnnotatorTableError` says what is wrong where."""
    if len(data) > MAX_BYTES:
        raise AnnotatorTableError(f"{name}: {len(data)} bytes, over the limit of {MAX_BYTES}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise AnnotatorTableError(f"{name}: not UTF-8 text (byte {error.start})") from None
    lines = text.splitlines()
    if len(lines) > MAX_ROWS:
        raise AnnotatorTableError(f"{name}: {len(lines)} lines, over the limit of {MAX_ROWS}")
    table, seen = AnnotatorTable(), {}
    columns = None  # (topic, peer or None, annotator) indexes, the number of fields and which line set it
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            values = _fields(line)
        except csv.Error as error:
            raise AnnotatorTableError(f"{name}, line {number}: {error}") from None
        where = f"{name}, line {number}"
        if columns is None and _column(values[0]) == "topic":
            columns = _header(values, where)
            continue
        if columns is None:
            if len(values) not in (2, 3):
                raise AnnotatorTableError(
                    f"{where}: {len(values)} fields; expected TOPIC ANNOTATOR or TOPIC PEER ANNOTATOR "
                    "(or a header line naming the columns: topic, peer, annotator)"
                )
            columns = (0, 1 if len(values) == 3 else None, len(values) - 1, len(values), f"line {number}")
        topic_at, peer_at, annotator_at, width, model = columns
        if len(values) != width:
            raise AnnotatorTableError(f"{where}: {len(values)} fields, where {model} has {width}")
        topic, annotator = values[topic_at], values[annotator_at]
        peer = values[peer_at] if peer_at is not None else None
        for what, value in (("topic", topic), ("peer", peer)):
            if value is not None and len(value) > MAX_ID:
                raise AnnotatorTableError(
                    f"{where}: the {what} id {value[:40]!r}... is longer than {MAX_ID} characters"
                )
        if not _ANNOTATOR_RE.fullmatch(annotator):
            raise AnnotatorTableError(
                f"{where}: {annotator[:60]!r} is not an annotator name (letters, digits and . @ + - _, at most 150)"
            )
        key = (topic.lower(), peer_key(peer)) if peer is not None else topic.lower()
        if key in seen and seen[key][0] != annotator:
            what = f"peer {peer} of topic {topic}" if peer is not None else f"topic {topic}"
            raise AnnotatorTableError(
                f"{where}: {what} is given annotator {annotator}, line {seen[key][1]} gave {seen[key][0]}: "
                "a table names one "
                "annotator per peer (files of two annotators of one peer need names that say who, as "
                "ANNOTATOR.TOPIC...pan)"
            )
        seen[key] = (annotator, number)
        (table.by_peer if peer is not None else table.by_topic)[key] = annotator
    if not len(table):
        raise AnnotatorTableError(f"{name}: no row (TOPIC [PEER] ANNOTATOR)")
    return table


def _header(values: list[str], where: str) -> tuple[int, int | None, int, int, str]:
    names = [_column(v) for v in values]
    peer = next((i for i, n in enumerate(names) if n in _PEER_COLUMNS), None)
    annotator = next((i for i, n in enumerate(names) if n in _ANNOTATOR_COLUMNS), None)
    if annotator is None:
        raise AnnotatorTableError(
            f"{where}: the header names no annotator column (annotator or peer-annotator): {', '.join(values)}"
        )
    return 0, peer, annotator, len(values), "the header"
