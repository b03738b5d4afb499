"""Turn score-affecting saves into one recomputation per annotation after the commit.

Every save or delete of an SCU, contributor, contributor part or peer match (and a pyramid's set of
references, or an edit of a reference) bumps the revision
counters of what it can change (the pyramid or the annotation, and the topic) in the same
transaction; inside an editing action (``document_action``) the action bumps them once instead. After the commit,
everything the transaction touched is handed to the scheduler
once, however many rows changed (``annotation.peers.recompute.schedule``). Bulk imports
bypass signals and call ``touch_pyramid``/``touch_annotation`` themselves. A topic saved again (renamed)
bumps its topic (``touch_topic``); a deleted topic bumps nothing (``topics_deleted``: what it could make stale
goes in the same cascade; a DUC topic's delete takes 0.1 s instead of 2.4 s and 3,500 queries).
"""

import threading
from collections.abc import Iterable
from contextlib import contextmanager

from django.db import connection, transaction
from django.db.models import F
from django.db.models.signals import m2m_changed, post_delete, post_save

from annotation.corpus.models import ReferenceSummary, Topic
from annotation.history import changes
from annotation.jobs import framework_internals
from annotation.peers import queries
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid


class _Pending:
    """What one transaction changed; flushed to the scheduler by its on_commit callback."""

    def __init__(self):
        self.pyramids: set[int] = set()
        self.annotations: set[int] = set()
        self.topics: set[int] = set()

    def flush(self):
        from annotation.peers.recompute import schedule

        schedule(pyramid_ids=self.pyramids, annotation_ids=self.annotations, topic_ids=self.topics)


def _pending_for_transaction() -> _Pending:
    """The pending set of the current transaction.

    Django has no rollback hook, so a set is reused only while its callback is still registered
    (a rolled-back transaction or savepoint drops the callback, and with it the set).
    """
    return framework_internals.transaction_batch("_pyramid_score_pending", _Pending)


_batch = threading.local()


@contextmanager
def batched_scheduling():
    """Collect every change made inside and schedule them once at the end (imports of many files).

    Extra ids from a rolled-back file only cost a recomputation that finds nothing new.
    """
    if getattr(_batch, "pending", None) is not None:
        yield
        return
    _batch.pending = _Pending()
    try:
        yield
    finally:
        pending, _batch.pending = _batch.pending, None
        pending.flush()


def _record(
    *, pyramid_ids: Iterable[int] = (), annotation_ids: Iterable[int] = (), topic_ids: Iterable[int] = ()
) -> None:
    batch = getattr(_batch, "pending", None)
    if batch is not None:
        pending = batch
    elif transaction.get_connection().in_atomic_block:
        pending = _pending_for_transaction()
    else:
        pending = _Pending()
    pending.pyramids.update(pyramid_ids)
    pending.annotations.update(annotation_ids)
    pending.topics.update(topic_ids)
    if batch is None and not transaction.get_connection().in_atomic_block:
        pending.flush()


def _bump(document_model, document_id: int, topic_id: int | None) -> int:
    """Move the document's revision and its topic's by one; returns the topic's id.

    On PostgreSQL one statement (``queries.bump_revisions``). Elsewhere (SQLite) the same with the ORM."""
    if connection.vendor == "postgresql":
        return queries.bump_revisions(document_model, document_id, topic_id)
    if topic_id is None:
        topic_id = Pyramid.objects.filter(annotations=document_id).values_list("topic_id", flat=True).get()
    document_model.objects.filter(pk=document_id).update(revision=F("revision") + 1)
    Topic.objects.filter(pk=topic_id).update(revision=F("revision") + 1)
    return topic_id


def touch_pyramid(pyramid_id: int, topic_id: int) -> None:
    """A pyramid changed: every score against it and its topic's agreement are now stale."""
    _bump(Pyramid, pyramid_id, topic_id)
    _record(pyramid_ids=[pyramid_id], topic_ids=[topic_id])


def touch_annotation(annotation_id: int, topic_id: int | None = None) -> None:
    """An annotation changed: its scores and its topic's agreement are now stale (``topic_id``
    None: the annotation's pyramid's, looked up in the same statement)."""
    topic_id = _bump(PeerAnnotation, annotation_id, topic_id)
    _record(annotation_ids=[annotation_id], topic_ids=[topic_id])


