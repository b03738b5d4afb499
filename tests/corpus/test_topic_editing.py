"""A topic's page on the set-up pages: the access rule, renaming, texts editable only while nothing
rests on them, adding and removing summaries, and deleting a topic after a confirmation that counts
what goes (the flow in Chromium: test_browser_topic_editing.py)."""

import re
from types import SimpleNamespace

import pytest
from django.test import Client

from annotation.corpus import topic_editing
from annotation.corpus.models import PeerSummary, ReferenceSummary, Topic
from annotation.peers import recompute
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement

from tests.corpus.world import TEXT
from tests.dashboards import toy


def _client(user=None, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    if user is not None:
        client.force_login(user)
    return client


def _url(people, topic, *rest) -> str:
    return "/".join([f"/setup/{people.dataset.pk}/topics/{topic.pk}", *rest, ""])


def _summary_url(people, t, summary, *rest) -> str:
    kind = "references" if isinstance(summary, ReferenceSummary) else "peers"
    return _url(people, t.topic, kind, str(summary.pk), *rest)


# --- who may --------------------------------------------------------------------------------


def test_the_topic_pages_follow_the_access_rule(people, topic):
    urls = [
        _url(people, topic.topic),
        _url(people, topic.topic, "delete"),
        _summary_url(people, topic, topic.refs["C"]),
        _summary_url(people, topic, topic.peers["1"]),
    ]
    for url in urls:
        anonymous = _client().get(url)
        assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/"), url
        assert _client(people.coord).get(url).status_code == 200, url
        assert _client(people.ann).get(url).status_code == 403, url  # sees the dataset, may not change it
        assert _client(people.other).get(url).status_code == 404, url  # another dataset's coordinator
        assert _client(people.nobody).get(url).status_code == 404, url


def test_writes_follow_the_access_rule_and_change_nothing(people, topic):
    t = topic.topic
    for user, status in ((None, 302), (people.ann, 403), (people.other, 404)):
        client = _client(user)
        assert (
            client.post(_url(people, t), {"form": "rename", "topic-external_id": "X", "topic-title": ""}).status_code
            == status
        )
        assert client.post(_summary_url(people, topic, topic.peers["2"]), {"text": "new"}).status_code == status
        assert client.post(_summary_url(people, topic, topic.peers["2"], "remove")).status_code == status
        contents = topic_editing.contents(t)
        assert (
            client.post(_url(people, t, "delete"), {"confirm": "D0601", "shown": contents.token}).status_code == status
        )
    t.refresh_from_db()
    assert t.external_id == "D0601" and PeerSummary.objects.get(pk=topic.peers["2"].pk).text.startswith("Peer 2")


def test_a_topic_or_summary_of_another_dataset_or_topic_is_not_found(people, topic):
    from annotation.corpus.models import Dataset

    elsewhere = Topic.objects.create(dataset=Dataset.objects.get(name="Elsewhere"), external_id="E1")
    elsewhere_ref = ReferenceSummary.objects.create(topic=elsewhere, external_id="A", text="x")
    coord = _client(people.coord)
    # The coordinator's own dataset in the address, another dataset's topic: 404, as a missing one.
    assert coord.get(f"/setup/{people.dataset.pk}/topics/{elsewhere.pk}/").status_code == 404
    assert coord.get(f"/setup/{people.dataset.pk}/topics/{elsewhere.pk}/delete/").status_code == 404
    assert coord.post(f"/setup/{people.dataset.pk}/topics/{elsewhere.pk}/delete/", {"confirm": "E1"}).status_code == 404
    assert coord.get(f"/setup/{people.dataset.pk}/topics/999999/").status_code == 404
    # A summary of another topic under this topic's address.
    assert coord.get(_url(people, topic.topic, "references", str(elsewhere_ref.pk))).status_code == 404
    other_ref = topic.other.referencesummarys.get()
    assert coord.get(_url(people, topic.topic, "references", str(other_ref.pk))).status_code == 404
    assert coord.post(_url(people, topic.topic, "references", str(other_ref.pk), "remove")).status_code == 404
    assert ReferenceSummary.objects.filter(pk=other_ref.pk).exists() and Topic.objects.filter(pk=elsewhere.pk).exists()


def test_the_dataset_page_links_each_topic(people, topic):
    body = _client(people.coord).get(f"/setup/{people.dataset.pk}/").content.decode()
    assert f'href="/setup/{people.dataset.pk}/topics/{topic.topic.pk}/"' in body
    assert f'href="/setup/{people.dataset.pk}/topics/{topic.other.pk}/"' in body


# --- the topic page ----------------------------------------------------------------------------


def _row(body: str, key: str) -> str:
    match = re.search(rf'<tr data-summary="{re.escape(key)}" class="(\w+)">(.*?)</tr>', body, re.S)
    assert match, key
    return match.group(1) + " " + re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(2))).strip()


