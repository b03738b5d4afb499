"""Adjudicating two pyramids of the same references: the comparison items and the merge, as pure
functions (no database; the services in ``pyramids.py`` read and write).

A pyramid is given as its SCU states (``pyramids.document_states.scu_states``: uid -> label, comment and
contributors, each with its reference and parts ``[reference, start, end]``), the form the
history app records and applies. The SCUs of the two pyramids are paired by the construction
agreement's alignment (``scoring.pyramid_agreement.align_scus``, computed by the caller: not
reimplemented here). Every SCU of either pyramid is in exactly one item:

- ``matched``: an SCU of A aligned with an SCU of B. They agree when the labels are the same (up
  to white space) and every reference contributes the same parts to both; else the item shows
  which differ (label, and per reference: contributed by one only, or with other parts);
- ``only_a`` / ``only_b``: an SCU without a counterpart.

Agreed items are taken as they are (A's SCU). Each disagreement is decided with one choice:

- ``a`` / ``b``: that pyramid's SCU as it is (for ``only_a`` / ``only_b``: keep it);
- ``union_a`` / ``union_b`` (matched, contributors differ): one SCU with that side's label and a
  contributor from every reference either SCU has one from; where both have one, that side's
  (its weight is then the number of references of either);
- ``both`` (matched): both SCUs, separately;
- ``drop``: neither.

Modelled on INCEpTION's curation: what both annotators did identically is merged as it is,
each disagreement is shown side by side and settled by the curator, and the result is a new
document; the annotators' own stay untouched.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

MATCHED, ONLY_A, ONLY_B = "matched", "only_a", "only_b"
A, B, UNION_A, UNION_B, BOTH, DROP = "a", "b", "union_a", "union_b", "both", "drop"
CHOICE_TEXT = {
    A: "A's SCU",
    B: "B's SCU",
    UNION_A: "A's label, contributors of both",
    UNION_B: "B's label, contributors of both",
    BOTH: "both, separately",
    DROP: "neither",
}

Parts = tuple[tuple[str, int, int], ...]


def _same_label(x: str, y: str) -> bool:
    return " ".join(x.split()) == " ".join(y.split())


def by_reference(state: dict) -> dict[str, list[dict]]:
    """reference -> the contributors of an SCU state from it (one, but for legacy imports)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for c in state["contributors"]:
        out[c["reference"]].append(c)
    return dict(out)


def _parts(contributors: list[dict] | None) -> tuple[Parts, ...] | None:
    if not contributors:
        return None
    return tuple(sorted(tuple(tuple(p) for p in c["parts"]) for c in contributors))


@dataclass(frozen=True)
class ReferenceRow:
    """One reference's contribution to a matched pair: the parts in A and in B (None: none)."""

    reference: str
    a: tuple[Parts, ...] | None
    b: tuple[Parts, ...] | None

    @property
    def same(self) -> bool:
        return self.a == self.b

    @property
    def kind(self) -> str:
        """``same``, ``only_a``, ``only_b`` or ``parts`` (both, other parts)."""
        if self.same:
            return "same"
        if self.b is None:
            return ONLY_A
        if self.a is None:
            return ONLY_B
        return "parts"


@dataclass(frozen=True)
class Item:
    key: str
    kind: str  # matched, only_a, only_b
    uid_a: int | None
    uid_b: int | None
    state_a: dict | None
    state_b: dict | None
    elsewhere: tuple[str, ...] = field(default=())  # notes: content of this SCU the other pyramid put in another SCU

    @property
    def label_a(self) -> str:
        return self.state_a["label"] if self.state_a else ""

    @property
    def label_b(self) -> str:
        return self.state_b["label"] if self.state_b else ""

    @property
    def weight_a(self) -> int | None:
        return len(self.state_a["contributors"]) if self.state_a else None

    @property
    def weight_b(self) -> int | None:
        return len(self.state_b["contributors"]) if self.state_b else None

    @property
    def references(self) -> tuple[ReferenceRow, ...]:
        ra = by_reference(self.state_a) if self.state_a else {}
        rb = by_reference(self.state_b) if self.state_b else {}
        return tuple(ReferenceRow(r, _parts(ra.get(r)), _parts(rb.get(r))) for r in sorted(ra.keys() | rb.keys()))

    @property
    def label_differs(self) -> bool:
        return self.kind == MATCHED and not _same_label(self.label_a, self.label_b)

    @property
    def contributors_differ(self) -> bool:
        return self.kind == MATCHED and not all(r.same for r in self.references)

    @property
    def agreed(self) -> bool:
        return self.kind == MATCHED and not self.label_differs and not self.contributors_differ

    @property
    def differences(self) -> list[str]:
        """What differs, in words (for the page and the record)."""
        if self.kind == ONLY_A:
            return ["only in A"]
        if self.kind == ONLY_B:
            return ["only in B"]
        out = ["label"] if self.label_differs else []
        rows = self.references
        if any(r.kind in (ONLY_A, ONLY_B) for r in rows):
            out.append(
                f"weight {self.weight_a} vs {self.weight_b}"
                if self.weight_a != self.weight_b
                else "contributing references"
            )
        if any(r.kind == "parts" for r in rows):
            out.append("spans")
        return out

    @property
    def choices(self) -> tuple[str, ...]:
        """The decisions this item allows (none when agreed: it is taken as it is)."""
        if self.agreed:
            return ()
        if self.kind == ONLY_A:
            return (A, DROP)
        if self.kind == ONLY_B:
            return (B, DROP)
        out = [A, B]
        if self.contributors_differ:
            out.append(UNION_A)
            # B's label or B's parts make union_b another result than union_a.
            if self.label_differs or any(r.kind == "parts" for r in self.references):
                out.append(UNION_B)
        return (*out, BOTH, DROP)

    def chosen(self, choice: str) -> list[dict]:
        """The SCU states a decision keeps (fresh copies)."""
        if choice not in self.choices and not (self.agreed and choice == A):
            raise ValueError(f"{choice!r} is no decision for {self.key}")
        if choice == DROP:
            return []
        if choice == A:
            return [_copy(self.state_a)]
        if choice == B:
            return [_copy(self.state_b)]
        if choice == BOTH:
            return [_copy(self.state_a), _copy(self.state_b)]
        first, second = (self.state_a, self.state_b) if choice == UNION_A else (self.state_b, self.state_a)
        mine, theirs = by_reference(first), by_reference(second)
        contributors = [c for r in sorted(mine.keys() | theirs.keys()) for c in (mine.get(r) or theirs[r])]
        return [_copy({"label": first["label"], "comment": first["comment"], "contributors": contributors})]


