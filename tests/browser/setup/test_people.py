"""Coordinators make annotator accounts in Chromium: an invitation link that the invited person
opens to choose a password (once), an account with an initial password, an existing user added,
each assigned to topics. Screenshots in test-artifacts/setup-people*.png."""

import pytest
from django.contrib.auth.models import User

from annotation.corpus.models import Assignment, Topic

from tests.browser.setup.browser import open_as

pytestmark = pytest.mark.browser


def test_accounts_invitations_and_assignments(chromium, live_server, people, transactional_db, artifacts):
    Topic.objects.create(dataset=people.dataset, external_id="D0602")
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/")
    page.get_by_role("link", name="People").click()
    assert page.is_hidden("[data-account-form] [data-field='new-password']"), "no password field for an invitation"

    # An invitation, assigned to one topic.
    form = page.locator("[data-account-form]")
    form.locator("#id_new-username").click()
    page.keyboard.type("zoe")
    form.locator("#id_new-name").click()
    page.keyboard.type("Zoë Lind")
    form.get_by_label("D0601").check()
    form.get_by_label("Annotate peers").check()
    form.get_by_role("button", name="Create account").click()
    page.wait_for_selector("[data-invitation]")
    assert "Account zoe created. Assigned to annotate peers on 1 topic: D0601." in page.inner_text(".messages")
    link = page.input_value("[data-invitation-url]")
    assert link.startswith(f"{live_server.url}/accounts/invite/")
    zoe = User.objects.get(username="zoe")
    assert not zoe.has_usable_password() and zoe.get_full_name() == "Zoë Lind"
    assert list(Assignment.objects.filter(annotator=zoe).values_list("topic__external_id", "task")) == [
        ("D0601", "annotate_peers")
    ]
    assert "invited, not joined yet" in page.inner_text("tr[data-person='zoe']")
    page.screenshot(path=str(artifacts / "setup-people-invitation.png"), full_page=True)
    page.locator("tr[data-person='zoe']").get_by_role("button", name="New link").click()
    page.wait_for_selector("[data-invitation]:has-text('New invitation link for zoe')")
    link = page.input_value("[data-invitation-url]")

    # Zoë opens the link (no session), chooses a password and lands on her assignments.
    guest = chromium.new_context(viewport={"width": 1280, "height": 800})
    invited = guest.new_page()
    invited.goto(link)
    invited.wait_for_selector("[data-invitation-page]")
    assert "Choose a password to log in as zoe" in invited.inner_text("[data-invitation-page]")
    invited.click("#id_new_password1")
    invited.keyboard.type("lantern-fair-2026")
    invited.click("#id_new_password2")
    invited.keyboard.type("lantern-fair-2026")
    invited.screenshot(path=str(artifacts / "setup-invitation-page.png"))
    invited.keyboard.press("Enter")
    invited.wait_for_url(f"{live_server.url}/")
    assert "Welcome, zoe" in invited.inner_text(".messages")
    assert "D0601" in invited.inner_text("table.assignments")
    invited.goto(link)
    assert "This link no longer works" in invited.inner_text("[data-invitation-page]")
    guest.close()

    # An account with an initial password, on every topic, building pyramids.
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/people/")
    form = page.locator("[data-account-form]")
    form.locator("#id_new-username").click()
    page.keyboard.type("yann")
    form.get_by_label("Set an initial password").check()
    form.locator("#id_new-password").click()
    page.keyboard.type("short")
    form.get_by_label("All topics of the dataset").check()
    form.get_by_label("Build pyramid").check()
    form.get_by_role("button", name="Create account").click()
    page.wait_for_selector("[data-account-form] .field-error")
    assert "too short" in page.inner_text("[data-account-form] .field-error")
    assert not User.objects.filter(username="yann").exists(), "a refused password creates nothing"
    form.locator("#id_new-password").fill("")
    form.locator("#id_new-password").click()
    page.keyboard.type("harrowgate-lantern-9")
    form.get_by_role("button", name="Create account").click()
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == (
        "Account yann created. Assigned to build pyramid on 2 topics: D0601, D0602. "
        "Give them their username and the initial password."
    )
    assert User.objects.get(username="yann").check_password("harrowgate-lantern-9")

    # An existing user added to a topic.
    form = page.locator("[data-existing-form]")
    form.locator("#id_existing-username").click()
    page.keyboard.type("ANN")
    form.get_by_label("D0602").check()
    form.get_by_label("Annotate peers").check()
    form.get_by_role("button", name="Add and assign").click()
    page.wait_for_selector(".msg.success")
    assert page.inner_text(".messages") == "ann added. Assigned to annotate peers on 1 topic: D0602."
    assert page.inner_text("tr[data-person='ann'] td:nth-child(3)") == "D0601, D0602"
    assert page.locator("tr[data-person='zoe'] .badge").inner_text() == "active"
    page.screenshot(path=str(artifacts / "setup-people.png"), full_page=True)
    assert errors == []
