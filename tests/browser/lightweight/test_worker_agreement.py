"""Three crowd workers, three judges per task, in Debian's Chromium by keys and clicks: each worker
judges in turn from its own browser and address, the tasks are completed before others are started
(no task half judged), so every worker has pairs, an agreement and the topic its alpha on the
coordinator's page; the "Kept?" column says kept once; the MTurk batch file downloads under its name.

Worked out by hand: per task j1 and j2 answer (present, absent), j3 (present, present). Pairs per
task: j1-j2 agree on 2 of 2, j1-j3 and j2-j3 on 1 of 2; over 3 tasks each worker has 2 pairs a task,
6 in all: j1 and j2 (1 + 0.5) / 2 = 0.750, j3 (0.5 + 0.5) / 2 = 0.500 (kept: not below 0.5).
Krippendorff's nominal alpha per task, units = the 2 statements: values {1,1,1} and {0,0,1};
n = 6, 2 zeros and 4 ones; the disagreeing pairs of the second unit 2 * 2 * 1 / (3 - 1) = 2;
alpha = 1 - (n - 1) * 2 / (2 * 2 * 4) = 1 - 10/16 = 0.375, the same for the 3 tasks."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotation.corpus.roles import COORDINATOR, role_group
from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteResult

from tests.browser.editors.browser import PASSWORD, login
from tests.browser.lightweight.test_platforms import worker_page
from tests.lightweight.world import small_run

pytestmark = pytest.mark.browser
ANSWERS = {"j1": "PN", "j2": "PN", "j3": "PP"}


@pytest.fixture
def run(transactional_db, settings, in_process_jobs):
    settings.CROWD_RATE = "10000/min"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}  # each worker from its own address
    run = small_run(peers=3, judges=3)
    user = get_user_model().objects.create_user("coord", password=PASSWORD)
    user.groups.add(role_group(COORDINATOR))
    run.dataset.coordinators.add(user)
    return run


def judge_by_keys(page, keys: str) -> None:
    """Answer the shown task with the judging page's keys (P present, N not present; each moves on)."""
    page.locator("fieldset.judgment input").first.focus()
    for key in keys:
        page.keyboard.press(key)
    page.get_by_role("button", name="Submit").click()
    page.wait_for_selector("[data-completion-code]")


def test_three_workers_of_three_judge_tasks_all_have_pairs_and_the_topic_an_alpha(
    chromium, live_server, run, artifacts
):
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)
    url = f"{live_server.url}/lightweight/crowd/{link.token}/"
    errors, pages = [], {}
    for number, worker in enumerate(ANSWERS, start=2):
        page = pages[worker] = worker_page(chromium, number)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.fill("#id_worker", worker)
        page.get_by_role("button", name="Start").click()
        page.wait_for_selector("fieldset.judgment")
    for round_ in range(3):  # in turns, as workers arrive
        for worker in ANSWERS if round_ % 2 == 0 else reversed(ANSWERS):
            page = pages[worker]
            judge_by_keys(page, ANSWERS[worker])
            page.get_by_role("link", name="Next task").click()
    for page in pages.values():  # every task judged: nothing left to take
        assert page.locator("fieldset.judgment").count() == 0
    pages["j1"].screenshot(path=str(artifacts / "lightweight-nothing-left.png"), full_page=True)

    by_task = {}
    for task, worker in LiteAssignment.objects.filter(task__pyramid=run).values_list("task_id", "worker_id"):
        by_task.setdefault(task, set()).add(worker)
    assert len(by_task) == 3 and all(workers == set(ANSWERS) for workers in by_task.values()), "no task half judged"

    result = LiteResult.objects.get(pyramid=run)
    run.refresh_from_db()
    assert result.revision == run.revision
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    coordinator = context.new_page()
    coordinator.on("pageerror", lambda e: errors.append(str(e)))
    login(coordinator, live_server.url, "coord")
    coordinator.goto(f"{live_server.url}/lightweight/")
    coordinator.get_by_role("link", name="crowd").first.click()
    coordinator.wait_for_url(f"**/lightweight/{run.pk}/")
    rows = coordinator.eval_on_selector_all(
        "table.workers tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    assert sorted(rows) == [["j1", "0.750", "6", "kept"], ["j2", "0.750", "6", "kept"], ["j3", "0.500", "6", "kept"]]
    topics = coordinator.eval_on_selector_all(
        "table.topics tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
    )
    assert topics == [["D1", "0.375", "3", ""]]
    coordinator.locator("table.workers").scroll_into_view_if_needed()
    coordinator.screenshot(path=str(artifacts / "lightweight-worker-agreement.png"), full_page=True)

    with coordinator.expect_download() as download:
        coordinator.get_by_role("link", name="MTurk batch file (CSV)").click()
    assert download.value.suggested_filename == f"Storms-lightweight-crowd-tasks-{timezone.localdate().isoformat()}.csv"
    context.close()
    assert errors == []
