"""The dashboard pages over HTTP: who may see what, every figure as the services compute it,
downloads equal to the management commands, assignment forms, judgment uploads, live status."""

import csv
import io
import json
import re
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.access.rules import coordinates
from annotation.corpus.models import Assignment, Topic
from annotation.dashboards import snapshots
from annotation.dashboards.figures import metaeval_table, score_dashboard
from annotation.dashboards.models import DatasetDashboard, Judgment
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.peers.results import agreement_rows, topics_of
from annotation.pyramids.models import SCU

from tests.conftest import without_provenance
from tests.dashboards.helpers import build_toy, fmt, make_users, row_html

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    return build_toy()


@pytest.fixture
def users(dataset):
    return make_users(dataset)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def coord(users):
    return client_for(users["coord"])


def pages(dataset) -> list[str]:
    d = dataset.pk
    return [
        reverse(name, args=args)
        for name, args in [
            ("dashboards:overview", [d]),
            ("dashboards:agreement", [d]),
            ("dashboards:agreement_topic", [d, "T1"]),
            ("dashboards:agreement_peer", [d, "T1", "1"]),
            ("dashboards:scores", [d]),
            ("dashboards:metaeval", [d]),
            ("dashboards:significance", [d]),
            ("dashboards:status", [d]),
            *(
                (f"dashboards:{what}_export", [d, fmt_])
                for what in ("scores", "agreement", "metaeval", "statistics")
                for fmt_ in ("csv", "json")
            ),
        ]
    ]


def posts(dataset) -> list[str]:
    a = Assignment.objects.create(
        topic=dataset.topics.first(), annotator=PeerAnnotation.objects.first().annotator, task="build_pyramid"
    )
    d = dataset.pk
    return [
        reverse("dashboards:assignment_create", args=[d]),
        reverse("dashboards:assignment_update", args=[d, a.pk]),
        reverse("dashboards:assignment_delete", args=[d, a.pk]),
    ]


# --- permissions ----------------------------------------------------------------------------


def test_coordinates(dataset, users):
    assert coordinates(users["root"], dataset) and coordinates(users["coord"], dataset)
    assert not coordinates(users["other"], dataset) and not coordinates(users["annotator"], dataset)


def test_every_page_and_download_for_each_role(dataset, users):
    urls = pages(dataset)
    anonymous = Client()
    for url in urls:
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next="), url
    for role, expected in [("annotator", 403), ("other", 404), ("coord", 200), ("root", 200)]:
        client = client_for(users[role])
        for url in urls:
            assert client.get(url).status_code == expected, (role, url)


def test_every_form_for_each_role(dataset, users):
    urls = posts(dataset)
    for role, expected in [("annotator", 403), ("other", 404)]:
        client = client_for(users[role])
        for url in urls:
            assert (
                client.post(url, {"status": "done", "topic": 1, "annotator": 1, "task": "build_pyramid"}).status_code
                == expected
            )
    for url in urls:
        response = Client().post(url, {"status": "done"})
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Assignment.objects.filter(status="done").count() == 0 and Assignment.objects.count() == 1


def test_dataset_list(dataset, users):
    assert Client().get("/datasets/").status_code == 302
    assert client_for(users["annotator"]).get("/datasets/").status_code == 403
    page = client_for(users["coord"]).get("/datasets/").content.decode()
    assert "Toy" in page and "Other" not in page
    page = client_for(users["root"]).get("/datasets/").content.decode()
    assert "Toy" in page and "Other" in page


def test_user_text_is_escaped(dataset, coord):
    scu = SCU.objects.get(pyramid__topic__external_id="T1", uid=1)
    scu.label = '<script>alert("x")</script>'
    scu.save()
    page = coord.get(reverse("dashboards:agreement_peer", args=[dataset.pk, "T1", "1"])).content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


# --- figures --------------------------------------------------------------------------------


