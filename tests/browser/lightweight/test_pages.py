"""The lightweight-pyramid pages in Debian's Chromium: a coordinator runs the whole protocol, crowd
workers write statements and judge peers through shared links (one on a phone-sized screen, by
keyboard), and the coordinator sees the scores. Screenshots go to test-artifacts/."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.corpus.models import PeerSummary
from annotation.corpus.roles import COORDINATOR, role_group
from annotation.lightweight.models import LightweightPyramid, LiteAssignment, LiteResult, LiteStatement

from tests.browser.editors.browser import PASSWORD, login
from tests.foundation.factories import topic

pytestmark = pytest.mark.browser
REFERENCES = {
    "A": "The storm hit the northern coast on Monday. Ten fishing boats sank in the harbour. The mayor closed "
    "all schools.",
    "B": "A storm struck the coast early on Monday. The harbour lost ten boats. Schools stayed closed by order "
    "of the mayor.",
}
STATEMENTS = {
    "A": [
        "The storm hit the northern coast",
        "Ten fishing boats sank in the harbour",
        "The mayor closed all the schools",
    ],
    "B": [
        "The storm struck early on Monday",
        "The harbour lost ten boats that day",
        "Schools were closed by the mayor",
    ],
}


def no_inline_code(html: str) -> None:
    """CSP-clean: no inline script, no style attributes, no on* handlers, no javascript: URLs."""
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    match = re.search(r"\sstyle=", html)
    assert not match, html[max(0, match.start() - 200) : match.end() + 100]
    assert not re.search(r"\son[a-z]+=", html)
    assert "javascript:" not in html


def served(page) -> str:
    """The page's HTML as the server sends it (the live DOM carries what the browser adds)."""
    return page.request.get(page.url).text()


@pytest.fixture
def world(transactional_db, settings, request):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        request.getfixturevalue("celery_worker")  # scores are recomputed on a real worker
    settings.CROWD_RATE = "10000/min"
    # Behind one trusted proxy (the browsers connect from 127.0.0.1), so each crowd worker's browser
    # comes from its own address (X-Forwarded-For), as the submissions record.
    settings.TRUSTED_PROXY_COUNT, settings.TRUSTED_PROXIES = 1, ["127.0.0.1"]
    t, refs = topic("D1", "Storms", **REFERENCES)
    PeerSummary.objects.create(
        topic=t, external_id="D1.M.100.A.7", text="A storm hit the coast on Monday and ten boats sank."
    )
    PeerSummary.objects.create(topic=t, external_id="D1.M.100.A.9", text="Schools were closed.")
    user = get_user_model().objects.create_user("coord", password=PASSWORD)
    user.groups.add(role_group(COORDINATOR))
    t.dataset.coordinators.add(user)
    return t


