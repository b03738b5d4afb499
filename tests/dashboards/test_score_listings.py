"""Every page, API endpoint and download that lists scores lists those of the annotations that
count (``results.counted``), and none stays "updating" once the computation is done.

Every named URL of the project is classified (walked from the URL conf): a new view must be added
here, as listing scores (and then checked) or not (with the reason). The world: the toy dataset,
plus "walker", who only opened peer 4 of T1 and peer 2 of T2 on the way elsewhere (empty,
unfinished annotations) and finished the assignment of T1; their scores exist (every saved
annotation is scored) but must never be listed.
"""

import io
import json
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.corpus.models import PeerSummary
from annotation.dashboards.statistics import TABLES as STATISTICS_TABLES
from annotation.peers import assignments
from annotation.peers.models import PeerAnnotation

from tests.dashboards.helpers import build_toy, make_users, url_patterns

pytestmark = pytest.mark.django_db
WALKER = "walker"

# URL name (or prefix) -> why it lists no score of a peer annotation.
NO_SCORES = {
    "admin:": "the database's raw rows, for superusers",
    "lightweight:": "crowd (lightweight) pyramids: no peer annotation",
    "api:lightweight-": "crowd (lightweight) pyramids: no peer annotation",
    "api:lite-": "crowd (lightweight) pyramids: no peer annotation",
    "api:crowd-task": "a crowd worker's task",
    "api:annotation-": (
        "one annotation's own documents and actions (its editor): what it holds so far, nobody else's score"
    ),
    "api:match-": "matches, no score",
    "api:scu-": "SCUs, no score",
    "api:contributor-": "contributors, no score",
    "api:reference-": "texts, no score",
    "api:peer-": "texts, no score",
    "api:topic-": "topics, no score",
    "api:assignment-": "assignments, no score",
    "api:pyramid-detail": "the pyramid's metadata",
    "api:pyramid-list": "pyramids' metadata",
    "api:pyramid-history": "the pyramid's edit history",
    "api:pyramid-undo": "an edit",
    "api:pyramid-redo": "an edit",
    "api:pyramid-scu-proposals": "the assisted builder's proposed SCUs: texts, no score",
    "api:pyramid-accept-scu": "an edit (a proposed SCU accepted)",
    "api:dataset-detail": "the dataset's metadata",
    "api:dataset-list": "datasets' metadata",
    "api:dataset-import": "an upload",
    "api:api-root": "links",
    "api:docs": "documentation",
    "api:schema": "documentation",
    "api:token": "a token",
    "dashboards:list": "datasets, with counts",
    "dashboards:overview": "progress and assignments",
    "dashboards:status": "whether figures are current",
    "dashboards:assignment_": "assignment forms",
    "dashboards:adjudicate_pyramids": "two pyramids' SCUs side by side for adjudication, no score",
    "dashboards:construction_": "pyramid construction agreement: figures per pair of pyramids (the practical test's "
    "correlations rest on counted annotations, construction.py), no annotation's score",
    "api:dataset-pyramid-agreement": "pyramid construction agreement, as dashboards:construction_",
    "frontend:home": "the user's assignments and progress",
    "frontend:annotator": "one annotation's editor (its own score so far)",
    "frontend:annotator-peer": "an untouched peer's editor (no annotation yet, so no stored score)",
    "frontend:pyramid-scus": "the pyramid's SCU labels by tier (printable list), no score",
    "frontend:favicon": "an icon",
    "frontend:open-assignment": "a redirect",
    "frontend:finish-assignment": "a form",
    "frontend:healthz": "health",
    "frontend:carry-over": "a form: matches copied onto the adjudicated pyramid (a redirect)",
    "setup:": "dataset set-up: texts, people, files (exports link to the API)",
    "invitation": "an account",
    "login": "an account",
    "logout": "an account",
}


