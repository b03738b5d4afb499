"""What an annotator does to a pyramid, as the builder and the API call it.

Every action runs through ``history.pyramid_action``: the pyramid is locked, the client's
revision checked, everything the action depends on re-read under the lock (``history.reread``: a
concurrent change that committed while it waited is seen), the rules validated before anything is written (a rejected
action writes
nothing and the message says why), and the change recorded for the audit history and undo.
"""

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db.models import Max

from annotation.corpus.models import ReferenceSummary
from annotation.history.changes import Gone, Outcome, pyramid_action, reread
from annotation.pyramids.assistance import require_assistance
from annotation.pyramids.document_states import ensure_unmatched
from annotation.pyramids.editing import Spans, add_contributor, add_part
from annotation.pyramids.models import (
    COMMENT_LENGTH,
    LABEL_LENGTH,
    SCU,
    Contributor,
    ContributorPart,
    LengthBound,
    Pyramid,
)
from annotation.pyramids.spans import MAX_PARTS


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


def _pyramid_of(contributor: Contributor) -> int:
    """The pyramid to lock for an action on ``contributor`` (Gone if its SCU was deleted meanwhile)."""
    pyramid_id = SCU.objects.filter(pk=contributor.scu_id).values_list("pyramid_id", flat=True).first()
    if pyramid_id is None:
        raise Gone("This contributor no longer exists: it was deleted meanwhile.")
    return pyramid_id


def _require_label(label: str) -> str:
    label = (label or "").strip()
    if not label:
        raise ValidationError({"label": "The label may not be empty."})
    return _bounded("label", label, LABEL_LENGTH)


def _bounded(field: str, text: str, bound: LengthBound) -> str:
    problem = bound.problem(text)
    if problem is not None:
        raise ValidationError({field: problem})
    return text


def _separate_parts(spans: Spans) -> Spans:
    """A contributor's parts may not overlap one another (as ``add_part_to`` refuses one that would)."""
    ordered = sorted(enumerate(spans), key=lambda item: item[1][0])
    for (i, (_, end_a)), (j, (start_b, _)) in zip(ordered, ordered[1:], strict=False):
        if start_b < end_a:
            first, second = sorted((i, j))
            raise ValidationError(
                {
                    "parts": f"Part {second + 1} [{spans[second][0]}, {spans[second][1]}) overlaps part {first + 1} "
                    f"[{spans[first][0]}, {spans[first][1]})."
                }
            )
    return spans


def create_scu(pyramid: Pyramid, user, *, label: str, reference, spans: Spans, expected_revision=None) -> Outcome:
    """A new SCU whose first contributor is the selected span(s) of one reference."""
    label = _require_label(label)
    new = {}

    def uids(p):  # under the lock, so two concurrent creations cannot take the same uid
        new["uid"] = _next_uid(p)
        return [new["uid"]]

    def mutate(p):
        scu = SCU.objects.create(pyramid=p, uid=new["uid"], label=label)
        add_contributor(scu, _reference(p, reference), _separate_parts(spans))
        return scu

    return pyramid_action(
        pyramid.pk,
        user,
        action="create_scu",
        uids=uids,
        mutate=mutate,
        summary=lambda scu: f"Created SCU {scu.uid} “{scu.label[:80]}”",
        expected_revision=expected_revision,
    )


def add_contributor_to(
    scu: SCU, user, *, reference, spans: Spans, comment: str = "", expected_revision=None
) -> Outcome:
    _bounded("comment", comment, COMMENT_LENGTH)
    fresh = {}

    def uids(p):
        fresh["scu"] = reread(scu)
        fresh["scu"].pyramid = p  # the locked row: the contributor's checks read its topic without a query
        return [fresh["scu"].uid]

    def mutate(p):
        ref = _reference(p, reference)
        return add_contributor(fresh["scu"], ref, _separate_parts(spans), comment)

    return pyramid_action(
        scu.pyramid_id,
        user,
        action="add_contributor",
        uids=uids,
        mutate=mutate,
        summary=lambda c: f"Added a contributor from {c.reference.external_id} to SCU {fresh['scu'].uid}",
        expected_revision=expected_revision,
    )


