"""Benchmark: a robot rebuilds the experts' pyramids in the pyramid builder, in headless Debian Chromium
(prints numbers; not a test).

Issue 30: the cost of the expert's first job, measured as the peer annotator's is
(bench/reproduce_expert.py). For each expert pyramid of a sample (``--pyramids`` topics spread
evenly over the release's sorted topic ids, as the peer bench spreads them), the robot is given the
expert's ``.pyr`` (imported by the project's own importer into a throw-away database) and rebuilds
it from the topic's reference texts in the builder (frontend/static/frontend/js/builder.js), the
fastest way a person could with the builder's real keys and mouse:

- it opens its assignment with the home page's Start (a page load: the builder, no SCU yet);
- **quick building** (the default, ``--flow quick``): it turns the builder's quick building on with
  **Q** when it is off (remembered in the browser: once a run), so that a drag makes a new SCU at
  once; and **W** (the texts side by side, one column each, the SCU list hidden; ``--list`` keeps the
  list beside two columns of texts); per expert SCU, down the page across the columns (``place``;
  ``--order texts``: reference by reference in the texts' order), a **drag** over the
  first part of its first contributor (a new SCU, labelled with the text: nobody types a label, its
  contributor selected), a **Shift+drag** per further part, then per other contributor a
  **Ctrl+drag** (added to the selected SCU, and selected) and a Shift+drag per further part: one
  gesture per part. The proposals are read and accepted as below, when that spares actions;
- ``--flow keys``, the builder's flow before quick building: per expert SCU, in the same order, a
  mouse drag over the first part of a continuous contributor (the SCU's first in the texts when all
  are discontinuous), then
  **N** (a new SCU: its label is the selected text, and the label field opens; the next drag closes
  it, keeping that label: nobody types a label; its contributor is selected), then a **Shift+drag**
  per further part of that contributor (before N selected its contributor, a discontinuous one cost
  **Enter** and **.** first: 314 actions in the runs of 2026-11-29 04:16-04:29);
- the proposals the builder then shows for the new SCU (issue 30 §2: its likely contributor in
  each other reference): **one read per proposal shown**; those that are exactly an expert
  contributor of this SCU (as the builder would store it) are accepted with the mouse, the label
  field N opened still open (its keys would go into the label; a click right after N is not lost):
  a click on *Accept all* when every one shown is right, else the fewest of a click on ✓ per right
  one or a click on ✕ per wrong one and *Accept all*. A proposal that is not exact is left alone
  (the contributor is made by hand, which takes its reference's proposal away);
- each other contributor: a drag and **A** (the new contributor is then selected), and a
  **Shift+drag** per further part;
- a scroll of the reference texts (one action) when a part lies outside their pane (1400x900).

``--unassisted`` turns the dataset's assistance off (the builder shows no proposal): the builder
as it was before issue 30's part 2.

**The proposals' model** never saw the release reported on (issue 30), as the peer bench's
(reproduce_expert.py): trained here on the other year's expert pyramids (DUC 2006 <-> DUC 2007 main;
``--train FOLDER``: another release's allpyramids/) by the project's own training
(``builder_proposals.trained_for``: ``proposal_training.fit`` on ``training_selection``, as
``manage.py train_proposals``), or read from ``--model FILE`` (written by ``train_proposals`` or by an
earlier run, which prints its path). The files that trained it are printed; a model that learnt
from any pyramid of the release is refused (``builder_proposals.check_held_out``). The server the
bench starts reads it through the ``PROPOSALS_MODEL`` setting, and the bench stops if the model
would not serve a sampled topic (the blind rule would leave the rules proposing there).

**What the proposals are worth** (``review``, ``policies``): each proposal shown is *exact* (an
expert contributor of the SCU as the builder stores it: the only kind the robot may accept, since
the stored pyramid must equal the expert's), *near* (right by issue 30's rule, at least half of an
expert contributor's characters in that SCU, but not exact) or *wrong*. From the same lists the
bench counts what other reading policies would have cost or saved against making those
contributors by hand (a drag, A, a Shift+drag per further part; scrolls left out): reading every
proposal (the robot's), reading down the list until the first one not to accept, reading only the
first, and skipping the list (unassisted).

**Actions** are counted as the peer bench counts them: every key press, click, drag and scroll, and
one read per proposal shown. **Waiting**: bench/_robot.py (from the event that completes
an action to the frame at which everything is saved).

**The check.** After each pyramid, the stored pyramid is compared with the expert's in the database:
every expert contributor with exactly its characters (each part's reference, start and end), grouped
in the same SCUs, and no other contributor (labels may differ). The builder snaps a selection to
whole words and trims the spaces and punctuation around it (textspans.js ``snapToWords``, the page's
own function, asked in the page): where that changes an expert part (a part ending in a full stop,
or cutting a word), the part is expected as snapped, and the bench prints how many parts and
contributors that affects. A contributor the builder's rules refuse (a second contributor of one
reference in an SCU, parts in two references: DUCView allowed both, see docs/formats.md) is left
out on both sides and counted apart.

**DUCView 1.4's minimum** for the same contributors, counted by doing it in DUCView under Xvfb
(docs/performance.md, "Rebuilding an expert's pyramid"): one action to open the reference texts;
per SCU, a drag and *New SCU* (its label is the selected text, no dialog); per further contributor a
drag and *Add Contributor* (the SCU stays selected); per further part of a contributor a drag and
*Add Contributor* with the contributor selected, which costs a click on its node before its first
further part, and one click back on the SCU's node before the SCU's next contributor (so at least
one fewer than its discontinuous contributors). Scrolling and saving are counted free (a minimum).

    SHARED_DATA=../shared/data python bench/reproduce_pyramid.py [--dataset duc2006|duc2007-main | --data RELEASE]
        [--pyramids 4] [--skip N] [--scus N] [--server gunicorn|runserver] [--unassisted]
        [--train FOLDER | --model FILE]

DATABASE_URL: PostgreSQL is flushed first (else a temporary SQLite file); REDIS_URL is not used
(the peer scores a pyramid edit starts are computed by the server, and no peer annotation is
imported, so there are none).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402
import _release  # noqa: E402
import builder_proposals  # noqa: E402
from _robot import PROBE, Robot, Run, cpu_model, format_actions, ratio_line, to_cp, to_u16  # noqa: E402

from annotation.pyramids.proposal_training import contributor_right, pyramid_files  # noqa: E402
from annotation.pyramids.proposals import DraftContributor, DraftSCU  # noqa: E402

GOAL_RATIO = 0.5  # actions per pyramid, ours / DUCView's minimum (issue 30)
OPENED = re.compile(r"/pyramids/(?P<pyramid>\d+)/build/$")
TEXTS = "#builder .texts"  # the pane that scrolls the reference texts
# A drag this near the top or bottom of the texts' pane makes Chromium scroll the pane under it (and
# select other text): a part there is scrolled to first, as a person would.
EDGE = 48
# A drag at a person's pace: three mouse events in a row, on a loaded machine, now and then left the
# selection on a line break.
DRAG_PAUSE_MS = 60


# ---------------------------------------------------------------------------- pure parts (tested)

Part = tuple[int, int, int]  # (reference id, start, end): code points of the reference's text


@dataclass(frozen=True, order=True)
class Contributor:
    """An expert contributor as the builder must store it: its reference and its parts, sorted."""

    reference: int
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Scu:
    """An expert SCU: its contributors, in the order the robot makes them (``plan``)."""

    uid: int
    contributors: tuple[Contributor, ...]


def plan(
    contributors: list[Contributor], position: dict[int, int], lengths: dict[int, int] | None = None
) -> tuple[Contributor, ...]:
    """The order the robot makes an SCU's contributors in: in the texts' order (``position``: a
    reference's place on the page). N and A each select the contributor they make, so a
    discontinuous one costs nothing more first or later."""
    return tuple(sorted(contributors, key=lambda c: place(c, position, lengths)))


def place(contributor: Contributor, position: dict[int, int], lengths: dict[int, int] | None = None) -> tuple:
    """Where the robot comes to ``contributor``: reference by reference in the texts' order, or with
    the texts side by side (``lengths``: each reference's length) down the page, across the columns
    (how far into its text it starts, then its column)."""
    start = contributor.parts[0][1]
    if lengths is None:
        return (position[contributor.reference], start)
    return (start / max(1, lengths[contributor.reference]), position[contributor.reference])


def ducview_minimum(scus: list[Scu]) -> int:
    """DUCView 1.4's fewest actions to build ``scus`` (docs/performance.md): 1 to open the texts; per
    SCU of k contributors, d of them discontinuous, with P further parts: 2k (a drag and New SCU or
    Add Contributor each) + 2P (a drag and Add Contributor each) + d (a click on the contributor's
    node before its first further part) + max(0, d - 1) (a click back on the SCU's node before
    its next contributor, the discontinuous ones made last)."""
    total = 1
    for scu in scus:
        k = len(scu.contributors)
        d = sum(len(c.parts) > 1 for c in scu.contributors)
        p = sum(len(c.parts) - 1 for c in scu.contributors)
        total += 2 * k + 2 * p + d + max(0, d - 1)
    return total


def our_minimum(scus: list[Scu], quick: bool = False) -> int:
    """The robot's actions without scrolling nor proposals (what ``rebuild`` does): 1 to open; per
    SCU, ``quick``: a drag per part (a plain drag, Ctrl+drag or Shift+drag), else 2 per contributor
    (a drag, N or A) and 1 per further part (a Shift+drag)."""
    return 1 + sum(hand_cost(c, quick) for s in scus for c in s.contributors)


def scroll_target(spans: list[tuple[float, float]], height: float, margin: float) -> float:
    """Where a person scrolls the texts' pane to for the part ``spans[0]`` (the parts to drag next
    follow it, in the robot's order; each (top, bottom) in the pane's content, in pixels): so that
    it and as many of the next ones as fit in a pane of ``height`` are in sight at once, ``margin``
    pixels clear of its top and bottom (the edges where a drag scrolls the pane). Returns the
    content's offset to put at the pane's top; the caller keeps it within the content."""
    usable = height - 2 * margin
    top = spans[0][0]
    for k in range(len(spans), 0, -1):
        lo, hi = min(t for t, _ in spans[:k]), max(b for _, b in spans[:k])
        if hi - lo <= usable:
            top = lo
            break
    return top - margin


def stored_shape(scus: list[list[Contributor]]) -> Counter:
    """A pyramid's content as the check compares it: the multiset of its SCUs, each the set of its
    contributors (reference and parts); labels and ids left out."""
    return Counter(frozenset(scu) for scu in scus)


def differences(ours: list[list[Contributor]], expected: list[list[Contributor]]) -> list[str]:
    """What differs between the stored pyramid and the expected one (empty: equal): contributors
    missing or extra, then SCUs grouped otherwise."""
    mine = Counter(c for scu in ours for c in scu)
    theirs = Counter(c for scu in expected for c in scu)
    out = [f"missing contributor {c}" for c in (theirs - mine).elements()]
    out += [f"extra contributor {c}" for c in (mine - theirs).elements()]
    if not out and stored_shape(ours) != stored_shape(expected):
        out += [
            f"SCU grouped otherwise: {sorted(scu)}" for scu in (stored_shape(ours) - stored_shape(expected)).elements()
        ]
    return out


# ---------------------------------------------------------------------------- the proposals' worth

EXACT, NEAR, WRONG = "exact", "near", "wrong"
Reviewed = tuple[tuple[str, int], ...]  # a list shown: (kind, the hand actions an exact one saves; else 0)


def hand_cost(contributor: Contributor, quick: bool = False) -> int:
    """Actions to make a contributor by hand (scrolls left out): a drag and N or A (``quick``: a
    drag or Ctrl+drag alone), a Shift+drag per further part."""
    return (1 if quick else 2) + len(contributor.parts) - 1


def review(shown: list[Contributor], scu: Scu, wanted: list[Contributor], quick: bool = False) -> Reviewed:
    """Each proposal shown for ``scu``: exact when it is one of ``wanted`` (the SCU's contributors not
    made yet), near when right by issue 30's rule (``proposal_training.contributor_right``: half of an
    expert contributor's characters, in this SCU) but not exact, else wrong."""
    expert = DraftSCU(
        "",
        tuple(DraftContributor(str(c.reference), tuple((s, e) for _, s, e in c.parts)) for c in scu.contributors),
    )
    out = []
    for c in shown:
        if c in wanted:
            out.append((EXACT, hand_cost(c, quick)))
        elif contributor_right(str(c.reference), [(s, e) for _, s, e in c.parts], expert):
            out.append((NEAR, 0))
        else:
            out.append((WRONG, 0))
    return tuple(out)


def accept_clicks(right: int, wrong: int) -> int:
    """Clicks to accept ``right`` proposals of a list also holding ``wrong`` ones, every one read
    (``accept_proposed``): a ✓ each, or a ✕ per wrong one and Accept all, whichever is fewer."""
    return 0 if not right else min(right, wrong + 1)


def policies(lists: list[Reviewed]) -> dict[str, tuple[int, int, int, int]]:
    """Per reading policy, over the lists shown: (reads, clicks, contributors accepted, hand actions
    those spare). *every one*: the robot's (``accept_proposed``); *until one is not exact*: read down
    the list, a ✓ per exact one, stop at the first other one (Accept all when all were exact);
    *the first only*: read the first, a ✓ if exact; *skip the list*: nothing read, all by hand."""
    out = {"every one": [0, 0, 0, 0], "until one is not exact": [0, 0, 0, 0], "the first only": [0, 0, 0, 0]}
    for shown in lists:
        if not shown:
            continue
        exact = [saved for kind, saved in shown if kind == EXACT]
        counts = out["every one"]
        counts[0] += len(shown)
        counts[1] += accept_clicks(len(exact), len(shown) - len(exact))
        counts[2] += len(exact)
        counts[3] += sum(exact)
        prefix = next((k for k, (kind, _) in enumerate(shown) if kind != EXACT), len(shown))
        counts = out["until one is not exact"]
        counts[0] += min(prefix + 1, len(shown))
        counts[1] += 1 if prefix == len(shown) else prefix
        counts[2] += prefix
        counts[3] += sum(saved for _, saved in shown[:prefix])
        counts = out["the first only"]
        counts[0] += 1
        counts[1] += shown[0][0] == EXACT
        counts[2] += shown[0][0] == EXACT
        counts[3] += shown[0][1]
    return {name: tuple(v) for name, v in out.items()} | {"skip the list": (0, 0, 0, 0)}


@dataclass
class PyramidRun(Run):
    topic: str = ""
    scus: int = 0
    contributors: int = 0
    parts: int = 0
    ducview: int = 0
    floor: int = 0
    snapped_parts: int = 0
    snapped_contributors: int = 0
    retries: int = 0
    failed: list[str] = field(default_factory=list)
    snap_examples: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    mismatch: list[str] = field(default_factory=list)
    shown: list[Reviewed] = field(default_factory=list)  # the proposals' lists, reviewed (``review``)


# ---------------------------------------------------------------------------- the page

# textspans.js's own snapToWords, loaded from the page's module graph: [[text, start, end]] (UTF-16)
# -> [[start, end] or null] as the builder would store a selection of it.
SNAPPED = """async (spans) => {
  const src = document.querySelector('script[type=module][src*="builder"]').src;
  const { snapToWords } = await import(new URL('textspans.js', src).href);
  return spans.map(([text, start, end]) => { const s = snapToWords(text, start, end); return s && [s.start, s.end]; });
}"""


# The proposals the builder lists (data-spans: "reference:start-end,...", code points), in order.
PROPOSED = (
    "() => [...document.querySelectorAll('#builder .proposals:not([hidden]) .proposal')].map((p) => p.dataset.spans)"
)

# What the last drag did: the selection it left (painted as pending) and the status line.
DRAGGED = (
    "() => [[...document.querySelectorAll('.ref-text .seg.pending')].map((s) => s.textContent).join(''), "
    "document.querySelector('#builder .last-action').textContent]"
)


# Each UTF-16 span [reference id, start, end] as (top, bottom) pixels in the texts' pane's content, and
# the pane's height in sight, its scroll range and whether the first span is in sight ``edge`` px clear.
SPANS_Y = """([pane, spans, edge]) => {
  const scroller = document.querySelector(pane), view = scroller.getBoundingClientRect();
  const top = Math.max(view.top, 0), bottom = Math.min(view.bottom, innerHeight);
  const rect = (root, u16) => { const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      if (off + n.data.length > u16) {
        const r = document.createRange(); r.setStart(n, u16 - off); r.setEnd(n, u16 - off + 1);
        return r.getClientRects()[0];
      }
      off += n.data.length;
    } };
  const ys = spans.map(([ref, start, end]) => { const root = document.querySelector(`.ref-text[data-ref="${ref}"]`);
    return [rect(root, start).top, rect(root, end - 1).bottom]; });
  return { spans: ys.map(([a, z]) => [a - view.top + scroller.scrollTop, z - view.top + scroller.scrollTop]),
           inside: ys[0][0] >= top + edge && ys[0][1] <= bottom - edge,
           height: bottom - top, offset: top - view.top, max: scroller.scrollHeight - scroller.clientHeight };
}"""
# How many parts to drag next a person keeps in mind when scrolling (scroll_target).
LOOKAHEAD = 8


class BuilderRobot(Robot):
    """The robot in the pyramid builder: reference texts side by side in a scrolling pane. Told the
    parts it will drag (``upcoming``, in order), it scrolls as a person who knows the texts does:
    to show the next part with as many of those after it as fit (``scroll_target``)."""

    upcoming: list[Part] = []
    cursor = 0  # where in ``upcoming`` the robot is (a part may come twice: SCUs sharing words)

    def scroll_for(self, run: Run, texts: dict[int, str], part: Part) -> None:
        """One scroll (an action) when ``part`` is not in sight, EDGE clear of the pane's edges."""
        at = self.upcoming.index(part, self.cursor) if part in self.upcoming[self.cursor :] else -1
        self.cursor = max(at, self.cursor)
        ahead = [part] + (self.upcoming[at + 1 : at + LOOKAHEAD] if at >= 0 else [])
        spans = [[r, to_u16(texts[r], s), to_u16(texts[r], e)] for r, s, e in ahead]
        seen = self.page.evaluate(SPANS_Y, [TEXTS, spans, EDGE])
        if seen["inside"]:
            return
        target = scroll_target([tuple(y) for y in seen["spans"]], seen["height"], EDGE + 8) - seen["offset"]
        self.page.evaluate(
            "([pane, top]) => { document.querySelector(pane).scrollTop = top; }",
            [TEXTS, max(0, min(seen["max"], target))],
        )
        run.act("scroll")

    def proposals(self, run: Run) -> list[Contributor]:
        """The proposed contributors the builder shows for the selected SCU, once they are shown
        (the wait counted as waiting); reading each is an action."""
        started = time.monotonic()
        self.page.wait_for_function("() => !document.querySelector('#builder').dataset.proposing", timeout=60_000)
        run.waits.append(("proposals", (time.monotonic() - started) * 1000))
        shown = []
        for spans in self.page.evaluate(PROPOSED):
            reference, parts = spans.split(":")
            pairs = (part.split("-") for part in parts.split(","))
            shown.append(Contributor(int(reference), tuple(sorted((int(reference), int(s), int(e)) for s, e in pairs))))
            run.act("read")
        return shown

    retries = 0  # drags done again because the browser selected something else (see drag_part)

    def __init__(self, page, errors: list[str]):
        super().__init__(page, errors)
        self.failed: list[str] = []  # drags that never selected their text: the check then shows what is missing

    def drag_part(self, run: Run, texts: dict[int, str], part: Part, how: str) -> None:
        """Drag over ``part``: ``how`` is "select" (a plain drag: the text is selected), "new" (a
        plain drag in quick building: a new SCU of it), "add" (a Ctrl+drag: a contributor of the
        selected SCU) or "part" (a Shift+drag: a part of the selected contributor). Should the
        browser leave another selection than the one dragged over, the drag is done again, not
        counted (``retries`` says how often), after Ctrl+Z (counted) if it made something."""
        reference, start, end = part
        text = texts[reference]
        dragged = text[start:end]
        done = {
            "new": f"New SCU “{' '.join(dragged.split())}” from reference",
            "add": f"Added “{dragged}” (reference",
            "part": f"Added “{dragged}” as a part",
        }
        for _ in range(3):
            self.scroll_for(run, texts, part)
            super().drag(
                run,
                f'.ref-text[data-ref="{reference}"]',
                TEXTS,
                (to_u16(text, start), to_u16(text, end)),
                how == "part",
                kind=how,
                edge=EDGE,
                pause_ms=DRAG_PAUSE_MS,
                modifier="Control" if how == "add" else None,
            )
            pending, said = self.page.evaluate(DRAGGED)
            if said.startswith(done[how]) if how in done else pending == dragged:
                return
            run.actions[how] -= 1
            self.retries += 1
            if how in done and said.startswith(("New SCU", "Added")):  # it made something else: taken back
                self.key(run, "undo", "Control+z")
        self.failed.append(f"[{start}, {end}) of reference {reference} ({dragged!r}): {pending or said!r} three times")


def accept_proposed(
    robot, run: Run, shown: list[Contributor], wanted: list[Contributor], quick: bool = False, keys: bool = False
) -> set[Contributor]:
    """Accept the proposals (``shown``, in the panel's order) that are exactly contributors of
    ``wanted``, with the fewest clicks, when those are fewer than the hand actions they spare
    (``hand_cost``; in quick building a Ctrl+drag makes a contributor, as a ✓ accepts one); return
    those accepted. Clicks, not keys: the label field N opened has the keys (Enter would cost one
    more). They go from the last proposal back, so the places of those still to click do not move.
    ``keys``: the list is hidden (the texts side by side), so keys: Shift+Y when every one shown
    is right, else the number of each right one."""
    right = [k for k, c in enumerate(shown) if c in wanted and (not keys or k < 9)]
    wrong = [k for k in range(len(shown)) if k not in right]
    cost = (1 if not wrong else len(right)) if keys else accept_clicks(len(right), len(wrong))
    if not right or cost >= sum(hand_cost(shown[k], quick) for k in right):
        return set()
    if keys:
        if not wrong:
            robot.key(run, "accept-all", "Shift+Y")
        for k in reversed(right) if wrong else ():
            robot.key(run, "accept", str(k + 1))
    elif len(wrong) + 1 <= len(right):
        for k in reversed(wrong):
            robot.click(run, "reject", f'.proposal[data-k="{k}"] [data-assist=reject]')
        robot.click(run, "accept-all", "[data-assist=accept-all]")
    else:
        for k in reversed(right):
            robot.click(run, "accept", f'.proposal[data-k="{k}"] [data-assist=accept]')
    return {shown[k] for k in right}


def rebuild(
    robot,
    run: Run,
    scus: list[Scu],
    texts: dict[int, str],
    assisted: bool = False,
    quick: bool = False,
    wide: bool = False,
) -> None:
    """Make ``scus`` in the open builder (see the module's docstring); ``robot``: a BuilderRobot
    (or a stand-in in tests). ``assisted``: the builder shows proposals, read and accepted.
    ``quick``: quick building is on (a drag makes an SCU, a Ctrl+drag adds a contributor); ``wide``:
    the texts side by side, the proposals' list hidden (accepted with keys)."""
    robot.upcoming, robot.cursor = [p for scu in scus for c in scu.contributors for p in c.parts], 0
    for scu in scus:
        first, *others = scu.contributors
        if quick:
            robot.drag_part(run, texts, first.parts[0], "new")
        else:
            robot.drag_part(run, texts, first.parts[0], "select")
            robot.key(run, "new", "n")
        for part in first.parts[1:]:  # N selected its contributor: the Shift+drag closes the label field
            robot.drag_part(run, texts, part, "part")
        if assisted:
            shown = robot.proposals(run)
            run.shown.append(review(shown, scu, others, quick))
            accepted = accept_proposed(robot, run, shown, others, quick, keys=wide)
            others = [c for c in others if c not in accepted]
        for contributor in others:
            if quick:
                robot.drag_part(run, texts, contributor.parts[0], "add")
            else:
                robot.drag_part(run, texts, contributor.parts[0], "select")
                robot.key(run, "add", "a")
            for part in contributor.parts[1:]:
                robot.drag_part(run, texts, part, "part")


# ---------------------------------------------------------------------------- the database


def contributors_of(pyramid) -> list[tuple[int, list[tuple[Contributor, str]]]]:
    """The pyramid's SCUs in uid order: (uid, its contributors as (Contributor, legacy_issue))."""
    scus: dict[int, dict[int, list]] = {}
    uids: dict[int, int] = {}
    issues: dict[int, str] = {}
    references: dict[int, int] = {}
    for scu, uid, contributor, reference, issue, part_reference, start, end in pyramid.scus.values_list(
        "id",
        "uid",
        "contributors__id",
        "contributors__reference_id",
        "contributors__legacy_issue",
        "contributors__parts__reference_id",
        "contributors__parts__start",
        "contributors__parts__end",
    ).order_by("uid", "contributors__id", "contributors__parts__start"):
        uids[scu] = uid
        if contributor is None:
            continue
        scus.setdefault(scu, {}).setdefault(contributor, []).append((part_reference, start, end))
        issues[contributor], references[contributor] = issue, reference
    return [
        (
            uids[scu],
            [(Contributor(references[c], tuple(sorted(parts))), issues[c]) for c, parts in scus.get(scu, {}).items()],
        )
        for scu in sorted(uids, key=uids.get)
    ]


def expected_pyramid(
    robot_page, pyramid, texts: dict[int, str], position: dict[int, int], run: PyramidRun, down_the_page: bool = False
) -> list[Scu]:
    """The expert's SCUs as the builder can make them: parts as the builder snaps them (counted in
    ``run``), contributors the builder's rules refuse left out (named in ``run.refused``), SCUs
    left empty dropped; each SCU's contributors in the robot's order (``place``: ``down_the_page``
    with the texts side by side)."""
    lengths = {r: len(t) for r, t in texts.items()} if down_the_page else None
    expert = contributors_of(pyramid)
    spans = [
        [texts[r], to_u16(texts[r], s), to_u16(texts[r], e)] for _, scu in expert for c, _ in scu for r, s, e in c.parts
    ]
    snapped = iter(robot_page.evaluate(SNAPPED, spans))
    out = []
    for uid, scu in expert:
        kept, seen = [], set()
        for contributor, issue in scu:
            parts = []
            for r, s, e in contributor.parts:
                got = next(snapped)
                cp = None if got is None else (r, to_cp(texts[r], got[0]), to_cp(texts[r], got[1]))
                if cp != (r, s, e):
                    run.snapped_parts += 1
                    run.snap_examples.append(f"{texts[r][s:e]!r} -> {texts[r][cp[1] : cp[2]] if cp else None!r}")
                if cp is not None and cp not in parts:
                    parts.append(cp)
            if any(r != contributor.reference for r, _, _ in contributor.parts):
                run.refused.append(f"SCU {uid}: a contributor with parts in two references")
            elif contributor.reference in seen:
                run.refused.append(
                    f"SCU {uid}: a second contributor of reference {contributor.reference}"
                    + (f" ({issue})" if issue else "")
                )
            elif not parts:
                run.refused.append(f"SCU {uid}: a contributor with no word the builder can select")
            else:
                seen.add(contributor.reference)
                kept.append(Contributor(contributor.reference, tuple(sorted(parts))))
                run.snapped_contributors += kept[-1].parts != contributor.parts
        if kept:
            out.append(Scu(uid, plan(kept, position, lengths)))
    return sorted(out, key=lambda scu: place(scu.contributors[0], position, lengths))


# ---------------------------------------------------------------------------- the model


def training_files(release: Path, train: str | None) -> tuple[Path, list[Path]]:
    """The expert pyramids that train the proposals' model for ``release``: every ``.pyr`` of the
    training release's allpyramids/ (``--train``, else the other DUC year); stops when there is none."""
    folder = _release.training_folder(release, train)
    if folder is None:
        sys.exit(f"which release trains the proposals' model for {release}? Give --train FOLDER or --model FILE")
    files = list(pyramid_files(folder / "allpyramids"))
    if not files:
        sys.exit(f"no .pyr files in {folder / 'allpyramids'} to train the proposals' model on")
    return folder, files


def refusal(model, measured: list) -> str | None:
    """Why ``model`` may not be measured on the ``measured`` pyramids (it learnt from one), or None."""
    try:
        builder_proposals.check_held_out(model, measured)
    except builder_proposals.SawMeasuredYear as error:
        return str(error)
    return None


def proposals_model(args, release: Path):
    """The model the server proposes with and its file: read from ``--model``, or trained here on the
    other year; refused when it learnt from any pyramid of ``release``."""
    from annotation.pyramids.proposal_training import from_pyr
    from annotation.pyramids.proposals import load_model, save_model

    measured = builder_proposals.release_pyramids(release)
    if args.model:
        path = Path(args.model)
        model = load_model(path)
        if model is None:
            sys.exit(f"--model {path}: no proposals model of this code's format there")
        print(
            f"proposals model: {path} (thresholds: contributor {model.contributor_threshold:.3f}, pair "
            f"{model.pair_threshold:.3f}); trained on {_release.files_line([Path(s) for s in model.trained_on])}",
            flush=True,
        )
    else:
        folder, files = training_files(release, args.train)
        started = time.monotonic()
        try:
            model = builder_proposals.trained_for([from_pyr(f) for f in files], measured)
        except ValueError as error:
            sys.exit(f"the proposals' model cannot be trained on {folder}: {error}")
        path = save_model(
            model, Path(tempfile.gettempdir()) / f"pyramid-bench-proposals-{folder.resolve().name}.joblib"
        )
        print(
            f"proposals model: trained here in {time.monotonic() - started:.0f} s on "
            f"{_release.files_line([Path(s) for s in model.trained_on])} (thresholds: contributor "
            f"{model.contributor_threshold:.3f}, pair {model.pair_threshold:.3f}); saved to {path} "
            f"(--model {path} reuses it)",
            flush=True,
        )
    refused = refusal(model, measured)
    if refused:
        sys.exit(f"the proposals model may not be measured on {release}: {refused}")
    return model, path


# ---------------------------------------------------------------------------- the run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pyramids",
        type=int,
        default=4,
        help="pyramids (topics), spread evenly over the release (default: %(default)s)",
    )
    parser.add_argument(
        "--scus",
        type=int,
        default=0,
        metavar="N",
        help="only the first N SCUs of each pyramid, in the robot's order (a quick run)",
    )
    parser.add_argument(
        "--skip", type=int, default=0, help="leave out the first N pyramids of the sample (to run a sample in pieces)"
    )
    parser.add_argument(
        "--unassisted", action="store_true", help="turn the dataset's assistance off: the builder proposes nothing"
    )
    parser.add_argument(
        "--screenshots", metavar="DIR", help="save a screenshot of the builder after each pyramid (DIR/TOPIC.png)"
    )
    parser.add_argument(
        "--flow",
        choices=["quick", "keys"],
        default="quick",
        help="quick building (a drag makes an SCU, Ctrl+drag adds a contributor) or drags with N and A "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="keep the SCU list beside the texts (two columns of texts) instead of the texts side by side (W)",
    )
    parser.add_argument(
        "--order",
        choices=["down", "texts"],
        default="down",
        help="with the texts side by side, the SCUs (and each one's contributors) down the page across the "
        "columns, or reference by reference in the texts' order (with --list: always the latter) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--text-size",
        choices=["small", "normal"],
        default="normal",
        help="the builder's text size the robot chooses (two clicks, remembered in the browser: once a run) "
        "(default: %(default)s)",
    )
    trained = parser.add_mutually_exclusive_group()
    trained.add_argument(
        "--train", metavar="FOLDER", help="a release whose allpyramids/ train the model (default: the other DUC year)"
    )
    trained.add_argument(
        "--model", metavar="FILE", help="a trained proposals model (train_proposals, or an earlier run's)"
    )
    b.add_common_arguments(parser)
    _release.add_release_argument(parser)  # after the common --data, whose default it replaces
    args = parser.parse_args()
    args.data = _release.release_folder(args)
    if args.pyramids < 1 or args.skip < 0 or args.scus < 0:
        sys.exit("--pyramids must be at least 1, --skip and --scus at least 0")
    b.check_prerequisites(args)
    child_env = b.setup_django(args.keep_db)
    child_env.pop("REDIS_URL", None)

    from annotation.corpus.models import Assignment, Dataset, Topic
    from annotation.peers.assignments import pyramid_to_annotate_against
    from annotation.pyramids.models import Pyramid

    release = Path(args.data)
    model = None
    if not args.unassisted:
        model, path = proposals_model(args, release)
        child_env["PROPOSALS_MODEL"] = str(path)
    dataset = _release.import_release(release, subfolders=("allpyramids",))
    Dataset.objects.filter(name=dataset).update(assisted_building=not args.unassisted)
    topics = _release.sample_topics(dataset, args.pyramids)[args.skip :]
    user = b.create_user("bench-builder")
    plans = []
    for external_id in topics:
        topic = Topic.objects.get(external_id=external_id, dataset__name=dataset)
        assignment = Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
        plans.append((topic, assignment, pyramid_to_annotate_against(topic)))
    machine = b.machine_line(args.server, "in the server process")
    b.close_db_connections()

    log_dir = b.make_log_dir()
    errors: list[str] = []
    runs: list[PyramidRun] = []
    started, load_before = time.monotonic(), os.getloadavg()[0]
    with contextlib.ExitStack() as stack:
        base = stack.enter_context(b.server(args.server, child_env, log_dir))
        browser = stack.enter_context(b.chromium(args.chromium))
        context, page = b.new_page(browser, errors)
        context.add_init_script(PROBE)
        b.login(page, base, user.username)
        robot = BuilderRobot(page, errors)
        for topic, assignment, expert in plans:
            run = PyramidRun(topic=topic.external_id)
            page.goto(f"{base}/")
            opened = robot.navigate(run, "open", f'form[action="/assignments/{assignment.pk}/open/"] button', OPENED)
            ours = Pyramid.objects.get(pk=int(opened["pyramid"]))
            references = list(ours.references.order_by("id"))
            order = page.evaluate("() => [...document.querySelectorAll('.ref-text')].map((t) => Number(t.dataset.ref))")
            position = {ref: i for i, ref in enumerate(order)}
            texts = {r.pk: r.text for r in references}
            if set(position) != set(texts):
                sys.exit(f"the builder shows references {sorted(position)}, the pyramid has {sorted(texts)}")
            if model is not None and not serves(model, references):
                sys.exit(f"{topic.external_id}: the proposals' model saw these references, the rules would propose")
            down = not args.list and args.order == "down"
            scus = expected_pyramid(page, expert, texts, position, run, down)[: args.scus or None]
            run.scus, run.contributors = len(scus), sum(len(s.contributors) for s in scus)
            run.parts = sum(len(c.parts) for s in scus for c in s.contributors)
            run.ducview = ducview_minimum(scus)
            print(
                f"{topic.external_id}: rebuilding {run.scus} SCUs, {run.contributors} contributors, {run.parts} parts "
                f"(expert pyramid {expert.pk}, {len(texts)} references) ...",
                flush=True,
            )
            retries, failed = robot.retries, len(robot.failed)
            if page.get_attribute("#builder", "data-text-size") != args.text_size:
                page.select_option(".text-size select", args.text_size)  # a click on the list and one on the size
                robot.settle(run, "text-size")
                run.act("text-size")
            quick = args.flow == "quick"
            if quick and page.get_attribute("[data-action=quick]", "aria-pressed") != "true":
                robot.key(run, "quick", "q")  # remembered in the browser: once a run
            wide = not args.list
            if wide and page.get_attribute("[data-action=wide]", "aria-pressed") != "true":
                robot.key(run, "wide", "w")  # the same
            rebuild(robot, run, scus, texts, assisted=not args.unassisted, quick=quick, wide=wide)
            # without scrolls: what the robot did unassisted is counted in advance (our_minimum, tested)
            run.floor = (
                our_minimum(scus, quick) + run.actions["quick"] + run.actions["wide"] + run.actions["text-size"]
                if args.unassisted
                else run.total - run.actions["scroll"]
            )
            run.retries, run.failed = robot.retries - retries, robot.failed[failed:]
            if args.screenshots:
                Path(args.screenshots).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(args.screenshots) / f"{topic.external_id}.png"))
            b.close_db_connections()
            run.mismatch = differences(
                [[c for c, _ in scu] for _, scu in contributors_of(ours)], [list(s.contributors) for s in scus]
            )
            runs.append(run)
            waits = ", ".join(f"{kind} {ms:.0f}" for kind, ms in sorted(run.waits, key=lambda w: -w[1])[:3])
            print(
                f"{topic.external_id}: {run.total} actions ({format_actions(run.actions)}), DUCView {run.ducview}, "
                f"ratio {ratio_line(run.total, run.ducview)} (without scrolls {ratio_line(run.floor, run.ducview)}); "
                f"waited {run.waited_ms / 1000:.1f} s, painted after {run.painted_ms / 1000:.1f} s "
                f"(longest waits: {waits} ms); "
                f"word snapping changes {run.snapped_parts} expert parts ({run.snapped_contributors} contributors; "
                f"e.g. {'; '.join(run.snap_examples[:4])}); "
                f"{len(run.refused)} contributors the builder refuses"
                f"{': ' + '; '.join(run.refused[:3]) if run.refused else ''}; "
                f"{run.retries} drags done again (not counted: the browser selected something else)"
                f"{'; FAILED DRAGS: ' + '; '.join(run.failed) if run.failed else ''}; "
                f"{'stored = expert' if not run.mismatch else 'MISMATCH: ' + '; '.join(run.mismatch[:5])}"
                f"{'; proposals: ' + shown_line(run.shown) if run.shown else ''}",
                flush=True,
            )
        context.close()
    report(runs, release.name, topics, machine, time.monotonic() - started, (load_before, os.getloadavg()[0]))
    if any(r.mismatch for r in runs):
        sys.exit("the stored pyramid differs from the expert's for some topics (see above)")


