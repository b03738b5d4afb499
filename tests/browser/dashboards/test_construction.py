"""Pyramid construction agreement end to end in Chromium: two annotators, each logged in in their
own browser context, build pyramids of one topic's references in the builder (one with the mouse,
one with the keyboard), blind to each other; the background job ``construction`` compares them
in the background runner's thread (as in production, not in the saving request); the coordinator
opens the agreement page, reads the comparison (checked against an independent computation from
the two pyramids as stored, ``tests/pyramids/independent.py``) and drills down to the SCUs that
differ; both finish, the coordinator adjudicates the pair by clicks and a
peer's score then rests on the adjudicated pyramid, as the scores page says. Screenshots go to test-artifacts/."""

import csv
import io
import threading
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.adjudication.models import PyramidAdjudication
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers import assignments
from annotation.peers.editing import add_match
from annotation.pyramids import construction
from annotation.pyramids.models import SCU, Contributor, Pyramid, PyramidAgreement

from tests.browser.dashboards.test_dashboards import coordinator_of, logged_in_page
from tests.browser.editors.browser import PASSWORD, drag_select, login, program_select, wait_saved
from tests.browser.editors.test_builder import key_to, ref, spans
from tests.pyramids import independent

pytestmark = pytest.mark.browser

REFERENCES = {
    "A": "The dam burst at night. The valley flooded quickly.",
    "B": "At night the old dam burst. Engineers blamed the concrete.",
    "C": "The valley flooded after the dam failed. Concrete was blamed.",
}


def world():
    dataset = Dataset.objects.create(name="Pyramids twice")
    topic = Topic.objects.create(dataset=dataset, external_id="T7", title="A dam bursts")
    for rid, text in REFERENCES.items():
        ReferenceSummary.objects.create(topic=topic, external_id=rid, text=text)
    users = {}
    for name in ("ann1", "ann2"):
        users[name] = get_user_model().objects.create_user(name, password=PASSWORD)
        Assignment.objects.create(topic=topic, annotator=users[name], task="build_pyramid")
    return dataset, topic, users


def open_builder(chromium, live_server, username):
    """The annotator's own browser (a context of its own: cookies, storage), on their pyramid."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"JavaScript error: {error}"))
    login(page, live_server.url, username)
    page.click("button:has-text('Start')")
    page.wait_for_url("**/build/")
    wait_saved(page)
    return context, page


def new_scu(page, label=None):
    """Create an SCU from the current selection with N; type ``label`` (else keep the prefilled one)."""
    page.keyboard.press("n")
    page.wait_for_selector(".label-edit")
    if label is not None:
        page.keyboard.press("Control+a")
        page.keyboard.type(label)
    page.keyboard.press("Enter")
    wait_saved(page)


def build_by_mouse(page, pyramid):
    """ann1: 'dam burst' from all three references (weight 3), 'valley flooded' made of two SCUs
    merged by drag and drop (weight 2), 'concrete blamed' (weight 2)."""
    drag_select(page, ref(page, "A"), "dam burst at night")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    page.fill(".label-edit", "The dam burst at night")
    page.keyboard.press("Enter")
    wait_saved(page)
    dam = SCU.objects.get(pyramid=pyramid, uid=1)
    for rid, phrase in (("B", "the old dam burst"), ("C", "the dam failed")):
        drag_select(page, ref(page, rid), phrase)
        page.click(f'.scu[data-id="{dam.pk}"] .label')
        page.click("[data-action=add-contributor]")
        wait_saved(page)
    assert page.text_content(f'.scu[data-id="{dam.pk}"] .weight') == "3"

    drag_select(page, ref(page, "A"), "valley flooded quickly")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    page.fill(".label-edit", "The valley flooded")
    page.keyboard.press("Enter")
    wait_saved(page)
    drag_select(page, ref(page, "C"), "valley flooded")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    page.keyboard.press("Enter")
    wait_saved(page)
    valley, copy = SCU.objects.get(pyramid=pyramid, uid=2), SCU.objects.get(pyramid=pyramid, uid=3)
    page.drag_and_drop(f'.scu[data-id="{copy.pk}"] .label', f'.scu[data-id="{valley.pk}"] .label')  # merge
    wait_saved(page)
    assert not SCU.objects.filter(pk=copy.pk).exists()

    drag_select(page, ref(page, "B"), "Engineers blamed the concrete")
    page.click("[data-action=new-scu]")
    page.wait_for_selector(".label-edit")
    page.fill(".label-edit", "The concrete was blamed")
    page.keyboard.press("Enter")
    wait_saved(page)
    concrete = SCU.objects.get(pyramid=pyramid, uid=4)
    drag_select(page, ref(page, "C"), "Concrete was blamed")
    page.click(f'.scu[data-id="{concrete.pk}"] .label')
    page.click("[data-action=add-contributor]")
    wait_saved(page)


def build_by_keyboard(page, pyramid):
    """ann2: 'dam burst' from A and B only, C's 'the dam failed' an SCU of its own, 'valley
    flooded' from A and C, nothing about the concrete."""
    program_select(page, ref(page, "A"), "dam burst at night")
    new_scu(page, "The dam burst")
    program_select(page, ref(page, "B"), "the old dam burst")
    key_to(page, SCU.objects.get(pyramid=pyramid, uid=1).pk)
    page.keyboard.press("a")
    wait_saved(page)
    program_select(page, ref(page, "C"), "the dam failed")
    new_scu(page, "The dam failed")
    program_select(page, ref(page, "A"), "valley flooded quickly")
    new_scu(page, "The valley was flooded")
    program_select(page, ref(page, "C"), "valley flooded")
    key_to(page, SCU.objects.get(pyramid=pyramid, uid=3).pk)
    page.keyboard.press("a")
    wait_saved(page)