def touch_topic(topic_id: int) -> None:
    """Something of the topic itself changed that its figures carry (its id names the topic in
    the stored agreement rows): its agreement is now stale. Its pyramids and annotations are not
    (their scores carry no topic id)."""
    Topic.objects.filter(pk=topic_id).update(revision=F("revision") + 1)
    _record(topic_ids=[topic_id])


def touch_topics_wholly(topic_ids: Iterable[int]) -> None:
    """Rows of these topics were changed outside the app (SQL by hand, a repair): nothing bumped a
    revision, so every figure stored under one, and every memory keyed by one (each process's
    prepared pyramids and SCU documents, the shared cache's automatic scores), still passes for
    current. Bumping every pyramid, annotation and topic revision makes them all stale in every
    process at once, and their recomputation is scheduled after the commit."""
    topic_ids = list(topic_ids)
    pyramids = Pyramid.objects.filter(topic_id__in=topic_ids)
    annotations = PeerAnnotation.objects.filter(pyramid__topic_id__in=topic_ids)
    pyramid_ids, annotation_ids = (
        list(pyramids.values_list("id", flat=True)),
        list(annotations.values_list("id", flat=True)),
    )
    Pyramid.objects.filter(pk__in=pyramid_ids).update(revision=F("revision") + 1)
    PeerAnnotation.objects.filter(pk__in=annotation_ids).update(revision=F("revision") + 1)
    Topic.objects.filter(pk__in=topic_ids).update(revision=F("revision") + 1)
    _record(pyramid_ids=pyramid_ids, annotation_ids=annotation_ids, topic_ids=topic_ids)


def annotations_created(annotation_ids: Iterable[int], topic_ids: Iterable[int]) -> None:
    """New annotations (created at revision 1) and their matches were stored: their topics'
    agreement is stale. One UPDATE for all the topics, however many annotations (an import)."""
    topic_ids = set(topic_ids)
    if topic_ids:
        Topic.objects.filter(pk__in=topic_ids).update(revision=F("revision") + 1)
    _record(annotation_ids=annotation_ids, topic_ids=topic_ids)


def _on_annotation_saved(sender, instance, **kwargs):
    """An annotation created or marked done without a change of its matches must have its scores
    stored all the same (one opened, or finished with nothing found, would have none, and the
    pages would show it as being computed for ever); scheduling it costs nothing when they are
    current. Nothing is bumped: no score changed."""
    _record(annotation_ids=[instance.pk])


class _Action:
    """A document action in progress on this thread (``document_action``): what it writes is noted here."""

    def __init__(self, kind: str):
        self.kind = kind
        self.written = False


_action = threading.local()


@contextmanager
def document_action(kind: str):
    """Around one action on one locked document (``kind``: "pyramid" or "annotation";
    ``history.changes``): the rows of that document it saves or deletes bump nothing one by one
    (each would cost a lookup of its pyramid and two updates); the action bumps the revisions once
    when it ends, with ``touch_pyramid``/``touch_annotation``, if the yielded note says something
    was written. Rows of the other kind of document still bump their own, as anywhere."""
    outer = getattr(_action, "current", None)
    _action.current = note = _Action(kind)
    try:
        yield note
    finally:
        _action.current = outer


@contextmanager
def revisions_bumped_once(kind: str, document):
    """The history's hook around an action on a locked document (``history.changes``): the rows
    it writes bump the document's (and topic's) revision once, when it ends; ``document.revision``
    is then the new one (the row is locked, so nobody else moved it)."""
    with document_action(kind) as note:
        yield
    if note.written:
        if kind == "pyramid":
            touch_pyramid(document.pk, document.topic_id)
        else:
            touch_annotation(document.pk)
        document.revision += 1


changes.bump_revisions_with(revisions_bumped_once)


_deleting = threading.local()


