"""Two annotators' pyramids of one topic with every kind of difference (built through the editing
services, as the builder writes them), for the pyramid adjudication tests.

References A, B, C (different 9-character words, so quotes tell them apart). ann1's pyramid (A side) and
ann2's (B side), uid: label, reference -> span:

    ann1  1 "cats purr"   A 0-9, B 0-9, C 0-9     ann2  1 "cats purr"        A 0-9, B 0-9, C 0-9   identical
          2 "dogs bark"   A 10-19, B 10-19              2 "dogs are barking" A 10-19, B 10-19, C 10-19  label, weight 2 vs 3
          3 "birds sing"  A 20-29                       3 "birds sing"       A 20-27               spans
          4 "fish swim"   C 20-29                       5 "horses run"       B 30-39               one side only each
"""
from django.contrib.auth import get_user_model

from annotation.models import SCU, Dataset, PeerSummary, Pyramid, ReferenceSummary, Topic
from annotation.pyramids.editing import add_contributor

TEXTS = {r: " ".join(f"{r.lower()}{i:03d}xxxxx" for i in range(8)) for r in "ABC"}   # word i at 10i..10i+9
PYRAMIDS = {
    "ann1": {1: ("cats purr", {"A": (0, 9), "B": (0, 9), "C": (0, 9)}), 2: ("dogs bark", {"A": (10, 19), "B": (10, 19)}),
             3: ("birds sing", {"A": (20, 29)}), 4: ("fish swim", {"C": (20, 29)})},
    "ann2": {1: ("cats purr", {"A": (0, 9), "B": (0, 9), "C": (0, 9)}),
             2: ("dogs are barking", {"A": (10, 19), "B": (10, 19), "C": (10, 19)}),
             3: ("birds sing", {"A": (20, 27)}), 5: ("horses run", {"B": (30, 39)})},
}
PEER_TEXT = "cats purr and dogs bark while horses run"


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
        out[scu.uid] = (scu.label, {c.reference.external_id: tuple((p.start, p.end) for p in c.parts.order_by("start"))
                                    for c in scu.contributors.all()})
    return out
