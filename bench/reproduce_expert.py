"""Benchmark: a robot reproduces the experts' annotations in the peer annotator, in headless Debian Chromium (prints
numbers; not a test).

The whole job, not one key (issue 21). For each peer of a sample of topics, the robot is given the
expert's annotation (the DUCView `.pan` file, imported by the project's own importer into a
throw-away database) and reproduces it in the annotator the fastest way a person could, with the
annotator's real keys and flows (frontend/static/frontend/js/annotator.js):

- the suggestions, shown as the peer opens (up to nine at once, the most confident first): each one
  read (one action: a person reads it before deciding); each wrong one struck with its digit; then
  A accepts the others at once (right: it names an SCU the expert matched and covers at least half
  of that expert match's span, the criterion of issue 21), and shows the next nine, if any. A page
  of wrong ones only is struck and A shows the next; the last such page is left as it is;
- each expert match still missing: a mouse drag over each of its parts (Shift+drag for the second
  and later parts of a discontinuous match), then the SCU: one click when it is in sight in the SCU
  list, else "/" (which focuses the filter: a selection leaves the focus where it was) and the
  shortest text typed into the filter that puts it first (Enter) or in sight (click);
- each expert non-matching unit: the drag(s), then the "No SCU" button (one action, as U would be);
- "Done, next peer" (the first peer is opened with the home page's Start).

Actions: every key press, click, drag (a selection) and scroll, the "/" and the keys typed into the
filter included, the digits and A, and one per suggestion shown. Waiting: measured in the page, from
the input event that completes an action (keydown, input, mouseup, click) to the first animation
frame at which the page is settled: the editor ready and not busy, no write in flight, everything
saved (the queued "done" of the previous peer included), suggestions loaded. Reads the page makes in
the background (the next peer and its suggestions read ahead, the stored score's polling: the page
shows a provisional score meanwhile) are no waiting; a read the annotator waits for shows on the
page (the editor not ready, "Looking for suggestions…"). "Done, next peer" paints the next peer in
the same page; a page load (Start) is measured from the click in the old page to that frame in the
new one.

After each peer the stored annotation is compared with the expert's in the database: the same SCUs
with the same repetitions, the same number of non-matching units, and the same stored score (NIST
convention, every value). Beside it, the minimum DUCView 1.4 needs for the same peer: one action to
open it, and per expert match (non-matching units included: DUCView files them under its "All
non-matching" SCU the same way) one selection, one SCU pick and one confirmation, except the
matches its Autoannotate makes (the match's text equals a contributor's text of that SCU exactly,
spacing aside; invoking Autoannotate, and removing the wrong matches it also makes, counted free:
a minimum).

    SHARED_DATA=../shared/data python bench/reproduce_expert.py [--dataset duc2006|duc2007-main | --data RELEASE]
        [--topics 4] [--peers 6] [--stress N] [--server gunicorn|runserver] [--train FOLDER | --model FILE]

The suggestions are ranked by a model that never saw the release reported on (issue 30): trained
here on the other year's .pan files (DUC 2006 <-> DUC 2007 main; ``--train FOLDER``: another
release's allpans/), or read from ``--model FILE`` (written by ``manage.py train_suggestions`` or by
an earlier run, which prints its path). The files that trained it are printed, and a model that
does not record them, or that saw a file of the release or one of its topics, is refused.

Any DUCView release laid out as allpyramids/ + allpans/ is read (``--data``) by the project's own
importer, which names each file's topic and peer (bench/_release.py); the topics are sampled from
what it imported, into a dataset named after the release's folder.

DATABASE_URL: PostgreSQL is flushed first (else a temporary SQLite file). With REDIS_URL (a Redis
database this bench may flush) a real Celery worker computes the scores; without, the server does
(in-process tasks).
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
import _browser as b  # noqa: E402  (bench/ is put on sys.path first)
import _release  # noqa: E402  (bench/ is put on sys.path first)
from _robot import (  # noqa: E402  (bench/ is put on sys.path first)
    PROBE,
    Robot,
    Run,
    busy_processes,
    cpu_model,
    format_actions,
    ratio_line,
    to_u16,
)

GOAL_RATIO = 0.5  # actions per peer, ours / DUCView's minimum
SHOWN_AT_ONCE = 9  # suggestions the annotator shows at once, each struck with its digit (annotator.js)
GOAL_WAIT_QUIET = 0.5  # seconds of waiting per peer
GOAL_WAIT_STRESS = 1.0
# The URL of an opened peer: its annotation, or (untouched: nothing stored yet) its page in the assignment.
OPENED = re.compile(r"/(?:annotations/(?P<annotation>\d+)|assignments/\d+/peers/(?P<peer>\d+))/$")


# ---------------------------------------------------------------------------- pure parts (tested)


@dataclass(frozen=True)
class Match:
    """An expert match: its SCU (None: a non-matching unit) and its parts, code point offsets in the peer."""

    scu: int | None
    parts: tuple[tuple[int, int], ...]


def _normal(text: str) -> str:
    return " ".join(text.split())


def ducview_minimum(matches: list[tuple[int | None, str]], contributors: dict[int, list[str]]) -> tuple[int, int]:
    """DUCView 1.4's fewest actions for one peer: (actions, matches its Autoannotate makes).

    ``matches``: the expert's matches as (SCU or None, the match's peer text, parts joined by a
    space); ``contributors``: each SCU's contributor texts (parts joined by a space). One action opens
    the peer; each match costs a selection, an SCU pick and a confirmation unless Autoannotate,
    which matches a contributor's exact text, makes it."""
    exact = {scu: {_normal(t) for t in texts} for scu, texts in contributors.items()}
    automatic = sum(1 for scu, text in matches if scu is not None and _normal(text) in exact.get(scu, ()))
    return 1 + 3 * (len(matches) - automatic), automatic


