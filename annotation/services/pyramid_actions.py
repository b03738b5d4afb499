"""What an annotator does to a pyramid, as the builder and the API call it.

Every action runs through ``history.pyramid_action``: the pyramid is locked, the client's
revision checked, the rules validated before anything is written (a rejected action writes
nothing and the message says why), and the change recorded for the audit history and undo.
"""
from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db.models import Max

from ..models import SCU, Contributor, ContributorPart, Pyramid, ReferenceSummary
from .editing import Spans, add_contributor, add_part
from .history import Outcome, ensure_unmatched, pyramid_action


def _reference(pyramid: Pyramid, reference: ReferenceSummary | int) -> ReferenceSummary:
    pk = reference.pk if isinstance(reference, ReferenceSummary) else reference
    found = pyramid.references.filter(pk=pk).first()
    if found is None:
        raise ValidationError({"reference": "This reference summary is not one of the pyramid's references."})
    return found


def _next_uid(pyramid: Pyramid) -> int:
    """A uid never given out in this pyramid (call with the pyramid locked)."""
    uid = max(pyramid.last_uid, pyramid.scus.aggregate(m=Max("uid"))["m"] or 0) + 1
    Pyramid.objects.filter(pk=pyramid.pk).update(last_uid=uid)
    pyramid.last_uid = uid
    return uid


def _require_label(label: str) -> str:
    label = (label or "").strip()
    if not label:
        raise ValidationError({"label": "The label may not be empty."})
    return label


def create_scu(pyramid: Pyramid, user, *, label: str, reference, spans: Spans, expected_revision=None) -> Outcome:
    """A new SCU whose first contributor is the selected span(s) of one reference."""
    label = _require_label(label)
    new = {}

    def uids(p):  # under the lock, so two concurrent creations cannot take the same uid
        new["uid"] = _next_uid(p)
        return [new["uid"]]

    def mutate(p):
        scu = SCU.objects.create(pyramid=p, uid=new["uid"], label=label)
        add_contributor(scu, _reference(p, reference), spans)
        return scu

    return pyramid_action(pyramid.pk, user, action="create_scu", uids=uids, mutate=mutate,
                          summary=lambda scu: f"Created SCU {scu.uid} “{scu.label[:80]}”", expected_revision=expected_revision)


def add_contributor_to(scu: SCU, user, *, reference, spans: Spans, comment: str = "", expected_revision=None) -> Outcome:
    def mutate(p):
        ref = _reference(p, reference)
        return add_contributor(scu, ref, spans, comment)

    return pyramid_action(scu.pyramid_id, user, action="add_contributor", uids=lambda p: [scu.uid], mutate=mutate,
                          summary=lambda c: f"Added a contributor from {c.reference.external_id} to SCU {scu.uid}", expected_revision=expected_revision)


def add_part_to(contributor: Contributor, user, *, start: int, end: int, expected_revision=None) -> Outcome:
    """Extend a contributor with one more span (discontinuous contributors)."""
    uid = contributor.scu.uid

    def mutate(p):
        overlapping = contributor.parts.filter(start__lt=end, end__gt=start).exists()
        if overlapping:
            raise ValidationError({"start": "This span overlaps a part the contributor already has."})
        return add_part(contributor, start, end)

    return pyramid_action(contributor.scu.pyramid_id, user, action="add_part", uids=lambda p: [uid], mutate=mutate,
                          summary=lambda part: f"Added a part to a contributor of SCU {uid}", expected_revision=expected_revision)


def remove_part(part: ContributorPart, user, *, expected_revision=None) -> Outcome:
    contributor = part.contributor
    uid = contributor.scu.uid

    def mutate(p):
        if contributor.parts.count() == 1:
            raise ValidationError({"part": "This is the contributor's only part: remove the contributor instead."})
        part.delete()

    return pyramid_action(contributor.scu.pyramid_id, user, action="remove_part", uids=lambda p: [uid], mutate=mutate,
                          summary=lambda _: f"Removed a part of a contributor of SCU {uid}", expected_revision=expected_revision)


def remove_contributor(contributor: Contributor, user, *, expected_revision=None) -> Outcome:
    scu = contributor.scu

    def mutate(p):
        if scu.contributors.count() == 1:
            ensure_unmatched([scu])
            scu.delete()  # an SCU without contributors has no meaning
        else:
            contributor.delete()

    return pyramid_action(scu.pyramid_id, user, action="remove_contributor", uids=lambda p: [scu.uid], mutate=mutate,
                          summary=lambda _: f"Removed the contributor from {contributor.reference.external_id} of SCU {scu.uid}", expected_revision=expected_revision)


def delete_scu(scu: SCU, user, *, expected_revision=None) -> Outcome:
    def mutate(p):
        ensure_unmatched([scu])
        scu.delete()

    return pyramid_action(scu.pyramid_id, user, action="delete_scu", uids=lambda p: [scu.uid], mutate=mutate,
                          summary=lambda _: f"Deleted SCU {scu.uid} “{scu.label[:80]}”", expected_revision=expected_revision)


