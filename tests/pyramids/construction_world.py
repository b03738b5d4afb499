"""A topic with two pyramids of the same three references, built by two annotators, and four peers
annotated against both (the practical test), small enough to work out every figure by hand.

Spans are the same words in both pyramids where both made a contributor, so the contributor
alignment is plain: A0 = reference A [0, 5), A6 = A [6, 11), etc.

    pyramid 1 (builder1): SCU 1 {A0, B0, C0}, SCU 2 {A6, B6}, SCU 3 {C6}, SCU 4 {A12}
    pyramid 2 (builder2): SCU 1 {A0, B0},     SCU 2 {C0},     SCU 3 {A6, B6, C6}, SCU 5 {B12}

Aligned: A0 B0 C0 A6 B6 C6 (6 items); A12 only in 1, B12 only in 2. Item pairs from different
references: 15 - 3 = 12; together in 1: 4, in 2: 4, in both: 2 -> pairwise P = R = F1 = 0.5.
B-cubed precision = recall = (1 + 1 + 1 + 2/3 + 2/3 + 1/3) / 6 = 7/9. SCUs: 1-1 (2 shared, weights
3 and 2) and 2-3 (2 shared, weights 2 and 3) matched; 3 and 4 only in 1, 2 and 5 only in 2.
"""

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

TEXTS = {"A": "alpha bravo charlie delta", "B": "echo1 foxtr golfx hotel", "C": "india julie kilox limax"}
SPAN = {"0": (0, 5), "6": (6, 11), "12": (12, 17)}
PYRAMIDS = {
    "builder1": {1: ["A0", "B0", "C0"], 2: ["A6", "B6"], 3: ["C6"], 4: ["A12"]},
    "builder2": {1: ["A0", "B0"], 2: ["C0"], 3: ["A6", "B6", "C6"], 5: ["B12"]},
}
PEER_TEXT = "one two three four five six seven eight nine ten"
# peer -> pyramid's builder -> SCU uids found by the annotator "reader"
MATCHES = {
    "p1": {"builder1": [1], "builder2": [1, 2]},
    "p2": {"builder1": [1, 2], "builder2": [3]},
    "p3": {"builder1": [4], "builder2": [5]},
    "p4": {"builder1": [2, 3], "builder2": [3, 1]},
}
HAND = {
    "pairs": 12,
    "together_a": 4,
    "together_b": 4,
    "together_both": 2,
    "pairwise_precision": 0.5,
    "pairwise_recall": 0.5,
    "pairwise_f1": 0.5,
    "bcubed_precision": 7 / 9,
    "bcubed_recall": 7 / 9,
    "bcubed_f1": 7 / 9,
    "aligned": 6,
    "unmatched_a": 1,
    "unmatched_b": 1,
    "scus_matched": 2,
    "scus_identical": 0,
    "weight_n": 2,
    "weight_equal_share": 0.0,
    "weight_mad": 1.0,
}
HAND_SCUS = {
    "matched": [[1, 1, 2, 3, 2], [2, 3, 2, 2, 3]],
    "unmatched_a": [[3, 1], [4, 1]],
    "unmatched_b": [[2, 1], [5, 1]],
}


@transaction.atomic  # as tests/dashboards/toy.build: one recomputation, at its end
def build(name="Construction") -> Dataset:
    User = get_user_model()
    dataset = Dataset.objects.create(name=name)
    topic = Topic.objects.create(dataset=dataset, external_id="T")
    refs = {r: ReferenceSummary.objects.create(topic=topic, external_id=r, text=text) for r, text in TEXTS.items()}
    reader = User.objects.create_user("reader")
    Assignment.objects.create(topic=topic, annotator=reader, task=Assignment.Task.ANNOTATE_PEERS)
    pyramids = {}
    for builder, scus in PYRAMIDS.items():
        user = User.objects.create_user(builder)
        Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
        pyramid = Pyramid.objects.create(topic=topic, creator=user, status=Pyramid.Status.DONE)
        pyramid.references.set(refs.values())
        for uid, contributors in scus.items():
            scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=f"SCU {uid} of {builder}")
            for c in contributors:
                add_contributor(scu, refs[c[0]], [SPAN[c[1:]]])
        pyramids[builder] = pyramid
    for peer_id, by_pyramid in MATCHES.items():
        peer = PeerSummary.objects.create(topic=topic, external_id=peer_id, text=PEER_TEXT)
        for builder, uids in by_pyramid.items():
            annotation = PeerAnnotation.objects.create(
                peer=peer, pyramid=pyramids[builder], annotator=reader, status="done"
            )
            for i, uid in enumerate(uids):
                add_match(annotation, SCU.objects.get(pyramid=pyramids[builder], uid=uid), [(4 * i, 4 * i + 3)])
    return dataset