def test_the_topic_page_lists_summaries_with_what_rests_on_them(people, topic):
    response = _client(people.coord).get(_url(people, topic.topic))
    body = response.content.decode()
    assert response.status_code == 200
    assert _row(body, "reference:A").startswith(f"fixed A 10 {len(TEXT) + 4} ")
    assert f"Pyramid {topic.built.pk} by ann (1 contributor here)" in _row(body, "reference:A")
    assert f"Pyramid {topic.built.pk} by ann fixed" in _row(body, "reference:B")  # its pyramid has SCUs
    assert "nothing editable" in _row(body, "reference:C")
    assert _row(body, "reference:D").startswith("editable") and f"Pyramid {topic.empty.pk} (no SCUs yet)" in _row(
        body, "reference:D"
    )
    assert "1 annotation fixed" in _row(body, "peer:1")
    assert "nothing editable" in _row(body, "peer:2")
    assert "1 judgment fixed" in _row(body, "peer:3")


def test_what_rests_on_a_text_is_told_concept_by_concept_in_the_order_of_the_layers(people, topic):
    """Each concept registers its part with ``corpus.topic_editing``; a reference with something of
    every kind on it lists the reasons in the layers' order (pyramids, peers, dashboards, crowd), as
    the pages always did."""
    from annotation.dashboards.models import Judgment
    from annotation.lightweight.models import LightweightPyramid, LiteStatement

    reference = topic.refs["A"]
    Judgment.objects.create(topic=topic.topic, summary="A", metric="linguistic_quality", value=4)
    run = LightweightPyramid.objects.create(dataset=people.dataset, name="crowd")
    LiteStatement.objects.create(pyramid=run, topic=topic.topic, external_id="q1", text="x", reference=reference)
    row = topic_editing.summary_row(topic.topic, "reference", reference.pk)
    built = topic.built.pk
    assert row.locks == [
        "1 pyramid contributor points into this text by character offsets.",
        f"Pyramid {built} by ann was built from it: the SCUs were read against this text.",
        "1 imported judgment (linguistic_quality) was made on this text.",
        "1 crowd statement of a lightweight pyramid rests on this text.",
    ]
    assert row.rests_on == f"Pyramid {built} by ann (1 contributor here), 1 judgment, 1 crowd statement"
    assert row.notes == [] and not row.editable
    assert list(topic_editing.DEPENDENTS) == ["corpus", "history", "pyramids", "peers", "dashboards", "lightweight"]


def test_every_model_a_topic_delete_cascades_to_is_counted():
    """The confirmation shows what the cascade removes: a model reached from the topic by CASCADE
    that no concept counts would go unseen (a concept that forgot to register its part)."""
    from django.db.models import CASCADE

    reached, todo = set(), [Topic]
    while todo:
        for relation in todo.pop()._meta.related_objects:
            if getattr(relation, "on_delete", None) is CASCADE and relation.related_model not in reached:
                reached.add(relation.related_model)
                todo.append(relation.related_model)
    counted = {c.model for c in topic_editing.delete_counts().values()}
    # Not counted, as before the concepts registered their parts: the parts of counted contributors
    # and matches, and the records kept beside counted rows (adjudication records, stored
    # construction agreement, crowd reservations).
    uncounted = {
        "annotation.ContributorPart",
        "annotation.PeerMatchPart",
        "annotation.Adjudication",
        "annotation.PyramidAdjudication",
        "annotation.PyramidAgreement",
        "annotation.LiteReservation",
    }
    assert {m._meta.label for m in reached - counted} == uncounted
    assert counted <= reached | {Topic}