def shown_line(lists: list[Reviewed]) -> str:
    """How many proposals were shown, in how many lists, and of which kind (``review``)."""
    kinds = Counter(kind for shown in lists for kind, _ in shown)
    return (
        f"{sum(kinds.values())} shown in {sum(bool(s) for s in lists)} of {len(lists)} new SCUs: "
        f"{kinds[EXACT]} exact, {kinds[NEAR]} near (right by issue 30's rule, not exact), {kinds[WRONG]} wrong"
    )


def serves(model, references) -> bool:
    """Whether the server proposes with ``model`` for these references (``proposals.usable``: not when
    it learnt from them)."""
    from annotation.pyramids import proposals

    topic = proposals.Topic([proposals.ReferenceText(r.external_id, r.text) for r in references])
    return proposals.usable(model, topic) is model


def report(
    runs: list[PyramidRun], release: str, topics: list[str], machine: str, elapsed: float, loads: tuple[float, float]
) -> None:
    if not runs:
        return
    ours, ducview, floor = sum(r.total for r in runs), sum(r.ducview for r in runs), sum(r.floor for r in runs)
    total = Counter()
    by_kind: dict[str, list[float]] = {}
    for r in runs:
        total.update(r.actions)
        for kind, ms in r.waits:
            by_kind.setdefault(kind, []).append(ms)
    print()
    print(
        f"{release}, pyramids of topics {', '.join(topics)} "
        f"(1-minute load average {loads[0]:.1f} before, {loads[1]:.1f} after); {elapsed:.0f} s"
    )
    print(
        f"  stored pyramid = expert's (contributors with their exact characters, in the same SCUs, nothing else): "
        f"{sum(not r.mismatch for r in runs)} of {len(runs)}"
    )
    print(
        f"  {sum(r.scus for r in runs)} SCUs, {sum(r.contributors for r in runs)} contributors, "
        f"{sum(r.parts for r in runs)} parts; "
        f"word snapping changes {sum(r.snapped_parts for r in runs)} expert parts "
        f"({sum(r.snapped_contributors for r in runs)} contributors); "
        f"{sum(len(r.refused) for r in runs)} contributors the builder's rules refuse, left out on both sides"
    )
    print(f"  actions: ours {ours} ({format_actions(total)})")
    lists = [shown for r in runs for shown in r.shown]
    if lists:
        print(f"  proposals: {shown_line(lists)}")
        for name, (reads, clicks, accepted, spared) in policies(lists).items():
            print(
                f"    reading {name:>22}: {reads} reads + {clicks} clicks to accept {accepted} contributors "
                f"that spare {spared} hand actions: {spared - reads - clicks:+d} actions against building by hand"
            )
    print(
        f"    DUCView 1.4 minimum {ducview}; ratio ours/DUCView {ratio_line(ours, ducview)} (goal <= {GOAL_RATIO}); "
        f"without our scrolls {ratio_line(floor, ducview)}"
    )
    waited = [r.waited_ms / 1000 for r in runs]
    print(
        f"  waiting per pyramid: {', '.join(f'{w:.1f}' for w in waited)} s; per action: "
        f"{sum(waited) * 1000 / max(1, ours):.0f} ms on average (until everything is saved)"
    )
    for kind, values in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {kind:>16}: {b.summary(values)}")
    print(f"  {machine}")
    print(f"  CPU: {cpu_model()}, nproc {os.cpu_count()}")


if __name__ == "__main__":
    main()
