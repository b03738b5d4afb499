"""Minimal builders for model tests (explicit, no factory library needed)."""

from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import SCU, Pyramid


def topic(name="T1", dataset="Set", **refs):
    ds, _ = Dataset.objects.get_or_create(name=dataset)
    t = Topic.objects.create(dataset=ds, external_id=name)
    texts = refs or {"A": "Alpha beta gamma.", "B": "Delta epsilon zeta."}
    references = {
        rid: ReferenceSummary.objects.create(topic=t, external_id=rid, text=text) for rid, text in texts.items()
    }
    return t, references


def pyramid(t, references, uids=(1,)):
    p = Pyramid.objects.create(topic=t)
    p.references.set(references.values())
    return p, {uid: SCU.objects.create(pyramid=p, uid=uid, label=f"SCU {uid}") for uid in uids}


def annotation(t, p, text="Peer text about alpha.", peer_id="1", annotator=None):
    peer = PeerSummary.objects.create(topic=t, external_id=peer_id, text=text)
    return PeerAnnotation.objects.create(peer=peer, pyramid=p, annotator=annotator, status=PeerAnnotation.Status.DONE)
