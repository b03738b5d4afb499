"""Keep stored scores and agreement in step with the data, through Celery.

- ``schedule`` (called after a commit) enqueues one task per burst: an annotation or topic already
  waiting in the queue is not enqueued again (a Redis key marks it as pending until the task starts).
- Results carry the revisions they were computed from and are written only if nothing newer is
  stored, so a slow task never overwrites a fresher result.
- If the broker is down the save has already committed; the results are simply stale (their
  revisions lag behind), and ``recompute_stale`` catches up when a worker starts.
"""
import logging
from collections.abc import Iterable

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction

from scoring.model import Convention

from ..models import AnnotationScore, PeerAnnotation, Topic, TopicAgreement
from .results import agreement_rows, score_annotations

log = logging.getLogger(__name__)
PENDING_TTL = 300  # seconds; a lost task stops blocking new ones after this


def _pending_key(kind: str, pk: int) -> str:
    return f"pyramid:pending:{kind}:{pk}"


def _enqueue(task, kind: str, ids: Iterable[int]) -> None:
    ids = sorted(set(ids))
    if not ids:
        return
    try:
        fresh = [pk for pk in ids if cache.add(_pending_key(kind, pk), 1, timeout=PENDING_TTL)]
    except Exception:  # the cache is Redis too; without it, enqueue everything
        log.warning("cache unavailable: %s %s enqueued without de-duplication", kind, ids, exc_info=True)
        fresh = ids
    if not fresh:
        return
    try:
        task.apply_async(args=[fresh], countdown=settings.SCORE_DEBOUNCE_SECONDS)
    except Exception:
        log.warning("could not enqueue %s for %s %s: they stay stale until a worker catches up", task.name, kind, fresh, exc_info=True)
        try:
            cache.delete_many([_pending_key(kind, pk) for pk in fresh])
        except Exception:
            pass


def schedule(*, pyramid_ids=(), annotation_ids=(), topic_ids=()) -> None:
    """Enqueue recomputation of everything a committed change made stale. Never raises."""
    from scoring.tasks import recompute_agreement, recompute_scores

    try:
        ids = set(annotation_ids)
        if pyramid_ids:
            ids |= set(PeerAnnotation.objects.filter(pyramid_id__in=pyramid_ids).values_list("id", flat=True))
        _enqueue(recompute_scores, "annotation", ids)
        _enqueue(recompute_agreement, "topic", topic_ids)
    except Exception:
        log.exception("scheduling score recomputation failed; results stay stale until the next sweep")


def _release(kind: str, ids: Iterable[int]) -> None:
    try:
        cache.delete_many([_pending_key(kind, pk) for pk in ids])
    except Exception:
        log.warning("cache unavailable while releasing pending %s keys", kind, exc_info=True)


def _store_score(annotation_id: int, convention: str, revisions: tuple[int, int], values: dict) -> bool:
    """Write unless a result from a newer state is stored; True if written."""
    pyramid_revision, annotation_revision = revisions
    fields = {"values": values, "pyramid_revision": pyramid_revision, "annotation_revision": annotation_revision}
    for _ in range(2):
        updated = AnnotationScore.objects.filter(
            annotation_id=annotation_id, convention=convention,
            pyramid_revision__lte=pyramid_revision, annotation_revision__lte=annotation_revision,
        ).update(**fields)
        if updated:
            return True
        if AnnotationScore.objects.filter(annotation_id=annotation_id, convention=convention).exists():
            return False  # a newer result is stored
        try:
            with transaction.atomic():
                AnnotationScore.objects.create(annotation_id=annotation_id, convention=convention, **fields)
            return True
        except IntegrityError:
            continue  # created concurrently: compare again
    return False


def recompute_annotations(annotation_ids: Iterable[int]) -> int:
    """Compute and store both conventions' scores of these annotations; returns how many were written."""
    ids = list(annotation_ids)
    _release("annotation", ids)
    # Revisions are read before the data, so the data is never older than the revision it is stored under.
    annotations = list(PeerAnnotation.objects.filter(pk__in=ids).select_related("pyramid"))
    revisions = {a.pk: (a.pyramid.revision, a.revision) for a in annotations}
    written = 0
    for convention in Convention:
        for pk, score in score_annotations(annotations, convention).items():
            written += _store_score(pk, convention.value, revisions[pk], score.as_dict())
    return written


def recompute_topics(topic_ids: Iterable[int]) -> int:
    """Compute and store the agreement figures of these topics; returns how many were written."""
    ids = list(topic_ids)
    _release("topic", ids)
    written = 0
    for topic in Topic.objects.filter(pk__in=ids).select_related("dataset"):
        revision = topic.revision
        values = {}
        for convention in Convention:
            rows = agreement_rows(Topic.objects.filter(pk=topic.pk), convention)
            values[convention.value] = rows[0] if rows else None
        updated = TopicAgreement.objects.filter(topic=topic, topic_revision__lte=revision).update(values=values, topic_revision=revision)
        if not updated and not TopicAgreement.objects.filter(topic=topic).exists():
            try:
                with transaction.atomic():
                    TopicAgreement.objects.create(topic=topic, topic_revision=revision, values=values)
                updated = 1
            except IntegrityError:
                updated = 0
        written += updated
    from .dashboard_snapshots import schedule_for_topics

    schedule_for_topics(ids)
    return written


def stale_work() -> tuple[list[int], list[int]]:
    """Annotations whose stored scores lag behind (or are missing), and topics likewise."""
    stored = {}
    for annotation_id, convention, p_rev, a_rev in AnnotationScore.objects.values_list(
        "annotation_id", "convention", "pyramid_revision", "annotation_revision"
    ):
        stored[(annotation_id, convention)] = (p_rev, a_rev)
    annotations = [
        pk for pk, a_rev, p_rev in PeerAnnotation.objects.values_list("id", "revision", "pyramid__revision")
        if any(stored.get((pk, c.value)) != (p_rev, a_rev) for c in Convention)
    ]
    agreed = dict(TopicAgreement.objects.values_list("topic_id", "topic_revision"))
    topics = [pk for pk, rev in Topic.objects.filter(pyramids__annotations__isnull=False).distinct().values_list("id", "revision") if agreed.get(pk) != rev]
    return annotations, topics


def schedule_stale(chunk: int = 200) -> tuple[int, int]:
    """Enqueue everything stale (on worker start and from ``manage.py recompute_stale``)."""
    from scoring.tasks import recompute_agreement, recompute_scores

    annotations, topics = stale_work()
    for start in range(0, len(annotations), chunk):
        _enqueue(recompute_scores, "annotation", annotations[start:start + chunk])
    _enqueue(recompute_agreement, "topic", topics)
    return len(annotations), len(topics)
