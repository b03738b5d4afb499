"""The two ways the peer annotator produced wrong numbers (issue 14), driven in Chromium with real
clicks and key presses:

- a match went to an SCU the annotator did not see (the filter still held the previous text,
  nothing was shown, and Enter matched the previous, hidden SCU as a repetition);
- opening a peer ("Done, next peer") created an empty annotation that was scored 0 and entered
  agreement. Scores and agreement now rest on finished annotations (``results.counted``).
"""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from rest_framework.test import APIClient

from annotation.corpus.models import Assignment, PeerSummary
from annotation.dashboards.models import DatasetDashboard
from annotation.dashboards.snapshots import is_current, recompute_dataset
from annotation.peers.models import PeerAnnotation

from tests.browser.editors.browser import ANNOTATOR_URL, PASSWORD, drag_select, login, wait_saved, world
from tests.browser.editors.test_annotator import build_pyramid

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_annotator(chromium, live_server, username):
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, username)
    page.click("button:has-text('Start')")
    page.wait_for_url(ANNOTATOR_URL)
    wait_saved(page)
    return context, page


@pytest.fixture
def study(chromium, live_server):
    user, topic = world("pat", tasks=("annotate_peers",))
    pyramid, dam, valley = build_pyramid(topic, User.objects.create_user("builder"))
    for pid, text in [("10", "Ten: the valley was flooded."), ("2", "Two: the dam failed at night.")]:
        PeerSummary.objects.create(topic=topic, external_id=pid, text=text)
    context, page = open_annotator(chromium, live_server, "pat")
    yield page, topic, dam, valley
    context.close()


def matches(username, peer="1"):
    annotation = PeerAnnotation.objects.get(annotator__username=username, peer__external_id=peer)
    return sorted(
        (m.scu.uid if m.scu else 0, [annotation.peer.text[p.start : p.end] for p in m.parts.all()])
        for m in annotation.matches.all()
    )