def listing_requests(dataset, pyramid_t1) -> dict[str, list[tuple[str, dict]]]:
    """URL name -> the (url, query) requests that list scores, for ``dataset``."""
    d = dataset.pk
    both = [{"convention": c} for c in ("nist", "sacrerouge")]
    return {
        "api:pyramid-full": [(reverse("api:pyramid-full", args=[pyramid_t1.pk]), {})],
        "api:pyramid-export": [(reverse("api:pyramid-export", args=[pyramid_t1.pk]), {"format": "json"})],
        "api:dataset-scores": [
            (reverse("api:dataset-scores", args=[d]), q | {"include_unfinished": u, "format": f})
            for q in both
            for u in ("false", "true")
            for f in ("json", "csv")
        ],
        "api:dataset-agreement": [
            (reverse("api:dataset-agreement", args=[d]), q | {"include_unfinished": u})
            for q in both
            for u in ("false", "true")
        ],
        "api:dataset-statistics": [
            (reverse("api:dataset-statistics", args=[d]), q | {"table": t}) for q in both for t in STATISTICS_TABLES
        ],
        "api:dataset-archive": [(reverse("api:dataset-archive", args=[d]), q) for q in both],
        "frontend:builder": [(reverse("frontend:builder", args=[pyramid_t1.pk]), {})],
        "dashboards:scores": [
            (reverse("dashboards:scores", args=[d]), q | {"references": r}) for q in both for r in (0, 1)
        ],
        "dashboards:agreement": [(reverse("dashboards:agreement", args=[d]), q) for q in both],
        "dashboards:agreement_topic": [(reverse("dashboards:agreement_topic", args=[d, "T1"]), q) for q in both],
        "dashboards:agreement_peer": [
            (reverse("dashboards:agreement_peer", args=[d, t, p]), {})
            for t, p in [("T1", "1"), ("T1", "4"), ("T2", "2")]
        ],
        "dashboards:adjudicate": [(reverse("dashboards:adjudicate", args=[d, "T1", "1", pyramid_t1.pk]), {})],
        "dashboards:significance": [(reverse("dashboards:significance", args=[d]), q) for q in both],
        "dashboards:metaeval": [(reverse("dashboards:metaeval", args=[d]), q) for q in both],
        "dashboards:scores_export": [
            (reverse("dashboards:scores_export", args=[d, f]), q | {"table": t, "references": 1})
            for q in both
            for f in ("csv", "json")
            for t in ("topics", "systems")
        ],
        "dashboards:agreement_export": [(reverse("dashboards:agreement_export", args=[d, "json"]), q) for q in both],
        "dashboards:statistics_export": [
            (reverse("dashboards:statistics_export", args=[d, "json"]), q | {"table": t})
            for q in both
            for t in STATISTICS_TABLES
        ],
        "dashboards:metaeval_export": [(reverse("dashboards:metaeval_export", args=[d, "json"]), q) for q in both],
        "dashboards:chart_export": [
            (reverse("dashboards:chart_export", args=[d, c]), {"topic": "T1"})
            for c in ("systems", "tiers", "stability", "agreement")
        ],
    }


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # what every commit schedules runs, as in production
        dataset = build_toy("Listings")
        users = make_users(dataset)
        walker = get_user_model().objects.create_user(WALKER)
        for topic_id, opened in [("T1", "4"), ("T2", "2")]:
            topic = dataset.topics.get(external_id=topic_id)
            PeerSummary.objects.get_or_create(topic=topic, external_id="4", defaults={"text": "word " * 20})
            assignment = topic.assignments.create(annotator=walker, task="annotate_peers")
            assignments.annotation_for(assignment, topic.peersummarys.get(external_id=opened))
        assignments.mark_done(dataset.topics.get(external_id="T1").assignments.get(annotator=walker))
    return dataset, users


def classified(name: str) -> bool:
    return any(name == key or key.endswith((":", "-", "_")) and name.startswith(key) for key in NO_SCORES)


def test_every_view_is_classified(world):
    dataset, _ = world
    listing = listing_requests(dataset, dataset.topics.get(external_id="T1").pyramids.get())
    names = {name for name, _ in url_patterns()}
    unclassified = sorted(name for name in names if name not in listing and not classified(name))
    assert not unclassified, (
        f"say whether these list scores (listing_requests) or not (NO_SCORES, with the reason): {unclassified}"
    )
    assert not [name for name in listing if classified(name)], "a view is either a listing or not"
    assert set(listing) <= names