def expected_figures(topic, first, second, pair):
    """Pairwise P/R/F1, B-cubed and alpha from the stored contributors with plain sets: the aligned
    contributors are those covering exactly the same characters (every other pair of this topic
    overlaps by less than the threshold)."""
    chars = independent.contributor_characters(topic)
    scu_of = dict(Contributor.objects.filter(scu__pyramid__topic=topic).values_list("id", "scu__uid"))
    pyramid_of = dict(Contributor.objects.filter(scu__pyramid__topic=topic).values_list("id", "scu__pyramid_id"))
    mine = [c for c in chars if pyramid_of[c] == first.pk]
    theirs = [c for c in chars if pyramid_of[c] == second.pk]
    aligned = sorted((a, b, 1.0) for a in mine for b in theirs if chars[a] == chars[b])
    assert sorted((a, b) for a, b, _ in pair["aligned_contributors"]) == [(a, b) for a, b, _ in aligned]
    same_a, same_b = independent.same_scu_pairs(aligned, chars, scu_of)
    together_a, together_b = sum(same_a), sum(same_b)
    both = sum(x and y for x, y in zip(same_a, same_b, strict=True))
    precision, recall = both / together_b, both / together_a
    # B-cubed (Bagga & Baldwin 1998): each aligned item's cluster in A and in B, over the aligned items.
    cluster_a = {
        i: {j for j, (a2, _, _) in enumerate(aligned) if scu_of[a2] == scu_of[a]} for i, (a, _, _) in enumerate(aligned)
    }
    cluster_b = {
        i: {j for j, (_, b2, _) in enumerate(aligned) if scu_of[b2] == scu_of[b]} for i, (_, b, _) in enumerate(aligned)
    }
    b_precision = np.mean([len(cluster_a[i] & cluster_b[i]) / len(cluster_b[i]) for i in cluster_a])
    b_recall = np.mean([len(cluster_a[i] & cluster_b[i]) / len(cluster_a[i]) for i in cluster_a])
    alpha = krippendorff.alpha(reliability_data=np.array([same_a, same_b], dtype=float), level_of_measurement="nominal")
    f1 = lambda p, r: 2 * p * r / (p + r)  # noqa: E731  (a one-line helper of this test)
    return {
        "pairs": len(same_a),
        "pairwise": (precision, recall, f1(precision, recall)),
        "bcubed": (b_precision, b_recall, f1(b_precision, b_recall)),
        "alpha": alpha,
        "aligned": len(aligned),
    }


