"""In Debian's Chromium, by real clicks: the crowd links' Copy buttons (clipboard, and the fallback
without the clipboard API), an MTurk worker handing a task in to MTurk, a Prolific worker sent back
to Prolific, MTurk's preview, and the coordinator checking codes and pseudonymising worker ids.
Screenshots go to test-artifacts/."""

import re
from urllib.parse import parse_qs, urlencode

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.corpus.roles import COORDINATOR, role_group
from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteReservation
from annotation.lightweight.privacy import is_pseudonym
from bench._chromium import chromium_flags

from tests.browser.editors.browser import PASSWORD, login
from tests.browser.lightweight.test_pages import no_inline_code, served
from tests.conftest import chromium_path
from tests.lightweight.test_platforms import MTURK, PROLIFIC
from tests.lightweight.world import small_run

pytestmark = pytest.mark.browser


@pytest.fixture
def world(transactional_db, settings, in_process_jobs):
    settings.CROWD_RATE = "10000/min"
    # Behind one trusted proxy (the browsers connect from 127.0.0.1), so each crowd worker's browser
    # comes from its own address (X-Forwarded-For), as the submissions record.
    settings.TRUSTED_PROXY_COUNT, settings.TRUSTED_PROXIES = 1, ["127.0.0.1"]
    run = small_run(peers=2)
    run.prolific_code = "C0FFEE42"
    run.save()
    user = get_user_model().objects.create_user("coord", password=PASSWORD)
    user.groups.add(role_group(COORDINATOR))
    run.dataset.coordinators.add(user)
    return run


def platform_page(text: str) -> str:
    """A stand-in for the platform's own page (a whole document: every page loaded is audited)."""
    return f'<!doctype html><html lang="en"><head><title>{text}</title></head><body><p>{text}</p></body></html>'


def worker_page(chromium, number: int):
    """A crowd worker's own browser, from its own address (127.0.0.N)."""
    context = chromium.new_context(
        viewport={"width": 900, "height": 900}, extra_http_headers={"X-Forwarded-For": f"127.0.0.{number}"}
    )
    return context.new_page()


def answer_all(page, choice="Present"):
    for fieldset in page.locator("fieldset.judgment").all():
        fieldset.get_by_text(choice, exact=True).click()


def test_copy_buttons_copy_the_crowd_links(chromium, live_server, world, artifacts):
    context = chromium.new_context(viewport={"width": 1100, "height": 800})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    login(page, live_server.url, "coord")
    page.goto(f"{live_server.url}/lightweight/{world.pk}/")
    page.click("text=New judging link, batch 1")
    page.click("text=New judging link, batch 2")
    row = page.locator('tr:has(input[data-link="judging-2"])')
    link = row.locator("input.copy").input_value()
    assert link.startswith(live_server.url + "/lightweight/crowd/")
    box = row.locator("input.copy").bounding_box()
    assert box["width"] > 400  # the whole link is readable, not a sliver
    row.locator("button[data-copy-link]").click()
    expect(row.locator("button[data-copy-link]")).to_have_text("Copied")  # the clipboard answers asynchronously
    assert page.evaluate("navigator.clipboard.readText()") == link
    page.locator("table.links").screenshot(path=str(artifacts / "lightweight-links-copy.png"))
    no_inline_code(served(page))

    # Without the clipboard API (an insecure origin, an old browser): the link is selected and copied the old way.
    bare = chromium.new_context(viewport={"width": 1100, "height": 800})
    bare.add_init_script("delete Navigator.prototype.clipboard")
    other = bare.new_page()
    other.on("pageerror", lambda e: errors.append(str(e)))
    login(other, live_server.url, "coord")
    other.goto(f"{live_server.url}/lightweight/{world.pk}/")
    row = other.locator('tr:has(input[data-link="judging-1"])')
    row.locator("button[data-copy-link]").click()
    expect(row.locator("button[data-copy-link]")).to_have_text(re.compile("^(Copied|Press Ctrl\\+C)$"))
    selected = other.evaluate(
        "() => { const f = document.activeElement; return f.value.slice(f.selectionStart, f.selectionEnd); }"
    )
    assert selected == row.locator("input.copy").input_value()
    assert errors == []


