"""An annotator's work: what each assignment is about, how far it is, where to continue.

A pyramid is created when the annotator first opens it (from all the topic's references, for a
build assignment); a peer annotation against the topic's pyramid only on the annotator's first
action in that peer (opening a peer stores nothing).
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.corpus.models import Assignment, PeerSummary
from annotation.corpus.natural_order import natural_key
from annotation.corpus.wording import count_noun
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import counted, peers_done
from annotation.pyramids.models import Pyramid


@dataclass
class Progress:
    done: int
    total: int
    text: str


def pyramid_to_annotate_against(topic) -> Pyramid | None:
    """The topic's pyramid for peer annotation: its adjudicated pyramid if it has one (scores rest
    on it, ``peers.results.counting``), else a finished one if any, else the newest."""
    pyramids = topic.pyramids.order_by("-id")
    return (
        pyramids.filter(pyramid_adjudication__isnull=False).first()
        or pyramids.filter(status=Pyramid.Status.DONE).first()
        or pyramids.first()
    )


def progress(assignment: Assignment) -> Progress:
    if assignment.task == Assignment.Task.BUILD_PYRAMID:
        pyramid = Pyramid.objects.filter(topic=assignment.topic, creator=assignment.annotator).order_by("-id").first()
        scus = pyramid.scus.count() if pyramid else 0
        return Progress(
            1 if pyramid and pyramid.status == Pyramid.Status.DONE else 0,
            1,
            count_noun(scus, "SCU") if pyramid else "not started",
        )
    total = assignment.topic.peersummarys.count()
    mine = PeerAnnotation.objects.filter(peer__topic=assignment.topic, annotator=assignment.annotator)
    done = peers_done(mine).count()
    return Progress(done, total, f"{done} of {count_noun(total, 'peer')} done")


@transaction.atomic
def pyramid_for_building(assignment: Assignment) -> Pyramid:
    """The annotator's own pyramid for the topic (started with all the topic's references)."""
    pyramid = Pyramid.objects.filter(topic=assignment.topic, creator=assignment.annotator).order_by("-id").first()
    if pyramid is None:
        pyramid = Pyramid.objects.create(
            topic=assignment.topic, creator=assignment.annotator, status=Pyramid.Status.IN_PROGRESS
        )
        pyramid.references.set(assignment.topic.referencesummarys.all())
    if assignment.status == Assignment.Status.ASSIGNED:
        assignment.status = Assignment.Status.IN_PROGRESS
        assignment.save(update_fields=["status"])
    return pyramid


def peer_to_open(assignment: Assignment, peer: PeerSummary | None = None) -> tuple[Pyramid, PeerSummary]:
    """The pyramid to annotate against and the peer to open (default: the first peer not done yet,
    in natural order). Nothing is written: opening a peer is not an action."""
    pyramid = pyramid_to_annotate_against(assignment.topic)
    if pyramid is None:
        raise ValidationError("This topic has no pyramid yet: peers can be annotated once its pyramid exists.")
    if peer is None:
        done = set(
            peers_done(PeerAnnotation.objects.filter(annotator=assignment.annotator, peer__topic=assignment.topic))
        )
        peers = sorted(assignment.topic.peersummarys.all(), key=lambda p: natural_key(p.external_id))
        peer = next((p for p in peers if p.pk not in done), peers[0] if peers else None)
        if peer is None:
            raise ValidationError("This topic has no peer summaries to annotate.")
    elif peer.topic_id != assignment.topic_id:
        raise ValidationError("This peer summary belongs to another topic.")
    return pyramid, peer


def existing_annotation(
    assignment: Assignment, peer: PeerSummary | None = None
) -> tuple[PeerAnnotation | None, PeerSummary]:
    """The annotator's annotation of the peer to open if it exists (None: untouched), and the peer."""
    pyramid, peer = peer_to_open(assignment, peer)
    return PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid, annotator=assignment.annotator).first(), peer


