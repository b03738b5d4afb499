"""Shared setup of the dashboard page tests: the toy dataset of tests/dashboards with a second
annotator on every peer of T1 (so T1 has agreement figures on 3 peers), the same as people leave
it (``build_lived_in``), and the users of each role."""
import re

from django.contrib.auth import get_user_model
from django.template.defaultfilters import floatformat

from annotation.models import SCU, Dataset, PeerAnnotation, PeerSummary
from annotation.access.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.corpus import assignments
from annotation.pyramids.editing import add_match

from tests.dashboards import toy

# ann2's extra annotations of T1 (toy.MATCHES gives ann2 only peer 1: [1]).
ANN2_T1 = {"2": [2, 2], "3": [1]}   # peer 2: SCU 2 found twice (a repetition)


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
    opened(t1, "ann1", "4")                                   # only opened: counts nowhere
    unfinished = opened(t1, "ann2", "4")                      # unfinished with a match and a non-matching unit
    add_match(unfinished, SCU.objects.get(pyramid=unfinished.pyramid, uid=1), [(0, 4)])
    add_match(unfinished, None, [(5, 9)])
    zero = opened(t2, "ann1", "4")                            # finished, found nothing: a real 0
    zero.status = "done"
    zero.save()
    opened(t2, "ann2", "1")                                   # ann1 finished T2/1; ann2 only opened it
    opened(t2, "ann3", "2")                                   # an annotator who only passed through
    finished = PeerAnnotation.objects.get(peer__topic=t1, peer__external_id="1", annotator__username="ann2")
    add_match(finished, None, [(10, 14)])                     # a non-matching unit in a finished annotation
    return dataset


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
            yield from url_patterns(pattern.url_patterns, f"{prefix}{pattern.namespace}:" if pattern.namespace else prefix)
        elif pattern.name:
            yield prefix + pattern.name, pattern