def test_mturk_and_prolific_workers_hand_their_work_in_to_their_platform(chromium, live_server, world, artifacts):
    link = CrowdLink.objects.create(pyramid=world, kind=CrowdLink.Kind.JUDGING, batch=1)
    base = f"{live_server.url}/lightweight/crowd/{link.token}/"
    page = worker_page(chromium, 2)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)

    # MTurk's preview: the task, no hold, nothing to submit.
    page.goto(f"{base}?{urlencode({'assignmentId': 'ASSIGNMENT_ID_NOT_AVAILABLE', 'hitId': MTURK['hitId']})}")
    assert "Accept the HIT on MTurk" in page.locator(".crowd-preview").inner_text()
    assert (
        page.locator("fieldset.judgment input:enabled").count() == 0
        and page.locator("button[type=submit]").count() == 0
    )
    assert not LiteReservation.objects.exists()
    page.screenshot(path=str(artifacts / "lightweight-mturk-preview.png"), full_page=True)

    # The accepted HIT: answer, submit, hand in to MTurk (intercepted: MTurk is not reachable from the tests).
    handed_in = []
    page.route(
        "https://workersandbox.mturk.com/**",
        lambda route: (
            handed_in.append((route.request.method, route.request.url, route.request.post_data)),
            route.fulfill(status=200, body=platform_page("MTurk got it"), content_type="text/html"),
        ),
    )
    page.goto(f"{base}?{urlencode(MTURK)}")
    assert "MTurk worker" in page.locator(".crowd-who").inner_text() and page.locator("#id_worker").count() == 0
    answer_all(page)
    page.click("text=Submit")
    code = page.locator("[data-completion-code]").inner_text()
    assert LiteAssignment.objects.get(platform="mturk").completion_code == code
    page.screenshot(path=str(artifacts / "lightweight-mturk-done.png"), full_page=True)
    no_inline_code(served(page))
    page.click("text=Submit to MTurk")
    page.wait_for_url("https://workersandbox.mturk.com/mturk/externalSubmit")
    method, url, body = handed_in[0]
    assert method == "POST" and parse_qs(body) == {"assignmentId": [MTURK["assignmentId"]], "surveycode": [code]}

    # Prolific: the completion redirect with the study's code (another worker, on its own phone).
    page = worker_page(chromium, 3)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body=platform_page("Prolific"), content_type="text/html"),
    )
    page.goto(f"{base}?{urlencode(PROLIFIC)}")
    answer_all(page, "Not present")
    page.click("text=Submit")
    page.screenshot(path=str(artifacts / "lightweight-prolific-done.png"), full_page=True)
    page.click("text=Do another task first")  # the batch's other task, then nothing is left
    answer_all(page, "Not present")
    page.click("text=Submit")
    page.click("text=Do another task first")
    assert "There are no more tasks for you here." in page.locator("main").inner_text()
    page.screenshot(path=str(artifacts / "lightweight-prolific-nothing-left.png"), full_page=True)
    page.click("text=Complete on Prolific")
    page.wait_for_url("https://app.prolific.com/submissions/complete?cc=C0FFEE42")
    assert errors == []


