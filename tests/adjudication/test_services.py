"""Adjudication services: disagreements found, decisions turned into matches, scores switched to
the adjudicated version everywhere scores are listed, agreement left on the annotators' versions."""

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from annotation.adjudication import services
from annotation.adjudication.models import Adjudication
from annotation.corpus.models import Topic
from annotation.dashboards import statistics
from annotation.dashboards.figures import score_dashboard
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import agreement_rows, counted, score_rows
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.model import Convention
from scoring.model import PeerAnnotation as ScoringAnnotation
from scoring.scores import score_peer

from tests.adjudication.world import build, matches_of, versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return build()


def decide(comparison, **by_key):
    """Decisions by item key; an annotator's name stands for their version's id."""
    ids = {s.annotator: str(s.pk) for s in comparison.sources}
    return {key: ids.get(choice, choice) for key, choice in by_key.items()}


def test_every_kind_of_disagreement_is_found(world):
    _, _, peer, pyramid = world
    comparison = services.compare(peer, pyramid)
    assert [s.annotator for s in comparison.sources] == ["ann1", "ann2"]
    kinds = {item.key: item.kind for item in comparison.items}
    # SCU 1: both at 0-4; SCU 3: ann1 only; SCU 4: once each, other evidence; non-matching: ann1 only.
    assert kinds == {"1": "agreed", "3": "one_only", "4": "spans", "non_matching": "one_only"}
    by_key = {item.key: item.matches for item in comparison.items}
    assert by_key["4"] == [[((15, 19),)], [((10, 14),)]]


def test_count_disagreement(world):
    """T1 peer 2: ann1 found SCU 2 once, ann2 twice (``tests/dashboards/helpers.ANN2_T1``)."""
    dataset, _, _, pyramid = world
    peer2 = dataset.topics.get(external_id="T1").peersummarys.get(external_id="2")
    items = {i.key: i for i in services.compare(peer2, pyramid).items}
    assert items["2"].kind == "count" and [len(m) for m in items["2"].matches] == [1, 2]


def test_decisions_become_the_matches_and_the_annotators_versions_stay(world, django_capture_on_commit_callbacks):
    _, users, peer, pyramid = world
    before = {name: (matches_of(a), a.revision) for name, a in versions(peer, pyramid).items()}
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        version = services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "ann1", "4": "both", "non_matching": "neither"}),
            comparison.token,
        )
    assert version.annotator is None and version.status == PeerAnnotation.Status.DONE
    assert matches_of(version) == [(1, ((0, 4),)), (3, ((5, 9),)), (4, ((10, 14),)), (4, ((15, 19),))]
    record = Adjudication.objects.get(annotation=version)
    assert record.adjudicator == users["coord"]
    assert set(record.sources.values_list("annotator__username", flat=True)) == {"ann1", "ann2"}
    after = {name: (matches_of(a), a.revision) for name, a in versions(peer, pyramid).items()}
    assert after == before, "the annotators' own versions are unchanged"

    # Deciding again replaces the adjudicated version's matches: still one adjudicated version.
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        again = services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "neither", "4": "ann2", "non_matching": "ann1"}),
            comparison.token,
        )
    assert again.pk == version.pk and Adjudication.objects.count() == 1
    assert matches_of(again) == [(1, ((0, 4),)), (4, ((10, 14),)), (None, ((20, 24),))]


def test_undecided_and_stale_decisions_are_refused(world):
    _, users, peer, pyramid = world
    comparison = services.compare(peer, pyramid)
    with pytest.raises(ValidationError, match="Decide every disagreement"):
        services.adjudicate(
            peer, pyramid, users["coord"], decide(comparison, **{"3": "ann1", "4": "both"}), comparison.token
        )
    with pytest.raises(ValidationError, match="Decide every disagreement"):
        services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "ann1", "4": "999", "non_matching": "both"}),
            comparison.token,
        )
    ann2 = versions(peer, pyramid)["ann2"]
    PeerAnnotation.objects.filter(pk=ann2.pk).update(revision=ann2.revision + 1)  # ann2 changed their version meanwhile
    with pytest.raises(ValidationError, match="changed"):
        services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "ann1", "4": "both", "non_matching": "both"}),
            comparison.token,
        )
    assert not PeerAnnotation.objects.filter(annotator__isnull=True).exists()


def _peer_rows(rows, topic="T1", summary="1"):
    return [r for r in rows if r["kind"] == "peer" and r["topic"] == topic and r["summary"] == summary]


def test_scores_switch_to_the_adjudicated_version_and_agreement_does_not(world, django_capture_on_commit_callbacks):
    dataset, users, peer, pyramid = world
    topics = Topic.objects.filter(dataset=dataset)
    rows_before, agreement_before = score_rows(topics), agreement_rows(topics)
    assert sorted(r["version"] for r in _peer_rows(rows_before)) == ["ann1", "ann2"]
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        version = services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "neither", "4": "neither", "non_matching": "neither"}),
            comparison.token,
        )
    rows = score_rows(topics)
    [row] = _peer_rows(rows)
    # Independently: the scoring library on the decided counts (SCU 1 once, which both agreed on; nothing else).
    expected = score_peer(load_pyramids([pyramid.pk])[pyramid.pk], ScoringAnnotation({1: 1}, 0), Convention.NIST)
    assert row["version"] == "adjudicated" and row["annotator"] == ""
    assert row["modified"] == pytest.approx(expected.modified) and row["original"] == pytest.approx(expected.original)
    assert row["modified"] not in [pytest.approx(r["modified"]) for r in _peer_rows(rows_before)], (
        "a score neither annotator had"
    )
    others = lambda rs: [r for r in rs if (r["topic"], r["summary"]) != ("T1", "1")]  # noqa: E731  (a one-line helper of this test)
    assert others(rows) == others(rows_before), "no other score moves"
    assert agreement_rows(topics) == agreement_before, "agreement compares the annotators' own versions"

    # The dashboards' system means, the statistics' inputs and the export command rest on it too.
    dashboard = score_dashboard(dataset.name)
    assert [r["version"] for r in _peer_rows(dashboard["per_topic"])] == ["adjudicated"]
    system_1 = next(r for r in dashboard["per_system"] if r["system"] == "1" and r["kind"] == "peer")
    assert system_1["adjudicated"] == 1
    this_peer = (peer.topic.external_id, peer.system)
    behind_statistics = {a.pk for a in statistics._peer_annotations(topics) if (a.topic, a.system) == this_peer}
    assert behind_statistics == {version.pk}
    out = io.StringIO()
    call_command("export_scores", "--format", "csv", "--dataset", dataset.name, stdout=out)
    header, *lines = out.getvalue().splitlines()
    assert "version" in header.split(",")
    column = header.split(",").index("version")
    assert sum(line.split(",")[column] == "adjudicated" for line in lines) == 1


def test_progress_and_agreement_never_count_the_adjudicated_version(world, django_capture_on_commit_callbacks):
    _, users, peer, pyramid = world
    comparison = services.compare(peer, pyramid)
    with django_capture_on_commit_callbacks(execute=True):
        version = services.adjudicate(
            peer,
            pyramid,
            users["coord"],
            decide(comparison, **{"3": "both", "4": "both", "non_matching": "both"}),
            comparison.token,
        )
    annotations = PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid)
    assert set(counted(annotations)) == set(versions(peer, pyramid).values())
    assert list(counted(annotations, for_scores=True)) == [version]
