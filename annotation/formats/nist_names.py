"""NIST (DUC/TAC) file names of peer annotations (.pan) and pyramids (.pyr).

Peer annotations::

    ANNOTATOR.TOPIC.M.LEN.ASSESSOR.PEER.pan   e.g. 100.D0601.M.250.A.1.pan   (DUC 2006)
    TOPIC.M.LEN.ASSESSOR.PEER.pan             e.g. D0701.M.250.A.13.pan      (DUC 2007)

``TOPIC`` may contain ``-`` (``D0703-A``, update-task clusters). ``PEER`` is kept as written:
DUC 2006 topic D0647 names its peers ``01``, ``02``... where every other topic writes ``1``,
``2``...; :attr:`NistName.peer_key` gives the comparable form (``'01'`` -> ``'1'``).

Pyramids::

    D0601.pyr          topic D0601
    D0701-AGHI.pyr     topic D0701, built from the models A, G, H and I
    D0703-A.pyr        topic D0703-A (a single letter after '-' belongs to the topic id)
    D0703-A.BCDE.pyr   topic D0703-A, models B, C, D and E
    D0801-A.M.100.A.pyr  topic D0801-A (the fields after the topic as in a summary's name)

Topic ids of other years keep their suffixes (``d311i`` in DUC 2005, ``D0801-A`` in TAC).
:func:`looks_like_topic_id` tells whether a pyramid's name is such an id (``D0601``) or just a
name someone gave the file (``MATTER``): the importer then prefers the file's content.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from annotation.formats.errors import DucViewError

__all__ = ["NistName", "looks_like_topic_id", "parse_nist_filename", "peer_key"]

_TOPIC = r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
_PAN_RE = re.compile(
    rf"(?:(?P<annotator>[0-9]+)\.)?(?P<topic>{_TOPIC})\.M\.(?P<length>[0-9]+)"
    r"\.(?P<assessor>[A-Za-z]+)\.(?P<peer>[A-Za-z0-9]+)\.pan",
    re.ASCII,
)
_PYR_RE = re.compile(
    r"(?P<base>[A-Za-z][A-Za-z0-9]*)(?:-(?P<suffix>[A-Za-z0-9]+))?"
    r"(?:\.(?P<models>[A-Z]{2,})|\.M\.[0-9]+(?:\.[A-Za-z0-9]+){0,2})?\.pyr",
    re.ASCII,
)
_TOPIC_ID_RE = re.compile(r"[A-Za-z]{1,3}[0-9]{3,}[A-Za-z]{0,3}(?:-[A-Za-z0-9]{1,4})?", re.ASCII)


def looks_like_topic_id(topic: str) -> bool:
    """A DUC/TAC topic id (``D0601``, ``d311i``, ``D0703-A``, ``T0001``), not a free name."""
    return _TOPIC_ID_RE.fullmatch(topic) is not None


def peer_key(peer: str) -> str:
    """A peer id in comparable form: without leading zeros (``'01'`` -> ``'1'``, ``'A'`` -> ``'A'``)."""
    return str(int(peer)) if peer.isascii() and peer.isdigit() else peer


@dataclass(frozen=True)
class NistName:
    """Fields of a NIST file name. For a pyramid (``kind == 'pyr'``) ``length``, ``assessor``
    and ``peer`` are ``None`` and ``models`` holds the model letters when the name lists them."""

    annotator: str | None
    topic: str
    length: str | None
    assessor: str | None
    peer: str | None
    kind: str = "pan"
    models: str | None = None

    @property
    def peer_key(self) -> str | None:
        """The peer id without leading zeros (``'01'`` -> ``'1'``, ``'A'`` -> ``'A'``)."""
        return None if self.peer is None else peer_key(self.peer)


def parse_nist_filename(name: str) -> NistName:
    """Parse a NIST .pan or .pyr file name (a path is accepted: only its last component counts).

    Raises :class:`DucViewError` for any other name.
    """
    if not isinstance(name, str):
        raise DucViewError(f"file name must be a string, not {type(name).__name__}")
    base = os.path.basename(name.replace("\\", "/"))
    m = _PAN_RE.fullmatch(base)
    if m:
        return NistName(
            annotator=m["annotator"],
            topic=m["topic"],
            length=m["length"],
            assessor=m["assessor"],
            peer=m["peer"],
            kind="pan",
        )
    m = _PYR_RE.fullmatch(base)
    if m:
        suffix = m["suffix"]
        if suffix is None:
            return NistName(None, m["base"], None, None, None, kind="pyr", models=m["models"])
        if len(suffix) >= 2 and suffix.isalpha() and suffix.isupper():
            # D0701-AGHI: the letters of the model summaries the pyramid was built from.
            return NistName(None, m["base"], None, None, None, kind="pyr", models=suffix)
        return NistName(None, f"{m['base']}-{suffix}", None, None, None, kind="pyr", models=m["models"])
    raise DucViewError(
        f"{base!r} is not a NIST file name: expected ANNOTATOR.TOPIC.M.LEN.ASSESSOR.PEER.pan, "
        "TOPIC.M.LEN.ASSESSOR.PEER.pan or TOPIC[-MODELS].pyr"
    )