def perfect_floor(matches: list[Match], opens: int) -> int:
    """Our fewest actions for a peer if Autoannotate suggested every expert match right and nothing
    else: ``opens`` (Start), a reading per match and one A per nine of them (shown as the peer
    opens), a drag per part and "No SCU" per non-matching unit (never suggested), "Done, next
    peer". What the counting rules allow at best."""
    suggested = sum(1 for m in matches if m.scu is not None)
    return (
        opens + suggested + -(-suggested // SHOWN_AT_ONCE) + sum(len(m.parts) + 1 for m in matches if m.scu is None) + 1
    )


def covered_share(expert_parts, suggested_parts) -> float:
    """Share of the expert match's characters that the suggestion covers."""
    total = sum(e - s for s, e in expert_parts)
    inside = sum(max(0, min(e, f) - max(s, g)) for s, e in expert_parts for g, f in suggested_parts)
    return inside / total if total else 0.0


def scu_pick(target: int, order: list[tuple[int, str]], in_sight: set[int], rows: int) -> list[tuple[str, str | int]]:
    """The fewest actions to pick SCU ``target`` after a selection, the filter empty:
    [("click", id)] when it is in sight in the list, else "/" (("find", "/"): it focuses the filter)
    and the shortest text typed into it (one action per key) after which it is first in the list
    (then Enter) or among its first ``rows`` items, in sight (then a click). ``order``: the SCUs as the list shows
    them (weight,
    then label: annotator.js scusByWeight), as (id, label); the filter keeps labels containing the
    text, case aside. "/" is never in the text typed (it means "find an SCU")."""
    if target in in_sight:
        return [("click", target)]
    labels = {scu: label.lower() for scu, label in order}
    label = labels[target]
    for length in range(1, len(label) + 1):
        best = None
        for start in range(len(label) - length + 1):
            needle = label[start : start + length]
            if "/" in needle:
                continue
            shown = [scu for scu, _ in order if needle in labels[scu]]
            if shown[0] == target:
                best = (needle, "enter")
                break
            if best is None and target in shown[:rows]:
                best = (needle, "click")
        if best:
            needle, finish = best
            return [("find", "/")] + [("type", ch) for ch in needle] + [(finish, target)]
    raise ValueError(f"SCU {target} cannot be found by its label")


@dataclass
class PeerRun(Run):
    """One peer's reproduction: the expert's matches still to make, the actions taken and the waits.

    The robot's decisions live here (pure), so that the counting is tested without a browser."""

    peer: str = ""
    todo: list[Match] = field(default_factory=list)

    def judge(self, scu: int, parts) -> bool:
        """A suggestion shown: read it (one action), then accept it when it is right (consuming the
        expert match it reproduces), else reject it. True: accept."""
        self.act("read")
        for match in self.todo:
            if match.scu == scu and covered_share(match.parts, parts) >= 0.5:
                self.todo.remove(match)
                return True
        return False


# ---------------------------------------------------------------------------- the page

# The page's saves of new matches (POST /api/matches/) since the last call (one page shows many
# peers): [total ms, ms from the request sent to the answer's first byte].
SAVES = (
    "() => { const saves = performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname "
    "=== '/api/matches/')"
    ".map((e) => [e.duration, e.responseStart - e.requestStart]); performance.clearResourceTimings(); return saves; }"
)
# The SCU list as shown with an empty filter (annotator.js scusByWeight: weight, then label in the locale's order).
ORDER = (
    "() => [...document.querySelectorAll('.scu-list .scu')].map((i) => [Number(i.dataset.id), "
    "i.querySelector('.label').textContent])"
)

# The suggestions shown (null while they load): each row's SCU, parts (code points) and whether it is
# wholly in sight; and how many more come after these.
SHOWN = """() => {
  const bar = document.querySelector('.suggestion-bar');
  if (!bar || bar.hidden) return { rows: [], more: 0 };
  if (bar.querySelector('button:disabled')) return null;
  const rows = [...bar.querySelectorAll('.suggestion-list .suggestion')].map((row) => {
    const r = row.getBoundingClientRect();
    return { n: Number(row.dataset.n), scu: Number(row.dataset.scu), taken: row.classList.contains('taken'),
             parts: (row.dataset.parts || '').split(',').filter(Boolean).map((p) => p.split('-').map(Number)),
             struck: row.classList.contains('struck'), visible: r.top >= 0 && r.bottom <= innerHeight && r.height > 0 };
  });
  return { rows, more: Number(bar.dataset.more || 0) };
}"""

IN_SIGHT = """() => {
  const list = document.querySelector('.scu-list').getBoundingClientRect();
  const top = Math.max(list.top, 0), bottom = Math.min(list.bottom, innerHeight);
  const items = [...document.querySelectorAll('.scu-list .scu')];
  const sight = items.filter((i) => { const r = i.getBoundingClientRect(); return r.top >= top && r.bottom <= bottom;
    });
  const height = items.length ? items[0].getBoundingClientRect().height : 1;
  return [sight.map((i) => Number(i.dataset.id)), Math.max(1, Math.floor((bottom - top) / height) - 1)];
}"""


class AnnotatorRobot(Robot):
    """The robot in the peer annotator: its peer text, suggestions and SCU list."""

    def navigate(self, run: PeerRun, kind: str, selector: str) -> tuple[str, int]:
        """Click what opens the next peer ("Done, next peer": in the same page, at the next peer's
        URL; Start: a page load); returns what its URL names: ("annotation", id) for a peer
        annotated before, ("peer", id) for an untouched peer's page (issue 21: opening a peer
        stores nothing; its first action creates the annotation)."""
        found = super().navigate(run, kind, selector, OPENED)
        return ("annotation", int(found["annotation"])) if found["annotation"] else ("peer", int(found["peer"]))

    def drag(self, run: PeerRun, u16: tuple[int, int], shift: bool) -> None:
        super().drag(run, ".peer-text", ".peer-text", u16, shift)
        if not self.page.locator(".peer-text .seg.pending").count():
            sys.exit(f"dragging over UTF-16 [{u16[0]}, {u16[1]}) of the peer selected nothing")

    def shown(self) -> tuple[list[tuple[int, int, tuple[tuple[int, int], ...]]], int]:
        """The suggestions the page shows still to decide on (their numbers, SCUs and parts, code
        points; a row matched meanwhile is left out), and how many come after them."""
        shown = self.page.evaluate(SHOWN)
        if shown is None:
            sys.exit("the suggestions were still loading once the page had settled")
        if any(not row["visible"] for row in shown["rows"]):
            sys.exit("a suggestion shown is out of sight (1400x900): the list is not reviewed at a glance")
        if any(row["struck"] for row in shown["rows"]):
            sys.exit("a suggestion is struck before the robot struck it")
        return [
            (row["n"], row["scu"], tuple(map(tuple, row["parts"]))) for row in shown["rows"] if not row["taken"]
        ], shown["more"]

    def sight(self) -> tuple[set[int], int]:
        """The SCUs in sight in the list, and how many items it shows at once."""
        ids, rows = self.page.evaluate(IN_SIGHT)
        return set(ids), rows


def reproduce_peer(robot, run: PeerRun, text: str, order: list[tuple[int, str]]) -> None:
    """The suggestions first (shown as the peer opened: each read; the wrong ones struck, A accepts
    the others), then the matches and non-matching units still missing, in text order. ``robot``: a
    Robot (or a stand-in in tests)."""
    shown, more = robot.shown()
    while shown:
        wrong = [n for n, scu, parts in shown if not run.judge(scu, parts)]
        if len(wrong) == len(shown) and not more:
            break  # nothing to accept and nothing after: left as it is
        for n in wrong:
            robot.key(run, "strike", str(n))
        robot.key(run, "accept", "a")
        shown, more = robot.shown()
    for match in sorted(run.todo, key=lambda m: m.parts[0]):
        for i, (start, end) in enumerate(match.parts):
            robot.drag(run, (to_u16(text, start), to_u16(text, end)), shift=i > 0)
        if match.scu is None:
            robot.click(run, "no-scu", '.toolbar [data-action="non-matching"]')
            continue
        in_sight, rows = robot.sight()
        for kind, value in scu_pick(match.scu, order, in_sight, rows):
            if kind == "find":
                robot.key(run, "find", value)
            elif kind == "type":
                robot.type(run, value)
            elif kind == "enter":
                robot.key(run, "enter", "Enter")
            else:
                robot.click(run, "pick", f'.scu-list .scu[data-id="{value}"]')
    run.todo.clear()


# ---------------------------------------------------------------------------- the database


def matches_of(annotation) -> list[Match]:
    out = [
        Match(m.scu_id, tuple(sorted((p.start, p.end) for p in m.parts.all())))
        for m in annotation.matches.prefetch_related("parts")
    ]
    return sorted((m for m in out if m.parts), key=lambda m: m.parts[0])


def expert_of(peer, pyramid, robot_user):
    """The expert's annotation of ``peer``: the imported one against the pyramid the annotator
    uses (the first by file name when a topic was annotated twice, e.g. DUC 2006 D0631)."""
    return peer.annotations.filter(pyramid=pyramid).exclude(annotator=robot_user).order_by("source").first()


def ducview_for(expert, peer_text: str) -> tuple[int, int]:
    from annotation.pyramids.models import ContributorPart

    references = {r.pk: r.text for r in expert.pyramid.references.all()}
    contributors: dict[int, dict[int, list[str]]] = {}
    for contributor, scu, reference, start, end in (
        ContributorPart.objects.filter(contributor__scu__pyramid=expert.pyramid)
        .values_list("contributor_id", "contributor__scu_id", "reference_id", "start", "end")
        .order_by("contributor_id", "start")
    ):
        contributors.setdefault(scu, {}).setdefault(contributor, []).append(references[reference][start:end])
    texts = {scu: [" ".join(parts) for parts in by.values()] for scu, by in contributors.items()}
    return ducview_minimum([(m.scu, " ".join(peer_text[s:e] for s, e in m.parts)) for m in matches_of(expert)], texts)


def stored_score(annotation, timeout: float = 60.0) -> dict:
    """The annotation's stored NIST score once it is current (computed by the worker or the server)."""
    from annotation.peers.models import AnnotationScore, PeerAnnotation

    deadline = time.monotonic() + timeout
    while True:
        annotation = PeerAnnotation.objects.select_related("pyramid").get(pk=annotation.pk)
        score = AnnotationScore.objects.filter(annotation=annotation, convention="nist").first()
        if score and score.is_current:
            return score.values
        if time.monotonic() > deadline:
            sys.exit(f"annotation {annotation.pk}: no current stored score after {timeout:.0f} s")
        time.sleep(0.2)


def compare(robot_annotation, expert) -> str | None:
    """None when the robot's stored annotation equals the expert's (SCUs, repetitions, non-matching
    units, stored score); else what differs."""
    ours, theirs = Counter(m.scu for m in matches_of(robot_annotation)), Counter(m.scu for m in matches_of(expert))
    if ours != theirs:
        return f"matches differ: ours {dict(ours)}, expert {dict(theirs)}"
    a, e = stored_score(robot_annotation), stored_score(expert)
    if a != e:
        return f"stored scores differ: ours {a}, expert {e}"
    return None


# ---------------------------------------------------------------------------- the model


def suggestions_model(args, release: Path, topics: list[str]) -> Path:
    """The model the server ranks with (its file): read from ``--model``, or trained here on the
    other year; refused when it saw the release reported on (``suggestion_model.saw``)."""
    from annotation.pyramids import suggestion_model

    if args.model:
        path = Path(args.model)
        model = suggestion_model.load(path)
        if model is None:
            sys.exit(f"--model {path}: no model of this code's feature format there")
        seen = model.seen()
        print(
            f"suggestions model: {path} ({model.trained_on}; threshold {model.threshold:.3f}); trained on "
            + (_release.files_line([Path(s) for s in seen[0]]) if seen and seen[0] else "files it does not record"),
            flush=True,
        )
    else:
        folder = _release.training_folder(release, args.train)
        if folder is None:
            sys.exit(f"which release trains the model for {release}? Give --train FOLDER or --model FILE")
        files = sorted((folder / "allpans").glob("*.pan"))
        if not files:
            sys.exit(f"no .pan files in {folder / 'allpans'} to train the model on")
        started = time.monotonic()
        found = suggestion_model.ducview_cases(files)
        model = suggestion_model.fit_each_peer_twice(
            [case for *_, case in found],
            [topic for topic, *_ in found],
            f"{len(files)} DUCView files of {folder.name}",
            [str(f.resolve()) for f in files],
        )
        path = Path(tempfile.gettempdir()) / f"pyramid-bench-suggestions-{folder.resolve().name}.joblib"
        suggestion_model.save(model, path)
        print(
            f"suggestions model: trained here in {time.monotonic() - started:.0f} s on {_release.files_line(files)} "
            f"({len(found)} peer annotations of {len(model.topics)} topics); threshold {model.threshold:.3f}; "
            f"saved to {path} (--model {path} reuses it)",
            flush=True,
        )
    refused = suggestion_model.saw(model, release, topics)
    if refused:
        sys.exit(f"the suggestions model may not be measured on {release}: {refused}")
    return path


# ---------------------------------------------------------------------------- the run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--topics", type=int, default=4, help="topics, spread evenly over the dataset (default: %(default)s)"
    )
    parser.add_argument(
        "--peers", type=int, default=6, help="peers per topic, in the annotator's order (default: %(default)s)"
    )
    parser.add_argument(
        "--stress", type=int, default=0, metavar="N", help="N CPU-bound busy processes beside the bench"
    )
    trained = parser.add_mutually_exclusive_group()
    trained.add_argument(
        "--train", metavar="FOLDER", help="a release whose allpans/ train the model (default: the other DUC year)"
    )
    trained.add_argument("--model", metavar="FILE", help="a trained model (train_suggestions, or an earlier run's)")
    b.add_common_arguments(parser)
    _release.add_release_argument(parser)  # after the common --data, whose default it replaces
    args = parser.parse_args()
    args.data = _release.release_folder(args)
    if args.topics < 1 or args.peers < 1 or args.stress < 0:
        sys.exit("--topics and --peers must be at least 1, --stress at least 0")
    b.check_prerequisites(args)
    redis_url = os.environ.get("REDIS_URL", "")
    child_env = b.setup_django(args.keep_db)
    if not redis_url:
        child_env.pop("REDIS_URL", None)

    from annotation.corpus.models import Assignment, Topic
    from annotation.corpus.natural_order import natural_key
    from annotation.peers.assignments import pyramid_to_annotate_against
    from annotation.peers.models import PeerAnnotation

    release = Path(args.data)
    dataset = _release.import_release(release)
    child_env["SUGGESTIONS_MODEL"] = str(
        suggestions_model(
            args, release, list(Topic.objects.filter(dataset__name=dataset).values_list("external_id", flat=True))
        )
    )
    topics = _release.sample_topics(dataset, args.topics)
    user = b.create_user("bench-robot")
    plans = []  # (topic, assignment, pyramid, [(peer, expert)])
    for external_id in topics:
        topic = Topic.objects.get(external_id=external_id, dataset__name=dataset)
        pyramid = pyramid_to_annotate_against(topic)
        assignment = Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.ANNOTATE_PEERS)
        peers = sorted(topic.peersummarys.all(), key=lambda p: natural_key(p.external_id))[: args.peers]
        experts = [(peer, expert_of(peer, pyramid, user)) for peer in peers]
        missing = [peer.external_id for peer, expert in experts if expert is None]
        if missing:
            sys.exit(f"topic {external_id}: no expert annotation against pyramid {pyramid.pk} for peers {missing}")
        plans.append((topic, assignment, pyramid, experts))
    machine = b.machine_line(
        args.server, "a Celery worker subprocess (Redis)" if redis_url else "in the server process"
    )
    b.close_db_connections()

    log_dir = b.make_log_dir()
    errors: list[str] = []
    runs: list[tuple] = []  # (topic, run, DUCView actions, autoannotated, mismatch, our floor with perfect suggestions)
    started, load_before = time.monotonic(), os.getloadavg()[0]
    saves: list[list[float]] = []  # [ms, ms until the first byte] of each POST /api/matches/
    with contextlib.ExitStack() as stack:
        if redis_url:
            import redis

            redis.Redis.from_url(redis_url).flushdb()
            control = stack.enter_context(b.celery_worker(child_env, log_dir, redis_url))
            b.wait_worker_idle(control)
        base = stack.enter_context(b.server(args.server, child_env, log_dir))
        browser = stack.enter_context(b.chromium(args.chromium))
        context, page = b.new_page(browser, errors)
        context.add_init_script(PROBE)
        b.login(page, base, user.username)
        robot = AnnotatorRobot(page, errors)
        stress = stack.enter_context(busy_processes(args.stress))
        if stress:
            print(f"{len(stress)} CPU-bound busy processes started beside the bench", flush=True)
        for topic, assignment, pyramid, experts in plans:
            page.goto(f"{base}/")
            opening = PeerRun(peer="open")
            opened = robot.navigate(opening, "open", f'form[action="/assignments/{assignment.pk}/open/"] button')
            for k, (peer, expert) in enumerate(experts):
                opened_peer = (
                    PeerAnnotation.objects.get(pk=opened[1]).peer_id if opened[0] == "annotation" else opened[1]
                )
                if opened_peer != peer.pk:
                    sys.exit(f"the annotator opened peer id {opened_peer}, expected {peer.pk} ({peer.external_id})")
                run = PeerRun(peer=peer.external_id, todo=matches_of(expert))
                if k == 0:
                    run.actions.update(opening.actions)
                    run.waits += opening.waits
                    run.painted += opening.painted
                reproduce_peer(robot, run, peer.text, page.evaluate(ORDER))
                saves += page.evaluate(SAVES)
                opened = robot.navigate(run, "done", '.toolbar [data-action="done"]')
                current = PeerAnnotation.objects.select_related("peer").get(peer=peer, pyramid=pyramid, annotator=user)
                mismatch = compare(current, expert)
                minimum, automatic = ducview_for(expert, peer.text)
                runs.append(
                    (
                        topic.external_id,
                        run,
                        minimum,
                        automatic,
                        mismatch,
                        perfect_floor(matches_of(expert), int(k == 0)),
                    )
                )
                waits = ", ".join(f"{kind} {ms:.0f}" for kind, ms in sorted(run.waits, key=lambda w: -w[1])[:3])
                print(
                    f"{topic.external_id} peer {peer.external_id:>3}: {len(matches_of(expert)):2} expert matches, "
                    f"{run.total:3} actions ({format_actions(run.actions)}), DUCView {minimum:3} "
                    f"({automatic} by its Autoannotate), "
                    f"ratio {ratio_line(run.total, minimum)}; waited {run.waited_ms / 1000:.2f} s, painted "
                    f"after {run.painted_ms / 1000:.2f} s (longest waits: {waits} ms); "
                    f"{'stored = expert' if mismatch is None else 'MISMATCH: ' + mismatch}",
                    flush=True,
                )
                b.close_db_connections()
        context.close()
    elapsed = time.monotonic() - started
    report(runs, args, topics, machine, elapsed, (load_before, os.getloadavg()[0]), saves)
    if any(r[4] for r in runs):
        sys.exit("the stored annotation differs from the expert's for some peers (see above)")


