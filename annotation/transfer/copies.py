"""Copies of peer annotations that imports made before they applied one identity rule.

Re-importing files without the annotator table they were first imported with (or with one they
lacked) stored each annotation a second time, by an unknown annotator: every peer counted twice in
the scores, the tables and the archive. Such a copy is, by the import's own rule
(``formats.same_again``), the same file again as an annotation of a named annotator: the same
peer and pyramid, the same matches and non-matching units, the same file name. ``find_copies``
lists them and ``remove_copies`` deletes them, keeping the named annotator's annotation.

A copy is removed only when nothing else rests on it: an adjudicated version (annotator null too)
is never one, nor an annotation whose status differs from the one kept (it would count otherwise).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction

from annotation import formats
from annotation.adjudication.models import Adjudication
from annotation.corpus.models import Dataset
from annotation.peers.models import PeerAnnotation
from annotation.transfer.ducview_import import annotation_content


@dataclass(frozen=True)
class Copy:
    """An annotation without annotator (``copy``) that is an annotator's (``kept``) again."""

    copy: PeerAnnotation
    kept: PeerAnnotation

    def describe(self) -> str:
        peer, topic = self.copy.peer.external_id, self.copy.pyramid.topic.external_id
        return (
            f"{self.copy.pyramid.topic.dataset.name}: topic {topic}, peer {peer}: annotation {self.copy.pk} "
            f"(unknown annotator, from {self.copy.source or 'no file'}) is annotation {self.kept.pk} of "
            f"annotator {self.kept.annotator.username} again"
        )


def find_copies(datasets=None) -> list[Copy]:
    """The copies in ``datasets`` (a queryset; None: all), in dataset, topic, peer order."""
    annotations = PeerAnnotation.objects.select_related("annotator", "peer", "pyramid__topic__dataset")
    if datasets is not None:
        annotations = annotations.filter(pyramid__topic__dataset__in=datasets)
    adjudicated = set(Adjudication.objects.values_list("annotation_id", flat=True))
    adjudicated |= set(Adjudication.sources.through.objects.values_list("peerannotation_id", flat=True))
    groups: dict[tuple[int, int], list[PeerAnnotation]] = defaultdict(list)
    for annotation in annotations.order_by("pk"):
        groups[(annotation.pyramid_id, annotation.peer_id)].append(annotation)
    found = []
    for group in groups.values():
        unknown = [a for a in group if a.annotator_id is None and a.pk not in adjudicated]
        named = [a for a in group if a.annotator_id is not None]
        if not unknown or not named:
            continue
        contents: dict[int, tuple] = {}

        def content(annotation: PeerAnnotation, contents: dict[int, tuple] = contents) -> tuple:
            if annotation.pk not in contents:
                contents[annotation.pk] = annotation_content(annotation.pk)
            return contents[annotation.pk]

        for candidate in unknown:
            origin = formats.origin(None, candidate.source)
            kept = next(
                (
                    a
                    for a in named
                    if a.status == candidate.status
                    and formats.same_again(
                        origin, content(candidate), formats.origin(a.annotator.username, a.source), content(a)
                    )
                ),
                None,
            )
            if kept is not None:
                found.append(Copy(candidate, kept))
    return sorted(
        found,
        key=lambda c: (
            c.copy.pyramid.topic.dataset.name,
            c.copy.pyramid.topic.external_id,
            formats.peer_key(c.copy.peer.external_id),
            c.copy.source,
        ),
    )


def remove_copies(copies: list[Copy]) -> int:
    """Delete the copies (their topics' scores and agreement are recomputed, as for any deleted
    annotation); the number deleted. Each is checked again inside the transaction."""
    with transaction.atomic():
        ids = {c.copy.pk for c in copies}
        datasets = Dataset.objects.filter(pk__in={c.copy.pyramid.topic.dataset_id for c in copies})
        still = {c.copy.pk for c in find_copies(datasets)}
        removed = 0
        for annotation in PeerAnnotation.objects.filter(pk__in=ids & still):
            annotation.delete()
            removed += 1
    return removed
