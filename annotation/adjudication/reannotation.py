"""What a topic's adjudicated pyramid leaves to annotate again, and carrying matches over to it.

Once a topic has an adjudicated pyramid its scores rest on the annotations made against it
(``peers.results.scoring_pyramid``); an annotator's finished annotations against an annotator's
pyramid are no longer scored nor counted as progress (``results.progress_counting``). Their peers
are *to re-annotate*: this module lists them (for the coordinator's overview and the annotator's
home and page) and copies, on the annotator's request, each match whose SCU maps to an SCU of the
adjudicated pyramid into the annotator's annotation against it (one recorded, undoable action,
``history.changes.annotation_action``). The other matches (SCUs dropped or not mapped,
non-matching units, matches without evidence) are left for the annotator, who checks the result
and marks the peer done: a carried annotation stays in progress, so it counts only once finished.

An assignment's status says the same as its progress (``sync_status``): a finished peer-annotation
assignment with peers to re-annotate is reopened (in progress) when the pyramid is adjudicated, and
is done again once the annotator has finished every peer against the adjudicated pyramid; it cannot
be marked done (by the annotator, the coordinator or the API) while peers are left to re-annotate.

Which annotator SCU became which adjudicated SCU: ``PyramidAdjudication.uids`` (item key -> uid)
with the sides ``source_order`` names (``pyramid_merge`` keys: ``m<A>-<B>``, ``a<A>``, ``b<B>``, the
second SCU of a ``both`` decision ``…#2``). An SCU the record does not map (an adjudication saved
before the sides were recorded, or an SCU added since) maps to an adjudicated SCU with identical
contributors (same references, same parts), if there is one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.signals import post_save

from annotation.adjudication.models import PyramidAdjudication
from annotation.corpus.models import Assignment, PeerSummary, Topic
from annotation.corpus.natural_order import natural_key
from annotation.corpus.wording import count_noun
from annotation.history.changes import Outcome, annotation_action
from annotation.peers import assignments
from annotation.peers.document_states import annotation_state
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import counting, progress_counting, scoring_pyramid
from annotation.pyramids.document_states import scu_states
from annotation.pyramids.models import SCU, Pyramid

CARRY_OVER = "carry_over"


def stale(annotations: QuerySet) -> QuerySet:
    """Of ``annotations``, the finished annotators' annotations no longer scored because their
    topic's pyramid was adjudicated, whose annotator has not finished the peer against the
    adjudicated pyramid yet: the peers to re-annotate, with the annotation to carry matches from."""
    done_again = PeerAnnotation.objects.filter(
        progress_counting(), peer=OuterRef("peer"), annotator=OuterRef("annotator")
    )
    return (
        annotations.filter(counting(), annotator__isnull=False, pyramid__pyramid_adjudication__isnull=True)
        .filter(Exists(PyramidAdjudication.objects.filter(topic=OuterRef("pyramid__topic"))))
        .exclude(Exists(done_again))
    )


@dataclass(frozen=True)
class ToReannotate:
    """One peer an annotator is to annotate again, and the annotation its matches can come from."""

    annotator: str
    annotator_id: int
    peer: str
    peer_id: int
    source: int  # the annotation against the annotator's pyramid


def to_reannotate(annotations: QuerySet) -> list[ToReannotate]:
    """``stale(annotations)`` as (annotator, peer) pairs, one per pair (the newest annotation if an
    annotator finished the peer against two pyramids), by annotator then peer."""
    rows = (
        stale(annotations)
        .order_by("-updated_at", "-id")
        .values_list("annotator__username", "annotator_id", "peer__external_id", "peer_id", "id")
    )
    seen, out = set(), []
    # sorted is stable: an annotator's newest annotation of a peer comes first
    for annotator, annotator_id, peer, peer_id, pk in sorted(rows, key=lambda r: (r[0], natural_key(r[2]))):
        if (annotator_id, peer_id) not in seen:
            seen.add((annotator_id, peer_id))
            out.append(ToReannotate(annotator, annotator_id, peer, peer_id, pk))
    return out


def by_topic(dataset) -> dict[int, dict[str, list[str]]]:
    """topic id -> annotator -> the peers they are to re-annotate (the coordinator's overview)."""
    out: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    rows = (
        stale(PeerAnnotation.objects.filter(peer__topic__dataset=dataset))
        .order_by()
        .values_list("peer__topic_id", "annotator__username", "peer__external_id")
        .distinct()
    )
    for topic_id, annotator, peer in rows:
        out[topic_id][annotator].append(peer)
    return {
        topic: {who: sorted(peers, key=natural_key) for who, peers in sorted(by.items())} for topic, by in out.items()
    }


def for_assignment(assignment: Assignment) -> list[ToReannotate]:
    """The peers of a peer-annotation assignment its annotator is to re-annotate."""
    if assignment.task != Assignment.Task.ANNOTATE_PEERS:
        return []
    return to_reannotate(
        PeerAnnotation.objects.filter(peer__topic_id=assignment.topic_id, annotator_id=assignment.annotator_id)
    )


def kept_open(assignment: Assignment) -> str | None:
    """Why ``assignment``, asked to be done, stays in progress (``sync_status``): its peers to re-annotate
    against the adjudicated pyramid, said so the page that asked does not claim it done."""
    if assignment.status == Assignment.Status.DONE:
        return None
    left = len(for_assignment(assignment))
    if not left:
        return None
    return (
        f"It stays in progress: {count_noun(left, 'peer')} to re-annotate against the topic's adjudicated "
        "pyramid first."
    )


def sync_status(work: QuerySet) -> None:
    """Make the status of the peer-annotation assignments of ``work`` say what their progress says: done
    with peers to re-annotate (``for_assignment``) becomes in progress; in progress with none left,
    every peer done and earlier finished work no longer scored (it was done before the pyramid was
    adjudicated: reopened) becomes done again."""
    for assignment in work.filter(task=Assignment.Task.ANNOTATE_PEERS).select_related("topic"):
        pending = bool(for_assignment(assignment))
        if assignment.status == Assignment.Status.DONE and pending:
            status = Assignment.Status.IN_PROGRESS
        elif assignment.status == Assignment.Status.IN_PROGRESS and not pending and _reannotated(assignment):
            status = Assignment.Status.DONE
        else:
            continue
        Assignment.objects.filter(pk=assignment.pk).update(status=status)


def _reannotated(assignment: Assignment) -> bool:
    mine = PeerAnnotation.objects.filter(peer__topic_id=assignment.topic_id, annotator_id=assignment.annotator_id)
    progress = assignments.progress(assignment)
    return progress.done == progress.total and mine.filter(counting()).exclude(scoring_pyramid()).exists()


def _on_annotation_saved(sender, instance: PeerAnnotation, **kwargs) -> None:
    """A peer finished (or reopened) in an adjudicated topic may finish (or reopen) its annotator's
    assignment."""
    if (
        instance.annotator_id is not None
        and PyramidAdjudication.objects.filter(topic__pyramids=instance.pyramid_id).exists()
    ):
        sync_status(Assignment.objects.filter(topic__pyramids=instance.pyramid_id, annotator_id=instance.annotator_id))


def _on_assignment_saved(sender, instance: Assignment, **kwargs) -> None:
    """Marked done (``assignments.mark_done``, the overview, the API) with peers left to
    re-annotate: it stays in progress."""
    if (
        instance.status == Assignment.Status.DONE
        and instance.task == Assignment.Task.ANNOTATE_PEERS
        and PyramidAdjudication.objects.filter(topic_id=instance.topic_id).exists()
    ):
        sync_status(Assignment.objects.filter(pk=instance.pk))
        instance.refresh_from_db(fields=["status"])


post_save.connect(_on_annotation_saved, sender=PeerAnnotation, dispatch_uid="reannotation-annotation-saved")
post_save.connect(_on_assignment_saved, sender=Assignment, dispatch_uid="reannotation-assignment-saved")


def _contributors(state: dict) -> frozenset:
    return frozenset((c["reference"], tuple(map(tuple, c["parts"]))) for c in state["contributors"])


def recorded_map(uids: dict[str, int], side: str) -> dict[int, int]:
    """Annotator SCU uid -> adjudicated SCU uid, from a record's item keys (``side``: ``a`` or
    ``b``). A matched pair's SCUs both map to the SCU the item became (the same content unit, as
    the coordinator settled it); with ``both``, B's SCU to the second one."""
    out: dict[int, int] = {}
    for key, uid in uids.items():
        base, second = key.split("#")[0], key.endswith("#2")
        if base.startswith("m"):
            a, b = (int(x) for x in base[1:].split("-"))
            if side == "a" and not second:
                out[a] = uid
            elif side == "b" and (second or b not in out):
                out[b] = uid
        elif base[0] == side and not second:
            out[int(base[1:])] = uid
    return out


def scu_map(record: PyramidAdjudication, source: Pyramid) -> dict[int, int]:
    """Annotator SCU uid (of ``source``) -> the uid of the adjudicated SCU it became, for the SCUs
    still in both pyramids: recorded where the record knows, else by identical contributors."""
    sides = dict(zip(record.source_order, "ab", strict=False))
    recorded = recorded_map(record.uids, sides[source.pk]) if source.pk in sides else {}
    mine, adjudicated = (
        {int(uid): s for uid, s in scu_states(p, p.scus.values_list("uid", flat=True)).items() if s}
        for p in (source, record.pyramid)
    )
    by_contributors: dict[frozenset, int] = {}
    for uid, state in sorted(adjudicated.items()):
        by_contributors.setdefault(_contributors(state), uid)
    out = {}
    for uid, state in mine.items():
        target = recorded.get(uid)
        if target not in adjudicated:
            target = by_contributors.get(_contributors(state)) if state["contributors"] else None
        if target is not None:
            out[uid] = target
    return out


@dataclass(frozen=True)
class CarriedOver:
    annotation: PeerAnnotation  # the annotator's annotation against the adjudicated pyramid
    carried: int  # matches copied
    present: int  # mapped matches it already had
    left: int  # matches of the old annotation left for the annotator


def carried_text(result: CarriedOver) -> str:
    """What a carry-over did, for the annotator: "3 matches carried over to the adjudicated
    pyramid; 1 match of SCUs not in it (or non-matching units) left for you: check them ..."."""
    text = f"{count_noun(result.carried, 'match', 'matches')} carried over to the adjudicated pyramid"
    if result.present:
        text += f" ({result.present} held already)"
    if result.left:
        text += (
            f"; {count_noun(result.left, 'match', 'matches')} of SCUs not in it (or non-matching units) left for you"
        )
    return text + ": check them and mark the peer done."


def carry_over(assignment: Assignment, peer: PeerSummary, user) -> Outcome:
    """Copy into ``user``'s annotation of ``peer`` against the topic's adjudicated pyramid (created
    if need be, left in progress) every match of their earlier finished annotation whose SCU maps
    to an adjudicated SCU (``scu_map``) and that it does not hold yet; one recorded action
    (``carry_over``), undone as any other. Only the assignment's annotator may; ValidationError
    when the peer has nothing to carry over. ``Outcome.value`` is a ``CarriedOver``."""
    if assignment.annotator_id != getattr(user, "pk", None) or assignment.task != Assignment.Task.ANNOTATE_PEERS:
        raise PermissionDenied("Only the annotator of this peer-annotation assignment carries matches over.")
    if peer.topic_id != assignment.topic_id:
        raise ValidationError("This peer summary belongs to another topic.")
    with transaction.atomic():
        Topic.objects.select_for_update().get(pk=assignment.topic_id)  # no adjudication rewrites the pyramid meanwhile
        record = PyramidAdjudication.objects.filter(topic_id=assignment.topic_id).select_related("pyramid").first()
        pending = [r for r in for_assignment(assignment) if r.peer_id == peer.pk]
        if record is None or not pending:
            raise ValidationError(
                f"Peer {peer.external_id} has no earlier annotation of yours to carry matches over from."
            )
        source = PeerAnnotation.objects.select_related("pyramid").get(pk=pending[0].source)
        mapping = scu_map(record, source.pyramid)
        old = annotation_state(source)["matches"]
        wanted = [{"scu": mapping[m["scu"]], "parts": m["parts"]} for m in old if m["scu"] in mapping and m["parts"]]
        target = assignments.annotation_for(assignment, peer)
        if target.pyramid_id != record.pyramid_id:
            raise ValidationError("The topic's pyramid for peers is not its adjudicated pyramid.")
        counts = {}

        def mutate(annotation):
            held = annotation_state(annotation)["matches"]
            new = [m for m in wanted if m not in held]
            scus = {
                s.uid: s for s in SCU.objects.filter(pyramid_id=annotation.pyramid_id, uid__in={m["scu"] for m in new})
            }
            for m in new:
                add_match(annotation, scus[m["scu"]], [tuple(p) for p in m["parts"]])
            counts.update(carried=len(new), present=len(wanted) - len(new))
            return annotation

        outcome = annotation_action(
            target.pk,
            user,
            action=CARRY_OVER,
            mutate=mutate,
            summary=lambda _: (
                f"Carried over {counts['carried']} matches from the annotation against pyramid {source.pyramid_id}"
            ),
        )
        result = CarriedOver(outcome.value, counts["carried"], counts["present"], len(old) - len(wanted))
        return Outcome(result, outcome.revision, outcome.change)
