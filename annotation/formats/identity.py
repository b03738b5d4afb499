"""Which topic, peer and annotator a DUCView file is about. File names are hints, not rules.

Files are renamed by the people who pass them on, and every DUC/TAC year named them its own
way, so any name imports. Each of the three comes from the first source that gives it:

* **topic**: the NIST file name (:mod:`annotation.formats.nist_names`; for a ``.pyr`` only when
  its stem is a topic id such as ``D0601``, not a free name such as ``MATTER``), else the
  **content** (the header lines of the embedded pyramid, ``D0601.M.250.A.A``, all naming one
  topic), else the ``topic`` option, else the file stem;
* **peer** (``.pan`` only): the NIST file name, else the ``peer`` option, else the file stem;
* **annotator**: the NIST file name (DUC 2006 names start with the annotator's number: ``114.``
  of ``114.D0631.M.250.D.10.pan``), else the ``annotators`` table (topic, or topic and peer ->
  annotator: :mod:`annotation.formats.annotator_table`), else the ``annotator`` option, else
  nobody (unknown). No other field of a name is read: not the length, not the assessor letter,
  not the model letters of a pyramid's name.

:class:`FileIdentity` says which source gave each value, so the import report can tell. Peer
ids are kept as written (``01``); :func:`~annotation.formats.nist_names.peer_key` compares them.

**When a file is "the same again"** (:func:`same_again`, the one rule every import path applies:
``import_ducview``, ``import_pyramid_set``, the import pages and the API, dataset archives, and
``dedupe_annotations`` for what older imports stored twice): its content equals a stored one's
and its :class:`Origin` agrees. The origin is the annotator (a pyramid's creator) when something
names one, else the file's path as the import read it (:func:`same_origin`): so two annotators'
identical pyramids or annotations are two, and so are two files of one name in two folders of
one import (``alice/D0601.pyr``, ``bob/D0601.pyr`` of a set), while the same file imported again,
with or without an annotator table, in a zip, an archive or on its own, is the one already stored.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from annotation.formats.annotator_table import AnnotatorTable
from annotation.formats.errors import DucViewError
from annotation.formats.model import Pyramid
from annotation.formats.nist_names import looks_like_topic_id, parse_nist_filename

__all__ = [
    "FILE_NAME",
    "CONTENT",
    "OPTION",
    "FILE_STEM",
    "TABLE",
    "Named",
    "NameOptions",
    "FileIdentity",
    "Origin",
    "content_topic",
    "file_stem",
    "identify",
    "origin",
    "same_again",
    "same_origin",
]

FILE_NAME, CONTENT, OPTION, FILE_STEM, TABLE = "file name", "content", "option", "file stem", "annotator table"

_HEADER_TOPIC_RE = re.compile(
    r"\s*(?P<topic>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)\.M\.[0-9]+\.[A-Za-z0-9]+\.[A-Za-z0-9]+\s*", re.ASCII
)
_EXTENSION_RE = re.compile(r"\.(?:pyr|pan|xml)$", re.IGNORECASE)


@dataclass(frozen=True)
class Named:
    value: str
    source: str  # FILE_NAME | CONTENT | OPTION | FILE_STEM


@dataclass(frozen=True)
class NameOptions:
    """What the person importing said (command options); used where the file name says nothing."""

    topic: str | None = None
    annotator: str | None = None
    peer: str | None = None
    annotators: AnnotatorTable | None = None  # who annotated each topic (or peer), where a release says it
    topic_always: bool = False  # ``topic`` is every file's, whatever its name or content say (a pyramid set)


@dataclass(frozen=True)
class FileIdentity:
    topic: Named
    peer: Named | None  # .pan files only
    annotator: Named | None  # None: nobody known
    notes: tuple[str, ...] = ()  # where the sources disagree (the first source wins)


def file_stem(name: str) -> str:
    """The file's base name without its DUCView extension (the whole base name if that leaves
    nothing but blanks)."""
    base = posixpath.basename(name.replace("\\", "/")).strip()
    return _EXTENSION_RE.sub("", base).strip() or base or "unnamed"


def content_topic(pyramid: Pyramid) -> str | None:
    """The topic every reference header names (``D0601.M.250.A.A`` -> ``D0601``), if they agree."""
    topics = set()
    for ref in pyramid.references:
        m = _HEADER_TOPIC_RE.fullmatch(ref.header)
        if m is None:
            return None
        topics.add(m["topic"])
    return topics.pop() if len(topics) == 1 else None


def identify(name: str, kind: str, pyramid: Pyramid, options: NameOptions = NameOptions()) -> FileIdentity:
    """Topic, peer (``kind == 'pan'``) and annotator of a file, each with its source."""
    try:
        nist = parse_nist_filename(name)
    except DucViewError:
        nist = None
    if nist is not None and nist.kind != kind:
        nist = None  # a pyramid's name on a peer annotation, or the other way round
    if nist is not None and kind == "pyr" and not looks_like_topic_id(nist.topic):
        nist = None
    stem = file_stem(name)
    in_content = content_topic(pyramid)
    notes = []
    if options.topic and options.topic_always:
        topic = Named(options.topic, OPTION)
    elif nist is not None:
        topic = Named(nist.topic, FILE_NAME)
        if (
            in_content is not None
            and in_content.lower() != nist.topic.lower()
            and not nist.topic.lower().startswith(in_content.lower() + "-")
        ):
            notes.append(
                f"the file name says topic {nist.topic}, its reference headers say {in_content}: used the file name"
            )
    elif in_content is not None:
        topic = Named(in_content, CONTENT)
    elif options.topic:
        topic = Named(options.topic, OPTION)
    else:
        topic = Named(stem, FILE_STEM)
    peer = None
    if kind == "pan":
        if nist is not None:
            peer = Named(nist.peer, FILE_NAME)
        elif options.peer:
            peer = Named(options.peer, OPTION)
        else:
            peer = Named(stem, FILE_STEM)
    in_table = options.annotators.annotator(topic.value, peer.value if peer else None) if options.annotators else None
    if nist is not None and nist.annotator:
        annotator = Named(nist.annotator, FILE_NAME)
        if in_table is not None and in_table != nist.annotator:
            notes.append(
                f"the file name says annotator {nist.annotator}, the annotator table says {in_table}: used "
                "the file name"
            )
    elif in_table is not None:
        annotator = Named(in_table, TABLE)
    elif options.annotator:
        annotator = Named(options.annotator, OPTION)
    else:
        annotator = None
    return FileIdentity(topic, peer, annotator, tuple(notes))


@dataclass(frozen=True)
class Origin:
    """Where a file, or something an import stored, comes from (:func:`origin`).

    ``annotator``: the username of its annotator (a pyramid's creator), None when nothing names one.
    ``name``: the path of the file it came from, its folders separated by ``/`` (``alice/D0601.pyr``;
    the base name alone where the import saw no folder); ``""`` when it was made in the application
    (no file); None when its file is not its own: the copy of its pyramid that every ``.pan``
    carries is the pyramid the annotator worked on, whatever file that pyramid was imported from."""

    annotator: str | None
    name: str | None


def origin(annotator: str | None, source: str | None, *, own_file: bool = True) -> Origin:
    """The origin of a file named ``source`` (or of what was stored from it: its ``source`` field),
    its folders kept: they tell two files of one name apart. ``own_file=False``: a pyramid read
    from (or stored from) a ``.pan``."""
    parts = [part.strip() for part in (source or "").replace("\\", "/").split("/")]
    return Origin(annotator or None, "/".join(part for part in parts if part not in ("", ".")) if own_file else None)


def same_origin(a: Origin, b: Origin, *, one_import: bool = False) -> bool:
    """Whether two origins can be one: the same annotator when both name one (two annotators'
    files are never one); else the same file, when both came from a file of their own; a
    ``.pan``'s copy of its pyramid agrees with every origin.

    Which file a path names depends on where it was read from. Within one import
    (``one_import``: ``b`` was stored by the import ``a`` belongs to) every path starts at one root,
    a set's folder or a zip's, so the same file is the same path, and two of one name in two
    folders (``alice/D0601.pyr``, ``bob/D0601.pyr``) are two. Across imports the same file comes
    under other folders (the command's, a zip's, a set's root or a dataset archive's layout), so
    it is the same base name."""
    if a.annotator is not None and b.annotator is not None:
        return a.annotator == b.annotator
    if a.name is None or b.name is None:
        return True
    return a.name == b.name if one_import else posixpath.basename(a.name) == posixpath.basename(b.name)


def same_again(a: Origin, a_content, b: Origin, b_content, *, one_import: bool = False) -> bool:
    """Whether a file (``a``) is one already stored (``b``) again: the same content (matches, or a
    pyramid's SCUs, compared as canonical tuples) from the same origin (:func:`same_origin`)."""
    return a_content == b_content and same_origin(a, b, one_import=one_import)
