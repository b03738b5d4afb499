"""While the stored figures lag behind the data, a dashboard shows the last figures with an
"updating" mark and never an empty-state message the data contradicts ("No judgments imported yet"
above a table of them, "No peer has been annotated by two annotators yet" after both finished)."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.corpus.models import Topic
from annotation.dashboards import snapshots
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.dashboards import toy
from tests.dashboards.helpers import make_users

JUDGMENTS = "topic,summary,metric,value\n" + "".join(
    f"T{t},{s},content,{(t * 7 + s * 3) % 5 + 1}\n" for t in (1, 2) for s in (1, 2, 3)
)


def busy_worker(monkeypatch):
    """As if the worker were busy: nothing recomputes the figures until ``monkeypatch.undo()``."""
    monkeypatch.setattr(snapshots, "schedule", lambda ids: None)
    monkeypatch.setattr("frontend.dashboards.views.schedule", lambda ids: None)


def empties(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>|\s+", " ", m).strip() for m in re.findall(r'<p class="empty"[^>]*>(.*?)</p>', html, re.S)]


def unfinished_second_annotation(name="Toy"):
    """The toy dataset with ann2's annotation of T1 peer 1 not yet finished: no agreement figures."""
    dataset = toy.build(name)
    PeerAnnotation.objects.filter(annotator__username="ann2").update(status="in_progress")
    return dataset


@pytest.mark.django_db
def test_agreement_empty_states_follow_the_data(monkeypatch):
    dataset = unfinished_second_annotation()
    client = Client()
    client.force_login(make_users(dataset)["coord"])
    url = reverse("dashboards:agreement", args=[dataset.pk])
    topic_url = reverse("dashboards:agreement_topic", args=[dataset.pk, "T1"])
    assert "No peer has been annotated by two annotators yet." in " ".join(empties(client.get(url).content.decode()))
    assert client.get(topic_url).status_code == 404

    busy_worker(monkeypatch)
    second = PeerAnnotation.objects.get(annotator__username="ann2")
    second.status = "done"
    second.save()
    page = client.get(url).content.decode()
    said = " ".join(empties(page))
    assert "No peer has been annotated" not in said and "No annotator pair shares a peer yet" not in said
    assert "1 peer annotated by two annotators since these figures were computed" in said and "updating…" in said
    assert '<p class="msg updating-note" data-updating-note>' in page  # the page-wide "updating" note is shown
    topic_page = client.get(topic_url)
    assert topic_page.status_code == 200 and "1 peer of T1 annotated by two annotators" in " ".join(
        empties(topic_page.content.decode())
    )

    monkeypatch.undo()  # the worker catches up: the figures, no empty state but the pyramids' (one pyramid here)
    page = client.get(url).content.decode()
    left = empties(page)
    assert (
        len(left) == 1
        and left[0].startswith("No topic has two pyramids of the same references yet.")
        and 'data-topic="T1"' in page
    )
    assert client.get(topic_url).status_code == 200


@pytest.mark.django_db
def test_metaeval_empty_state_follows_the_judgments_shown(monkeypatch):
    dataset = toy.build()
    client = Client()
    client.force_login(make_users(dataset)["coord"])
    url = reverse("dashboards:metaeval", args=[dataset.pk])
    assert "No judgments imported yet: upload some below." in empties(client.get(url).content.decode())
    busy_worker(monkeypatch)
    response = client.post(url, {"format": "csv", "file": SimpleUploadedFile("content.csv", JUDGMENTS.encode())})
    assert response.status_code == 302
    page = client.get(url).content.decode()
    said = " ".join(empties(page))
    assert "No judgments imported yet" not in said
    assert "6 judgments imported (below): their correlations with the pyramid scores are being computed" in said
    assert '<td>content</td><td class="num">6</td>' in page
    monkeypatch.undo()
    page = client.get(url).content.decode()
    assert empties(page) == [] and 'data-metric="content"' in page


@pytest.mark.django_db
def test_scores_tiers_empty_state_follows_the_pyramids(monkeypatch):
    dataset = toy.build()
    Pyramid.objects.filter(topic__dataset=dataset).delete()
    client = Client()
    client.force_login(make_users(dataset)["coord"])
    url = reverse("dashboards:scores", args=[dataset.pk])
    assert "No pyramid yet." in empties(client.get(url).content.decode())
    busy_worker(monkeypatch)
    Pyramid.objects.create(topic=Topic.objects.get(dataset=dataset, external_id="T1"))
    said = " ".join(empties(client.get(url).content.decode()))
    assert "No pyramid yet" not in said and "1 pyramid since these figures were computed" in said


