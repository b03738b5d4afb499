"""Input model of the scoring core: pyramids and peer annotations as plain frozen values.

Why a separate model: the Django models, the DUCView importer and the scoring code must agree on a
tiny, text-free description of a pyramid (which reference summaries each contributor lies in) and of
an annotation (which SCUs a peer expresses, how often). Scoring never needs spans or labels, and
keeping this module free of Django lets the scores be tested and reproduced on their own.

Legacy data. The DUCView rules say an SCU has at most one contributor per reference summary and a
contributor lies in exactly one reference. A few DUC SCUs break them (see
``docs/ducview-format.md``): a contributor whose parts lie in two references (DUC 2006 D0631 SCU
237) and SCUs with two contributors from the same reference (five in DUC 2007). The model stores
such data as it stands; each :class:`Convention` decides how to weigh it (see :meth:`Pyramid.weight`
and :meth:`Pyramid.as_sacrerouge`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType


class Convention(StrEnum):
    """How weights and the average SCU count Xa are computed.

    ``NIST``: the DUC/TAC official scores (and DUCView). Weight = number of contributors as they
    stand; Xa = mean SCU count of the references rounded half up.

    ``SACREROUGE``: the ``pyramid-score`` metric of SacreROUGE (Deutsch & Roth), reproduced
    exactly. Its pyramid reader (``sacrerouge/data/pyramid.py``, ``Pyramid._load_scus``) skips every
    contributor whose parts lie in more than one reference, then skips every SCU left without
    contributors and every SCU with two contributors from the same reference; weight = number of
    distinct references among the remaining contributors; Xa = ceiling of the mean
    (``sacrerouge/metrics/pyramid_score.py``, ``PyramidScore.score``).
    """

    NIST = "nist"
    SACREROUGE = "sacrerouge"


@dataclass(frozen=True)
class Contributor:
    """The words of one reference summary expressing an SCU; only where they lie matters here.

    ``references`` normally holds exactly one reference id. Legacy DUC data has contributors whose
    parts lie in two references: they are kept as they are (never silently repaired).
    """

    references: frozenset[str]

    def __post_init__(self) -> None:
        refs = frozenset(self.references)
        if not refs:
            raise ValueError("a contributor must lie in at least one reference summary")
        if not all(isinstance(r, str) for r in refs):
            raise TypeError("reference ids must be strings")
        object.__setattr__(self, "references", refs)

    @classmethod
    def of(cls, *references: str) -> Contributor:
        """``Contributor.of("A")``; ``Contributor.of("A", "B")`` for a cross-reference one."""
        return cls(frozenset(references))

    @property
    def is_regular(self) -> bool:
        """True when the contributor lies in exactly one reference (the DUCView rule)."""
        return len(self.references) == 1


@dataclass(frozen=True)
class SCU:
    """A summary content unit: an id and its contributors (labels are irrelevant to scoring)."""

    uid: int
    contributors: tuple[Contributor, ...]

    def __post_init__(self) -> None:
        if isinstance(self.uid, bool) or not isinstance(self.uid, int):
            raise TypeError(f"SCU uid must be an int, got {self.uid!r}")
        object.__setattr__(self, "contributors", tuple(self.contributors))


def _nist_weight(scu: SCU) -> int:
    return len(scu.contributors)


def _sacrerouge_kept_contributors(scu: SCU) -> tuple[Contributor, ...] | None:
    """The contributors SacreROUGE keeps for this SCU, or None if it drops the whole SCU.

    Mirrors ``Pyramid._load_scus`` in ``sacrerouge/data/pyramid.py``: (1) a contributor whose parts
    lie in several summaries is skipped; (2) an SCU with no contributor left is skipped; (3) an SCU
    whose remaining contributors do not lie in pairwise distinct summaries is skipped entirely.
    """
    kept = tuple(c for c in scu.contributors if c.is_regular)
    if not kept:
        return None
    refs = [next(iter(c.references)) for c in kept]
    if len(set(refs)) != len(refs):
        return None
    return kept


def _sacrerouge_weight(scu: SCU) -> int:
    kept = _sacrerouge_kept_contributors(scu)
    return 0 if kept is None else len({r for c in kept for r in c.references})


_WEIGHT = {Convention.NIST: _nist_weight, Convention.SACREROUGE: _sacrerouge_weight}


@dataclass(frozen=True)
class Pyramid:
    """A pyramid: the ids of ALL its reference summaries (n = len) and its SCUs.

    ``references`` matters on its own: a reference that shares no SCU still counts in n, the
    denominator of the average SCU count Xa.
    """

    references: tuple[str, ...]
    scus: tuple[SCU, ...]

    def __post_init__(self) -> None:
        refs = tuple(self.references)
        scus = tuple(self.scus)
        if len(set(refs)) != len(refs):
            raise ValueError(f"duplicate reference ids in {refs!r}")
        uids = [s.uid for s in scus]
        if len(set(uids)) != len(uids):
            dupes = sorted({u for u in uids if uids.count(u) > 1})
            raise ValueError(f"duplicate SCU uids: {dupes}")
        known = set(refs)
        for scu in scus:
            for c in scu.contributors:
                unknown = c.references - known
                if unknown:
                    raise ValueError(f"SCU {scu.uid} has a contributor in unknown reference(s) {sorted(unknown)}")
        object.__setattr__(self, "references", refs)
        object.__setattr__(self, "scus", scus)

    @classmethod
    def of(
        cls,
        references: Iterable[str],
        scus: Mapping[int, Iterable[str | Iterable[str]]],
    ) -> Pyramid:
        """Compact constructor: ``Pyramid.of("ABCD", {1: ["A", "B"], 2: [("A", "C")]})``.

        Each SCU maps to its contributors; a contributor is a reference id or, for a legacy
        cross-reference contributor, an iterable of reference ids.
        """
        built = []
        for uid, contribs in scus.items():
            cs = tuple(Contributor(frozenset([c]) if isinstance(c, str) else frozenset(c)) for c in contribs)
            built.append(SCU(uid, cs))
        return cls(tuple(references), tuple(built))

    @property
    def n(self) -> int:
        """Number of reference summaries the pyramid was built from."""
        return len(self.references)

    def scu(self, uid: int) -> SCU:
        for s in self.scus:
            if s.uid == uid:
                return s
        raise KeyError(uid)

    def weight(self, scu: SCU, convention: Convention = Convention.NIST) -> int:
        """Weight of ``scu`` under ``convention``.

        NIST: the number of contributors as they stand (a cross-reference contributor counts once,
        two contributors from one reference count twice), as the official DUC scores do.
        SACREROUGE: the number of distinct references among the contributors SacreROUGE keeps;
        0 when SacreROUGE drops the SCU altogether (it then takes no part in any score).
        """
        return _WEIGHT[Convention(convention)](scu)

    def weights(self, convention: Convention = Convention.NIST) -> dict[int, int]:
        """uid -> weight for every SCU that takes part in scoring (weight >= 1)."""
        weight = _WEIGHT[Convention(convention)]  # chosen once, not per SCU (dashboards call this thousands of times)
        return {s.uid: w for s in self.scus if (w := weight(s)) > 0}

    def as_sacrerouge(self) -> Pyramid:
        """The pyramid as SacreROUGE's reader would load it (legacy contributors/SCUs removed).

        Needed because SacreROUGE filters BEFORE it removes a reference for jackknifing or for
        scoring a reference: removing a reference first could turn a cross-reference contributor
        into a regular one and change the result.
        """
        scus = []
        for s in self.scus:
            kept = _sacrerouge_kept_contributors(s)
            if kept is not None:
                scus.append(_derived(SCU, uid=s.uid, contributors=kept))
        return _derived(Pyramid, references=self.references, scus=tuple(scus))

    def without_reference(self, ref_id: str) -> Pyramid:
        """The pyramid of the other n-1 references.

        That reference's contributors go, and SCUs left with no contributor go. A legacy contributor
        lying in ``ref_id`` and another reference keeps its parts in the other reference (it only
        loses ``ref_id``): the text still expresses the SCU there.
        """
        if ref_id not in self.references:
            raise ValueError(f"{ref_id!r} is not a reference of this pyramid")
        return self.restricted_to([r for r in self.references if r != ref_id])

    def restricted_to(self, keep: Iterable[str]) -> Pyramid:
        """The pyramid of the references in ``keep`` (the others removed as by ``without_reference``)."""
        kept = frozenset(keep)
        unknown = kept - set(self.references)
        if unknown:
            raise ValueError(f"{sorted(unknown)} are not references of this pyramid")
        scus = []
        for s in self.scus:
            contribs = tuple(
                c if c.references <= kept else _derived(Contributor, references=c.references & kept)
                for c in s.contributors
                if c.references & kept
            )
            if contribs:
                unchanged = len(contribs) == len(s.contributors) and all(
                    a is b for a, b in zip(contribs, s.contributors, strict=True)
                )
                scus.append(s if unchanged else _derived(SCU, uid=s.uid, contributors=contribs))
        return _derived(Pyramid, references=tuple(r for r in self.references if r in kept), scus=tuple(scus))


def _derived(cls, **fields):
    """An instance of a frozen model class built from parts of a valid one (a subset of its SCUs,
    contributors or references), which is valid by construction: the checks of ``__post_init__``
    are skipped, as they cost more than the derivation itself when a jackknife builds n pyramids."""
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


@dataclass(frozen=True)
class PeerAnnotation:
    """What an annotator found in one summary: SCU uid -> times found (>= 1), and the content
    units that match no SCU. Two spans for the same SCU = one match plus one repetition.
    """

    matches: Mapping[int, int] = field(default_factory=dict)
    non_matching: int = 0

    def __post_init__(self) -> None:
        matches = dict(self.matches)
        for uid, count in matches.items():
            if isinstance(uid, bool) or not isinstance(uid, int):
                raise TypeError(f"SCU uid must be an int, got {uid!r}")
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"SCU {uid}: count must be an int >= 1, got {count!r}")
        if isinstance(self.non_matching, bool) or not isinstance(self.non_matching, int) or self.non_matching < 0:
            raise ValueError(f"non_matching must be an int >= 0, got {self.non_matching!r}")
        object.__setattr__(self, "matches", MappingProxyType(matches))

    def __hash__(self) -> int:
        return hash((frozenset(self.matches.items()), self.non_matching))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PeerAnnotation):
            return NotImplemented
        return dict(self.matches) == dict(other.matches) and self.non_matching == other.non_matching

    @classmethod
    def of(cls, uids: Iterable[int] = (), non_matching: int = 0) -> PeerAnnotation:
        """From a list of found uids, one entry per span: ``of([1, 1, 2])`` = 1 twice, 2 once."""
        counts: dict[int, int] = {}
        for u in uids:
            counts[u] = counts.get(u, 0) + 1
        return cls(counts, non_matching)
