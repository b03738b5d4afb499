"""A pyramid's SCUs listed read only: the page a peer annotator gets for a pyramid they cannot edit
shows its SCUs (tiers, labels, contributors), and the printable SCU list / its text download
(DUCView's "print SCU labels") lists every SCU by tier with weight and label, for those who may see
the pyramid only."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from annotation.api import downloads
from annotation.corpus.models import Assignment, PeerSummary
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import PASSWORD, login, world
from tests.browser.editors.test_annotator import build_pyramid

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def finished():
    """A finished pyramid (SCU 1 weight 3, SCU 2 weight 2) and a peer annotator of its topic."""
    builder, topic = world("builder")
    pyramid, dam, valley = build_pyramid(topic, builder)
    reader = User.objects.create_user("reader", password=PASSWORD)
    Assignment.objects.create(topic=topic, annotator=reader, task="annotate_peers")
    PeerAnnotation.objects.create(peer=PeerSummary.objects.get(topic=topic), pyramid=pyramid, annotator=reader)
    return pyramid, dam, valley, reader


def expected_tiers(pyramid):
    """(weight, uid, label) of every SCU, heaviest first, as counted from the database here."""
    rows = [(scu.contributors.count(), scu.uid, scu.label) for scu in pyramid.scus.all()]
    return sorted(rows, key=lambda r: (-r[0], r[2].casefold(), r[1]))


@pytest.mark.browser
def test_the_read_only_pyramid_shows_its_scus(chromium, live_server, artifacts, finished):
    pyramid, dam, valley, reader = finished
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    login(page, live_server.url, reader.username)
    response = page.goto(f"{live_server.url}/pyramids/{pyramid.pk}/build/")
    assert response.status == 403
    shown = page.evaluate("""() => [...document.querySelectorAll('.scu-row')].map(row => [
        Number(row.querySelector('.weight').textContent), Number(row.dataset.uid),
          row.querySelector('.scu-label').textContent,
        [...row.querySelectorAll('.scu-contributors li')].map(li => li.textContent.trim())])""")
    assert [row[:3] for row in shown] == [list(r) for r in expected_tiers(pyramid)]
    contributors = {row[1]: row[3] for row in shown}
    assert contributors[dam.uid] == ["A dam burst at night", "B the dam had failed", "D הסכר קרס בלילה"]
    assert contributors[valley.uid] == ["A the valley flooded", "C 山谷被淹"]
    headings = page.locator(".scu-tier h2").all_text_contents()
    assert headings == ["Weight 3 · 1 SCU", "Weight 2 · 1 SCU"]
    assert "2 SCUs from 4 reference summaries" in page.inner_text("main")
    assert page.locator("main").locator("input, textarea, select, [contenteditable], button").count() == 0, (
        "nothing editable"
    )
    page.screenshot(path=str(artifacts / "pyramid-readonly-scus.png"), full_page=True)
    page.click("text=Printable list")  # the way to the printable list
    page.wait_for_url(f"**/pyramids/{pyramid.pk}/scus/")
    page.emulate_media(media="print")
    assert page.locator(".topbar").is_hidden() and page.locator("text=Download as text").is_hidden()
    page.screenshot(path=str(artifacts / "pyramid-scu-list-print.png"), full_page=True)
    context.close()


def test_the_text_download_lists_every_scu_by_tier(finished):
    pyramid, dam, valley, reader = finished
    client = Client()
    client.force_login(reader)
    response = client.get(f"/pyramids/{pyramid.pk}/scus/?download=txt")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    # Named as every download is (dataset, topic, pyramid, table, date), and says which version wrote it.
    day = timezone.localdate().isoformat()
    dataset = pyramid.topic.dataset.name
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="{dataset}-{pyramid.topic.external_id}-pyramid-{pyramid.pk}-scus-{day}.txt"'
    )
    lines = response.content.decode().splitlines()
    assert lines[0] == (
        f"Pyramid {pyramid.pk} of topic {pyramid.topic.external_id}, dataset {dataset}: 2 SCUs"
        f" (written by pyramid {downloads.app_version()})"
    )
    rows = [tuple(line.split("\t")) for line in lines if line.count("\t") == 2]
    assert rows == [(str(w), str(uid), label) for w, uid, label in expected_tiers(pyramid)]
    assert "Weight 3 (1 SCU)" in lines and "Weight 2 (1 SCU)" in lines


def test_the_list_is_permission_checked(finished):
    pyramid, dam, valley, reader = finished
    stranger = User.objects.create_user("stranger", password=PASSWORD)
    client = Client()
    assert client.get(f"/pyramids/{pyramid.pk}/scus/").status_code == 302  # login first
    client.force_login(stranger)
    for url in (f"/pyramids/{pyramid.pk}/scus/", f"/pyramids/{pyramid.pk}/scus/?download=txt"):
        response = client.get(url)
        assert response.status_code == 404 and dam.label.encode() not in response.content


def test_labels_are_escaped(finished):
    pyramid, dam, valley, reader = finished
    dam.label = '<script>alert(1)</script> & "dam"'
    dam.save()
    client = Client()
    client.force_login(reader)
    for url in (f"/pyramids/{pyramid.pk}/scus/", f"/pyramids/{pyramid.pk}/build/"):
        body = client.get(url).content.decode()
        assert (
            "<script>alert(1)</script>" not in body
            and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;dam&quot;" in body
        )
