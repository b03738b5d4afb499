"""An annotator's work: what each assignment is about, how far it is, where to continue.

A pyramid is created when the annotator first opens it (from all the topic's references, for a
build assignment); a peer annotation against the topic's pyramid only on the annotator's first
action in that peer (opening a peer stores nothing).
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Case, Exists, OuterRef, Subquery, Value, When

from annotation.corpus.models import Assignment, PeerSummary
from annotation.corpus.natural_order import natural_key
from annotation.corpus.wording import count_noun
from annotation.jobs.framework_internals import kept_rows
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
    on it, ``peers.results.counting``), else the newest finished one if any, else the newest; in
    one statement."""
    return _preferred_pyramids(topic.pk).first()


def _preferred_pyramids(topic_id: int):
    """The topic's pyramids, the one to annotate against first (``pyramid_to_annotate_against``)."""
    preference = Case(
        When(pyramid_adjudication__isnull=False, then=Value(2)),
        When(status=Pyramid.Status.DONE, then=Value(1)),
        default=Value(0),
    )
    return Pyramid.objects.filter(topic_id=topic_id).alias(preference=preference).order_by("-preference", "-id")


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
    annotation if there is one. Three statements at most, whatever the topic's size, each composed
    once per process (``kept_rows``): it is part of every annotation document, the read that opens
    a peer, where composing them took 10 ms of CPU (the progress's nested subqueries).
    """
    topic_id, annotator_id = annotation.peer.topic_id, annotation.annotator_id
    if annotator_id is None:
        return {"next": None, "progress": None}
    assignment = kept_rows(_assignment, topic=topic_id, annotator=annotator_id)
    if not assignment:
        return {"next": None, "progress": None}
    peers = sorted(kept_rows(_peers, topic=topic_id, annotator=annotator_id), key=lambda p: natural_key(p[1]))
    done = {pid for pid, _, is_done in peers if is_done}
    order = [pid for pid, _, _ in peers]
    at = order.index(annotation.peer_id) if annotation.peer_id in order else -1
    candidates = [p for p in peers[at + 1 :] + peers[: at + 1] if p[0] not in done and p[0] != annotation.peer_id]
    following = None
    if candidates:
        peer_id, external_id, _ = candidates[0]
        existing = kept_rows(_annotation_of, peer=peer_id, annotator=annotator_id, topic=topic_id)
        following = {
            "assignment": assignment[0][0],
            "peer": external_id,
            "peer_id": peer_id,
            "annotation": existing[0][0] if existing else None,
        }
    return {"next": following, "progress": {"done": len(done), "total": len(peers)}}


def _assignment(topic: int, annotator: int):
    """``walk``: the annotator's peer annotation assignment of the topic."""
    return (
        Assignment.objects.filter(topic_id=topic, annotator_id=annotator, task=Assignment.Task.ANNOTATE_PEERS)
        .order_by("pk")
        .values_list("pk")[:1]
    )


def _peers(topic: int, annotator: int):
    """``walk``: the topic's peers (id, name), each with whether the annotator's work makes it done."""
    mine = PeerAnnotation.objects.filter(peer__topic_id=topic, annotator_id=annotator)
    done = Exists(peers_done(mine.filter(peer_id=OuterRef("pk"))))
    return (
        PeerSummary.objects.filter(topic_id=topic)
        .order_by()
        .annotate(done=done)
        .values_list("id", "external_id", "done")
    )


def _annotation_of(peer: int, annotator: int, topic: int):
    """``walk``: the annotator's annotation of the peer against the topic's pyramid for peers."""
    pyramid = Subquery(_preferred_pyramids(topic).values("id")[:1])
    return (
        PeerAnnotation.objects.filter(peer_id=peer, annotator_id=annotator, pyramid_id=pyramid)
        .order_by("pk")
        .values_list("id")[:1]
    )
