"""axe-core on every page a browser test loads (WCAG 2 A and AA), failing the test on any violation.

Why here and not in each test: a page that a test merely passes through is still a page a person
uses, and the violations found by hand (an unlabelled select, low contrast, a link told apart by
colour alone) were on pages no accessibility test named. The session's Chromium is wrapped so that
every context it opens injects axe (the copy pinned by the ``axe-playwright-python`` test
dependency) and runs it once the page has loaded and settled; the results come back through a
binding, so pages reached by clicks, redirects and form posts are checked as well as ``goto``s.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass, field

AXE_SOURCE = importlib.resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
# axe is evaluated only in documents served over HTTP, the ones audited: not in the about:blank each
# new page starts as (nor a data: URL), where no audit runs and where, as the first script of a new
# renderer process, it cost 0.3-0.6 s of CPU for each browser context a test opened (axe's one
# statement, a function called at once, means the same inside the block).
_AXE_IN_WEB_PAGES = "if (location.protocol === 'http:' || location.protocol === 'https:') {\n" + AXE_SOURCE + "\n}"
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
  window.__axeCheck = async () => {
    if (window.__axeRunning) return window.__axeRunning;
    window.__axeRunning = (async () => {
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
      await window.__axeReport(location.pathname + location.search, found);
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
    """Violations reported by the pages of the running test, as readable lines."""

    lines: list[str] = field(default_factory=list)

    def record(self, path: str, violations: list[dict]) -> None:
        for violation in violations:
            line = f"{path}: {violation['id']} ({violation['impact']}): {violation['help']} at {violation['nodes']}"
            if line not in self.lines:
                self.lines.append(line)


FINDINGS = Findings()


def instrument(context) -> None:
    """Run axe in every page of ``context`` after each load; results go to FINDINGS."""
    context.expose_binding("__axeReport", lambda source, path, violations: FINDINGS.record(path, violations))
    context.add_init_script(_AXE_IN_WEB_PAGES)
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