def test_no_listing_shows_an_annotation_only_opened_nor_stays_updating(world):
    dataset, users = world
    opened = PeerAnnotation.objects.filter(annotator__username=WALKER)
    assert opened.count() == 2 and set(opened.values_list("status", flat=True)) == {"in_progress"}, (
        "finishing the assignment does not finish a peer only opened"
    )
    assert all(a.scores.count() == 2 for a in opened), "every saved annotation is scored: nothing waits for ever"
    pages, api = Client(), APIClient()
    pages.force_login(users["coord"])
    api.force_authenticate(users["coord"])
    listing = listing_requests(dataset, dataset.topics.get(external_id="T1").pyramids.get())
    for name, requests in listing.items():
        for url, query in requests:
            response = (api if name.startswith("api:") else pages).get(url, query)
            assert response.status_code == 200, (name, query, response.status_code)
            body = _body(response)
            assert WALKER not in body, f"{name} {query} lists an annotation only opened"
            assert '"current": false' not in body.replace('"current":false', '"current": false'), (
                f"{name} {query} stays updating"
            )
            if response.context and "current" in response.context:
                assert response.context["current"] is True, f"{name} {query} shows its figures as updating"
    scores = api.get(reverse("api:pyramid-full", args=[dataset.topics.get(external_id="T1").pyramids.get().pk])).json()[
        "scores"
    ]
    assert scores and all(row["current"] and row["modified"] is not None for row in scores)


def _body(response) -> str:
    """The text of a response; of the archive, the score tables (its manifest lists every annotation)."""
    if response.get("Content-Type") == "application/zip":
        archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
        return archive.read("scores.csv").decode() + archive.read("agreement.csv").decode()
    text = response.content.decode()
    return json.dumps(json.loads(text)) if response.get("Content-Type", "").startswith("application/json") else text


def test_progress_counts_by_the_same_rule(world):
    """The overview's "annotators" of a topic and "topics annotated twice" are those of annotations
    that count: T1 by ann1 and ann2, T2 by ann1 alone (walker only opened a peer of each)."""
    dataset, users = world
    pages = Client()
    pages.force_login(users["coord"])
    context = pages.get(reverse("dashboards:overview", args=[dataset.pk])).context
    assert {row["topic"].external_id: row["annotators"] for row in context["rows"]} == {"T1": 2, "T2": 1}
    assert context["totals"]["double"] == 1
    walker = assignments.progress(dataset.topics.get(external_id="T1").assignments.get(annotator__username=WALKER))
    assert (walker.done, walker.total) == (0, 4), "a finished assignment with nothing annotated is 0 of 4 peers done"


# Where an adjudicated version exists, every listing either says so (its rows carry ``version``, or
# the page notes it) or is about agreement (the annotators' own versions) or aggregates over systems.
STATES_VERSION = {
    "api:pyramid-full",
    "api:pyramid-export",
    "api:dataset-scores",
    "api:dataset-archive",
    "dashboards:scores",
    "dashboards:scores_export",
    "dashboards:significance",
    "dashboards:metaeval",
    "dashboards:adjudicate",
    "dashboards:agreement_peer",
    "dashboards:agreement",
    "api:dataset-statistics",
    "dashboards:statistics_export",
}
NO_VERSION = {
    "frontend:builder": "the page shell: its scores come from api:pyramid-full",
    "api:dataset-agreement": "agreement: the annotators' own versions",
    "dashboards:agreement_topic": "agreement: the annotators' own versions",
    "dashboards:agreement_export": "agreement: the annotators' own versions",
    "dashboards:chart_export": (
        "chart data: tiers, stability curves, agreement (the systems chart's rows count "
        "adjudicated scores: tested apart)"
    ),
    "dashboards:metaeval_export": "correlations over systems",
}