@contextmanager
def topics_deleted():
    """Around the deletion of whole topics (``corpus.topic_editing.delete_topic``): the rows the
    cascade removes (SCUs, contributors, parts, matches, annotations) bump nothing. Everything they
    could make stale lies in the same topics and goes in the same cascade (stored scores and
    agreement included), so there is nothing left to mark; bumping would cost a lookup and two
    updates per row (thousands for a DUC topic) and schedule recomputations of deleted things."""
    outer = getattr(_deleting, "active", False)
    _deleting.active = True
    try:
        yield
    finally:
        _deleting.active = outer


def _in_deletion() -> bool:
    return getattr(_deleting, "active", False)


def _in_action(kind: str) -> bool:
    note = getattr(_action, "current", None)
    if note is None or note.kind != kind:
        return False
    note.written = True
    return True


def _touch_pyramid_of(**lookup) -> None:
    if _in_deletion() or _in_action("pyramid"):
        return
    for pyramid_id, topic_id in Pyramid.objects.filter(**lookup).values_list("id", "topic_id")[:1]:
        touch_pyramid(pyramid_id, topic_id)


def _on_scu(sender, instance, **kwargs):
    _touch_pyramid_of(pk=instance.pyramid_id)


def _on_contributor(sender, instance, **kwargs):
    _touch_pyramid_of(scus=instance.scu_id)


def _on_contributor_part(sender, instance, **kwargs):
    _touch_pyramid_of(scus__contributors=instance.contributor_id)


def _on_peer_match(sender, instance, **kwargs):
    if _in_deletion() or _in_action("annotation"):
        return
    for annotation_id, topic_id in PeerAnnotation.objects.filter(pk=instance.annotation_id).values_list(
        "id", "pyramid__topic_id"
    ):
        touch_annotation(annotation_id, topic_id)


def _on_annotation_deleted(sender, instance, **kwargs):
    # Its scores go with it; the topic's agreement no longer includes it.
    if _in_deletion():
        return
    for topic_id in Pyramid.objects.filter(pk=instance.pyramid_id).values_list("topic_id", flat=True):
        touch_topic(topic_id)


def _on_pyramid_references(sender, instance, action, reverse, pk_set, **kwargs):
    """A reference added to or removed from a pyramid changes n, so Xa and every modified score
    against it (and the jackknife): the scores stored against it are stale."""
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        touch_pyramid(instance.pk, instance.topic_id)
        return
    lookup = {"pk__in": pk_set} if pk_set is not None else {"references": instance}
    for pyramid_id, topic_id in Pyramid.objects.filter(**lookup).values_list("id", "topic_id"):
        touch_pyramid(pyramid_id, topic_id)


def _on_reference_saved(sender, instance, created, **kwargs):
    """A reference's id names its jackknife pyramid in the stored scores: an edited reference
    leaves the scores of every pyramid it is part of stale (a new one is part of none yet)."""
    if created:
        return
    for pyramid_id, topic_id in Pyramid.objects.filter(references=instance).values_list("id", "topic_id"):
        touch_pyramid(pyramid_id, topic_id)


def _on_topic_saved(sender, instance, created, **kwargs):
    """A topic's id names it in its stored agreement rows: a topic saved again (renamed on a
    set-up page, through the API or the admin) leaves them stale (a new one has none yet)."""
    if not created:
        touch_topic(instance.pk)


for model, handler in [
    (SCU, _on_scu),
    (Contributor, _on_contributor),
    (ContributorPart, _on_contributor_part),
    (PeerMatch, _on_peer_match),
]:
    post_save.connect(handler, sender=model, dispatch_uid=f"score-events-save-{model.__name__}")
    post_delete.connect(handler, sender=model, dispatch_uid=f"score-events-delete-{model.__name__}")
post_delete.connect(_on_annotation_deleted, sender=PeerAnnotation, dispatch_uid="score-events-delete-annotation")
post_save.connect(_on_annotation_saved, sender=PeerAnnotation, dispatch_uid="score-events-save-annotation")
m2m_changed.connect(
    _on_pyramid_references, sender=Pyramid.references.through, dispatch_uid="score-events-pyramid-references"
)
post_save.connect(_on_reference_saved, sender=ReferenceSummary, dispatch_uid="score-events-reference-saved")
post_save.connect(_on_topic_saved, sender=Topic, dispatch_uid="score-events-topic-saved")