@pytest.mark.browser
def test_figures_catch_up_in_the_browser(chromium, live_server, transactional_db, artifacts, monkeypatch):
    """Upload judgments with the worker busy: the page lists them and says their correlations are
    coming (never "none imported"); when the worker catches up they appear without a reload."""
    dataset = toy.build()
    user = get_user_model().objects.create_user("coord", password="coordinate-it-2026")
    dataset.coordinators.add(user)
    snapshots.recompute_dataset(dataset.pk)
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "coord")
    page.fill("#id_password", "coordinate-it-2026")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/metaeval/")
    assert page.locator("[data-figures] p.empty").inner_text() == "No judgments imported yet: upload some below."

    busy_worker(monkeypatch)
    page.set_input_files(
        "input[type=file][name=file]",
        files=[{"name": "content.csv", "mimeType": "text/csv", "buffer": JUDGMENTS.encode()}],
    )
    page.click("form[data-upload] button[type=submit]")
    page.wait_for_selector(".msg.success")
    figures = page.locator("[data-figures]")
    assert (
        "6 judgments imported (below)" in figures.inner_text()
        and "No judgments imported yet" not in figures.inner_text()
    )
    assert page.locator("table.judgments").inner_text().count("content") == 1
    assert page.locator("p[data-updating-note]").is_visible()
    page.screenshot(path=str(artifacts / "dashboards-metaeval-updating.png"), full_page=True)

    monkeypatch.undo()  # the next poll schedules the recomputation, which runs: the table replaces the note
    page.wait_for_selector('[data-figures] tbody[data-metric="content"]', timeout=15_000)
    page.wait_for_selector("p[data-updating-note][hidden]", state="attached", timeout=15_000)
    assert page.locator("[data-figures] p.empty").count() == 0
    page.screenshot(path=str(artifacts / "dashboards-metaeval-caught-up.png"), full_page=True)
    assert not errors
    page.close()


@pytest.mark.browser
def test_agreement_never_says_none_after_the_second_annotator_finishes_in_the_browser(
    chromium, live_server, transactional_db, artifacts, monkeypatch
):
    """The second annotator clicks "Done" in the annotator while the worker is busy: the coordinator's
    agreement page says one peer is now doubly annotated and its agreement is coming (never "No peer
    has been annotated by two annotators yet"); when the worker catches up, T1's figures appear."""
    from annotation.corpus.models import Assignment

    dataset = unfinished_second_annotation()
    User = get_user_model()
    coordinator = User.objects.create_user("coord", password="coordinate-it-2026")
    dataset.coordinators.add(coordinator)
    second = User.objects.get(username="ann2")
    second.set_password("annotate-it-2026")
    second.save()
    Assignment.objects.create(
        topic=Topic.objects.get(dataset=dataset, external_id="T1"), annotator=second, task="annotate_peers"
    )
    snapshots.recompute_dataset(dataset.pk)

    def logged_in(username, password):
        page = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/")
        return page

    errors = []
    page = logged_in("coord", "coordinate-it-2026")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/agreement/")
    figures = page.locator("[data-figures]")
    assert "No peer has been annotated by two annotators yet." in figures.inner_text()

    busy_worker(monkeypatch)
    annotator = logged_in("ann2", "annotate-it-2026")
    annotation = PeerAnnotation.objects.get(annotator=second)
    annotator.goto(f"{live_server.url}/annotations/{annotation.pk}/")
    annotator.wait_for_selector("#annotator.ready")
    annotator.get_by_role("button", name="Done, next peer").click()
    annotator.wait_for_url(lambda url: f"/annotations/{annotation.pk}/" not in url)  # on to the next peer
    annotator.wait_for_function(
        "() => document.querySelector('.save-status')?.dataset.status === 'saved'"
    )  # its "done" saved behind it
    annotation.refresh_from_db()
    assert annotation.status == "done"

    page.reload()  # the coordinator looks again
    said = figures.inner_text()
    assert "No peer has been annotated" not in said and "No annotator pair shares a peer yet" not in said
    assert "1 peer annotated by two annotators since these figures were computed" in said
    assert page.locator("p[data-updating-note]").is_visible()
    page.screenshot(path=str(artifacts / "dashboards-agreement-updating.png"), full_page=True)

    monkeypatch.undo()  # the next poll schedules the recomputation: T1's figures replace the note by themselves
    page.wait_for_selector('[data-figures] tr[data-topic="T1"]', timeout=15_000)
    page.wait_for_selector("p[data-updating-note][hidden]", state="attached", timeout=15_000)
    assert "No peer has been annotated" not in figures.inner_text()
    page.screenshot(path=str(artifacts / "dashboards-agreement-caught-up.png"), full_page=True)
    assert not errors
