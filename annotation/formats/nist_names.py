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
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .errors import DucViewError

__all__ = ["NistName", "parse_nist_filename"]

_TOPIC = r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
_PAN_RE = re.compile(
    rf"(?:(?P<annotator>[0-9]+)\.)?(?P<topic>{_TOPIC})\.M\.(?P<length>[0-9]+)"
    r"\.(?P<assessor>[A-Za-z]+)\.(?P<peer>[A-Za-z0-9]+)\.pan",
    re.ASCII,
)
_PYR_RE = re.compile(
    r"(?P<base>[A-Za-z][A-Za-z0-9]*)(?:-(?P<suffix>[A-Za-z0-9]+))?\.pyr", re.ASCII
)


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
        if self.peer is None:
            return None
        return str(int(self.peer)) if self.peer.isdigit() else self.peer


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
            return NistName(None, m["base"], None, None, None, kind="pyr")
        if len(suffix) >= 2 and suffix.isalpha() and suffix.isupper():
            # D0701-AGHI: the letters of the model summaries the pyramid was built from.
            return NistName(None, m["base"], None, None, None, kind="pyr", models=suffix)
        return NistName(None, f"{m['base']}-{suffix}", None, None, None, kind="pyr")
    raise DucViewError(
        f"{base!r} is not a NIST file name: expected ANNOTATOR.TOPIC.M.LEN.ASSESSOR.PEER.pan, "
        "TOPIC.M.LEN.ASSESSOR.PEER.pan or TOPIC[-MODELS].pyr"
    )
