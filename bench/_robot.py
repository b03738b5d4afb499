"""The robot of the benches that replay an expert's whole job in an editor (reproduce_expert.py in
the peer annotator, reproduce_pyramid.py in the pyramid builder): real keys, clicks and mouse drags
in headless Chromium, each counted as one action, and the waiting each one costs, measured in the
page.

**Waiting** is measured in the page, from the input event that completes an action (keydown, input,
mouseup, click) to the first animation frame at which the page is settled: the editor ready and not
busy, no write in flight, everything saved, suggestions loaded (the annotator's). Reads the page
makes in the background are no waiting; a read the person does wait for shows on the page. A page
load is measured from the click in the old page to that frame in the new one. Beside it, the wait
until the outcome is only *painted* (local first: painted before the server answers).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PROBE = """(() => {
  if (window.__bench) return;
  const t = window.__bench = { last: 0, ready: null, shown: null, inflight: 0 };
  performance.setResourceTimingBufferSize(100000); // one page may show every peer of a topic (SAVES clears it)
  const now = () => performance.timeOrigin + performance.now();
  // The events that complete an action (a key's keydown and input, a click or drag's release);
  // each restarts the wait. The last one is kept across page loads (a click that navigates).
  for (const type of ["keydown", "input", "mouseup", "click"]) {
    window.addEventListener(type, () => {
      t.last = now(); t.ready = null; t.shown = null;
      try { sessionStorage.setItem("benchLast", String(t.last)); } catch (e) { /* storage off */ }
    }, true);
  }
  const fetch = window.fetch;
  window.fetch = function (input, init) {
    const method = (init?.method ?? input?.method ?? "GET").toUpperCase();
    const counted = method !== "GET";  // writes; reads in the background are no waiting (see the docstring)
    if (counted) t.inflight++;
    const answer = fetch.apply(this, arguments);
    if (counted) answer.finally(() => { t.inflight--; });
    return answer;
  };
  // Shown: the page painted the action's outcome and takes the next one (local first: a match is
  // painted before the server answers). Settled: besides, nothing in flight and everything saved.
  const shown = () => {
    const editor = document.querySelector(".editor");
    const bar = document.querySelector(".suggestion-bar");
    return editor?.classList.contains("ready")
      && !(bar && !bar.hidden && bar.textContent.includes("Looking for suggestions"));
  };
  const settled = () => shown() && !document.querySelector(".editor").dataset.busy && !t.inflight
    && document.querySelector(".save-status")?.dataset.status === "saved";
  const loop = () => {
    if (t.shown === null && shown()) t.shown = now();
    if (t.ready === null && settled()) t.ready = now();
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
})();"""

READY = "() => window.__bench && window.__bench.ready !== null"
WAITED = "() => [window.__bench.ready - window.__bench.last, window.__bench.shown - window.__bench.last]"
SINCE_CLICK = (
    "() => [window.__bench.ready, window.__bench.shown].map((t) => t - Number(sessionStorage.getItem('benchLast')))"
)
# Set before a click that may load a page: gone if it did.
MARK_PAGE = "() => { window.__benchSamePage = true; }"
SAME_PAGE = "() => window.__benchSamePage === true"

# Where to press and release the mouse to drag over UTF-16 [start, end) of the text element
# ``text`` (its textContent's offsets), and whether both ends are in sight in ``pane``, the element
# that scrolls it, at least ``edge`` pixels from its top and bottom.
POINTS = """([text, pane, start, end, edge]) => {
  const root = document.querySelector(text);
  const locate = (u16) => { const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      if (off + n.data.length > u16) return [n, u16 - off];
      off += n.data.length;
    }
    throw new Error(`offset ${u16} outside the text`); };
  const rect = (u16, last) => { const r = document.createRange(); const [n, o] = locate(u16);
    r.setStart(n, o); r.setEnd(n, o + 1);
    const rects = r.getClientRects(); return rects[last ? rects.length - 1 : 0]; };
  const a = rect(start, false), z = rect(end - 1, true);
  const view = document.querySelector(pane).getBoundingClientRect();
  const inside = (r, edge) => r.top >= Math.max(view.top, 0) + edge
    && r.bottom <= Math.min(view.bottom, innerHeight) - edge;
  return { from: [a.left + a.width / 4, a.top + a.height / 2],
           to: [a === z ? a.right - a.width / 4 : z.right - z.width / 4, z.top + z.height / 2],
           inside: inside(a, edge) && inside(z, edge), visible: inside(a, 0) && inside(z, 0) };
}"""

# Scroll ``pane`` so that the line of ``text`` holding UTF-16 ``start`` is its first one in sight,
# ``edge`` pixels below its top.
SCROLL_TO = """([text, pane, start, edge]) => {
  const root = document.querySelector(text), scroller = document.querySelector(pane);
  const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT); let off = 0;
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    if (off + n.data.length > start) {
      const r = document.createRange(); r.setStart(n, start - off); r.setEnd(n, start - off + 1);
      scroller.scrollTop += r.getClientRects()[0].top - scroller.getBoundingClientRect().top - 8 - edge;
      return;
    }
    off += n.data.length;
  }
}"""


@dataclass
class Run:
    """The actions taken and the waits of one stretch of work (a peer, a pyramid)."""

    actions: Counter = field(default_factory=Counter)
    waits: list[tuple[str, float]] = field(default_factory=list)  # (kind, ms): until settled (saved, network idle)
    painted: list[tuple[str, float]] = field(
        default_factory=list
    )  # (kind, ms) until the outcome was painted (local first: before the save)

    def act(self, kind: str, wait_ms: float | None = None, painted_ms: float | None = None) -> None:
        self.actions[kind] += 1
        if wait_ms is not None:
            self.waits.append((kind, wait_ms))
        if painted_ms is not None:
            self.painted.append((kind, painted_ms))

    @property
    def total(self) -> int:
        return sum(self.actions.values())

    @property
    def waited_ms(self) -> float:
        return sum(ms for _, ms in self.waits)

    @property
    def painted_ms(self) -> float:
        return sum(ms for _, ms in self.painted)


class Robot:
    """Drives one browser page through an editor, counting into the Run it is given."""

    def __init__(self, page, errors: list[str]):
        self.page = page
        self.errors = errors

    def settle(self, run: Run, kind: str, navigated: bool = False) -> None:
        self.page.wait_for_function(READY, timeout=60_000)
        run.act(kind, *self.page.evaluate(SINCE_CLICK if navigated else WAITED))
        self.check()

    def check(self) -> None:
        if self.errors:
            sys.exit(f"JavaScript error in the page: {self.errors[0]}")
        banner = self.page.locator(".banner")
        if banner.count() and banner.is_visible():
            sys.exit(f"the editor shows an error: {banner.text_content()}")

    def key(self, run: Run, kind: str, key: str) -> None:
        self.page.keyboard.press(key)
        self.settle(run, kind)

    def click(self, run: Run, kind: str, selector: str) -> None:
        self.page.click(selector)
        self.settle(run, kind)

    def type(self, run: Run, char: str) -> None:
        self.page.keyboard.type(char)
        self.settle(run, "type")

    def navigate(self, run: Run, kind: str, selector: str, opened) -> re.Match:
        """Click what opens the next page or document (``opened``: a compiled pattern its URL
        matches); returns the match of the new URL. A page load is waited for from the click in the
        old page; a document painted in the same page, from the click."""
        old = self.page.url
        self.page.evaluate(MARK_PAGE)
        self.page.click(selector)
        self.page.wait_for_url(lambda url: url != old and opened.search(url) is not None, timeout=60_000)
        self.page.wait_for_load_state()  # a page load: its document, before it is asked anything
        self.settle(run, kind, navigated=not self.page.evaluate(SAME_PAGE))
        return opened.search(self.page.url)

    def drag(
        self,
        run: Run,
        text: str,
        pane: str,
        u16: tuple[int, int],
        shift: bool,
        kind: str = "select",
        edge: int = 0,
        pause_ms: int = 0,
        modifier: str | None = None,
    ) -> None:
        """A mouse drag over UTF-16 ``u16`` of the element ``text`` (Shift held when ``shift``, else
        ``modifier``, e.g. "Control", when given: one gesture, one action, as a Shift+drag),
        after one scroll of ``pane`` (an action) when the span is not in sight, or nearer than
        ``edge`` pixels to its top or bottom (where the browser scrolls the pane under a drag).
        ``pause_ms``: a pause before the press, after it and before the release, as a person's
        drag has (not counted in the waiting, which starts at the release)."""
        points = self.page.evaluate(POINTS, [text, pane, *u16, edge])
        if not points["inside"]:  # a person scrolls the text first: one action
            self.page.mouse.move(*points["from"])
            self.page.evaluate(SCROLL_TO, [text, pane, u16[0], edge])
            run.act("scroll")
            points = self.page.evaluate(POINTS, [text, pane, *u16, edge])
            if not points["visible"]:  # (a pane scrolled to its end may leave it nearer its edge)
                sys.exit(
                    f"UTF-16 [{u16[0]}, {u16[1]}) of {text} does not fit in its pane: "
                    "dragging across a scroll is not done"
                )
        mouse = self.page.mouse
        held = "Shift" if shift else modifier
        if held:
            self.page.keyboard.down(held)
        mouse.move(*points["from"])
        self.page.wait_for_timeout(pause_ms)
        mouse.down()
        self.page.wait_for_timeout(pause_ms)
        mouse.move(*points["to"], steps=4 if pause_ms else 2)
        self.page.wait_for_timeout(pause_ms)
        mouse.up()
        if held:
            self.page.keyboard.up(held)
        self.settle(run, kind)


def to_u16(text: str, cp: int) -> int:
    return len(text[:cp].encode("utf-16-le")) // 2


def to_cp(text: str, u16: int) -> int:
    return len(text.encode("utf-16-le")[: 2 * u16].decode("utf-16-le"))


def ratio_line(ours: int, ducview: int) -> str:
    return f"{ours / ducview:.2f}" if ducview else "n/a"


def format_actions(actions: Counter) -> str:
    return " ".join(f"{kind} {n}" for kind, n in sorted(actions.items(), key=lambda kv: (-kv[1], kv[0])))


@contextlib.contextmanager
def busy_processes(count: int):
    """``count`` CPU-bound Python loops beside the bench (each in its own session), stopped after."""
    processes = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(count)
    ]
    try:
        yield [p.pid for p in processes]
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            process.wait()


def cpu_model() -> str:
    return next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown CPU",
    )
