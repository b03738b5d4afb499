"""Shared setup of the dashboard page tests: the toy dataset of tests/dashboards with a second
annotator on every peer of T1 (so T1 has agreement figures on 3 peers), and the users of each role."""
import re

from django.contrib.auth import get_user_model
from django.template.defaultfilters import floatformat

from annotation.models import SCU, Dataset, PeerAnnotation, PeerSummary
from annotation.access.roles import ANNOTATOR, COORDINATOR, role_group
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