def unsaved_annotation(assignment: Assignment, peer: PeerSummary) -> PeerAnnotation:
    """The annotation a peer not acted on yet would be, never saved: what its page shows (issue 21:
    an untouched peer never becomes an annotation; ``annotation_for`` creates it on the first action)."""
    pyramid, peer = peer_to_open(assignment, peer)
    return PeerAnnotation(
        peer=peer, pyramid=pyramid, annotator=assignment.annotator, status=PeerAnnotation.Status.IN_PROGRESS
    )


@transaction.atomic
def annotation_for(assignment: Assignment, peer: PeerSummary | None = None) -> PeerAnnotation:
    """The annotator's annotation of ``peer`` (default: the first peer not done yet, in natural order),
    created on the annotator's first action that stores something (a match, a comment, "Done").

    Created empty and in progress (once: the unique constraint, two tabs acting at once get the same
    row); it counts in no score nor agreement until it is finished (``results.counted``)."""
    pyramid, peer = peer_to_open(assignment, peer)
    annotation, _ = PeerAnnotation.objects.get_or_create(
        peer=peer,
        pyramid=pyramid,
        annotator=assignment.annotator,
        defaults={"status": PeerAnnotation.Status.IN_PROGRESS},
    )
    if assignment.status == Assignment.Status.ASSIGNED:
        assignment.status = Assignment.Status.IN_PROGRESS
        assignment.save(update_fields=["status"])
    return annotation


def mark_done(assignment: Assignment) -> None:
    """Finish an assignment: its pyramid, or its annotations, are marked done with it.

    Of the annotations, those with work in them (``results.counted`` with unfinished ones): a peer
    the annotator only opened on the way to another stays unfinished, so it never counts as a
    peer in which nothing was found (a score of 0). Such a peer is finished on its own page."""
    with transaction.atomic():
        if assignment.task == Assignment.Task.BUILD_PYRAMID:
            Pyramid.objects.filter(topic=assignment.topic, creator=assignment.annotator).update(
                status=Pyramid.Status.DONE
            )
        else:
            worked = counted(
                PeerAnnotation.objects.filter(peer__topic=assignment.topic, annotator=assignment.annotator),
                include_unfinished=True,
            )
            PeerAnnotation.objects.filter(pk__in=list(worked.values_list("id", flat=True))).update(
                status=PeerAnnotation.Status.DONE
            )
        assignment.status = Assignment.Status.DONE
        assignment.save(update_fields=["status"])


def walk(annotation: PeerAnnotation) -> dict:
    """Where the annotator stands in this topic: progress (``results.peers_done``, as every page
    counts it), and the next peer not done yet, to annotate against the topic's pyramid for peers.

    ``next`` names the assignment (to open a peer not annotated yet), the peer, and the existing
    annotation if there is one. A fixed number of queries: it is part of the annotation document.
    """
    assignment = Assignment.objects.filter(
        topic_id=annotation.peer.topic_id, annotator_id=annotation.annotator_id, task=Assignment.Task.ANNOTATE_PEERS
    ).first()
    if assignment is None or annotation.annotator_id is None:
        return {"next": None, "progress": None}
    peers = sorted(
        PeerSummary.objects.filter(topic_id=annotation.peer.topic_id).values_list("id", "external_id"),
        key=lambda p: natural_key(p[1]),
    )
    done = set(
        peers_done(
            PeerAnnotation.objects.filter(peer__topic_id=annotation.peer.topic_id, annotator_id=annotation.annotator_id)
        )
    )
    pyramid = pyramid_to_annotate_against(annotation.peer.topic)  # where the next peer is annotated
    order = [pid for pid, _ in peers]
    at = order.index(annotation.peer_id) if annotation.peer_id in order else -1
    candidates = [p for p in peers[at + 1 :] + peers[: at + 1] if p[0] not in done and p[0] != annotation.peer_id]
    following = None
    if candidates:
        peer_id, external_id = candidates[0]
        existing = (
            PeerAnnotation.objects.filter(peer_id=peer_id, pyramid=pyramid, annotator_id=annotation.annotator_id)
            .values_list("id", flat=True)
            .first()
        )
        following = {"assignment": assignment.pk, "peer": external_id, "peer_id": peer_id, "annotation": existing}
    return {"next": following, "progress": {"done": len(done), "total": len(peers)}}