def test_listings_state_the_adjudicated_version(world, django_capture_on_commit_callbacks):
    from annotation.adjudication import services

    dataset, users = world
    pyramid = dataset.topics.get(external_id="T1").pyramids.get()
    peer = pyramid.topic.peersummarys.get(external_id="1")
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        services.adjudicate(
            peer, pyramid, users["coord"], {i.key: "both" for i in comparison.disagreements}, comparison.token
        )
    listing = listing_requests(dataset, pyramid)
    assert set(listing) == STATES_VERSION | set(NO_VERSION), (
        "say whether a new listing states the version scores rest on"
    )
    pages, api = Client(), APIClient()
    pages.force_login(users["coord"])
    api.force_authenticate(users["coord"])
    listing["dashboards:agreement_peer"] = listing["dashboards:agreement_peer"][
        :1
    ]  # T1 peer 1 (the others are not adjudicated)
    for name in STATES_VERSION:
        for url, query in listing[name]:
            response = (api if name.startswith("api:") else pages).get(url, query)
            assert response.status_code == 200, (name, query)
            body = _body(response)
            if body == "[]":  # a table with no row (the toy has no judgments: no meta-evaluation) lists no score
                continue
            assert "adjudicated" in body, f"{name} {query} does not say a score is adjudicated"


def test_the_statistics_downloads_count_the_scores_resting_on_an_adjudicated_version(
    world, django_capture_on_commit_callbacks
):
    """Not only the column's name: system 1's row (T1 peer 1 adjudicated) says 1 topic, the other
    systems 0, a pair with system 1 says it on its side, and the tables of a whole view count it once."""
    from annotation.adjudication import services

    dataset, users = world
    pyramid = dataset.topics.get(external_id="T1").pyramids.get()
    peer = pyramid.topic.peersummarys.get(external_id="1")
    comparison = services.compare(peer, pyramid)
    api = APIClient()
    api.force_authenticate(users["coord"])
    url = reverse("api:dataset-statistics", args=[dataset.pk])

    def table(name, view="peers"):
        return [r for r in api.get(url, {"table": name, "format": "json"}).json() if r.get("view", view) == view]

    assert {r["adjudicated"] for r in table("systems")} == {0}
    with django_capture_on_commit_callbacks(execute=True):
        services.adjudicate(
            peer, pyramid, users["coord"], {i.key: "both" for i in comparison.disagreements}, comparison.token
        )
    for view in ("peers", "peers+references"):
        systems = table("systems", view)
        assert {r["system"]: r["adjudicated"] for r in systems if r["kind"] == "peer"} == {
            r["system"]: int(r["system"] == "1") for r in systems if r["kind"] == "peer"
        }
        assert {r["adjudicated"] for r in systems if r["kind"] == "reference"} <= {0}
        for r in table("pairs", view):
            assert (r["adjudicated_a"], r["adjudicated_b"]) == (int(r["a"] == "1"), int(r["b"] == "1")), r
        assert {r["adjudicated"] for r in table("power", view) + table("stability", view)} == {1}
    assert all(
        (r["adjudicated_a"], r["adjudicated_b"]) == (int(r["a"] == "1"), int(r["b"] == "1")) for r in table("scu_tests")
    )
    pages = Client()
    pages.force_login(users["coord"])
    download = pages.get(
        reverse("dashboards:statistics_export", args=[dataset.pk, "csv"]), {"table": "systems"}
    ).content.decode()
    header, *rows = download.splitlines()
    assert header.split(",")[:7] == ["dataset", "view", "score", "system", "kind", "topics", "adjudicated"]
    assert any(row.split(",")[3:7] == ["1", "peer", "2", "1"] for row in rows), rows
    metaeval = pages.get(
        reverse("dashboards:statistics_export", args=[dataset.pk, "csv"]), {"table": "metaeval"}
    ).content.decode()
    assert metaeval.splitlines()[0].split(",")[:4] == [
        "dataset",
        "metric",
        "summarizers",
        "adjudicated",
    ]  # no judgments: no row


