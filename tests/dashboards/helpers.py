"""Shared setup of the dashboard page tests: the toy dataset of tests/dashboards with a second
annotator on every peer of T1 (so T1 has agreement figures on 3 peers), the same as people leave
it (``build_lived_in``), and the users of each role."""

import re

from django.contrib.auth import get_user_model
from django.db import transaction
from django.template.defaultfilters import floatformat

from annotation.corpus.models import Dataset, PeerSummary
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.peers import assignments
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

from tests.dashboards import toy

# ann2's extra annotations of T1 (toy.MATCHES gives ann2 only peer 1: [1]).
ANN2_T1 = {"2": [2, 2], "3": [1]}  # peer 2: SCU 2 found twice (a repetition)


@transaction.atomic  # as toy.build: one recomputation, at its end
def build_toy(name="Toy") -> Dataset:
    dataset = toy.build(name)
    ann2 = get_user_model().objects.get(username="ann2")
    for peer_id, uids in ANN2_T1.items():
        peer = PeerSummary.objects.get(topic__dataset=dataset, topic__external_id="T1", external_id=peer_id)
        pyramid = peer.topic.pyramids.get()
        annotation = PeerAnnotation.objects.create(peer=peer, pyramid=pyramid, annotator=ann2, status="done")
        for i, uid in enumerate(uids):
            add_match(annotation, SCU.objects.get(pyramid=pyramid, uid=uid), [(5 * i, 5 * i + 4)])
    return dataset


def build_lived_in(name: str) -> Dataset:
    """The toy dataset as people leave it, with what a copy most easily gets wrong: annotations only
    opened (empty, unfinished), unfinished with matches, finished and empty (a real 0), an annotator
    who only passed through, non-matching units."""
    dataset = build_toy(name)  # T1: peers 1-3 annotated by ann1 and ann2; T2: by ann1; pyramids not finished
    t1, t2 = dataset.topics.get(external_id="T1"), dataset.topics.get(external_id="T2")
    for topic in (t1, t2):
        PeerSummary.objects.create(topic=topic, external_id="4", text="word " * 20)
    opened(t1, "ann1", "4")  # only opened: counts nowhere
    unfinished = opened(t1, "ann2", "4")  # unfinished with a match and a non-matching unit
    add_match(unfinished, SCU.objects.get(pyramid=unfinished.pyramid, uid=1), [(0, 4)])
    add_match(unfinished, None, [(5, 9)])
    zero = opened(t2, "ann1", "4")  # finished, found nothing: a real 0
    zero.status = "done"
    zero.save()
    opened(t2, "ann2", "1")  # ann1 finished T2/1; ann2 only opened it
    opened(t2, "ann3", "2")  # an annotator who only passed through
    finished = PeerAnnotation.objects.get(peer__topic=t1, peer__external_id="1", annotator__username="ann2")
    add_match(finished, None, [(10, 14)])  # a non-matching unit in a finished annotation
    adjudicated(
        finished.peer, "judge", {"3": "ann1", "non_matching": "neither"}
    )  # scores rest on it, agreement does not
    second_pyramid(t2, "ann4")  # T2: pyramids by two annotators (construction agreement)
    adjudicated_pyramid_topic(dataset, "T3")  # T3: two pyramids adjudicated into one; scores rest on it
    return dataset


def adjudicated_pyramid_topic(dataset, external_id: str) -> Pyramid:
    """A topic whose two finished pyramids (by "ann6" and "ann7", toy's shape and SECOND_PYRAMID's)
    the coordinator "judge" adjudicated into one (every disagreement: A's side; B's extra SCU 5
    kept), ann1's finished annotation of peer 1 against the adjudicated pyramid, and ann2's of
    peer 1 against ann6's pyramid (which must no longer count). Returns the adjudicated pyramid."""
    from annotation.adjudication import pyramids
    from annotation.corpus.models import ReferenceSummary, Topic

    User = get_user_model()
    topic = Topic.objects.create(dataset=dataset, external_id=external_id)
    refs = {r: ReferenceSummary.objects.create(topic=topic, external_id=r, text=toy.TEXT) for r in "ABC"}
    built = []
    for username, shape in (
        ("ann6", {uid: [(letter, (0, 4)) for letter in letters] for uid, letters in toy.CONTRIBUTORS.items()}),
        ("ann7", SECOND_PYRAMID),
    ):
        pyramid = Pyramid.objects.create(
            topic=topic, creator=User.objects.get_or_create(username=username)[0], status="done"
        )
        pyramid.references.set(refs.values())
        for uid, contributors in shape.items():
            scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=f"SCU {uid} of {username}")
            for reference, span in contributors:
                add_contributor(scu, refs[reference], [span])
        built.append(Pyramid.objects.get(pk=pyramid.pk))
    comparison = pyramids.compare(*built)
    decisions = {i.key: ("a" if "a" in i.choices else "b") for i in comparison.disagreements}
    judge = User.objects.get_or_create(username="judge")[0]
    topic.dataset.coordinators.add(judge)  # only coordinators adjudicate
    result = pyramids.adjudicate(*built, judge, decisions, comparison.token)
    peer = PeerSummary.objects.create(topic=topic, external_id="1", text=toy.TEXT)
    against = PeerAnnotation.objects.create(
        peer=peer, pyramid=result, annotator=User.objects.get(username="ann1"), status="done"
    )
    scus = list(SCU.objects.filter(pyramid=result).order_by("uid"))
    assert len(scus) >= 2, scus
    for i, scu in enumerate(scus[:2]):
        add_match(against, scu, [(5 * i, 5 * i + 4)])
    old = PeerAnnotation.objects.create(
        peer=peer, pyramid=built[0], annotator=User.objects.get(username="ann2"), status="done"
    )
    add_match(old, SCU.objects.get(pyramid=built[0], uid=4), [(0, 4)])
    return result