def three(values) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def test_two_annotators_build_blind_and_the_coordinator_compares(
    chromium, live_server, background_runner, artifacts, monkeypatch
):
    dataset, topic, users = world()
    coordinator_of(dataset)
    # The comparison is the background job's (a topic's agreement job computes it with the peers'
    # agreement: ``construction.recompute_due``), run by the background runner's own thread as in
    # production (``background_runner``: not in the saving request): each run that computes is recorded.
    runs = []
    compute = construction.recompute_due

    def recorded(ids):
        ids = list(ids)
        if ids:
            runs.append((threading.current_thread().name, ids))
        return compute(ids)

    monkeypatch.setattr(construction, "recompute_due", recorded)

    # Each annotator in their own browser: ann1 with the mouse, ann2 with the keyboard, at the same time.
    context1, page1 = open_builder(chromium, live_server, "ann1")
    context2, page2 = open_builder(chromium, live_server, "ann2")
    first, second = (
        Pyramid.objects.get(topic=topic, creator=users["ann1"]),
        Pyramid.objects.get(topic=topic, creator=users["ann2"]),
    )
    assert first.pk < second.pk
    build_by_mouse(page1, first)
    page1.screenshot(path=str(artifacts / "construction-ann1-builder.png"), full_page=True)
    build_by_keyboard(page2, second)
    page2.screenshot(path=str(artifacts / "construction-ann2-builder.png"), full_page=True)
    assert {s.uid: spans(s) for s in SCU.objects.filter(pyramid=first)} == {
        1: {"A": ["dam burst at night"], "B": ["the old dam burst"], "C": ["the dam failed"]},
        2: {"A": ["valley flooded quickly"], "C": ["valley flooded"]},
        4: {"B": ["Engineers blamed the concrete"], "C": ["Concrete was blamed"]},
    }
    assert {s.uid: spans(s) for s in SCU.objects.filter(pyramid=second)} == {
        1: {"A": ["dam burst at night"], "B": ["the old dam burst"]},
        2: {"C": ["the dam failed"]},
        3: {"A": ["valley flooded quickly"], "C": ["valley flooded"]},
    }

    # Blind: ann2's browser never shows ann1's pyramid, neither in the builder nor through the API.
    assert "The concrete was blamed" not in page2.inner_text("body")
    assert page2.goto(live_server.url + reverse("frontend:builder", args=[first.pk])).status == 404
    assert "The concrete was blamed" not in page2.content()
    for name in ("api:pyramid-detail", "api:pyramid-full", "api:pyramid-history"):
        assert page2.goto(live_server.url + reverse(name, args=[first.pk])).status == 404, name
    listed = page2.goto(live_server.url + reverse("api:pyramid-list") + "?format=json").json()
    listed = listed["results"] if isinstance(listed, dict) else listed
    assert [p["id"] for p in listed] == [second.pk]
    assert (
        page2.goto(live_server.url + reverse("dashboards:construction_topic", args=[dataset.pk, "T7"])).status == 403
    )  # the comparison is the coordinator's
    page2.goto(f"{live_server.url}/")
    page2.wait_for_load_state("networkidle")
    context1.close()
    context2.close()

    # The background job ran after the commits: the stored figures are current, from both pyramids as built.
    assert background_runner.wait(60)
    assert runs and all(ids == [topic.pk] for _, ids in runs), runs
    assert {name for name, _ in runs} == {"pyramid-background"}, (
        runs
    )  # the runner's thread (jobs/runner.py), no request's
    agreement = PyramidAgreement.objects.get(topic=topic)
    assert agreement.is_current and agreement.pyramid_revisions == {
        str(p.pk): p.revision for p in Pyramid.objects.filter(topic=topic)
    }
    [pair] = agreement.values["pairs"]
    expected = expected_figures(topic, first, second, pair)
    assert (expected["aligned"], expected["pairs"]) == (
        5,
        8,
    )  # by hand: 5 contributors in both, 8 pairs across references
    assert expected["pairwise"] == pytest.approx((1.0, 0.5, 2 / 3))  # together in both 2, in A 4, in B 2

    page, errors = logged_in_page(chromium, live_server)
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/agreement/")
    section = page.locator("section[data-construction]")
    assert (
        section.locator("[data-updating]:visible").count() == 0
        and section.locator("[data-empty=updating]").count() == 0
    )
    row = page.locator(f'tr[data-construction-pair="T7:{first.pk}-{second.pk}"]')
    assert f"#{first.pk} ann1" in row.inner_text() and f"#{second.pk} ann2" in row.inner_text()
    assert row.locator("[data-pairwise]").inner_text().startswith(three(expected["pairwise"]))
    assert f"{expected['pairs']} pairs" in row.locator("[data-pairwise]").inner_text()
    assert row.locator("[data-bcubed]").inner_text().startswith(three(expected["bcubed"]))
    assert row.locator("[data-alpha]").inner_text() == f"{expected['alpha']:.3f}"
    assert row.locator("td").nth(1).inner_text().startswith("5")  # aligned contributors, of 7 / 5
    assert "of 7 / 5" in row.locator("td").nth(1).inner_text()
    assert row.locator("[data-no-shared-peers]").count() == 1  # no peer annotated yet: no practical test
    section.screenshot(path=str(artifacts / "construction-agreement.png"))
    table = section.locator("table.construction-pairs")
    assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth"), "every column in sight at 1280 px"

    # Drill-down: the SCUs that differ, labelled as each annotator wrote them.
    row.locator("a").first.click()
    page.wait_for_selector("table.construction-scus")
    assert page.locator("[data-construction-updating]").count() == 0
    assert page.locator("[data-pairwise]").inner_text().startswith(three(expected["pairwise"]))
    differing = page.locator("table.construction-scus tbody tr")
    shown = [
        (
            differing.nth(i).get_attribute("data-scu-kind"),
            differing.nth(i).get_attribute("data-uids"),
            [t.strip() for t in differing.nth(i).locator("td").all_inner_texts()],
        )
        for i in range(differing.count())
    ]
    assert [(kind, uids) for kind, uids, _ in shown] == [("matched", "1-1"), ("only_a", "4-"), ("only_b", "-2")]
    assert shown[0][2] == ["weight 3 vs 2", "1", "The dam burst at night", "3", "1", "The dam burst", "2", "2"]
    assert shown[1][2][:4] == ["only in A", "4", "The concrete was blamed", "2"]
    assert shown[2][2][4:7] == ["2", "The dam failed", "1"]
    figures = page.inner_text("[data-pair-figures]")
    assert "2 matched by shared contributors, 1 identical; 1 only in A, 1 only in B" in figures
    # Weights of the matched SCUs: (3, 2) and (2, 2); B's are constant, so no correlation (said, not left blank).
    assert (
        "equal in 0.50 of 2; mean absolute difference 0.50; Pearson not computable, Spearman not computable" in figures
    )
    assert "SCUs that differ" in page.inner_text("[data-scu-differences]") and "3 of 4" in page.inner_text(
        "[data-scu-differences] h2"
    )
    page.screenshot(path=str(artifacts / "construction-drilldown.png"), full_page=True)

    # The downloads the drill-down offers: the figures and the SCU alignment, as the page shows them.
    with page.expect_download() as download:
        page.get_by_role("link", name="Figures (CSV)").click()
    [figures_row] = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert (
        float(figures_row["pairwise_f1"]),
        float(figures_row["bcubed_f1"]),
        float(figures_row["alpha"]),
    ) == pytest.approx((expected["pairwise"][2], expected["bcubed"][2], expected["alpha"]))
    assert (figures_row["name_a"], figures_row["name_b"]) == (f"#{first.pk} ann1", f"#{second.pk} ann2")
    with page.expect_download() as download:
        page.get_by_role("link", name="SCU alignment (CSV)").click()
    alignment = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text())))
    assert sorted((r["kind"], r["label_a"], r["label_b"]) for r in alignment) == [
        ("identical", "The valley flooded", "The valley was flooded"),
        ("matched", "The dam burst at night", "The dam burst"),
        ("only_a", "The concrete was blamed", ""),
        ("only_b", "", "The dam failed"),
    ]

    # Both annotators finish their pyramids on their own home page; the coordinator then adjudicates
    # the pair from this page, by clicks: the merged pyramid is the topic's, theirs stay as built.
    for name in ("ann1", "ann2"):
        context = chromium.new_context(viewport={"width": 1280, "height": 800})
        home = context.new_page()
        login(home, live_server.url, name)
        home.get_by_role("button", name="Mark as done").click()
        home.wait_for_selector(".messages .success")
        context.close()
    built = {p.pk: {s.uid: spans(s) for s in p.scus.all()} for p in (first, second)}
    page.reload()
    page.get_by_role("link", name="Adjudicate this pair").click()
    page.wait_for_selector("form[data-adjudicate-pyramids]")
    rows = page.locator("table.adjudicate tbody tr")
    items = {
        rows.nth(i).get_attribute("data-kind"): rows.nth(i).get_attribute("data-item") for i in range(rows.count())
    }
    assert sorted(items) == ["matched", "only_a", "only_b"] and rows.count() == 4, (
        "the three SCUs that differ, and the labels of 2-3"
    )
    decisions = {
        "m1-1": "A's label, contributors of both",
        "m2-3": "B's SCU",
        items["only_a"]: "A's SCU",
        items["only_b"]: "neither",
    }
    for item, choice in decisions.items():
        page.locator(f"tr[data-item='{item}'] label", has_text=choice).click()
    page.get_by_role("button", name="Save adjudicated pyramid").click()
    page.wait_for_selector(".msg.success")
    page.screenshot(path=str(artifacts / "construction-adjudicated.png"), full_page=True)
    adjudicated = PyramidAdjudication.objects.get(topic=topic).pyramid
    assert sorted((s.label, tuple(sorted(spans(s)))) for s in adjudicated.scus.all()) == [
        ("The concrete was blamed", ("B", "C")),
        ("The dam burst at night", ("A", "B", "C")),
        ("The valley was flooded", ("A", "C")),
    ]
    assert {p.pk: {s.uid: spans(s) for s in p.scus.all()} for p in (first, second)} == built, (
        "the annotators' pyramids are unchanged"
    )

    # A peer annotated against the topic's pyramid now rests on the adjudicated one, and the scores say so.
    peer = PeerSummary.objects.create(topic=topic, external_id="9", text="The dam burst at night.")
    reader = get_user_model().objects.create_user("ann3")
    annotation = assignments.annotation_for(topic.assignments.create(annotator=reader, task="annotate_peers"), peer)
    assert annotation.pyramid == adjudicated
    add_match(annotation, adjudicated.scus.get(label="The dam burst at night"), [(0, 22)])
    assignments.mark_done(annotation.peer.topic.assignments.get(annotator=reader))
    page.goto(
        f"{live_server.url}/datasets/{dataset.pk}/scores/"
    )  # the figures are brought up to date in the background
    assert background_runner.wait(60)
    page.reload()
    shown = [r.locator("td").all_inner_texts() for r in page.locator("table.per-topic tbody tr").all()]
    assert [cells[4] for cells in shown if cells[2] == "peer"] == ["ann3; pyramid: adjudicated"]
    assert "pyramid: adjudicated" in page.locator("[data-version-note]").inner_text()
    assert not errors
    page.close()
