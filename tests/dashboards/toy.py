"""A small hand-scored dataset for the Django-side dashboard tests.

Two topics, references A, B, C and the same pyramid shape in each: SCU 1 weight 3 (A, B, C),
SCU 2 weight 2 (A, B), SCU 3 weight 1 (A), SCU 4 weight 1 (C). Sum 7 over n = 3: Xa = round(2.33) = 2,
MaxWeight(2) = 3 + 2 = 5. Modified score = D / 5 with D the weights of the SCUs a peer matches.
"""

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid

TEXT = "word " * 20
CONTRIBUTORS = {1: "ABC", 2: "AB", 3: "A", 4: "C"}
# topic -> peer -> annotator -> matched SCU uids
MATCHES = {
    "T1": {"1": {"ann1": [1, 3], "ann2": [1]}, "2": {"ann1": [2]}, "3": {"ann1": [1, 2]}},
    "T2": {"1": {"ann1": [2]}, "2": {"ann1": [1, 4]}, "3": {"ann1": [3]}},
}
# Modified scores by hand (peer 1 in T1: annotators 0.8 and 0.6 -> 0.7 for the topic).
MODIFIED = {("T1", "1"): 0.7, ("T1", "2"): 0.4, ("T1", "3"): 1.0, ("T2", "1"): 0.4, ("T2", "2"): 0.8, ("T2", "3"): 0.2}


@transaction.atomic  # the recomputation its saves call for scheduled once, at its end, over all of it
def build(name="Toy") -> Dataset:
    dataset = Dataset.objects.create(name=name)
    users = {u: get_user_model().objects.get_or_create(username=u)[0] for u in ("ann1", "ann2")}
    for topic_id, peers in MATCHES.items():
        topic = Topic.objects.create(dataset=dataset, external_id=topic_id)
        refs = {r: ReferenceSummary.objects.create(topic=topic, external_id=r, text=TEXT) for r in "ABC"}
        pyramid = Pyramid.objects.create(topic=topic)
        pyramid.references.set(refs.values())
        scus = {uid: SCU.objects.create(pyramid=pyramid, uid=uid, label=f"SCU {uid}") for uid in CONTRIBUTORS}
        for uid, letters in CONTRIBUTORS.items():
            for letter in letters:
                add_contributor(scus[uid], refs[letter], [(0, 4)])
        for peer_id, by_annotator in peers.items():
            peer = PeerSummary.objects.create(topic=topic, external_id=peer_id, text=TEXT)
            for username, uids in by_annotator.items():
                annotation = PeerAnnotation.objects.create(
                    peer=peer, pyramid=pyramid, annotator=users[username], status="done"
                )
                for i, uid in enumerate(uids):
                    add_match(annotation, scus[uid], [(5 * i, 5 * i + 4)])
    return dataset