def _copy(state: dict) -> dict:
    return {
        "label": state["label"],
        "comment": state["comment"],
        "contributors": [
            {
                "reference": c["reference"],
                "comment": c["comment"],
                "legacy_issue": c["legacy_issue"],
                "parts": [list(p) for p in c["parts"]],
            }
            for c in state["contributors"]
        ],
    }


def items(
    states_a: dict[int, dict],
    states_b: dict[int, dict],
    matched: list[tuple[int, int]],
    moved: list[tuple[int, int, str]] = (),
) -> list[Item]:
    """Every SCU of A and B in one item: the ``matched`` pairs (uid in A, uid in B), then what
    has no counterpart. ``moved``: aligned contributors whose SCUs are not a matched pair (uid in A,
    uid in B, reference), noted on both items. Ordered heaviest first (the larger weight of the
    pair), then by A's uid, then B's."""
    in_a, in_b = {a for a, _ in matched}, {b for _, b in matched}
    of_a = {a: f"m{a}-{b}" for a, b in matched} | {a: f"a{a}" for a in states_a if a not in in_a}
    of_b = {b: f"m{a}-{b}" for a, b in matched} | {b: f"b{b}" for b in states_b if b not in in_b}
    notes: dict[str, list[str]] = defaultdict(list)
    for ua, ub, reference in moved:
        if of_a.get(ua) != of_b.get(ub):
            notes[of_a[ua]].append(f"{reference}: B has it in SCU {ub} “{states_b[ub]['label']}”")
            notes[of_b[ub]].append(f"{reference}: A has it in SCU {ua} “{states_a[ua]['label']}”")
    out = [Item(of_a[a], MATCHED, a, b, states_a[a], states_b[b]) for a, b in matched]
    out += [Item(of_a[a], ONLY_A, a, None, states_a[a], None) for a in sorted(states_a) if a not in in_a]
    out += [Item(of_b[b], ONLY_B, None, b, None, states_b[b]) for b in sorted(states_b) if b not in in_b]
    out = [Item(i.key, i.kind, i.uid_a, i.uid_b, i.state_a, i.state_b, tuple(notes.get(i.key, ()))) for i in out]
    inf = float("inf")
    return sorted(
        out,
        key=lambda i: (
            -max(i.weight_a or 0, i.weight_b or 0),
            inf if i.uid_a is None else i.uid_a,
            inf if i.uid_b is None else i.uid_b,
        ),
    )


def undecided(all_items: list[Item], decisions: dict[str, str]) -> list[Item]:
    """The disagreements without a valid decision."""
    return [i for i in all_items if not i.agreed and decisions.get(i.key) not in i.choices]


def merge(all_items: list[Item], decisions: dict[str, str]) -> list[tuple[str, dict]]:
    """The adjudicated pyramid: (provenance, SCU state) in item order; provenance is the item key
    (``#2`` appended to the second SCU of ``both``), stable across re-adjudications of the same
    pyramids so that an SCU keeps its uid. Raises ValueError on an undecided disagreement."""
    missing = undecided(all_items, decisions)
    if missing:
        raise ValueError(f"undecided: {', '.join(i.key for i in missing)}")
    out = []
    for item in all_items:
        for n, state in enumerate(item.chosen(A if item.agreed else decisions[item.key])):
            out.append((item.key if n == 0 else f"{item.key}#2", state))
    return out


def assign_uids(provenances: list[str], previous: dict[str, int], last_uid: int) -> tuple[list[int], int]:
    """A uid per merged SCU: the one it had in the previous adjudication (same provenance), else a
    new one above ``last_uid`` (uids are never reused in a pyramid). Returns the uids and the new
    highest uid given out."""
    uids = []
    for key in provenances:
        if key in previous:
            uids.append(previous[key])
        else:
            last_uid += 1
            uids.append(last_uid)
    return uids, last_uid