def test_agreement_page_figures(dataset, coord):
    page = coord.get(reverse("dashboards:agreement", args=[dataset.pk])).content.decode()
    [row] = agreement_rows(topics_of("Toy"))
    html = row_html(page, "data-topic", "T1")
    assert (
        fmt(row["alpha_dice_mean"]) in html
        and fmt(row["alpha_dice_pooled"]) in html
        and fmt(row["pearson_modified"]) in html
    )
    assert "3 peers, 12 units" in html and "12 units" in html and fmt(row["mean_abs_diff_modified"]) in html
    assert "a Fisher-z interval needs more than 3 pairs" in html  # no CI with 3 peers, and it says why
    assert 'data-pair="ann1-ann2"' in page and fmt(row["alpha_dice_pooled"]) in page.split("data-matrix")[1]
    sacre = coord.get(reverse("dashboards:agreement", args=[dataset.pk]) + "?convention=sacrerouge").content.decode()
    [srow] = agreement_rows(topics_of("Toy"), "sacrerouge")
    assert fmt(srow["pearson_modified"]) in row_html(sacre, "data-topic", "T1")


def test_agreement_topic_page(dataset, coord):
    page = coord.get(reverse("dashboards:agreement_topic", args=[dataset.pk, "T1"])).content.decode()
    for peer, diff, flagged in [("1", 0.2, True), ("2", 0.0, False), ("3", 0.4, True)]:
        html = row_html(page, "data-peer", peer)
        assert fmt(diff) in html and (("badge flag" in html) == flagged)
    points = json.loads(
        re.search(r'<script id="chart-agreement" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert {p["peer"]: p["flagged"] for p in points} == {"1": True, "2": False, "3": True}
    assert {p["peer"]: p["difference"] for p in points} == pytest.approx({"1": 0.2, "2": 0.0, "3": 0.4})
    assert coord.get(reverse("dashboards:agreement_topic", args=[dataset.pk, "T2"])).status_code == 404


def test_agreement_drilldown(dataset, coord):
    page = coord.get(reverse("dashboards:agreement_peer", args=[dataset.pk, "T1", "3"])).content.decode()
    # ann1 found SCUs 1 and 2, ann2 SCU 1 (toy + helpers): weights 3 and 2.
    assert [c.strip() for c in _cells(row_html(page, "data-scu", "1"))] == ["1", "3", "SCU 1", "1", "1"]
    assert [c.strip() for c in _cells(row_html(page, "data-scu", "2"))] == ["2", "2", "SCU 2", "1", "0"]
    assert 'data-scu="3"' not in page and 'data-scu="4"' not in page  # nobody found them
    alpha = snapshots.alpha_dice({"ann1": {1: 1, 2: 1, 3: 0, 4: 0}, "ann2": {1: 1, 2: 0, 3: 0, 4: 0}})
    assert fmt(alpha.value) in page.split("data-alpha")[1][:200] and "(4 units)" in page
    assert "0.400 &gt; 0.06" in page  # this peer's difference, flagged
    stored = DatasetDashboard.objects.get(dataset=dataset).data["conventions"]["nist"]["agreement_details"]["T1"]
    assert stored["peers"][2]["alpha"]["value"] == pytest.approx(alpha.value)
    assert coord.get(reverse("dashboards:agreement_peer", args=[dataset.pk, "T1", "9"])).status_code == 404


def _cells(row: str) -> list[str]:
    import re

    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


@pytest.mark.parametrize("convention", ["nist", "sacrerouge"])
@pytest.mark.parametrize("references", [0, 1])
def test_scores_page_figures(dataset, coord, convention, references):
    url = reverse("dashboards:scores", args=[dataset.pk]) + f"?convention={convention}&references={references}"
    page = coord.get(url).content.decode()
    board = score_dashboard("Toy", convention, include_references=bool(references))
    compared = "modified_jk" if references else "modified"
    for r in board["per_system"]:
        html = row_html(page, "data-system", r["system"])
        assert all(fmt(r[s], 4) in html for s in ("original", "modified", "modified_jk")), r["system"]
        assert fmt(r[f"{compared}_sd"]) in html
    # The chart's rows (json_script): one per system, ordered by the compared score, nothing clipped.
    plotted = json.loads(
        re.search(r'<script id="chart-systems" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert len(plotted) == len(board["per_system"]) == (6 if references else 3)
    assert [r["mean"] for r in plotted] == sorted((r[compared] for r in board["per_system"]), reverse=True)
    by_system = {r["system"]: r for r in board["per_system"]}
    for r in plotted:
        assert (r["min"], r["max"], r["sd"]) == (
            by_system[r["system"]][f"{compared}_min"],
            by_system[r["system"]][f"{compared}_max"],
            by_system[r["system"]][f"{compared}_sd"],
        )
        assert r["low"] is None or r["low"] <= r["mean"] <= r["high"]
    assert page.count('<tr class="peer">') + page.count('<tr class="reference">') == len(board["per_topic"])
    tiers = json.loads(
        re.search(r'<script id="chart-tiers" type="application/json">(.*?)</script>', page, re.S).group(1)
    )
    assert len({t["pyramid"] for t in tiers}) == 2  # a tier histogram per pyramid
    # Each chart's CSV link downloads the plotted rows.
    link = (
        re.search(r'<a class="chart-csv" href="([^"]+/charts/systems\.csv[^"]*)"', page).group(1).replace("&amp;", "&")
    )
    rows = list(csv.DictReader(io.StringIO(coord.get(link).content.decode())))
    assert [r["system"] for r in rows] == [r["system"] for r in plotted]
    assert [float(r["mean"]) for r in rows] == pytest.approx([r["mean"] for r in plotted])


def test_scores_sorting(dataset, coord):
    url = reverse("dashboards:scores", args=[dataset.pk])
    page = coord.get(url + "?sort=system").content.decode()
    table = page.split('class="per-system"')[1]
    assert [table.index(f'<tr class="peer" data-system="{s}"') for s in "123"] == sorted(
        table.index(f'<tr class="peer" data-system="{s}"') for s in "123"
    )
    page = coord.get(url + "?sort=-system").content.decode().split('class="per-system"')[1]
    positions = [page.index(f'data-system="{s}"') for s in "123"]
    assert positions == sorted(positions, reverse=True)
    # Default: the compared score, best first (2 and 3 tie at 0.6, then 1 at 0.55).
    page = coord.get(url).content.decode().split('class="per-system"')[1]
    assert page.index('data-system="1"') > page.index('data-system="2"')
    assert coord.get(url + "?sort=nonsense&tsort=-modified").status_code == 200


def test_downloads_equal_the_management_commands(dataset, coord):
    for fmt_, command, what in [
        ("csv", "export_scores", "scores"),
        ("json", "export_scores", "scores"),
        ("csv", "export_agreement", "agreement"),
        ("json", "export_agreement", "agreement"),
    ]:
        out = StringIO()
        call_command(command, dataset="Toy", format=fmt_, stdout=out)
        response = coord.get(reverse(f"dashboards:{what}_export", args=[dataset.pk, fmt_]) + "?references=1")
        assert without_provenance(response.content, fmt_) == out.getvalue(), (command, fmt_)
        assert "attachment" in response["Content-Disposition"]
    # Peers only, and per system (the dashboards' system keys).
    rows = json.loads(
        coord.get(reverse("dashboards:scores_export", args=[dataset.pk, "json"]) + "?references=0").content
    )
    assert {r["kind"] for r in rows} == {"peer"} and len(rows) == 9  # 6 + ann2's 3
    systems = json.loads(
        coord.get(
            reverse("dashboards:scores_export", args=[dataset.pk, "json"]) + "?table=systems&references=1"
        ).content
    )
    assert (
        json.loads(without_provenance(json.dumps(systems), "json"))
        == score_dashboard("Toy", include_references=True)["per_system"]
    )
    csv_head = (
        coord.get(reverse("dashboards:scores_export", args=[dataset.pk, "csv"]) + "?table=systems")
        .content.decode()
        .splitlines()[0]
    )
    from annotation.dashboards.figures import SYSTEM_KEYS

    assert csv_head == ",".join(SYSTEM_KEYS + ("app_version", "settings"))


# --- assignments ----------------------------------------------------------------------------


def test_create_assignments_and_a_second_annotator(dataset, users, coord):
    t1 = Topic.objects.get(dataset=dataset, external_id="T1")
    url = reverse("dashboards:assignment_create", args=[dataset.pk])
    ann1, ann2 = (
        users["annotator"],
        PeerAnnotation.objects.get(annotator__username="ann2", peer__external_id="1").annotator,
    )
    response = coord.post(
        url, {"topic": t1.pk, "annotator": ann1.pk, "task": "annotate_peers", "filters": "status=assigned&evil=1"}
    )
    assert response.status_code == 302 and response["Location"].endswith(f"/datasets/{dataset.pk}/?status=assigned")
    response = coord.post(url, {"topic": t1.pk, "annotator": ann2.pk, "task": "annotate_peers"})
    assert response.status_code == 302
    created = Assignment.objects.filter(topic=t1, task="annotate_peers")
    assert sorted(created.values_list("annotator__username", flat=True)) == ["ann1", "ann2"]
    assert {a.created_by for a in created} == {users["coord"]}
    page = coord.get(reverse("dashboards:overview", args=[dataset.pk])).content.decode()
    assert "Assigned ann2 to annotate peers on T1." in page
    cell = page.split('data-topic="T1"')[1].split("</tr>")[0].split('data-task="annotate_peers"')[1]
    assert "ann1" in cell and "ann2" in cell and "3 of 3 peers done" in cell  # the toy annotations are finished


def test_duplicate_and_invalid_assignments_write_nothing(dataset, users, coord):
    t1 = Topic.objects.get(dataset=dataset, external_id="T1")
    url = reverse("dashboards:assignment_create", args=[dataset.pk])
    data = {"topic": t1.pk, "annotator": users["annotator"].pk, "task": "build_pyramid"}
    assert coord.post(url, data).status_code == 302
    response = coord.post(url, data)
    assert response.status_code == 400
    assert "ann1 is already assigned to build pyramid on topic T1." in response.content.decode()
    other_topic = Topic.objects.create(dataset=users["other"].coordinated_datasets.get(), external_id="X1")
    for bad in [{**data, "topic": other_topic.pk}, {**data, "task": "dance"}, {"task": "build_pyramid"}]:
        response = coord.post(url, bad)
        assert response.status_code == 400 and 'class="form-errors"' in response.content.decode()
    assert Assignment.objects.count() == 1


def test_change_status_and_delete(dataset, users, coord):
    t1 = Topic.objects.get(dataset=dataset, external_id="T1")
    a = Assignment.objects.create(topic=t1, annotator=users["annotator"], task="build_pyramid")
    update = reverse("dashboards:assignment_update", args=[dataset.pk, a.pk])
    assert coord.post(update, {"status": "in_progress"}).status_code == 302
    a.refresh_from_db()
    assert a.status == "in_progress"
    response = coord.post(update, {"status": "finished"})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    a.refresh_from_db()
    assert a.status == "in_progress"
    assert coord.get(update).status_code == 405
    # Filters: status, task, annotator.
    overview = reverse("dashboards:overview", args=[dataset.pk])
    page = coord.get(overview + "?status=in_progress").content.decode()
    assert 'data-topic="T1"' in page and 'data-topic="T2"' not in page
    page = coord.get(overview + "?status=unassigned&task=build_pyramid").content.decode()
    assert 'data-topic="T1"' not in page and 'data-topic="T2"' in page
    page = coord.get(overview + "?annotator=ann1&task=annotate_peers").content.decode()
    assert "No topic matches these filters." in page
    # Another dataset's assignment is not reachable from this one.
    foreign = Assignment.objects.create(
        topic=Topic.objects.create(dataset=users["other"].coordinated_datasets.get(), external_id="X1"),
        annotator=users["annotator"],
        task="build_pyramid",
    )
    assert coord.post(reverse("dashboards:assignment_delete", args=[dataset.pk, foreign.pk])).status_code == 404
    assert coord.post(reverse("dashboards:assignment_delete", args=[dataset.pk, a.pk])).status_code == 302
    assert not Assignment.objects.filter(pk=a.pk).exists() and Assignment.objects.filter(pk=foreign.pk).exists()


def test_forms_need_the_csrf_token(dataset, users):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users["coord"])
    t1 = Topic.objects.get(dataset=dataset, external_id="T1")
    response = client.post(
        reverse("dashboards:assignment_create", args=[dataset.pk]),
        {"topic": t1.pk, "annotator": users["annotator"].pk, "task": "build_pyramid"},
    )
    assert response.status_code == 403 and not Assignment.objects.exists()
    page = client.get(reverse("dashboards:overview", args=[dataset.pk])).content.decode()
    assert page.count("csrfmiddlewaretoken") >= 1


# --- judgments and meta-evaluation ----------------------------------------------------------


def upload(client, dataset, name, content, **extra):
    data = {
        "format": extra.pop("format", "csv"),
        "file": SimpleUploadedFile(name, content.encode() if isinstance(content, str) else content),
    }
    data.update(extra)
    return client.post(reverse("dashboards:metaeval", args=[dataset.pk]), data)


def test_judgment_upload_and_the_metaeval_table(dataset, coord):
    text = "topic,summary,metric,value\n" + "".join(
        f"T{t},{s},content,{(t * 7 + int(s) * 3) % 5 + 1}\n" for t in (1, 2) for s in (1, 2, 3)
    )
    response = upload(coord, dataset, "content.csv", text)
    assert response.status_code == 302 and Judgment.objects.count() == 6
    page = coord.get(response["Location"]).content.decode()
    assert "Imported content from content.csv: 6 new" in page
    table = {(r["summarizers"], r["level"]): r for r in metaeval_table("Toy", score="modified")["rows"]}
    jk = {(r["summarizers"], r["level"]): r for r in metaeval_table("Toy", score="modified_jk")["rows"]}
    for (summarizers, level), r in table.items():
        shown = r if summarizers == "peers" else jk[(summarizers, level)]
        html = page.split(f'data-summarizers="{summarizers}" data-level="{level}"')[1].split("</tr>")[0]
        for method in ("pearson", "spearman", "kendall"):
            assert (fmt(shown[method]) if shown[method] is not None else "—") in html.split(f'data-method="{method}"')[
                1
            ].split("</td>")[0]
        assert f"{shown['n']} <span" in html
    rows = json.loads(
        without_provenance(
            coord.get(reverse("dashboards:metaeval_export", args=[dataset.pk, "json"]) + "?score=modified").content,
            "json",
        )
    )
    assert rows == metaeval_table("Toy", score="modified")["rows"]


def test_judgment_upload_errors_are_listed_by_line_and_nothing_is_written(dataset, coord, settings):
    bad = "topic,summary,metric,value\nT1,1,content,3\nT9,1,content,3\nT1,7,content,2\nT1,2,content,abc\n"
    response = upload(coord, dataset, "bad.csv", bad)
    page = re.sub(
        r"[A-Za-z0-9]{32,}", "", response.content.decode()
    )  # CSRF tokens: random letters, "T9" among them at times
    assert response.status_code == 400 and "Nothing was imported: 1 problem." in page  # malformed: refused whole
    assert "T9" not in page and "line 5:" in page  # another dataset's topic is skipped, not a problem
    assert "line 4:" not in page  # a summary the topic does not hold is left (reported on import), not malformed
    assert not Judgment.objects.exists()
    response = upload(coord, dataset, "header.csv", "a,b\n1,2\n")
    assert response.status_code == 400 and "line 1: the header must name the columns" in response.content.decode()
    response = upload(coord, dataset, "latin1.csv", "topic,summary,metric,value\nT1,1,caf\xe9,3\n".encode("latin-1"))
    assert response.status_code == 400 and "is not UTF-8 text" in response.content.decode()
    response = upload(coord, dataset, "table.txt", "T1\t1\t0.5\n", format="duc")
    assert response.status_code == 400 and "needs its header file" in response.content.decode()
    settings.JUDGMENT_MAX_BYTES = 20
    response = upload(coord, dataset, "big.csv", "topic,summary,metric,value\nT1,1,content,3\n")
    assert response.status_code == 400 and "the limit is 20" in response.content.decode()
    assert not Judgment.objects.exists()


def test_judgments_past_the_meta_evaluations_bounds_are_refused_at_upload(dataset, coord, settings):
    """A 30,000-row upload made every dashboard recomputation take minutes: the bounds are settings,
    counted with what the dataset already holds, and a refused file writes nothing."""
    settings.METAEVAL_MAX_JUDGMENTS, settings.METAEVAL_MAX_METRICS = 8, 2

    def rows(metric, topics=(1, 2)):
        return "topic,summary,metric,value\n" + "".join(f"T{t},{s},{metric},{s}\n" for t in topics for s in (1, 2, 3))

    assert upload(coord, dataset, "content.csv", rows("content")).status_code == 302  # 6 judgments, 1 metric
    page = coord.get(reverse("dashboards:metaeval", args=[dataset.pk])).content.decode()
    assert "at most 8 judgments over 2 metrics" in page
    response = upload(coord, dataset, "more.csv", rows("quality"))  # 12 judgments
    text = response.content.decode()
    assert response.status_code == 400 and "Nothing was imported: 1 problem." in text
    assert "dataset &#x27;Toy&#x27; would hold 12 judgments (at most 8: METAEVAL_MAX_JUDGMENTS)" in text
    assert Judgment.objects.count() == 6
    assert (
        upload(coord, dataset, "again.csv", rows("content")).status_code == 302
    )  # the same judgments again: no more of them
    settings.METAEVAL_MAX_JUDGMENTS = 100
    for metric in ("quality", "clarity"):
        response = upload(coord, dataset, f"{metric}.csv", rows(metric, topics=(1,)))
    text = response.content.decode()
    assert response.status_code == 400 and "3 metrics (at most 2: METAEVAL_MAX_METRICS)" in text
    assert sorted(set(Judgment.objects.values_list("metric", flat=True))) == ["content", "quality"]


def test_the_correlation_intervals_use_the_resamples_set(monkeypatch):
    from annotation.dashboards import statistics

    pairs = {(f"T{t}", s): (float(s + t), float(s * s - t)) for t in range(3) for s in range(5)}
    monkeypatch.setitem(statistics.SETTINGS, "correlation_resamples", 40)
    found = statistics.correlation_intervals(pairs)
    assert {figures["resamples"] for methods in found.values() for figures in methods.values()} == {40}


def test_duc_table_upload(dataset, coord):
    header = SimpleUploadedFile("2006-header.txt", b"setid peerid modifiedscore annotatorid content\n")
    table = "T1\t1\t0.5\tx\t3\nT1\t2\t0.5\tx\t4\nT1\t3\t0.5\tx\t\nT2\t01\t0.5\tx\t2\n"
    response = upload(coord, dataset, "scores.txt", table, format="duc", header=header)
    assert response.status_code == 302
    assert sorted(Judgment.objects.values_list("topic__external_id", "summary", "value")) == [
        ("T1", "1", 3),
        ("T1", "2", 4),
        ("T2", "1", 2),
    ]
    page = coord.get(response["Location"]).content.decode()
    assert "1 empty cell (no judgment)" in page and "content_responsiveness" in page  # count_noun: not "1 empty cells"


# --- live figures ---------------------------------------------------------------------------


def test_status_and_the_first_snapshot(dataset, coord):
    assert not DatasetDashboard.objects.exists()
    status = coord.get(reverse("dashboards:status", args=[dataset.pk])).json()  # computed synchronously once
    stored = DatasetDashboard.objects.get(dataset=dataset)
    assert status == {"computed_at": stored.computed_at.isoformat(), "current": True, "as_of": status["as_of"]}
    page = coord.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    assert f'data-computed-at="{stored.computed_at.isoformat()}"' in page and status["as_of"] in page
    badge = page.split("data-updating")[1].split(">")[0]
    assert "hidden" in badge  # current: no "updating…" badge


def test_stale_figures_show_updating_until_recomputed(dataset, coord, monkeypatch):
    snapshots.recompute_dataset(dataset.pk)
    before = DatasetDashboard.objects.get(dataset=dataset)
    monkeypatch.setattr(snapshots, "schedule", lambda ids: None)  # as if the worker were busy
    annotation = PeerAnnotation.objects.filter(peer__topic__external_id="T2", peer__external_id="3").get()
    add_match(annotation, SCU.objects.get(pyramid=annotation.pyramid, uid=1), [(10, 14)])
    status = coord.get(reverse("dashboards:status", args=[dataset.pk])).json()
    assert status["current"] is False and status["computed_at"] == before.computed_at.isoformat()
    page = coord.get(reverse("dashboards:scores", args=[dataset.pk])).content.decode()
    badge = page.split("data-updating")[1].split(">")[0]
    assert "hidden" not in badge
    # The worker catches up: the next poll sees a new snapshot with the new figure.
    monkeypatch.undo()
    status = coord.get(reverse("dashboards:status", args=[dataset.pk])).json()
    assert status["current"] is True and status["computed_at"] != before.computed_at.isoformat()
    page = coord.get(reverse("dashboards:scores", args=[dataset.pk]) + "?topic=T2").content.decode()
    assert fmt(0.8, 4) in page.split('class="per-topic"')[1]


def test_deleting_matches_is_seen(dataset, coord):
    coord.get(reverse("dashboards:status", args=[dataset.pk]))
    PeerMatch.objects.filter(annotation__peer__topic__external_id="T1", annotation__annotator__username="ann2").delete()
    page = coord.get(reverse("dashboards:agreement", args=[dataset.pk])).content.decode()
    [row] = agreement_rows(topics_of("Toy"))
    assert fmt(row["alpha_dice_pooled"]) in row_html(page, "data-topic", "T1")


def test_unfinished_annotations_are_shown_apart_and_downloadable(dataset, coord, users):
    url = reverse("dashboards:scores", args=[dataset.pk])
    assert "data-unfinished" not in coord.get(url).content.decode()  # every annotation finished: nothing to say
    t2 = Topic.objects.get(dataset=dataset, external_id="T2")
    pyramid = t2.pyramids.get()
    ann2 = PeerAnnotation.objects.filter(annotator__username="ann2").first().annotator
    started = PeerAnnotation.objects.create(
        peer=t2.peersummarys.get(external_id="1"), pyramid=pyramid, annotator=ann2, status="in_progress"
    )
    add_match(started, SCU.objects.get(pyramid=pyramid, uid=1), [(0, 4)])
    for peer in ("2", "3"):  # opened, nothing matched
        PeerAnnotation.objects.create(
            peer=t2.peersummarys.get(external_id=peer), pyramid=pyramid, annotator=ann2, status="in_progress"
        )
    page = coord.get(url).content.decode()
    note = re.search(r"<p[^>]*data-unfinished>(.*?)</p>", page, re.S).group(1)
    text = re.sub(r"<[^>]+>", "", note)
    assert "1 annotation in progress is not counted" in text and "2 opened but empty annotations never count" in text
    # The page's figures leave it out; its link downloads the scores with it (and only it) added.
    assert PeerAnnotation.objects.filter(pyramid=pyramid, annotator=ann2).count() == 3
    link = re.search(r'href="([^"]+include_unfinished=true[^"]*)"', note).group(1).replace("&amp;", "&")
    rows = list(csv.DictReader(io.StringIO(coord.get(link).content.decode())))
    extra = [r for r in rows if r["status"] == "in_progress"]
    assert [(r["topic"], r["summary"], r["annotator"]) for r in extra] == [("T2", "1", "ann2")]
    assert float(extra[0]["modified"]) == pytest.approx(3 / 5)  # SCU 1, weight 3, of MaxWeight(2) = 5
    default = list(
        csv.DictReader(
            io.StringIO(coord.get(link.replace("include_unfinished=true", "include_unfinished=false")).content.decode())
        )
    )
    assert len(default) == len(rows) - 1


def test_the_significance_figures_are_rendered_once_per_snapshot_and_never_stale(dataset, coord):
    """The figures (systems, matrix, SCU-level tests, stability) are a fragment cached per stored
    snapshot, convention, summaries compared and currency: a newer snapshot (another computed_at) or
    another convention is rendered afresh, never served the old one."""
    from django.core.cache import caches
    from django.core.cache.utils import make_template_fragment_key
    from django.utils import timezone

    snapshots.recompute_dataset(dataset.pk)
    url = reverse("dashboards:significance", args=[dataset.pk])

    def matrix(query=""):
        page = coord.get(url + query).content.decode()
        return page.split("data-sig-matrix")[1].split("</table>")[0]

    def systems(query=""):
        page = coord.get(url + query).content.decode()
        return page.split("data-stat-systems")[1].split("</table>")[0]

    stored = DatasetDashboard.objects.get(dataset=dataset)
    before = matrix()
    key = make_template_fragment_key(
        "significance_figures", [stored.pk, stored.computed_at.isoformat(), "nist", False, True]
    )
    assert caches["fragments"].get(key) is not None, "rendered once, kept for the next visit"
    assert matrix() == before
    payload = json.loads(stored.payload)
    differences = {
        ("nist", "peers"): 0.123456,
        ("sacrerouge", "peers"): 0.654321,
        ("nist", "peers+references"): 0.777777,
    }
    for (convention, view), value in differences.items():
        payload["conventions"][convention]["statistics"]["views"][view]["pairs"][0]["difference"] = value
    payload["conventions"]["nist"]["statistics"]["views"]["peers"]["systems"][0]["mean"] = 0.987654
    assert snapshots.store(dataset.pk, payload, stored.fingerprint, timezone.now())
    after = matrix()
    assert after != before and "difference 0.1235 " in after.replace("-0.1235", "0.1235")
    assert "0.9877" in systems()
    assert "difference 0.6543 " in matrix("?convention=sacrerouge").replace("-0.6543", "0.6543")
    assert "difference 0.7778 " in matrix("?references=1").replace("-0.7778", "0.7778")


def test_the_scores_figures_are_rendered_once_per_snapshot_and_address_and_never_stale(dataset, coord):
    """The scores page's figures are a fragment cached per stored snapshot and address: another
    sort, topic or page is its own, and a newer snapshot is rendered afresh."""
    from django.core.cache import caches
    from django.core.cache.utils import make_template_fragment_key
    from django.utils import timezone

    snapshots.recompute_dataset(dataset.pk)
    url = reverse("dashboards:scores", args=[dataset.pk])

    def per_topic(query=""):
        page = coord.get(url + query).content.decode()
        return page.split('class="per-topic"')[1].split("</table>")[0]

    first = per_topic()
    assert per_topic() == first
    stored = DatasetDashboard.objects.get(dataset=dataset)
    key = make_template_fragment_key(
        "scores_figures", [stored.pk, stored.computed_at.isoformat(), True, 0, url + "?tsort=modified"]
    )
    ascending = per_topic("?tsort=modified")
    assert caches["fragments"].get(key) is not None and ascending != per_topic("?tsort=-modified"), (
        "each order is its own fragment"
    )
    payload = json.loads(stored.payload)
    for row in payload["conventions"]["nist"]["per_topic"]:
        row["modified"] = 0.987654
    assert snapshots.store(dataset.pk, payload, stored.fingerprint, timezone.now())
    assert "0.9877" in per_topic() and "0.9877" not in first
    assert "0.9877" in per_topic("?tsort=modified")


def test_the_cached_figures_never_need_redis(dataset, coord, settings):
    """The figures' fragments are kept in each process's memory (the "fragments" cache), not in the
    shared cache: with Redis unreachable the scores and significance pages still render (the cache
    tag raises when its cache is down)."""
    snapshots.recompute_dataset(dataset.pk)
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        },
    }
    for name in ("scores", "significance"):
        page = coord.get(reverse(f"dashboards:{name}", args=[dataset.pk]))
        assert page.status_code == 200 and b"data-figures" in page.content


def test_a_difference_of_exactly_the_noise_is_not_flagged_on_the_peer_page(dataset, coord, monkeypatch):
    """|0.56 - 0.50| is 3/50, 0.06000000000000005 as floats: within the noise, as |0.36 - 0.30|
    (``scoring.correlation.above_noise``); 0.57 vs 0.50 is flagged."""
    import dataclasses

    from frontend.dashboards import views

    real = views.score_annotations

    def scored_as(values):
        def scored(annotations, convention):
            annotations = list(annotations)
            out = real(annotations, convention)
            return out | {
                a.pk: dataclasses.replace(out[a.pk], modified=values[a.annotator.username]) for a in annotations
            }

        return scored

    url = reverse("dashboards:agreement_peer", args=[dataset.pk, "T1", "3"])
    for values, flagged in (
        ({"ann1": 0.56, "ann2": 0.50}, False),
        ({"ann1": 0.36, "ann2": 0.30}, False),
        ({"ann1": 0.57, "ann2": 0.50}, True),
    ):
        monkeypatch.setattr(views, "score_annotations", scored_as(values))
        shown = coord.get(url).content.decode().split("data-peer-diff>")[1].split("</dd>")[0]
        assert ("badge flag" in shown) == flagged and ("within the method's noise" in shown) != flagged, values


def test_the_pages_flag_mean_differences_with_the_same_rule():
    """The templates' ``above_noise`` filter (mean absolute differences on the agreement pages) is
    ``scoring.correlation.above_noise``: 3/50 computed either way is not above 0.06."""
    from django.template import Context, Template

    page = Template("{% load statistics %}{% for x in xs %}{% if x|above_noise %}F{% else %}-{% endif %}{% endfor %}")
    assert page.render(Context({"xs": [0.56 - 0.50, 0.36 - 0.30, 0.07, None, -0.07]})) == "--F-F"