def test_rename_and_a_duplicate_id_is_a_form_error(people, topic):
    t, coord = topic.topic, _client(people.coord)
    duplicate = coord.post(_url(people, t), {"form": "rename", "topic-external_id": " D0602 ", "topic-title": "x"})
    assert duplicate.status_code == 400
    assert "Another topic of this dataset is called D0602: choose another id." in duplicate.content.decode()
    assert 'data-field="topic-external_id"' in duplicate.content.decode()
    slash = coord.post(_url(people, t), {"form": "rename", "topic-external_id": "D06/01", "topic-title": ""})
    assert slash.status_code == 400 and "cannot contain “/”" in slash.content.decode()
    t.refresh_from_db()
    assert (t.external_id, t.title) == ("D0601", "")

    response = coord.post(
        _url(people, t),
        {"form": "rename", "topic-external_id": "D0601-rev", "topic-title": "Dams <b>fail</b>"},
        follow=True,
    )
    body = response.content.decode()
    assert response.redirect_chain == [(_url(people, t), 302)]
    assert "Topic D0601 renamed D0601-rev." in body
    assert "Dams &lt;b&gt;fail&lt;/b&gt;" in body and "<b>fail</b>" not in body  # user text escaped
    t.refresh_from_db()
    assert (t.external_id, t.title) == ("D0601-rev", "Dams <b>fail</b>")


def test_editing_a_text_is_refused_while_something_rests_on_it(people, topic):
    coord = _client(people.coord)
    for summary, why in (
        (topic.refs["A"], "1 pyramid contributor points into this text by character offsets."),
        (topic.refs["B"], f"Pyramid {topic.built.pk} by ann was built from it"),
        (topic.peers["1"], "1 peer annotation (ann (done)) points into this text by character offsets."),
        (topic.peers["3"], "1 imported judgment (content_responsiveness) was made on this text."),
    ):
        url = _summary_url(people, topic, summary)
        page = coord.get(url).content.decode()
        assert "This text is fixed." in page and why in page
        assert "<textarea" not in page and "Remove" not in page  # shown read-only
        refused = coord.post(url, {"text": "Another text."})
        assert (
            refused.status_code == 409
            and "Nothing was saved." in refused.content.decode()
            and why in refused.content.decode()
        )
        removed = coord.post(_summary_url(people, topic, summary, "remove"), follow=True)
        assert "Nothing was removed." in removed.content.decode()
        summary.refresh_from_db()
        assert summary.text != "Another text."


def test_editing_a_text_nothing_rests_on(people, topic):
    coord, peer = _client(people.coord), topic.peers["2"]
    page = coord.get(_summary_url(people, topic, peer)).content.decode()
    assert "<textarea" in page and "Remove peer 2" in page
    response = coord.post(_summary_url(people, topic, peer), {"text": "A corrected\r\npeer."}, follow=True)
    assert (
        response.redirect_chain == [(_url(people, topic.topic), 302)]
        and "Peer 2: text saved." in response.content.decode()
    )
    peer.refresh_from_db()
    assert peer.text == "A corrected\npeer."  # one line-end convention, as the imports store texts
    empty = coord.post(_summary_url(people, topic, peer), {"text": "  \n "})
    assert empty.status_code == 400
    peer.refresh_from_db()
    assert peer.text == "A corrected\npeer."


def test_a_reference_of_an_empty_pyramid_may_change_and_marks_its_scores_stale(people, topic):
    coord, ref, empty = _client(people.coord), topic.refs["D"], topic.empty
    empty.refresh_from_db()
    before = empty.revision
    page = coord.get(_summary_url(people, topic, ref)).content.decode()
    assert f"Listed by pyramid {empty.pk}, which has no SCUs yet" in page
    assert coord.post(_summary_url(people, topic, ref), {"text": "New D."}).status_code == 302
    empty.refresh_from_db()
    assert empty.revision == before + 1  # score_events: an edited reference touches its pyramids
    # Removing it takes it out of the pyramid through the m2m relation (its signal marks the scores stale).
    response = coord.post(_summary_url(people, topic, ref, "remove"), follow=True)
    assert "Reference D removed from topic D0601." in response.content.decode()
    empty.refresh_from_db()
    assert empty.revision == before + 2 and not empty.references.exists()
    assert not ReferenceSummary.objects.filter(pk=ref.pk).exists()


def test_remove_is_post_only(people, topic):
    url = _summary_url(people, topic, topic.peers["2"], "remove")
    assert _client(people.coord).get(url).status_code == 405
    assert PeerSummary.objects.filter(pk=topic.peers["2"].pk).exists()
    assert _client(people.coord).post(url).status_code == 302
    assert not PeerSummary.objects.filter(pk=topic.peers["2"].pk).exists()