Proposed = Sequence[tuple[ReferenceSummary | int, Spans]]  # accepted contributors: (reference, spans)


def _accepted(proposed: Proposed) -> Proposed:
    if not proposed:
        raise ValidationError({"contributors": "Accept at least one proposed contributor."})
    references = [r.pk if isinstance(r, ReferenceSummary) else r for r, _ in proposed]
    if len(set(references)) != len(references):
        raise ValidationError({"contributors": "Two accepted contributors come from one reference."})
    return proposed


def accept_contributors(scu: SCU, user, *, contributors: Proposed, expected_revision=None) -> Outcome:
    """Add the accepted proposals (``contributors``) to ``scu`` in one action, so one undo takes
    them all back; each is recorded as proposed (provenance). Refused whole if one breaks a rule
    (a reference the SCU already has a contributor from) or the dataset builds unassisted."""
    _accepted(contributors)
    fresh = {}

    def uids(p):
        require_assistance(p)
        fresh["scu"] = reread(scu)
        fresh["scu"].pyramid = p
        return [fresh["scu"].uid]

    def mutate(p):
        return [
            add_contributor(fresh["scu"], _reference(p, reference), _separate_parts(spans), proposed=True)
            for reference, spans in contributors
        ]

    def summary(added):
        names = ", ".join(sorted(c.reference.external_id for c in added))
        return f"Accepted {len(added)} proposed contributor(s) ({names}) into SCU {fresh['scu'].uid}"

    return pyramid_action(
        scu.pyramid_id,
        user,
        action="accept_contributors",
        uids=uids,
        mutate=mutate,
        summary=summary,
        expected_revision=expected_revision,
    )


def accept_scu(pyramid: Pyramid, user, *, label: str, contributors: Proposed, expected_revision=None) -> Outcome:
    """A proposed SCU accepted: a new SCU with its contributors, all recorded as proposed."""
    label = _require_label(label)
    _accepted(contributors)
    new = {}

    def uids(p):
        require_assistance(p)
        new["uid"] = _next_uid(p)
        return [new["uid"]]

    def mutate(p):
        scu = SCU.objects.create(pyramid=p, uid=new["uid"], label=label, proposed=True)
        for reference, spans in contributors:
            add_contributor(scu, _reference(p, reference), _separate_parts(spans), proposed=True)
        return scu

    return pyramid_action(
        pyramid.pk,
        user,
        action="accept_scu",
        uids=uids,
        mutate=mutate,
        summary=lambda scu: f"Accepted the proposed SCU {scu.uid} “{scu.label[:80]}”",
        expected_revision=expected_revision,
    )


def add_part_to(contributor: Contributor, user, *, start: int, end: int, expected_revision=None) -> Outcome:
    """Extend a contributor with one more span (discontinuous contributors)."""
    fresh = {}

    def uids(p):
        fresh["contributor"] = reread(contributor, "scu")
        return [fresh["contributor"].scu.uid]

    def mutate(p):
        c = fresh["contributor"]
        if c.parts.filter(start__lt=end, end__gt=start).exists():
            raise ValidationError({"start": "This span overlaps a part the contributor already has."})
        if c.parts.count() >= MAX_PARTS:
            raise ValidationError({"start": f"A contributor has at most {MAX_PARTS} parts; this one has them all."})
        return add_part(c, start, end)

    return pyramid_action(
        _pyramid_of(contributor),
        user,
        action="add_part",
        uids=uids,
        mutate=mutate,
        summary=lambda part: f"Added a part to a contributor of SCU {fresh['contributor'].scu.uid}",
        expected_revision=expected_revision,
    )


def remove_part(part: ContributorPart, user, *, expected_revision=None) -> Outcome:
    fresh = {}

    def uids(p):
        fresh["part"] = reread(part, "contributor__scu")
        return [fresh["part"].contributor.scu.uid]

    def mutate(p):
        if fresh["part"].contributor.parts.count() == 1:
            raise ValidationError({"part": "This is the contributor's only part: remove the contributor instead."})
        fresh["part"].delete()

    return pyramid_action(
        _pyramid_of(part.contributor),
        user,
        action="remove_part",
        uids=uids,
        mutate=mutate,
        summary=lambda _: f"Removed a part of a contributor of SCU {fresh['part'].contributor.scu.uid}",
        expected_revision=expected_revision,
    )