def update_scu(scu: SCU, user, *, label: str | None = None, comment: str | None = None, expected_revision=None) -> Outcome:
    """Relabel and/or comment an SCU."""
    def mutate(p):
        fields = []
        if label is not None:
            scu.label = _require_label(label)
            fields.append("label")
        if comment is not None:
            scu.comment = comment
            fields.append("comment")
        scu.save(update_fields=fields)
        return scu

    return pyramid_action(scu.pyramid_id, user, action="update_scu", uids=lambda p: [scu.uid], mutate=mutate,
                          summary=lambda s: f"Relabelled SCU {s.uid} “{s.label[:80]}”" if label is not None else f"Commented SCU {s.uid}",
                          expected_revision=expected_revision)


def update_contributor(contributor: Contributor, user, *, comment: str, expected_revision=None) -> Outcome:
    uid = contributor.scu.uid

    def mutate(p):
        contributor.comment = comment
        contributor.save(update_fields=["comment"])
        return contributor

    return pyramid_action(contributor.scu.pyramid_id, user, action="update_contributor", uids=lambda p: [uid], mutate=mutate,
                          summary=lambda c: f"Commented a contributor of SCU {uid}", expected_revision=expected_revision)


def _check_one_per_reference(target: SCU, incoming: Sequence[Contributor]) -> None:
    """The merge/move rule, reported in full: which references would contribute twice."""
    present = set(target.contributors.filter(legacy_issue="").values_list("reference__external_id", flat=True))
    clashes = []
    for c in incoming:
        ref = c.reference.external_id
        if ref in present and not c.legacy_issue:
            clashes.append(ref)
        present.add(ref)
    if clashes:
        raise ValidationError({"scu": f"SCU {target.uid} would have two contributors from reference(s) {', '.join(sorted(set(clashes)))}; "
                                      "remove or move one of them first."})


def move_contributor(contributor: Contributor, target: SCU, user, *, expected_revision=None) -> Outcome:
    source = contributor.scu
    if target.pyramid_id != source.pyramid_id:
        raise ValidationError({"scu": "The target SCU belongs to another pyramid."})
    if target.pk == source.pk:
        raise ValidationError({"scu": "The contributor is already in this SCU."})

    def mutate(p):
        _check_one_per_reference(target, [contributor])
        if source.contributors.count() == 1:
            ensure_unmatched([source])
        contributor.scu = target
        contributor.save(update_fields=["scu"])
        if not source.contributors.exists():
            source.delete()
        return contributor

    return pyramid_action(source.pyramid_id, user, action="move_contributor", uids=lambda p: [source.uid, target.uid], mutate=mutate,
                          summary=lambda c: f"Moved the contributor from {c.reference.external_id} of SCU {source.uid} to SCU {target.uid}",
                          expected_revision=expected_revision)


def merge_scus(target: SCU, sources: Sequence[SCU], user, *, expected_revision=None) -> Outcome:
    """Move every contributor of ``sources`` into ``target`` and delete the sources.

    A reference that would contribute twice is reported and nothing changes: the annotator decides.
    """
    sources = [s for s in sources if s.pk != target.pk]
    if not sources:
        raise ValidationError({"sources": "Choose at least one other SCU to merge."})
    if any(s.pyramid_id != target.pyramid_id for s in sources):
        raise ValidationError({"sources": "Only SCUs of the same pyramid can be merged."})

    def mutate(p):
        incoming = list(Contributor.objects.filter(scu__in=sources).select_related("reference"))
        _check_one_per_reference(target, incoming)
        ensure_unmatched(sources)
        Contributor.objects.filter(pk__in=[c.pk for c in incoming]).update(scu=target)
        for source in sources:
            source.delete()
        return target

    return pyramid_action(target.pyramid_id, user, action="merge_scus", uids=lambda p: [target.uid, *(s.uid for s in sources)], mutate=mutate,
                          summary=lambda t: f"Merged SCU(s) {', '.join(str(s.uid) for s in sources)} into SCU {t.uid}", expected_revision=expected_revision)


def split_contributor(contributor: Contributor, user, *, label: str | None = None, expected_revision=None) -> Outcome:
    """Take a contributor out of its SCU into a new SCU of its own (label defaults to its text)."""
    source = contributor.scu
    if source.contributors.count() == 1:
        raise ValidationError({"contributor": "This is the SCU's only contributor: there is nothing to split it from."})
    new_label = _require_label(label if label is not None else contributor.label)
    new = {}

    def uids(p):
        new["uid"] = _next_uid(p)
        return [source.uid, new["uid"]]

    def mutate(p):
        scu = SCU.objects.create(pyramid=p, uid=new["uid"], label=new_label)
        contributor.scu = scu
        contributor.save(update_fields=["scu"])
        return scu

    return pyramid_action(source.pyramid_id, user, action="split_contributor", uids=uids, mutate=mutate,
                          summary=lambda scu: f"Split the contributor from {contributor.reference.external_id} off SCU {source.uid} into SCU {scu.uid}",
                          expected_revision=expected_revision)