def report(runs, args, topics, machine, elapsed, loads_avg, saves) -> None:
    ours = sum(r[1].total for r in runs)
    ducview = sum(r[2] for r in runs)
    floor = sum(r[5] for r in runs)
    peers = len(runs)
    waited = [r[1].waited_ms / 1000 for r in runs]
    painted = [r[1].painted_ms / 1000 for r in runs]
    by_kind: dict[str, list[float]] = {}
    total = Counter()
    for r in runs:
        total.update(r[1].actions)
        for kind, ms in r[1].waits:
            by_kind.setdefault(kind, []).append(ms)
    goal = GOAL_WAIT_STRESS if args.stress else GOAL_WAIT_QUIET
    print()
    print(
        f"{Path(args.data).name}, topics {', '.join(topics)}, the first {args.peers} peers of each ({peers} peers), "
        f"{'beside ' + str(args.stress) + ' CPU-bound processes' if args.stress else 'no --stress'} "
        f"(1-minute load average {loads_avg[0]:.1f} before, {loads_avg[1]:.1f} after); {elapsed:.0f} s"
    )
    print(
        "  stored annotation = expert's (SCUs, repetitions, non-matching units, stored score): "
        f"{sum(r[4] is None for r in runs)} of {peers} peers"
    )
    print(f"  actions: ours {ours} ({ours / peers:.1f} per peer: {format_actions(total)})")
    print(
        f"    DUCView 1.4 minimum {ducview} ({ducview / peers:.1f} per peer; {sum(r[3] for r in runs)} "
        "matches by its Autoannotate); "
        f"ratio ours/DUCView {ratio_line(ours, ducview)} (goal <= {GOAL_RATIO})"
    )
    print(
        f"    ours if every expert match were suggested right and nothing else: {floor}, ratio "
        f"{ratio_line(floor, ducview)}"
    )
    print(
        f"  waiting per peer: median {b.median(waited):.2f} s, p95 {b.percentile(waited, 95):.2f} s, max "
        f"{max(waited):.2f} s, "
        f"total {sum(waited):.1f} s (goal <= {goal} s per peer)"
    )
    print(
        f"    until painted only (not waiting for saves): median {b.median(painted):.2f} s, p95 "
        f"{b.percentile(painted, 95):.2f} s per peer"
    )
    for kind, name in (
        ("done", '"Done, next peer" (the next peer in the same page)'),
        ("open", "Start (a page load)"),
    ):
        shown = [ms for r in runs for k, ms in r[1].painted if k == kind]
        settled = [ms for r in runs for k, ms in r[1].waits if k == kind]
        if shown:
            print(
                f"    {name}: painted median {b.median(shown):.0f} ms, p95 {b.percentile(shown, 95):.0f} ms; "
                f"settled (saved) median {b.median(settled):.0f} ms, p95 {b.percentile(settled, 95):.0f} "
                f"ms (n={len(shown)})"
            )
    print("    until everything is saved, by kind of action:")
    for kind, values in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {kind:>7}: {sum(values) / 1000 / peers:.2f} s per peer; {b.summary(values)}")
    if saves:
        print(
            "    of which the saves of new matches (POST /api/matches/, Resource Timing): "
            f"{b.summary([s[0] for s in saves])}; "
            f"request sent until the answer's first byte: {b.summary([s[1] for s in saves])}"
        )
    print(f"  {machine}")
    print(f"  CPU: {cpu_model()}, nproc {os.cpu_count()}")


if __name__ == "__main__":
    main()