# Where a topic has an adjudicated pyramid, the same listings say the scores rest on it
# (``pyramid: adjudicated`` in their rows, the page's note, or a download's settings), but for two pages about one
# peer's annotators' versions.
PYRAMID_NOT_NAMED = {
    "dashboards:agreement_peer": "one peer's agreement: the annotators' versions against the pyramid the page names",
    "dashboards:adjudicate": "one peer's adjudication against the pyramid the page names",
}


def test_listings_state_the_adjudicated_pyramid(world, django_capture_on_commit_callbacks):
    from annotation.adjudication import pyramids
    from annotation.peers.editing import add_match
    from annotation.pyramids.editing import add_contributor
    from annotation.pyramids.models import SCU, Pyramid

    dataset, users = world
    topic = dataset.topics.get(external_id="T1")
    first = topic.pyramids.get()
    with django_capture_on_commit_callbacks(execute=True):
        second = Pyramid.objects.create(
            topic=topic, creator=users["annotator"], status="done"
        )  # a second pyramid, one label differs
        second.references.set(first.references.all())
        for scu in first.scus.prefetch_related("contributors__parts"):
            copy = SCU.objects.create(pyramid=second, uid=scu.uid, label=scu.label if scu.uid != 2 else "another label")
            for c in scu.contributors.all():
                add_contributor(copy, c.reference, [(p.start, p.end) for p in c.parts.all()])
        Pyramid.objects.filter(pk=first.pk).update(status="done")
        first.refresh_from_db(), second.refresh_from_db()
        comparison = pyramids.compare(first, second)
        adjudicated = pyramids.adjudicate(
            first, second, users["coord"], {i.key: "a" for i in comparison.disagreements}, comparison.token
        )
        for name in ("ann1", "ann2"):  # peer 1 annotated again, against the adjudicated pyramid
            assignment = topic.assignments.get_or_create(
                annotator=get_user_model().objects.get(username=name), task="annotate_peers"
            )[0]
            annotation = assignments.annotation_for(assignment, topic.peersummarys.get(external_id="1"))
            assert annotation.pyramid == adjudicated
            add_match(annotation, adjudicated.scus.get(uid=1), [(0, 4)])
            PeerAnnotation.objects.filter(pk=annotation.pk).update(status="done")
    listing = listing_requests(dataset, adjudicated)
    pages, api = Client(), APIClient()
    pages.force_login(users["coord"])
    api.force_authenticate(users["coord"])
    listing["dashboards:agreement_peer"] = listing["dashboards:agreement_peer"][:1]
    for name in STATES_VERSION:
        for url, query in listing[name]:
            response = (api if name.startswith("api:") else pages).get(url, query)
            assert response.status_code == 200, (name, query)
            body = _body(response)
            if name not in PYRAMID_NOT_NAMED and body != "[]":  # a table with no row lists no score
                assert any(
                    words in body for words in ("pyramid: adjudicated", "adjudicated pyramid", "adjudicated_pyramid")
                ), f"{name} {query} does not say scores rest on the adjudicated pyramid"


def test_the_systems_chart_counts_the_scores_resting_on_an_adjudicated_version(
    world, django_capture_on_commit_callbacks
):
    """The rows behind the systems chart (the system means a reader may take for the scores table's)
    say, per system, how many of its topic scores rest on an adjudicated version."""
    import csv
    import io

    from annotation.adjudication import services

    dataset, users = world
    pyramid = dataset.topics.get(external_id="T1").pyramids.get()
    peer = pyramid.topic.peersummarys.get(external_id="1")
    comparison = services.compare(peer, pyramid)
    pages = Client()
    pages.force_login(users["coord"])
    url = reverse("dashboards:chart_export", args=[dataset.pk, "systems"])

    def adjudicated():
        return {r["system"]: r["adjudicated"] for r in csv.DictReader(io.StringIO(pages.get(url).content.decode()))}

    assert set(adjudicated().values()) == {"0"}
    with django_capture_on_commit_callbacks(execute=True):
        services.adjudicate(
            peer, pyramid, users["coord"], {i.key: "both" for i in comparison.disagreements}, comparison.token
        )
    counts = adjudicated()
    assert counts["1"] == "1" and {v for k, v in counts.items() if k != "1"} == {"0"}, counts