def test_coordinator_checks_codes_and_pseudonymises(chromium, live_server, world, artifacts):
    link = CrowdLink.objects.create(pyramid=world, kind=CrowdLink.Kind.JUDGING)
    codes = {}
    for number, worker in enumerate(("A1WORKER", "A2WORKER"), start=2):
        crowd = worker_page(chromium, number)
        for _ in range(2):
            params = {**MTURK, "workerId": worker, "assignmentId": f"{worker}X{_}"}
            crowd.goto(f"{live_server.url}/lightweight/crowd/{link.token}/?{urlencode(params)}")
            answer_all(crowd)
            crowd.click("text=Submit")
            codes.setdefault(worker, []).append(crowd.locator("[data-completion-code]").inner_text())
    assert set(LiteAssignment.objects.values_list("worker_id", "client").distinct()) == {
        ("A1WORKER", "127.0.0.2"),
        ("A2WORKER", "127.0.0.3"),
    }
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    login(page, live_server.url, "coord")
    page.goto(f"{live_server.url}/lightweight/{world.pk}/")
    pasted = (
        f"A1WORKER\t{codes['A1WORKER'][0]}\nA1WORKER\t{codes['A1WORKER'][1]}\n"
        f"A3WORKER\t{codes['A1WORKER'][0]}\nA2WORKER\tBADC0DE1\n"
    )
    page.fill("#id_codes_pairs", pasted)
    page.get_by_role("button", name="Check the codes").click()
    report = page.locator("[data-code-report]").inner_text()
    assert "4 pairs checked: 2 submissions newly verified" in report and "A1WORKER, A3WORKER" in report
    assert "no submission here has this code" in report
    verified = page.locator('table[data-submissions="verified"] tbody').inner_text()
    assert codes["A1WORKER"][0] in verified and codes["A2WORKER"][0] not in verified
    page.locator("#workers").screenshot(path=str(artifacts / "lightweight-codes.png"))
    no_inline_code(served(page))

    form = page.locator("form[data-pseudonymise]")
    form.locator("input[type=checkbox]").check()
    form.locator("button").click()
    assert "Worker ids pseudonymised" in page.locator(".messages").inner_text()
    assert all(is_pseudonym(a.worker_id) for a in LiteAssignment.objects.all())
    assert "A1WORKER" not in page.locator("#workers").inner_text()
    assert errors == []


def framing_browser(chromium, request, *flags):
    """A Chromium of its own in which the test's MTurk, a public site, frames localhost, which
    Chromium otherwise refuses (local network access); deployed, the app is a public site too. Its
    third-party storage is partitioned per top-level site, as browsers ship it (Playwright turns
    partitioning off)."""
    browser = chromium.browser_type.launch(
        executable_path=chromium_path(),
        headless=True,
        args=[*chromium_flags(disable=("LocalNetworkAccessChecks",), keep=("ThirdPartyStoragePartitioning",)), *flags],
    )
    request.addfinalizer(browser.close)
    return browser


def test_an_mturk_worker_judges_inside_mturks_frame(chromium, live_server, world, artifacts, request):
    """As MTurk shows an external question: in a frame on MTurk's site, where the browser sends
    this site's (SameSite) cookies neither for the session nor for the CSRF check."""
    link = CrowdLink.objects.create(pyramid=world, kind=CrowdLink.Kind.JUDGING, batch=1)
    task_url = f"{live_server.url}/lightweight/crowd/{link.token}/?{urlencode(MTURK)}"
    page = framing_browser(chromium, request).new_context(viewport={"width": 1000, "height": 1000}).new_page()
    errors, handed_in = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.route(
        "https://workersandbox.mturk.com/mturk/preview*",
        lambda route: route.fulfill(
            status=200,
            content_type="text/html",
            body=f'<h1>HIT</h1><iframe src="{task_url}" width="900" height="800"></iframe>',
        ),
    )
    page.route(
        "https://workersandbox.mturk.com/mturk/externalSubmit",
        lambda route: (
            handed_in.append(route.request.post_data),
            route.fulfill(status=200, body=platform_page("MTurk got it"), content_type="text/html"),
        ),
    )
    page.goto("https://workersandbox.mturk.com/mturk/preview?groupId=1")
    frame = page.frame_locator("iframe")
    answer_all(frame)
    frame.get_by_role("button", name="Submit").click()
    code = frame.locator("[data-completion-code]").inner_text()
    assert LiteAssignment.objects.get(platform="mturk", worker_id=MTURK["workerId"]).completion_code == code
    page.screenshot(path=str(artifacts / "lightweight-mturk-frame.png"))
    frame.get_by_role("button", name="Submit to MTurk").click()
    for _ in range(100):  # the frame's navigation to MTurk
        if handed_in:
            break
        page.wait_for_timeout(100)
    assert parse_qs(handed_in[0]) == {"assignmentId": [MTURK["assignmentId"]], "surveycode": [code]}
    assert errors == []


