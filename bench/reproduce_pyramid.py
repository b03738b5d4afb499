"""Benchmark: a robot rebuilds the experts' pyramids in the pyramid builder, in headless Debian Chromium
(prints numbers; not a test).

Issue 30: the cost of the expert's first job, measured as the peer annotator's is
(bench/reproduce_expert.py). For each expert pyramid of a sample (``--pyramids`` topics spread
evenly over the release's sorted topic ids, as the peer bench spreads them), the robot is given the
expert's ``.pyr`` (imported by the project's own importer into a throw-away database) and rebuilds
it from the topic's reference texts in the builder (frontend/static/frontend/js/builder.js), the
fastest way a person could with the builder's real keys and mouse:

- it opens its assignment with the home page's Start (a page load: the builder, no SCU yet);
- per expert SCU, in the order of their first contributor in the texts: a mouse drag over the first
  part of a continuous contributor (the SCU's first in the texts when all are discontinuous), then
  **N** (a new SCU: its label is the selected text, and the label field opens; the next drag closes
  it, keeping that label: nobody types a label); when that contributor is discontinuous (N leaves
  no contributor selected), **Enter** (closes the label field: a click in the list while it is open
  is lost, see ``rebuild``) and **.** (selects the SCU's contributor), then a **Shift+drag** per
  further part;
- each other contributor: a drag and **A** (the new contributor is then selected), and a
  **Shift+drag** per further part;
- a scroll of the reference texts (one action) when a part lies outside their pane (1400x900).

The builder offers no assistance yet (no proposal to read or accept): issue 30's part 2 is to add it.

**Actions** are counted as the peer bench counts them: every key press, click, drag and scroll, and
one read per proposal shown (none today). **Waiting**: bench/_robot.py (from the event that completes
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
        [--pyramids 4] [--skip N] [--scus N] [--server gunicorn|runserver]

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
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402
import _release  # noqa: E402
from _robot import PROBE, Robot, Run, cpu_model, format_actions, ratio_line, to_cp, to_u16  # noqa: E402

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


def plan(contributors: list[Contributor], position: dict[int, int]) -> tuple[Contributor, ...]:
    """The order the robot makes an SCU's contributors in: in the texts' order (``position``: a
    reference's place on the page), a continuous one first when there is one (N leaves no
    contributor selected, so a discontinuous first one costs a click before its Shift+drags)."""
    ordered = sorted(contributors, key=lambda c: (position[c.reference], c.parts[0][1]))
    first = next((c for c in ordered if len(c.parts) == 1), ordered[0])
    return (first, *(c for c in ordered if c is not first))


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


def our_minimum(scus: list[Scu]) -> int:
    """The robot's actions without scrolling (what ``rebuild`` does): 1 to open; per SCU 2 per
    contributor (a drag, N or A), 1 per further part (a Shift+drag), and 2 (Enter, ".") when its
    first contributor is discontinuous."""
    return 1 + sum(
        2 * len(s.contributors) + sum(len(c.parts) - 1 for c in s.contributors) + 2 * (len(s.contributors[0].parts) > 1)
        for s in scus
    )


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


# ---------------------------------------------------------------------------- the page

# textspans.js's own snapToWords, loaded from the page's module graph: [[text, start, end]] (UTF-16)
# -> [[start, end] or null] as the builder would store a selection of it.
SNAPPED = """async (spans) => {
  const src = document.querySelector('script[type=module][src*="builder"]').src;
  const { snapToWords } = await import(new URL('textspans.js', src).href);
  return spans.map(([text, start, end]) => { const s = snapToWords(text, start, end); return s && [s.start, s.end]; });
}"""


# What the last drag did: the selection it left (painted as pending) and the status line.
DRAGGED = (
    "() => [[...document.querySelectorAll('.ref-text .seg.pending')].map((s) => s.textContent).join(''), "
    "document.querySelector('#builder .last-action').textContent]"
)


class BuilderRobot(Robot):
    """The robot in the pyramid builder: reference texts side by side in a scrolling pane."""

    retries = 0  # drags done again because the browser selected something else (see drag_part)

    def __init__(self, page, errors: list[str]):
        super().__init__(page, errors)
        self.failed: list[str] = []  # drags that never selected their text: the check then shows what is missing

    def drag_part(self, run: Run, texts: dict[int, str], part: Part, shift: bool) -> None:
        """Drag over ``part`` (Shift held: it becomes a part of the selected contributor). Should the
        browser leave another selection than the one dragged over, the drag is done again, not
        counted (``retries`` says how often)."""
        reference, start, end = part
        text = texts[reference]
        kind = "part" if shift else "select"
        for _ in range(3):
            super().drag(
                run,
                f'.ref-text[data-ref="{reference}"]',
                TEXTS,
                (to_u16(text, start), to_u16(text, end)),
                shift,
                kind=kind,
                edge=EDGE,
                pause_ms=DRAG_PAUSE_MS,
            )
            pending, said = self.page.evaluate(DRAGGED)
            if (f"Added “{text[start:end]}” as a part" in said) if shift else pending == text[start:end]:
                return
            run.actions[kind] -= 1
            self.retries += 1
        self.failed.append(
            f"[{start}, {end}) of reference {reference} ({text[start:end]!r}): {pending!r} selected three times"
        )


def rebuild(robot, run: Run, scus: list[Scu], texts: dict[int, str]) -> None:
    """Make ``scus`` in the open builder (see the module's docstring); ``robot``: a BuilderRobot
    (or a stand-in in tests)."""
    for scu in scus:
        first, *others = scu.contributors
        robot.drag_part(run, texts, first.parts[0], shift=False)
        robot.key(run, "new", "n")
        if len(first.parts) > 1:
            # The label field N opened has the focus: a click on the contributor in the list would
            # be lost (the field's blur repaints the list under the pointer), and "." would be typed
            # into the label. Enter keeps the label, "." then selects the SCU's only contributor.
            robot.key(run, "enter", "Enter")
            robot.key(run, "next-contributor", ".")
            for part in first.parts[1:]:
                robot.drag_part(run, texts, part, shift=True)
        for contributor in others:
            robot.drag_part(run, texts, contributor.parts[0], shift=False)
            robot.key(run, "add", "a")
            for part in contributor.parts[1:]:
                robot.drag_part(run, texts, part, shift=True)


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
    robot_page, pyramid, texts: dict[int, str], position: dict[int, int], run: PyramidRun
) -> list[Scu]:
    """The expert's SCUs as the builder can make them: parts as the builder snaps them (counted in
    ``run``), contributors the builder's rules refuse left out (named in ``run.refused``), SCUs
    left empty dropped; each SCU's contributors in the robot's order."""
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
            out.append(Scu(uid, plan(kept, position)))
    return sorted(out, key=lambda scu: (position[scu.contributors[0].reference], scu.contributors[0].parts[0][1]))


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
    b.add_common_arguments(parser)
    _release.add_release_argument(parser)  # after the common --data, whose default it replaces
    args = parser.parse_args()
    args.data = _release.release_folder(args)
    if args.pyramids < 1 or args.skip < 0 or args.scus < 0:
        sys.exit("--pyramids must be at least 1, --skip and --scus at least 0")
    b.check_prerequisites(args)
    child_env = b.setup_django(args.keep_db)
    child_env.pop("REDIS_URL", None)

    from annotation.corpus.assignments import pyramid_to_annotate_against
    from annotation.corpus.models import Assignment, Topic
    from annotation.pyramids.models import Pyramid

    release = Path(args.data)
    dataset = _release.import_release(release, subfolders=("allpyramids",))
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
            scus = expected_pyramid(page, expert, texts, position, run)[: args.scus or None]
            run.scus, run.contributors = len(scus), sum(len(s.contributors) for s in scus)
            run.parts = sum(len(c.parts) for s in scus for c in s.contributors)
            run.ducview, run.floor = ducview_minimum(scus), our_minimum(scus)
            print(
                f"{topic.external_id}: rebuilding {run.scus} SCUs, {run.contributors} contributors, {run.parts} parts "
                f"(expert pyramid {expert.pk}, {len(texts)} references) ...",
                flush=True,
            )
            retries, failed = robot.retries, len(robot.failed)
            rebuild(robot, run, scus, texts)
            run.retries, run.failed = robot.retries - retries, robot.failed[failed:]
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
                f"{'stored = expert' if not run.mismatch else 'MISMATCH: ' + '; '.join(run.mismatch[:5])}",
                flush=True,
            )
        context.close()
    report(runs, release.name, topics, machine, time.monotonic() - started, (load_before, os.getloadavg()[0]))
    if any(r.mismatch for r in runs):
        sys.exit("the stored pyramid differs from the expert's for some topics (see above)")


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