def remove_contributor(contributor: Contributor, user, *, expected_revision=None) -> Outcome:
    fresh = {}

    def uids(p):
        fresh["contributor"] = reread(contributor, "scu", "reference")
        return [fresh["contributor"].scu.uid]

    def mutate(p):
        c = fresh["contributor"]
        if c.scu.contributors.count() == 1:  # counted under the lock: a concurrent removal is seen
            ensure_unmatched([c.scu])
            c.scu.delete()  # an SCU without contributors has no meaning
        else:
            c.delete()

    def summary(_):
        c = fresh["contributor"]
        return f"Removed the contributor from {c.reference.external_id} of SCU {c.scu.uid}"

    return pyramid_action(
        _pyramid_of(contributor),
        user,
        action="remove_contributor",
        uids=uids,
        mutate=mutate,
        summary=summary,
        expected_revision=expected_revision,
    )


def delete_scu(scu: SCU, user, *, expected_revision=None) -> Outcome:
    fresh = {}

    def uids(p):
        fresh["scu"] = reread(scu)
        return [fresh["scu"].uid]

    def mutate(p):
        ensure_unmatched([fresh["scu"]])
        fresh["scu"].delete()

    return pyramid_action(
        scu.pyramid_id,
        user,
        action="delete_scu",
        uids=uids,
        mutate=mutate,
        summary=lambda _: f"Deleted SCU {fresh['scu'].uid} “{fresh['scu'].label[:80]}”",
        expected_revision=expected_revision,
    )


def update_scu(
    scu: SCU, user, *, label: str | None = None, comment: str | None = None, expected_revision=None
) -> Outcome:
    """Relabel and/or comment an SCU."""
    if comment is not None:
        _bounded("comment", comment, COMMENT_LENGTH)
    fresh = {}

    def uids(p):
        fresh["scu"] = reread(scu)
        return [fresh["scu"].uid]

    def mutate(p):
        s, fields = fresh["scu"], []
        if label is not None and _require_label(label) != s.label:
            s.label = _require_label(label)
            fields.append("label")
        if comment is not None and comment != s.comment:
            s.comment = comment
            fields.append("comment")
        if fields:  # saving the same values would bump the revision and give others spurious 409s
            s.save(update_fields=fields)
        return s

    return pyramid_action(
        scu.pyramid_id,
        user,
        action="update_scu",
        uids=uids,
        mutate=mutate,
        summary=lambda s: f"Relabelled SCU {s.uid} “{s.label[:80]}”" if label is not None else f"Commented SCU {s.uid}",
        expected_revision=expected_revision,
    )


def update_contributor(contributor: Contributor, user, *, comment: str, expected_revision=None) -> Outcome:
    _bounded("comment", comment, COMMENT_LENGTH)
    fresh = {}

    def uids(p):
        fresh["contributor"] = reread(contributor)
        return [fresh["contributor"].scu.uid]

    def mutate(p):
        c = fresh["contributor"]
        if comment != c.comment:  # the same comment again changes nothing (no new revision)
            c.comment = comment
            c.save(update_fields=["comment"])
        return c

    return pyramid_action(
        _pyramid_of(contributor),
        user,
        action="update_contributor",
        uids=uids,
        mutate=mutate,
        summary=lambda c: f"Commented a contributor of SCU {c.scu.uid}",
        expected_revision=expected_revision,
    )


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
        raise ValidationError(
            {
                "scu": f"SCU {target.uid} would have two contributors from reference(s) "
                f"{', '.join(sorted(set(clashes)))}; "
                "remove or move one of them first."
            }
        )


def _check_move(contributor: Contributor, target: SCU) -> None:
    if target.pyramid_id != contributor.scu.pyramid_id:
        raise ValidationError({"scu": "The target SCU belongs to another pyramid."})
    if target.pk == contributor.scu_id:
        raise ValidationError({"scu": "The contributor is already in this SCU."})


