"""Two annotators' pyramids of one topic with every kind of difference (built through the editing
services, as the builder writes them), for the pyramid adjudication tests.

References A, B, C (different 9-character words, so quotes tell them apart). ann1's pyramid (A side) and
ann2's (B side), uid: label, reference -> span:

    ann1  1 "cats purr"  A 0-9, B 0-9, C 0-9  ann2  1 "cats purr"        A 0-9, B 0-9, C 0-9   identical
          2 "dogs bark"  A 10-19, B 10-19           2 "dogs are barking" A 10-19, B 10-19, C 10-19  label, weight 2 vs 3
          3 "birds sing" A 20-29                    3 "birds sing"       A 20-27               spans
          4 "fish swim"  C 20-29                    5 "horses run"       B 30-39               one side only each
"""

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

TEXTS = {r: " ".join(f"{r.lower()}{i:03d}xxxxx" for i in range(8)) for r in "ABC"}  # word i at 10i..10i+9
PYRAMIDS = {
    "ann1": {
        1: ("cats purr", {"A": (0, 9), "B": (0, 9), "C": (0, 9)}),
        2: ("dogs bark", {"A": (10, 19), "B": (10, 19)}),
        3: ("birds sing", {"A": (20, 29)}),
        4: ("fish swim", {"C": (20, 29)}),
    },
    "ann2": {
        1: ("cats purr", {"A": (0, 9), "B": (0, 9), "C": (0, 9)}),
        2: ("dogs are barking", {"A": (10, 19), "B": (10, 19), "C": (10, 19)}),
        3: ("birds sing", {"A": (20, 27)}),
        5: ("horses run", {"B": (30, 39)}),
    },
}
PEER_TEXT = "cats purr and dogs bark while horses run"


@transaction.atomic  # as tests/dashboards/toy.build: one recomputation, at its end
def build(name="Pyramid adjudication"):
    """(dataset, topic, ann1's pyramid, ann2's pyramid), both finished; one peer summary "1"."""
    dataset = Dataset.objects.create(name=name)
    topic = Topic.objects.create(dataset=dataset, external_id="T1")
    refs = {r: ReferenceSummary.objects.create(topic=topic, external_id=r, text=text) for r, text in TEXTS.items()}
    PeerSummary.objects.create(topic=topic, external_id="1", text=PEER_TEXT)
    pyramids = []
    for username, scus in PYRAMIDS.items():
        user = get_user_model().objects.get_or_create(username=username)[0]
        topic.assignments.create(annotator=user, task="build_pyramid")
        pyramid = Pyramid.objects.create(topic=topic, creator=user, status=Pyramid.Status.DONE)
        pyramid.references.set(refs.values())
        for uid, (label, spans) in scus.items():
            scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=label)
            for ref, span in spans.items():
                add_contributor(scu, refs[ref], [span])
        Pyramid.objects.filter(pk=pyramid.pk).update(last_uid=max(scus))
        pyramids.append(Pyramid.objects.get(pk=pyramid.pk))
    return dataset, topic, pyramids[0], pyramids[1]


def content(pyramid) -> dict[int, tuple[str, dict[str, tuple]]]:
    """uid -> (label, reference -> its parts as (start, end) tuples): what a pyramid holds."""
    out = {}
    for scu in SCU.objects.filter(pyramid=pyramid).prefetch_related("contributors__parts", "contributors__reference"):
        out[scu.uid] = (
            scu.label,
            {
                c.reference.external_id: tuple((p.start, p.end) for p in c.parts.order_by("start"))
                for c in scu.contributors.all()
            },
        )
    return out


DECISIONS = {"m2-2": "union_a", "m3-3": "b", "a4": "drop", "b5": "b"}  # uids: m1-1 1, m2-2 2, m3-3 3, b5 4
SPANS = {"cats": (0, 9), "dogs": (14, 23), "horses": (30, 40), "while": (24, 29)}
# What each annotator found in each peer, against ann2's pyramid (B side): SCU uid (None: non-matching) -> span.
FOUND = {"ann3": [(1, "cats"), (2, "dogs"), (5, "horses"), (None, "while")], "ann4": [(1, "cats")]}


def annotated_then_adjudicated(password=None) -> dict:
    """The world above with three peers, annotated by ann3 and ann4 against ann2's pyramid (the
    newest finished one) and finished; then the topic's pyramid adjudicated by ``coord``
    (``DECISIONS``). Run it with the on-commit callbacks executed (scores stored)."""
    from annotation.adjudication import pyramids
    from annotation.peers import assignments
    from annotation.peers.editing import add_match

    dataset, topic, a, b = build()
    for peer_id in ("2", "3"):
        PeerSummary.objects.create(topic=topic, external_id=peer_id, text=PEER_TEXT)
    users = get_user_model().objects
    coordinator = users.create_user("coord", password=password)
    dataset.coordinators.add(coordinator)
    work = {}
    for username, found in FOUND.items():
        annotator = users.create_user(username, password=password)
        work[username] = topic.assignments.create(annotator=annotator, task="annotate_peers")
        for peer in topic.peersummarys.all():
            annotation = assignments.annotation_for(work[username], peer)
            assert annotation.pyramid == b
            for uid, word in found:
                add_match(annotation, SCU.objects.get(pyramid=b, uid=uid) if uid else None, [SPANS[word]])
        assignments.mark_done(work[username])
    assert {name: assignments.progress(w).done for name, w in work.items()} == {"ann3": 3, "ann4": 3}
    adjudicated = pyramids.adjudicate(a, b, coordinator, DECISIONS, pyramids.compare(a, b).token)
    return {
        "dataset": dataset,
        "topic": topic,
        "a": a,
        "b": b,
        "adjudicated": adjudicated,
        "coordinator": coordinator,
        "work": work,
    }