def adjudicated(peer, username: str, decisions: dict[str, str]) -> PeerAnnotation:
    """``username`` adjudicates ``peer`` (its one pyramid); ``decisions``: item key -> an annotator's
    name (their version), ``both`` or ``neither``."""
    from annotation.adjudication import services

    pyramid = peer.topic.pyramids.get()
    comparison = services.compare(peer, pyramid)
    by_name = {s.annotator: str(s.pk) for s in comparison.sources}
    assert {i.key for i in comparison.disagreements} == set(decisions), [i.key for i in comparison.disagreements]
    judge = get_user_model().objects.get_or_create(username=username)[0]
    peer.topic.dataset.coordinators.add(judge)  # only coordinators adjudicate
    return services.adjudicate(
        peer, pyramid, judge, {k: by_name.get(v, v) for k, v in decisions.items()}, comparison.token
    )


# A second pyramid of the toy's references (every one is "word word ..."): SCU uid -> (reference, span) contributors.
SECOND_PYRAMID = {
    1: [("A", (0, 4)), ("B", (0, 4)), ("C", (0, 4))],
    2: [("A", (5, 9))],
    5: [("B", (10, 14)), ("C", (10, 14))],
}


def second_pyramid(topic, username: str) -> Pyramid:
    """A pyramid of ``topic``'s references built by ``username``, and ann1's annotation of peer 1
    against it (the practical test of construction agreement). The topic's first pyramid is
    given a builder too ("ann5"): the comparison names each pyramid by who built it."""
    topic.pyramids.update(creator=get_user_model().objects.get_or_create(username="ann5")[0])
    builder = get_user_model().objects.get_or_create(username=username)[0]
    pyramid = Pyramid.objects.create(topic=topic, creator=builder)
    references = {r.external_id: r for r in topic.referencesummarys.all()}
    pyramid.references.set(references.values())
    for uid, contributors in SECOND_PYRAMID.items():
        scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=f"SCU {uid} of {username}")
        for reference, span in contributors:
            add_contributor(scu, references[reference], [span])
    annotation = PeerAnnotation.objects.create(
        peer=topic.peersummarys.get(external_id="1"),
        pyramid=pyramid,
        annotator=get_user_model().objects.get(username="ann1"),
        status="done",
    )
    add_match(annotation, SCU.objects.get(pyramid=pyramid, uid=1), [(0, 4)])
    return pyramid


def coordinator_of(dataset):
    coordinator = get_user_model().objects.create_user("chief")
    dataset.coordinators.add(coordinator)
    return coordinator


def opened(topic, username: str, peer_id: str) -> PeerAnnotation:
    """What opening a peer in the annotator does: an empty annotation in progress (``annotation_for``)."""
    user = get_user_model().objects.get_or_create(username=username)[0]
    assignment = topic.assignments.get_or_create(annotator=user, task="annotate_peers")[0]
    return assignments.annotation_for(assignment, topic.peersummarys.get(external_id=peer_id))


def make_users(dataset):
    """Users of each role, without passwords (tests log in with force_login; hashing is slow)."""
    User = get_user_model()
    root = User.objects.create_superuser("root", "root@example.org", None)
    coordinator = User.objects.create_user("coord")
    coordinator.groups.add(role_group(COORDINATOR))
    dataset.coordinators.add(coordinator)
    other = User.objects.create_user("other")
    other.groups.add(role_group(COORDINATOR))
    Dataset.objects.create(name="Other").coordinators.add(other)
    annotator = User.objects.get(username="ann1")
    annotator.groups.add(role_group(ANNOTATOR))
    return {"root": root, "coord": coordinator, "other": other, "annotator": annotator}


def fmt(value, digits=3) -> str:
    """A number as the templates print it."""
    return floatformat(value, digits)


def row_html(html: str, attribute: str, value: str) -> str:
    """The <tr ...> element carrying ``attribute="value"``."""
    match = re.search(rf'<tr[^>]*{attribute}="{re.escape(value)}"[^>]*>(.*?)</tr>', html, re.S)
    assert match, f"no row with {attribute}={value}"
    return match.group(1)


def url_patterns(patterns=None, prefix: str = ""):
    """(namespaced name, pattern) of every named URL of the project, walked from the URL conf (so a
    view added later is seen by the tests that must classify every view)."""
    from django.urls import URLResolver, get_resolver

    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from url_patterns(
                pattern.url_patterns, f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix
            )
        elif pattern.name:
            yield prefix + pattern.name, pattern