def test_a_match_only_goes_to_the_scu_shown_selected(study, artifacts):
    page, topic, dam, valley = study
    drag_select(page, ".peer-text", "valley was flooded")  # then / and type: find the SCU
    page.keyboard.press("/")
    page.keyboard.type("valley")
    page.keyboard.press("Enter")
    wait_saved(page)
    drag_select(page, ".peer-text", "old dam failed at night")
    page.keyboard.press("/")
    page.keyboard.type("groundedcertif")  # no SCU label contains it: nothing is shown
    assert page.text_content(".counts") == "0 of 2 SCUs"
    page.keyboard.press("Enter")
    wait_saved(page)
    assert matches("pat") == [(2, ["valley was flooded"])], "Enter with no SCU shown must not match the hidden one"
    page.wait_for_selector(".banner:not([hidden])")
    assert "No SCU label contains “groundedcertif”, so nothing was matched" in page.text_content(".banner")
    page.screenshot(path=str(artifacts / "annotator-nothing-shown.png"))
    page.keyboard.press("Escape")  # clears the filter; the selection stays
    page.keyboard.press("Escape")  # and the selection

    drag_select(page, ".peer-text", "Nobody was hurt")  # the filter clears after a match
    page.keyboard.press("/")
    page.keyboard.type("valley")
    page.click("[data-action=non-matching]")
    wait_saved(page)
    assert page.text_content(".last-action") == "Marked “Nobody was hurt” as content in no SCU."
    assert page.input_value(".filter") == "" and page.locator(".scu").count() == 2

    drag_select(page, ".peer-text", "old dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    assert page.text_content(".last-action") == "Matched “old dam failed at night” to (3) The dam failed at night."
    drag_select(page, ".peer-text", "dam failed")
    page.keyboard.press("/")
    page.keyboard.type("night")
    page.keyboard.press("Enter")
    wait_saved(page)
    assert (
        page.text_content(".last-action")
        == "Matched “dam failed” to (3) The dam failed at night: a repetition (found 2 times)."
    )
    assert matches("pat") == [
        (0, ["Nobody was hurt"]),
        (1, ["dam failed"]),
        (1, ["old dam failed at night"]),
        (2, ["valley was flooded"]),
    ]


def export(command, **options):
    out = StringIO()
    call_command(command, format="json", stdout=out, **options)
    return json.loads(out.getvalue())


def peer_rows(rows):
    return sorted((r["annotator"], r["summary"], r.get("status"), r["modified"]) for r in rows if r["kind"] == "peer")


def test_opening_a_peer_counts_in_no_score_nor_agreement(study, chromium, live_server):
    page, topic, dam, valley = study
    drag_select(page, ".peer-text", "old dam failed at night")
    page.click(f'.scu[data-id="{dam.pk}"]')
    wait_saved(page)
    first_url = page.url
    page.click("[data-action=done]")  # pat finishes peer 1; the next peer opens
    page.wait_for_url(lambda url: url != first_url)
    wait_saved(page)
    assert "1 of 3 peers done" in page.text_content(".progress-text")
    second_peer = page.text_content("h1")

    User.objects.create_user("quinn", password=PASSWORD)  # a second annotator opens peer 1 and stops
    Assignment.objects.create(
        topic=topic, annotator=User.objects.get(username="quinn"), task=Assignment.Task.ANNOTATE_PEERS
    )
    context, second = open_annotator(chromium, live_server, "quinn")
    assert "peer 1" in second.text_content("h1")
    assert (
        PeerAnnotation.objects.count() == 1
    )  # pat's finished peer 1 only: peer 2 (pat) and peer 1 (quinn) were only opened

    dam_score = 3 / 3  # D = 3, Xa = round(5/4) = 1 -> MaxWeight 3
    assert peer_rows(export("export_scores")) == [("pat", "1", "done", pytest.approx(dam_score))]
    assert export("export_agreement") == [], "quinn's empty annotation is no second annotation of peer 1"

    drag_select(second, ".peer-text", "valley was flooded")  # quinn's work in progress: one match, not done
    second.click(f'.scu[data-id="{valley.pk}"]')
    wait_saved(second)
    context.close()
    assert peer_rows(export("export_scores")) == [("pat", "1", "done", pytest.approx(dam_score))]
    assert peer_rows(export("export_scores", include_unfinished=True)) == [
        ("pat", "1", "done", pytest.approx(dam_score)),
        ("quinn", "1", "in_progress", pytest.approx(2 / 3)),
    ]
    assert export("export_agreement") == []
    [row] = export("export_agreement", include_unfinished=True)
    assert row["annotators"] == ["pat", "quinn"] and row["peers"] == 1

    coordinator = User.objects.create_user("coord")
    topic.dataset.coordinators.add(coordinator)
    api = APIClient()
    api.force_authenticate(coordinator)
    scores = api.get(f"/api/datasets/{topic.dataset_id}/scores/").json()
    assert peer_rows(scores) == [("pat", "1", "done", pytest.approx(dam_score))]
    with_unfinished = api.get(f"/api/datasets/{topic.dataset_id}/scores/?include_unfinished=true").json()
    assert [r["annotator"] for r in with_unfinished if r["kind"] == "peer"] == ["pat", "quinn"]
    csv = api.get(f"/api/datasets/{topic.dataset_id}/scores/?format=csv&include_unfinished=true").content.decode()
    assert csv.splitlines()[0].endswith(",convention,status,app_version,settings") and "quinn" in csv
    assert api.get(f"/api/datasets/{topic.dataset_id}/agreement/").json() == []
    assert api.get(f"/api/datasets/{topic.dataset_id}/scores/?include_unfinished=maybe").status_code == 400

    recompute_dataset(topic.dataset_id)  # the dashboards rest on the same rule
    data = DatasetDashboard.objects.get(dataset=topic.dataset).data["conventions"]["nist"]
    assert peer_rows(data["per_topic"]) == [("pat", "1", "done", pytest.approx(dam_score))]
    assert data["agreement"] == []
    PeerAnnotation.objects.filter(annotator__username="quinn").update(status=PeerAnnotation.Status.DONE)
    assert not is_current(DatasetDashboard.objects.get(dataset=topic.dataset)), (
        "finishing an annotation changes the figures"
    )
    recompute_dataset(topic.dataset_id)
    data = DatasetDashboard.objects.get(dataset=topic.dataset).data["conventions"]["nist"]
    assert [r["annotator"] for r in data["per_topic"] if r["kind"] == "peer"] == ["pat", "quinn"]
    assert len(data["agreement"]) == 1
    assert second_peer.endswith("peer 2"), "the next peer after 1 is 2 (numeric order), not 10"