def test_an_mturk_workers_next_hits_in_the_frame_need_no_third_party_cookie(
    chromium, live_server, world, artifacts, request
):
    """Safari, and Chromium with third-party cookies blocked, keep no cookie of this site in MTurk's
    frame: the worker key was kept in one only, so a worker's second HIT was refused as "in use in
    another browser". The page now keeps the key in the site's storage too (partitioned per top-level
    site, so kept from one HIT on MTurk to the next) and sends it again; another browser of the same
    worker is still told to continue in the first, and gets no answer of its own taken."""
    link = CrowdLink.objects.create(pyramid=world, kind=CrowdLink.Kind.JUDGING)  # both batches: 4 tasks
    browser = framing_browser(chromium, request, "--test-third-party-cookie-phaseout")
    errors, handed_in = [], []

    def hit(context, number: int):
        """The worker's HIT ``number`` on MTurk's site, the task page in its frame."""
        params = {**MTURK, "assignmentId": f"{MTURK['assignmentId'][:-2]}{number:02d}"}
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.route(
            "https://workersandbox.mturk.com/mturk/preview*",
            lambda route: route.fulfill(
                status=200,
                content_type="text/html",
                body=f'<!doctype html><html lang="en"><head><title>HIT</title></head>'
                f'<body><h1>HIT</h1><iframe title="task" '
                f'src="{live_server.url}/lightweight/crowd/{link.token}/?{urlencode(params)}"'
                f' width="900" height="800"></iframe></body></html>',
            ),
        )
        page.route(
            "https://workersandbox.mturk.com/mturk/externalSubmit",
            lambda route: (
                handed_in.append(parse_qs(route.request.post_data)),
                route.fulfill(status=200, body=platform_page("MTurk got it"), content_type="text/html"),
            ),
        )
        page.goto(f"https://workersandbox.mturk.com/mturk/preview?groupId={number}")
        return page, page.frame_locator("iframe")

    def judge(page, frame, number: int):
        answer_all(frame)
        frame.get_by_role("button", name="Submit").click()
        code = frame.locator("[data-completion-code]").inner_text()
        frame.get_by_role("button", name="Submit to MTurk").click()
        for _ in range(100):  # the frame's navigation to MTurk
            if len(handed_in) == number:
                break
            page.wait_for_timeout(100)
        assert handed_in[-1]["surveycode"] == [code]

    worker = browser.new_context(viewport={"width": 1000, "height": 1000})
    for number in (1, 2, 3):
        page, frame = hit(worker, number)
        expect(frame.locator(".crowd-who")).to_contain_text(f"{number - 1} done")
        if number == 1:
            expect(frame.locator("[data-key-notice]")).to_be_visible()  # a worker new to this browser is told
        else:
            expect(frame.locator("[data-key-notice]")).to_have_count(0)
        if number == 2:
            page.screenshot(path=str(artifacts / "lightweight-mturk-frame-second-hit.png"))
        judge(page, frame, number)
        page.close()
    assert not [c for c in worker.cookies() if c["name"] == "crowd_keys"]  # the browser kept no cookie of this site
    assert LiteAssignment.objects.filter(worker_id=MTURK["workerId"], platform="mturk").count() == 3
    assert errors == []

    # The same worker in another browser: told to continue in the first; its answers are not taken.
    page, frame = hit(browser.new_context(viewport={"width": 1000, "height": 1000}), 4)
    expect(frame.locator("[data-key-notice]")).to_contain_text("please continue there")
    answer_all(frame)
    frame.get_by_role("button", name="Submit").click()
    expect(frame.locator("[role=alert]")).to_contain_text("started in another browser: continue there")
    assert LiteAssignment.objects.filter(worker_id=MTURK["workerId"]).count() == 3
    assert errors == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]  # the refusal
