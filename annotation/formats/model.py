"""Dataclasses of the DUCView module: pyramids, peer annotations and the import report.

Offsets are 0-based, end-exclusive, in Python code points. ``Part`` offsets index the text of
ONE reference (``Reference.text``); ``PeerPart`` offsets index the peer text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Reference",
    "Part",
    "Contributor",
    "SCU",
    "Pyramid",
    "PeerPart",
    "PeerMatch",
    "PeerAnnotationFile",
    "Repair",
    "Reject",
    "LegacyIssue",
    "Report",
    "NON_MATCHING_LABEL",
]

NON_MATCHING_LABEL = "All non-matching SCUs go here"


@dataclass
class Reference:
    id: str  # last '.'-separated field of the header, e.g. 'A' for 'D0601.M.250.A.A'
    header: str  # the header line as in the file, e.g. 'D0601.M.250.A.A' (' D0701.M.250.A.A')
    text: str  # the summary, without leading/trailing blank lines


@dataclass
class Part:
    reference: str  # Reference.id the span lies in
    start: int
    end: int


@dataclass
class Contributor:
    label: str
    comment: str
    parts: list[Part]
    review: str = field(default="", compare=False)  # why a person should look at it ('': nothing); not content


@dataclass
class SCU:
    uid: int
    label: str
    comment: str
    contributors: list[Contributor]

    @property
    def weight(self) -> int:
        return len(self.contributors)


@dataclass
class Pyramid:
    references: list[Reference]
    scus: list[SCU]
    header_regex: str | None  # the file's startDocumentRegEx (None when it has none)

    def reference(self, ref_id: str) -> Reference:
        for ref in self.references:
            if ref.id == ref_id:
                return ref
        raise KeyError(ref_id)


@dataclass
class PeerPart:
    start: int
    end: int


@dataclass
class PeerMatch:
    scu_uid: int  # 0 for non-matching content
    label: str
    comment: str
    parts: list[PeerPart]  # empty only when the file's parts all lie outside the text (``review`` says so)
    review: str = field(default="", compare=False)  # why a person should look at it ('': nothing); not content


@dataclass
class PeerAnnotationFile:
    pyramid: Pyramid
    text: str
    matches: list[PeerMatch]  # one per contributor under a peerscu uid != 0
    non_matching: list[PeerMatch]  # contributors under peerscu uid 0, each one unit
    score: dict[str, str] | None  # DUCView 1.5 <score> element, None when absent
    peer_scu_comments: dict[int, str] = field(default_factory=dict)  # peerscu comments by uid


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Repair:
    kind: str  # 'label' | 'moved' | 'clipped' | 'kept' (label not found: stored offsets kept)
    #            | 'bad_offsets' | 'missing_label' | 'header_regex' | 'encoding'
    message: str
    scope: str = "pyramid"  # 'pyramid' | 'peer' | 'file'
    scu_uid: int | None = None
    contributor: int | None = None  # 0-based index among the SCU's contributors in the file
    part: int | None = None  # 0-based index among the contributor's parts in the file
    label: str | None = None
    stored: tuple[int, int] | None = None  # offsets as stored (whole text, code points)
    placed: tuple[int, int] | None = None  # offsets used (whole text, code points)


@dataclass(frozen=True)
class Reject:
    kind: str  # 'unplaced' | 'empty_part' | 'outside_references' | 'crosses_references'
    #            'empty_contributor' | 'empty_scu' | 'scu_dropped'
    message: str
    scope: str = "pyramid"
    scu_uid: int | None = None
    contributor: int | None = None
    part: int | None = None
    label: str | None = None
    stored: tuple[int, int] | None = None


@dataclass(frozen=True)
class LegacyIssue:
    kind: str  # 'cross_reference_contributor' | 'same_reference_contributors'
    #            | 'reference_count_mismatch'
    message: str
    scu_uid: int | None = None
    contributors: tuple[int, ...] = ()  # indexes in the parsed SCU's contributor list
    references: tuple[str, ...] = ()


@dataclass
class Report:
    repairs: list[Repair] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    legacy: list[LegacyIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing was repaired or rejected (legacy issues do not count)."""
        return not self.repairs and not self.rejects

    def messages(self) -> list[str]:
        return (
            [f"repaired: {r.message}" for r in self.repairs]
            + [f"rejected: {r.message}" for r in self.rejects]
            + [f"legacy: {r.message}" for r in self.legacy]
        )
