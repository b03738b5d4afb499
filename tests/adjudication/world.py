"""A doubly annotated peer with every kind of disagreement: the toy dataset (``tests/dashboards/toy.py``)
where, on T1 peer 1, besides the toy's matches (ann1: SCU 1 at 0-4, SCU 3 at 5-9; ann2: SCU 1 at 0-4),
both annotators found SCU 4 with different evidence and ann1 marked one non-matching unit."""

from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import SCU

from tests.dashboards.helpers import build_toy, make_users

EXTRA = {"ann1": [(4, (15, 19)), (None, (20, 24))], "ann2": [(4, (10, 14))]}


def build(name="Adjudication", users=True):
    """(dataset, users of each role (``make_users``; None with ``users=False``), the peer, its pyramid)."""
    dataset = build_toy(name)
    users = make_users(dataset) if users else None
    peer = dataset.topics.get(external_id="T1").peersummarys.get(external_id="1")
    pyramid = peer.topic.pyramids.get()
    for username, matches in EXTRA.items():
        annotation = PeerAnnotation.objects.get(peer=peer, pyramid=pyramid, annotator__username=username)
        for uid, span in matches:
            add_match(annotation, SCU.objects.get(pyramid=pyramid, uid=uid) if uid else None, [span])
    return dataset, users, peer, pyramid


def versions(peer, pyramid) -> dict[str, PeerAnnotation]:
    """username -> that annotator's version of the peer."""
    return {
        a.annotator.username: a
        for a in PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid, annotator__isnull=False)
    }


def matches_of(annotation) -> list[tuple]:
    """(SCU uid or None, its spans) of every match, sorted: what an annotation holds."""
    return sorted(
        (
            (m.scu.uid if m.scu_id else None, tuple((p.start, p.end) for p in m.parts.order_by("start")))
            for m in annotation.matches.select_related("scu")
        ),
        key=lambda m: (m[0] is None, m),
    )