def test_add_a_summary(people, topic):
    coord, url = _client(people.coord), _url(people, topic.topic)
    response = coord.post(
        url,
        {"form": "add", "add-kind": "reference", "add-external_id": "E", "add-text": "Fifth <reference>."},
        follow=True,
    )
    assert "Reference E added to topic D0601." in response.content.decode()
    assert ReferenceSummary.objects.get(topic=topic.topic, external_id="E").text == "Fifth <reference>."
    same = coord.post(url, {"form": "add", "add-kind": "peer", "add-external_id": "02", "add-text": "x"})
    assert same.status_code == 400 and "Topic D0601 has a peer 2 already" in same.content.decode()
    no_text = coord.post(url, {"form": "add", "add-kind": "peer", "add-external_id": "9", "add-text": " "})
    assert no_text.status_code == 400 and not PeerSummary.objects.filter(external_id="9").exists()


# --- deleting a topic ----------------------------------------------------------------------------


def _shown(body: str) -> dict[str, int]:
    """The counts the confirmation page shows, by name."""
    counts = dict(re.findall(r'data-count="(\w+)"><div class="value">(\d+)</div>', body))
    counts |= dict(re.findall(r'<li data-count="(\w+)"><strong>(\d+)</strong>', body))
    return {name: int(n) for name, n in counts.items()}


def _table_counts() -> dict[str, int]:
    return {
        label: model.objects.count()
        for label, model in ((c.model._meta.label, c.model) for c in topic_editing.delete_counts().values())
    }


def test_delete_needs_the_topic_id_typed_and_removes_what_it_counted(people, topic):
    t, coord = topic.topic, _client(people.coord)
    url = _url(people, t, "delete")
    page = coord.get(url).content.decode()
    shown = _shown(page)
    assert shown == {
        "references": 4,
        "peers": 3,
        "pyramids": 2,
        "scus": 1,
        "annotations": 1,
        "contributors": 1,
        "matches": 1,
        "assignments": 1,
        "judgments": 1,
    }
    token = re.search(r'name="shown" value="([\d.]+)"', page).group(1)

    for typed in ("", "d0601", "D0602", "D060"):
        wrong = coord.post(url, {"confirm": typed, "shown": token})
        assert (
            wrong.status_code == 400
            and "Type the topic id, D0601, exactly as shown to confirm." in wrong.content.decode()
        )
    assert Topic.objects.filter(pk=t.pk).exists()

    before = _table_counts()
    response = coord.post(url, {"confirm": " D0601 ", "shown": token}, follow=True)
    assert response.redirect_chain == [(f"/setup/{people.dataset.pk}/", 302)]
    assert (
        "Topic D0601 deleted, with 4 reference summaries, 3 peer summaries, 2 pyramids, 1 SCU and 1 peer annotation."
        in response.content.decode()
    )
    after = _table_counts()
    deleted = {label: before[label] - after[label] for label in before}
    expected = {topic_editing.delete_counts()[name].model._meta.label: n for name, n in shown.items()}
    assert deleted == {label: expected.get(label, 0) for label in deleted}  # exactly what was shown, nothing more
    assert not Topic.objects.filter(pk=t.pk).exists() and Topic.objects.filter(pk=topic.other.pk).exists()
    assert topic.other.referencesummarys.count() == 1


def test_delete_is_refused_when_the_topic_changed_since_the_page_was_shown(people, topic):
    t, coord = topic.topic, _client(people.coord)
    token = topic_editing.contents(t).token
    PeerAnnotation.objects.create(peer=topic.peers["2"], pyramid=topic.built, annotator=people.coord)
    response = coord.post(_url(people, t, "delete"), {"confirm": "D0601", "shown": token})
    body = response.content.decode()
    assert response.status_code == 409 and "The topic changed since you opened this page" in body
    assert _shown(body)["annotations"] == 2  # the new counts, to confirm again
    assert Topic.objects.filter(pk=t.pk).exists()