def move_contributor(contributor: Contributor, target: SCU, user, *, expected_revision=None) -> Outcome:
    _check_move(contributor, target)
    fresh = {}

    def uids(p):
        c, t = reread(contributor), reread(target)
        _check_move(c, t)
        fresh.update(contributor=c, target=t, source=c.scu)
        return [c.scu.uid, t.uid]

    def mutate(p):
        c, t, source = fresh["contributor"], fresh["target"], fresh["source"]
        _check_one_per_reference(t, [c])
        if source.contributors.count() == 1:
            ensure_unmatched([source])
        c.scu = t
        c.save(update_fields=["scu"])
        if not source.contributors.exists():
            source.delete()
        return c

    return pyramid_action(
        _pyramid_of(contributor),
        user,
        action="move_contributor",
        uids=uids,
        mutate=mutate,
        summary=lambda c: (
            f"Moved the contributor from {c.reference.external_id} of SCU {fresh['source'].uid} to SCU "
            f"{fresh['target'].uid}"
        ),
        expected_revision=expected_revision,
    )


def _check_merge(target: SCU, sources: Sequence[SCU]) -> list[SCU]:
    sources = [s for s in sources if s.pk != target.pk]
    if not sources:
        raise ValidationError({"sources": "Choose at least one other SCU to merge."})
    if any(s.pyramid_id != target.pyramid_id for s in sources):
        raise ValidationError({"sources": "Only SCUs of the same pyramid can be merged."})
    return sources


def merge_scus(target: SCU, sources: Sequence[SCU], user, *, expected_revision=None) -> Outcome:
    """Move every contributor of ``sources`` into ``target`` and delete the sources.

    A reference that would contribute twice is reported and nothing changes: the annotator decides.
    """
    _check_merge(target, sources)
    fresh = {}

    def uids(p):
        t = reread(target)
        fresh.update(target=t, sources=_check_merge(t, [reread(s) for s in sources]))
        return [t.uid, *(s.uid for s in fresh["sources"])]

    def mutate(p):
        t, merged = fresh["target"], fresh["sources"]
        incoming = list(Contributor.objects.filter(scu__in=merged).select_related("reference"))
        _check_one_per_reference(t, incoming)
        ensure_unmatched(merged)
        Contributor.objects.filter(pk__in=[c.pk for c in incoming]).update(scu=t)
        for source in merged:
            source.delete()
        return t

    return pyramid_action(
        target.pyramid_id,
        user,
        action="merge_scus",
        uids=uids,
        mutate=mutate,
        summary=lambda t: f"Merged SCU(s) {', '.join(str(s.uid) for s in fresh['sources'])} into SCU {t.uid}",
        expected_revision=expected_revision,
    )


def _check_split(contributor: Contributor) -> None:
    if contributor.scu.contributors.count() == 1:
        raise ValidationError({"contributor": "This is the SCU's only contributor: there is nothing to split it from."})


def split_contributor(contributor: Contributor, user, *, label: str | None = None, expected_revision=None) -> Outcome:
    """Take a contributor out of its SCU into a new SCU of its own (label defaults to its text)."""
    _check_split(contributor)
    new_label = _require_label(label if label is not None else contributor.label)
    fresh = {}

    def uids(p):
        c = reread(contributor)
        _check_split(c)
        fresh.update(contributor=c, source=c.scu, uid=_next_uid(p))
        return [c.scu.uid, fresh["uid"]]

    def mutate(p):
        scu = SCU.objects.create(pyramid=p, uid=fresh["uid"], label=new_label)
        c = fresh["contributor"]
        c.scu = scu
        c.save(update_fields=["scu"])
        return scu

    return pyramid_action(
        _pyramid_of(contributor),
        user,
        action="split_contributor",
        uids=uids,
        mutate=mutate,
        summary=lambda scu: (
            f"Split the contributor from {fresh['contributor'].reference.external_id} off SCU "
            f"{fresh['source'].uid} into SCU {scu.uid}"
        ),
        expected_revision=expected_revision,
    )