def test_coordinator_and_crowd_run_the_protocol(chromium, live_server, world, artifacts):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    login(page, live_server.url, "coord")

    page.click("text=Lightweight")
    page.fill("#id_name", "crowd")
    page.click("text=Create")
    run = LightweightPyramid.objects.get(name="crowd")
    # 3 statements per writer, 1 writer per reference, 1 statement per reference and batch, 2 judges
    for field, value in {
        "#id_statements_per_writer": "3",
        "#id_writers_per_reference": "1",
        "#id_statements_per_reference": "1",
        "#id_judges_per_task": "2",
    }.items():
        page.fill(field, value)
    page.click("text=Save settings")
    assert "Settings saved" in page.locator(".messages").inner_text()
    page.click("text=New statement-writing link")
    writing_url = page.locator('input[data-link="writing"]').input_value()

    # Crowd: two workers write statements, one per reference.
    crowd = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    worker_page = crowd.new_page()
    for worker in ("writer1", "writer2"):
        worker_page.goto(writing_url + ("?change=1" if worker == "writer2" else ""))
        worker_page.fill("#id_worker", worker)
        worker_page.click("text=Start")
        source = worker_page.locator("blockquote.source").inner_text()
        ref = next(k for k, v in REFERENCES.items() if v == source)
        worker_page.fill("#id_s1", STATEMENTS[ref][0])
        worker_page.fill("#id_s2", STATEMENTS[ref][1])
        assert worker_page.locator("#id_s3").get_attribute("required") is not None  # the browser asks first
        worker_page.eval_on_selector("form.statements-form", "f => f.noValidate = true")  # ... the server checks too
        worker_page.click("text=Submit")  # statement 3 missing: refused, what was typed is kept
        assert "Please write statement 3." in worker_page.locator(".field-error").inner_text()
        assert worker_page.input_value("#id_s1") == STATEMENTS[ref][0]
        worker_page.fill("#id_s3", STATEMENTS[ref][2])
        if worker == "writer1":
            worker_page.screenshot(path=str(artifacts / "lightweight-write-mobile.png"), full_page=True)
            no_inline_code(served(worker_page))
        worker_page.click("text=Submit")
        assert re.fullmatch(r"[0-9A-F]{8}", worker_page.locator("[data-completion-code]").inner_text())
    assert LiteStatement.objects.filter(pyramid=run).count() == 6

    page.goto(f"{live_server.url}/lightweight/{run.pk}/")
    page.click("text=Apply the filters")
    assert "6 kept, 0 dropped" in page.locator(".messages").inner_text()
    page.click("text=Sample batches 1 and 2")
    assert "Sampled 4 statements over 1 topic" in page.locator(".messages").inner_text()
    page.click("text=Create the judging tasks")
    assert "4 judging tasks created" in page.locator(".messages").inner_text()
    page.click("text=New judging link, batch 1")
    judging_url = page.locator('input[data-link="judging-1"]').input_value()

    # Crowd: two judges, by keyboard on a phone-sized screen; P / N answer and move on.
    for number, (worker, keys) in enumerate((("judge1", "pp"), ("judge2", "pn")), start=2):
        crowd.clear_cookies()  # each judge's own phone: its own address and session
        worker_page.set_extra_http_headers({"X-Forwarded-For": f"127.0.0.{number}"})
        for _ in range(2):  # both peers of batch 1
            worker_page.goto(judging_url + "?change=1")
            worker_page.fill("#id_worker", worker)
            worker_page.click("text=Start")
            worker_page.locator("fieldset.judgment input").first.focus()
            worker_page.keyboard.press(keys[0].upper())
            worker_page.eval_on_selector("form.judge-form", "f => f.noValidate = true")
            worker_page.click("text=Submit")  # the second statement is unanswered: refused, the first answer kept
            assert "Please answer statement 2." in worker_page.locator(".field-error").inner_text()
            assert worker_page.locator("fieldset.judgment").first.locator("input:checked").count() == 1
            worker_page.locator("fieldset.judgment").nth(1).locator("input").first.focus()
            worker_page.keyboard.press(keys[1].upper())
            if worker == "judge1":
                worker_page.screenshot(path=str(artifacts / "lightweight-judge-mobile.png"), full_page=True)
                no_inline_code(served(worker_page))
            worker_page.click("text=Submit")
            expect(worker_page.locator("[data-completion-code]")).to_be_visible()  # waits for the answer
    assert LiteAssignment.objects.filter(task__pyramid=run).count() == 4

    # The coordinator sees the scores once the background recomputation has stored them.
    for _ in range(60):
        result = LiteResult.objects.filter(pyramid=run).first()
        run.refresh_from_db()
        if result and result.revision == run.revision:
            break
        page.wait_for_timeout(250)
    page.goto(f"{live_server.url}/lightweight/{run.pk}/")
    systems = page.locator("table.systems tbody").inner_text()
    assert "7" in systems and "9" in systems
    workers = page.locator("table.workers tbody").inner_text()
    assert "judge1" in workers and "judge2" in workers
    no_inline_code(served(page))
    page.screenshot(path=str(artifacts / "lightweight-run.png"), full_page=True)

    # The judging is over: the coordinator closes the link; a worker opening it is told so.
    page.locator('tr:has(input[data-link="judging-1"])').locator("text=Close").click()
    assert "Link closed" in page.locator(".messages").inner_text()
    assert page.locator('tr:has(input[data-link="judging-1"]) [data-link-status]').inner_text() == "closed"
    page.locator("table.links").screenshot(path=str(artifacts / "lightweight-links.png"))
    worker_page.goto(judging_url)
    assert "This link is closed" in worker_page.locator("h1").inner_text()
    assert errors == []
