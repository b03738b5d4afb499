"""axe-core on every page a browser test loads (WCAG 2 A and AA), failing the test on any violation.

Why here and not in each test: a page that a test merely passes through is still a page a person
uses, and the violations found by hand (an unlabelled select, low contrast, a link told apart by
colour alone) were on pages no accessibility test named. The session's Chromium is wrapped so that
every context it opens runs axe (the copy pinned by the ``axe-playwright-python`` test dependency,
evaluated in a document when that document is first audited) once the page has loaded and settled;
the results come back through a binding, so pages reached by clicks, redirects and form posts are
checked as well as ``goto``s.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass, field

AXE_SOURCE = importlib.resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Pages whose markup a third-party UI renders, not this project: Django's admin, DRF's browsable API
# and drf-spectacular's Swagger UI (developer tools, outside the WCAG scope of the app's own pages;
# their violations are in markup these packages generate, e.g. Swagger UI's nested controls).
THIRD_PARTY_PREFIXES = ["/admin/", "/api/"]
# Above this many elements a page is audited without `color-contrast`, whose cost grows with every
# text node (seconds on a real-data dashboard, stalling the test's own clicks); the same components'
# contrast is audited on the suite's smaller pages.
LARGE_PAGE_ELEMENTS = 3000
# How long after `load` a page is left to render what its scripts fetch before it is checked.
SETTLE_MS = 400

# JavaScript filled in with %: its own braces would all need doubling for format() or an f-string.
_RUN_AFTER_LOAD_TEMPLATE = r"""
(() => {
  if (window !== window.top || window.__axeInstalled) return;
  if (location.protocol !== 'http:' && location.protocol !== 'https:') return;   // about:blank: nothing to audit
  if (%(skip)s.some(prefix => location.pathname.startsWith(prefix))) return;
  if (document.contentType !== 'text/html') return;   // a JSON or text answer shown by the browser
  window.__axeInstalled = true;
  // Two 32-bit multiplicative hashes of the text (cyrb53's mixing, 64 bits kept) and its length: not
  // crypto.subtle, which pages served over plain HTTP from another host than localhost lack.
  const digest = (text) => {
    let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (h1 >>> 0).toString(16) + (h2 >>> 0).toString(16) + ':' + text.length;
  };
  window.__axeCheck = async () => {
    if (window.__axeRunning) return window.__axeRunning;
    window.__axeRunning = (async () => {
      // The document as it stands and what its styles depend on besides: an identical one already
      // audited in this browser has its findings reported again without a second audit.
      const media = ['(prefers-color-scheme: dark)', '(forced-colors: active)', '(prefers-reduced-motion: reduce)',
                     '(prefers-contrast: more)'].map(query => matchMedia(query).matches ? 1 : 0).join('');
      const markup = document.documentElement.outerHTML
        .replace(/(name="csrfmiddlewaretoken" value=|nonce=)"[^"]*"/g, '$1""');
      const key = digest([innerWidth, innerHeight, devicePixelRatio, media, document.compatMode, markup].join('\n'));
      if (await window.__axeSeen(location.pathname + location.search, key)) return [];
      // axe (half a megabyte of script) evaluated only in a document about to be audited: not in every
      // document a test loads (a repeat, a third-party page, a page left before it settled), where
      // parsing it cost Chromium a fifth of a navigation's CPU.
      if (typeof axe === 'undefined') await window.__axeLoad();
      const large = document.getElementsByTagName('*').length > %(large)d;
      const result = await axe.run(document, {runOnly: {type: 'tag', values: %(tags)s}, resultTypes: ['violations'],
                                              rules: large ? {'color-contrast': {enabled: false}} : {}});
      const found = result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}));
      // What axe leaves to review: a second element with an id (a label or description then names
      // the wrong one) and a reference to an id the page lacks (a field's help never read out).
      const ids = new Map();
      for (const el of document.querySelectorAll('[id]')) ids.set(el.id, (ids.get(el.id) || 0) + 1);
      const duplicated = [...ids].filter(([, n]) => n > 1).map(([id]) => '#' + id);
      if (duplicated.length) found.push({id: 'duplicate-id', impact: 'serious', help: 'ids must be unique',
        nodes: duplicated.slice(0, 5)});
      const dangling = [];
      for (const attr of ['aria-describedby', 'aria-labelledby', 'for']) {
        for (const el of document.querySelectorAll(attr === 'for' ? 'label[for]' : `[${attr}]`)) {
          for (const ref of el.getAttribute(attr).split(/\s+/).filter(Boolean)) {
            if (!ids.has(ref)) dangling.push(`${el.tagName.toLowerCase()}[${attr}="${ref}"]`);
          }
        }
      }
      if (dangling.length) found.push({id: 'missing-idref', impact: 'serious', help: 'referenced ids must exist',
        nodes: dangling.slice(0, 5)});
      await window.__axeReport(location.pathname + location.search, found, key);
      return found;
    })().finally(() => { window.__axeRunning = null; });
    return window.__axeRunning;
  };
  window.addEventListener('load', () => setTimeout(() => { window.__axeCheck().catch(() => {}); }, %(settle)d));
})();
"""
_RUN_AFTER_LOAD = _RUN_AFTER_LOAD_TEMPLATE % {
    "tags": json.dumps(AXE_TAGS),
    "settle": SETTLE_MS,
    "skip": json.dumps(THIRD_PARTY_PREFIXES),
    "large": LARGE_PAGE_ELEMENTS,
}


@dataclass
class Findings:
    """Violations reported by the pages of the running test, as readable lines; and, for the whole
    run, the violations found in each document audited (by its digest: the markup, viewport and media
    features a page's styles depend on). Auditing a document is a function of these alone, so a
    document seen before (a login page, the same page reloaded, a test's page as another test left it)
    is not audited again: its findings are reported again, to the test now running."""

    lines: list[str] = field(default_factory=list)
    audited: dict[str, list[dict]] = field(default_factory=dict)
    audits: int = 0

    def record(self, path: str, violations: list[dict], digest: str | None = None) -> None:
        if digest is not None:
            self.audited[digest] = violations
            self.audits += 1
        for violation in violations:
            line = f"{path}: {violation['id']} ({violation['impact']}): {violation['help']} at {violation['nodes']}"
            if line not in self.lines:
                self.lines.append(line)

    def seen(self, path: str, digest: str) -> bool:
        """Whether the document was audited before; if so its findings count for the running test."""
        if digest not in self.audited:
            return False
        self.record(path, self.audited[digest])
        return True


FINDINGS = Findings()


def instrument(context) -> None:
    """Run axe in every page of ``context`` after each load; results go to FINDINGS."""
    context.expose_binding("__axeSeen", lambda source, path, digest: FINDINGS.seen(path, digest))
    context.expose_binding(
        "__axeReport", lambda source, path, violations, digest: FINDINGS.record(path, violations, digest)
    )
    context.expose_binding("__axeLoad", lambda source: source["frame"].evaluate(AXE_SOURCE))
    context.add_init_script(_RUN_AFTER_LOAD)


def check(page) -> None:
    """Check the page as it is now (a state reached by interaction, not by a load)."""
    page.evaluate("async () => { if (window.__axeCheck) await window.__axeCheck(); }")


# How long a page's load, a click's navigation or a selector may take before a test fails: a bound that
# catches a hang only. Playwright's 30 s default failed a real-data page's load on a 2-core machine
# at a load of 20-30 (CI beside other work), where nothing was wrong but the wait.
HANG_MS = 120_000


class AuditedBrowser:
    """The session's Chromium, every context of which is audited by axe."""

    def __init__(self, browser):
        self._browser = browser

    def new_context(self, **options):
        context = self._browser.new_context(**options)
        context.set_default_timeout(HANG_MS)
        instrument(context)
        return context

    def new_page(self, **options):
        page = self._browser.new_page(**options)
        page.context.set_default_timeout(HANG_MS)
        instrument(page.context)
        return page

    def __getattr__(self, name):
        return getattr(self._browser, name)
