"""Set-up rough edges a new user met, in Chromium: /setup/ (the address README names) leads a
coordinator to the datasets they coordinate, no page answers 404 (the favicon included), and a DUC
table with one empty cell says "1 empty cell", uploaded with real clicks. (`make run PORT=` and
`make test` beside `make run` are checked on the Makefile: tests/foundation/test_rough_edges.py.)"""

import pytest

from annotation.dashboards.models import Judgment

from tests.browser.setup.browser import open_as
from tests.dashboards import toy

pytestmark = pytest.mark.browser


def test_setup_address_favicon_and_the_empty_cell_count(
    chromium, live_server, people, transactional_db, artifacts, tmp_path, in_process_jobs
):
    dataset = toy.build()
    dataset.coordinators.add(people.coord)
    page, errors = open_as(chromium, live_server, "coord")
    missing = []
    page.on("response", lambda r: missing.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    page.goto(f"{live_server.url}/setup/")  # as README says it
    assert page.url == f"{live_server.url}/datasets/"
    assert page.locator("h1").inner_text() == "Datasets you coordinate"
    listed = page.inner_text("table tbody")
    assert (
        "Pilot" in listed and "Toy" in listed and "Elsewhere" not in listed
    )  # the coordinator's datasets, only theirs
    # The icon every page names is served, as is /favicon.ico (browsers ask for it whatever the page says).
    icon = page.get_attribute("link[rel=icon]", "href")
    for url in (icon, "/favicon.ico"):
        answer = page.request.get(f"{live_server.url}{url}")
        assert answer.status == 200 and answer.headers["content-type"].startswith("image/svg+xml"), (url, answer.status)

    # A DUC table with one empty cell, uploaded on the meta-evaluation page by clicks.
    header = tmp_path / "2006-header.txt"
    header.write_text("setid peerid modifiedscore annotatorid content\n")
    table = tmp_path / "scores.txt"
    table.write_text("T1\t1\t0.5\tx\t3\nT1\t2\t0.5\tx\t4\nT1\t3\t0.5\tx\t\nT2\t1\t0.5\tx\t2\n")
    page.locator("tr", has_text="Toy").get_by_role("link", name="Meta-evaluation").click()
    page.wait_for_url(f"**/datasets/{dataset.pk}/metaeval/")
    page.get_by_label("DUC score table + header file").check()
    page.set_input_files("input[type=file][name=file]", str(table))
    page.set_input_files("input[type=file][name=header]", str(header))
    page.get_by_role("button", name="Upload").click()
    page.wait_for_selector(".msg.success")
    message = page.inner_text(".messages")
    assert "3 new" in message and "1 empty cell (no judgment)" in message and "empty cells" not in message, message
    assert Judgment.objects.filter(topic__dataset=dataset).count() == 3
    page.screenshot(path=str(artifacts / "setup-metaeval-empty-cell.png"))
    assert missing == [] and errors == []