def test_csrf_is_checked_on_every_topic_form(people, topic):
    t, client = topic.topic, _client(people.coord, csrf=True)
    token = topic_editing.contents(t).token
    assert client.post(_url(people, t), {"form": "rename", "topic-external_id": "X"}).status_code == 403
    assert (
        client.post(
            _url(people, t), {"form": "add", "add-kind": "peer", "add-external_id": "9", "add-text": "x"}
        ).status_code
        == 403
    )
    assert client.post(_summary_url(people, topic, topic.peers["2"]), {"text": "changed"}).status_code == 403
    assert client.post(_summary_url(people, topic, topic.peers["2"], "remove")).status_code == 403
    assert client.post(_url(people, t, "delete"), {"confirm": "D0601", "shown": token}).status_code == 403
    t.refresh_from_db()
    assert t.external_id == "D0601" and topic.topic.peersummarys.count() == 3
    assert PeerSummary.objects.get(pk=topic.peers["2"].pk).text.startswith("Peer 2")
    # With the token the page gives, the same delete goes through.
    page = client.get(_url(people, t, "delete"))
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    assert (
        client.post(
            _url(people, t, "delete"), {"confirm": "D0601", "shown": token, "csrfmiddlewaretoken": csrf}
        ).status_code
        == 302
    )
    assert not Topic.objects.filter(pk=t.pk).exists()


# --- score freshness -----------------------------------------------------------------------------


@pytest.fixture
def scored(people):
    """The toy dataset (two topics, pyramids, finished annotations) coordinated by ``coord``,
    with every score and agreement figure stored and current."""
    dataset = toy.build("Toy")
    dataset.coordinators.add(people.coord)
    topics = {t.external_id: t for t in dataset.topics.all()}
    recompute.recompute_annotations(
        PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset).values_list("id", flat=True)
    )
    recompute.recompute_topics([t.pk for t in topics.values()])
    assert all(s.is_current for s in AnnotationScore.objects.all())
    return SimpleNamespace(dataset=dataset, topics=topics)


def test_renaming_makes_the_topics_agreement_stale_and_its_scores_stay(people, scored, settings):
    settings.AGREEMENT_SPACING_SECONDS = (
        0  # recomputed here at once, not put off after the fixture's run (tests/jobs cover the spacing)
    )
    t1 = scored.topics["T1"]
    topic_editing.rename_topic(t1, "T1-renamed", "")
    assert not TopicAgreement.objects.get(topic=t1).is_current  # its rows name the topic
    assert TopicAgreement.objects.get(topic=scored.topics["T2"]).is_current
    assert all(s.is_current for s in AnnotationScore.objects.all())  # scores carry no topic id
    assert recompute.recompute_topics([t1.pk]) == 1


def test_a_topic_renamed_through_the_api_or_the_admin_has_its_agreement_stale_too(people, scored, settings):
    from rest_framework.test import APIClient

    settings.AGREEMENT_SPACING_SECONDS = 0  # as above

    t1 = scored.topics["T1"]
    client = APIClient()
    client.force_authenticate(people.coord)
    response = client.patch(f"/api/topics/{t1.pk}/", {"external_id": "T1-api"}, format="json", HTTP_IF_MATCH="*")
    assert response.status_code == 200, response.content
    assert not TopicAgreement.objects.get(topic=t1).is_current
    assert TopicAgreement.objects.get(topic=scored.topics["T2"]).is_current
    assert recompute.recompute_topics([t1.pk]) == 1
    assert TopicAgreement.objects.get(topic=t1).values["nist"]["topic"] == "T1-api"


def test_deleting_a_topic_deletes_its_stored_results_and_leaves_the_others_current(people, scored):
    t1, t2 = scored.topics["T1"], scored.topics["T2"]
    n_t2 = AnnotationScore.objects.filter(annotation__pyramid__topic=t2).count()
    contents = topic_editing.contents(t1)
    assert contents.counts["scores"] > 0 and contents.counts["agreement"] == 1 and contents.counts["history"] == 0
    deleted = topic_editing.delete_topic(t1, "T1", contents.token)
    assert deleted == contents
    assert not AnnotationScore.objects.filter(annotation__pyramid__topic_id=t1.pk).exists()
    assert not TopicAgreement.objects.filter(topic_id=t1.pk).exists()
    assert AnnotationScore.objects.count() == n_t2 and all(s.is_current for s in AnnotationScore.objects.all())
    assert TopicAgreement.objects.get(topic=t2).is_current


def test_deleting_a_topic_marks_lightweight_runs_on_it_stale(people, scored):
    from annotation.lightweight.models import LightweightPyramid, LiteStatement

    t1 = scored.topics["T1"]
    run = LightweightPyramid.objects.create(dataset=scored.dataset, name="crowd")
    LiteStatement.objects.create(pyramid=run, topic=t1, external_id="q1", text="The dam burst.")
    before = run.revision
    topic_editing.delete_topic(t1, "T1", topic_editing.contents(t1).token)
    run.refresh_from_db()
    assert run.revision == before + 1 and not run.statements.exists()
