"""Every page fits a phone (390 px) and a tablet (768 px): nothing is wider than the screen.

Why every page and not a sample: the pages that overflowed (issue 30: the annotator home at 671 px
with Start off-screen, the overview, people, run page, adjudication, the annotator at 800 px, a
coordinator's header with Log out off-screen) were each wide for a reason of their own, a table,
a toolbar, a fixed pane. The pages are those of the CSP test (``tests/security/test_csp.pages``,
which ``test_every_page_is_listed`` keeps in step with the URLconf) in its world where every page
has data, each seen by the role that uses it. A table may be wider than the screen inside its own
scroll box (``.table-wrap``): the page itself may not. The header is checked too: each control
(brand, links, user name, Log out) on screen, on one line, apart from its neighbours.
"""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.corpus.models import Assignment
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.peers.models import PeerAnnotation

from tests.security.test_csp import ANONYMOUS, pages, world  # noqa: F401  (world: a fixture)

WIDTHS = {"phone": (390, 844), "tablet": (768, 1024)}
# Markup a third-party package renders (Django's admin, DRF's browsable API, Swagger UI), as in
# tests/accessibility.py: outside the app's own layout.
THIRD_PARTY = ("admin:", "api:")

# What is wider than the screen: the outermost elements reaching past its right edge (outside a scroll
# box); and what is wrong with the header: a control (the brand, a link, the user's name, Log out)
# off-screen, broken over two lines, or touching its neighbour.
MEASURE = """() => {
  const width = innerWidth;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + [...e.classList].map(c => '.' + c).join('');
  const past = (e) => e.getBoundingClientRect().right > width + 0.5;
  const scrolled = (e) => { for (let a = e.parentElement; a !== document.body; a = a.parentElement) {
    if (getComputedStyle(a).overflowX !== 'visible') return true; } return false; };
  const wide = [...document.body.querySelectorAll('*')].filter(e => past(e) && !past(e.parentElement) && !scrolled(e))
    .slice(0, 6).map(e => `${name(e)} (right edge at ${Math.round(e.getBoundingClientRect().right)})`);
  const controls = [...document.querySelectorAll('.topbar .brand, .topbar nav a, .topbar nav button, .topbar .who')];
  const header = [];
  for (const e of controls) {
    const r = e.getBoundingClientRect(), text = e.textContent.trim();
    if (r.left < 0 || r.right > width + 0.5) header.push(`${text} off-screen`);
    if (e.getClientRects().length > 1 || r.height > 1.6 * parseFloat(getComputedStyle(e).lineHeight))
      header.push(`${text} broken over lines`);
  }
  controls.forEach((a, i) => controls.slice(i + 1).forEach(b => {
    const p = a.getBoundingClientRect(), q = b.getBoundingClientRect();
    const sameRow = p.top < q.bottom && q.top < p.bottom;
    if (sameRow && Math.max(p.left, q.left) - Math.min(p.right, q.right) < 8)
      header.push(`${a.textContent.trim()} runs into ${b.textContent.trim()}`);
  }));
  return {page: document.documentElement.scrollWidth, width, wide, header};
}"""


@pytest.fixture
def people(world):  # noqa: F811  (the fixture imported above)
    """The people who see the pages: ``ann`` does the world's annotation work (the annotation,
    the assignment and, as the builder of T1's pyramid, the builder); ``dana.coordinator`` coordinates every
    dataset of the world (dashboards, adjudication, set-up, crowd runs)."""
    User = get_user_model()
    annotator = User.objects.create_user("ann")
    annotator.groups.add(role_group(ANNOTATOR))
    pyramid = world["pyramid"]
    Assignment.objects.filter(pk=world["assignment"].pk).update(annotator=annotator)
    Assignment.objects.create(topic=pyramid.topic, annotator=annotator, task=Assignment.Task.BUILD_PYRAMID)
    PeerAnnotation.objects.filter(pk=world["annotation"].pk).update(annotator=annotator)
    pyramid.creator = annotator
    pyramid.save(update_fields=["creator"])
    coordinator = User.objects.create_user("dana.coordinator", is_staff=True)  # the longest header: Admin too
    coordinator.groups.add(role_group(COORDINATOR))
    for dataset in (world["dataset"], world["construction"]):
        dataset.coordinators.add(coordinator)
    return {"annotator": annotator, "coordinator": coordinator}


def role(name: str) -> str:
    if name in ANONYMOUS:
        return "anonymous"
    return "annotator" if name.startswith("frontend:") or name == "not found" else "coordinator"


@pytest.mark.browser
def test_no_page_is_wider_than_a_phone_or_a_tablet(chromium, live_server, world, people):  # noqa: F811
    cookies = {}
    for who, user in people.items():
        client = Client()
        client.force_login(user)
        cookies[who] = [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    problems = []
    for device, (width, height) in WIDTHS.items():
        tabs = {}
        for who in ("anonymous", *people):
            context = chromium.new_context(viewport={"width": width, "height": height})
            context.add_cookies(cookies.get(who, []))
            tabs[who] = context.new_page()
        try:
            for name, path, ready in pages(world):
                if name.startswith(THIRD_PARTY):
                    continue
                tab = tabs[role(name)]
                response = tab.goto(live_server.url + path)
                tab.wait_for_load_state("load")
                expected = 404 if name == "not found" else 200  # not a refusal or a login page in its stead
                assert response.status == expected and (name == "login" or "/login/" not in tab.url), (
                    f"{name} as {role(name)}: {response.status} at {tab.url}"
                )
                if ready:
                    tab.wait_for_selector(ready, timeout=10_000)
                tab.wait_for_timeout(150)  # what the page's scripts render after load
                found = tab.evaluate(MEASURE)
                if found["page"] > found["width"] or found["header"]:
                    problems.append(
                        f"{device} {width} px, {name} ({path}) as {role(name)}: page {found['page']} px wide; "
                        f"past the edge: {found['wide']}; header: {found['header']}"
                    )
        finally:
            for tab in tabs.values():
                tab.context.close()
    assert not problems, "pages wider than the screen:\n" + "\n".join(problems)
