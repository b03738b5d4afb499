"""Optimistic concurrency, audit history and undo/redo for pyramids and peer annotations.

A pyramid (or a peer annotation) is edited as one document: every action locks its row, checks
the revision the client last saw (``expected_revision``: a stale one raises ``Conflict`` with
the changes made since), mutates, and records a ``Change`` with the state of what it touched
before and after. Undo and redo apply those states back, refusing when the touched objects have
changed since (someone else's later work is never silently lost).
"""
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.history.models import Change
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import Contributor, ContributorPart, Pyramid, SCU
from annotation.peers.score_events import document_action, touch_annotation, touch_pyramid


class Conflict(Exception):
    """The client's revision is stale: someone changed the document since it last read it."""

    def __init__(self, current_revision: int, changes: list[Change]):
        self.current_revision = current_revision
        self.changes = changes
        super().__init__(
            f"changed since you last loaded it (now at revision {current_revision}): "
            + "; ".join(c.summary for c in changes[:5])
        )


class Gone(Exception):
    """What an action works on was deleted meanwhile (by a concurrent request)."""


def reread(obj, *related: str):
    """``obj`` as it is now, with the rows named in ``related`` (``select_related``: one query).
    Actions call this under the document's lock for everything they depend on, so a concurrent
    change committed while they waited for the lock is seen (never a count or an object read
    before it). Raises ``Gone`` if it was deleted meanwhile."""
    fresh = type(obj).objects.select_related(*related).filter(pk=obj.pk).first()
    if fresh is None:
        raise Gone(f"This {type(obj)._meta.verbose_name} no longer exists: it was deleted meanwhile.")
    return fresh


@dataclass
class Outcome:
    value: Any
    revision: int
    change: Change | None


# --- Snapshots -----------------------------------------------------------------------------

def scu_states(pyramid: Pyramid, uids: Iterable[int]) -> dict[str, dict | None]:
    """uid -> {label, comment, contributors: [{reference, comment, legacy_issue, parts}]} or None.

    Keys are strings (JSON objects have string keys). Contributors are identified by their
    reference and listed in a stable order, so equal states compare equal. One statement (the SCUs
    joined with their contributors and parts, a row per part): every editing action reads the
    states twice, before and after, and three statements each were 6 of an API write's 34.
    """
    uids = set(uids)
    states: dict[str, dict | None] = {str(uid): None for uid in uids}
    contributors: dict[int, dict] = {}
    rows = (SCU.objects.filter(pyramid=pyramid, uid__in=uids)
            .order_by("uid", "contributors__reference__external_id", "contributors__id",
                      "contributors__parts__reference__external_id", "contributors__parts__start", "contributors__parts__end")
            .values_list("uid", "label", "comment", "contributors__id", "contributors__reference__external_id", "contributors__comment",
                         "contributors__legacy_issue", "contributors__parts__reference__external_id", "contributors__parts__start",
                         "contributors__parts__end"))
    for uid, label, comment, contributor_id, reference, contributor_comment, legacy_issue, part_reference, start, end in rows:
        state = states[str(uid)]
        if state is None:
            state = states[str(uid)] = {"label": label, "comment": comment, "contributors": []}
        if contributor_id is None:
            continue
        contributor = contributors.get(contributor_id)
        if contributor is None:
            contributor = contributors[contributor_id] = {"reference": reference, "comment": contributor_comment, "legacy_issue": legacy_issue, "parts": []}
            state["contributors"].append(contributor)
        if start is not None:
            contributor["parts"].append([part_reference, start, end])
    return states


def apply_scu_states(pyramid: Pyramid, states: dict[str, dict | None]) -> None:
    """Make the SCUs named in ``states`` exactly as described (None: the SCU does not exist)."""
    references = {r.external_id: r for r in pyramid.references.all()}
    for key, state in states.items():
        uid = int(key)
        scu = SCU.objects.filter(pyramid=pyramid, uid=uid).first()
        if state is None:
            if scu is not None:
                ensure_unmatched([scu])
                scu.delete()
            continue
        if scu is None:
            scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=state["label"], comment=state["comment"])
        elif (scu.label, scu.comment) != (state["label"], state["comment"]):
            scu.label, scu.comment = state["label"], state["comment"]
            scu.save(update_fields=["label", "comment"])
        scu.contributors.all().delete()
        for c in state["contributors"]:
            contributor = Contributor.objects.create(scu=scu, reference=references[c["reference"]], comment=c["comment"], legacy_issue=c["legacy_issue"])
            for ref, start, end in c["parts"]:
                ContributorPart.objects.create(contributor=contributor, reference=references[ref], start=start, end=end)


def ensure_unmatched(scus: Iterable[SCU]) -> None:
    """Refuse to remove SCUs that peer annotations are matched against (their matches would go too)."""
    for scu in scus:
        count = PeerMatch.objects.filter(scu=scu).values("annotation").distinct().count()
        if count:
            raise ValidationError({"scu": f"SCU {scu.uid} is matched in {count} peer annotation(s); remove those matches first."})


def annotation_state(annotation: PeerAnnotation) -> dict:
    """{matches: [{scu: uid or None, parts: [[start, end], ...]}]} in a stable order (one
    statement: the matches joined with their parts; an action reads it before and after)."""
    matches: dict[int, dict] = {}
    rows = (PeerMatch.objects.filter(annotation=annotation).order_by("id", "parts__start", "parts__end")
            .values_list("id", "scu__uid", "parts__start", "parts__end"))
    for pk, uid, start, end in rows:
        match = matches.setdefault(pk, {"scu": uid, "parts": []})
        if start is not None:
            match["parts"].append([start, end])
    ordered = sorted(matches.values(), key=lambda m: (m["parts"], m["scu"] is None, m["scu"] or 0))
    return {"matches": ordered}


def apply_annotation_state(annotation: PeerAnnotation, state: dict) -> None:
    uids = dict(SCU.objects.filter(pyramid_id=annotation.pyramid_id).values_list("uid", "id"))
    annotation.matches.all().delete()
    for m in state["matches"]:
        match = PeerMatch.objects.create(annotation=annotation, scu_id=uids[m["scu"]] if m["scu"] is not None else None)
        PeerMatchPart.objects.bulk_create(PeerMatchPart(match=match, start=s, end=e) for s, e in m["parts"])


# --- Actions -------------------------------------------------------------------------------

def _lock(model, pk: int, expected_revision: int | None, *, related: tuple[str, ...] = ()):
    """Lock the document row for the transaction and check the client's revision. ``related``:
    rows read with it (not locked), which the action reads anyway."""
    obj = model.objects.select_for_update(of=("self",)).select_related(*related).get(pk=pk)
    if expected_revision is not None and expected_revision != obj.revision:
        target = {"pyramid": obj} if model is Pyramid else {"annotation": obj}
        since = list(Change.objects.filter(**target, revision__gt=expected_revision).order_by("id"))
        raise Conflict(obj.revision, since)
    return obj


@contextmanager
def _revisions_bumped_once(kind: str, document):
    """The rows an action writes bump the document's (and topic's) revision once, when it ends
    (``score_events.document_action``); ``document.revision`` is then the new one (the row is
    locked, so nobody else moved it)."""
    with document_action(kind) as note:
        yield
    if note.written:
        if kind == "pyramid":
            touch_pyramid(document.pk, document.topic_id)
        else:
            touch_annotation(document.pk)
        document.revision += 1


def _record(target: dict, user, action: str, summary: str, before, after, *, undo_state=Change.UndoState.APPLIED, reverts=None) -> Change:
    document = target.get("pyramid") or target.get("annotation")
    if undo_state == Change.UndoState.APPLIED and reverts is None:
        # A new action ends the redo stack of this user on this document.
        Change.objects.filter(**target, user=user, undo_state=Change.UndoState.UNDONE).update(undo_state=Change.UndoState.DISCARDED)
    return Change.objects.create(
        **target, user=user if user and user.is_authenticated else None, action=action, summary=summary[:500],
        before=before, after=after, revision=document.revision, undo_state=undo_state, reverts=reverts,
    )


def _unchanged(document) -> None:
    """An action that changed nothing (e.g. a PATCH with the current values) records no change and
    keeps the revision, so nobody else's next write gets a spurious 409."""
    return None


def pyramid_action(pyramid_id: int, user, *, action: str, uids: Callable[[Pyramid], Iterable[int]], mutate: Callable[[Pyramid], Any],
                   summary: Callable[[Any], str], expected_revision: int | None = None) -> Outcome:
    """Run ``mutate`` on a locked pyramid and record the states of the SCUs ``uids`` names."""
    with transaction.atomic():
        pyramid = _lock(Pyramid, pyramid_id, expected_revision)
        touched = set(uids(pyramid))
        before = scu_states(pyramid, touched)
        with _revisions_bumped_once("pyramid", pyramid):
            value = mutate(pyramid)
        after = scu_states(pyramid, touched)
        change = _record({"pyramid": pyramid}, user, action, summary(value), before, after) if after != before else _unchanged(pyramid)
        return Outcome(value, pyramid.revision, change)


def annotation_action(annotation_id: int, user, *, action: str, mutate: Callable[[PeerAnnotation], Any],
                      summary: Callable[[Any], str], expected_revision: int | None = None) -> Outcome:
    with transaction.atomic():
        annotation = _lock(PeerAnnotation, annotation_id, expected_revision, related=("peer",))  # spans are checked against its text
        before = annotation_state(annotation)
        with _revisions_bumped_once("annotation", annotation):
            value = mutate(annotation)
        after = annotation_state(annotation)
        change = _record({"annotation": annotation}, user, action, summary(value), before, after) if after != before else _unchanged(annotation)
        return Outcome(value, annotation.revision, change)


# --- Undo / redo ---------------------------------------------------------------------------

def _current(target_kind: str, document, change: Change):
    if target_kind == "pyramid":
        return scu_states(document, map(int, change.after.keys() | change.before.keys()))
    return annotation_state(document)


def _revert(target_kind: str, document_id: int, user, *, redo: bool, expected_revision: int | None) -> Outcome:
    model = Pyramid if target_kind == "pyramid" else PeerAnnotation
    with transaction.atomic():
        document = _lock(model, document_id, expected_revision)
        target = {target_kind: document}
        wanted_state = Change.UndoState.UNDONE if redo else Change.UndoState.APPLIED
        candidates = Change.objects.filter(**target, user=user, undo_state=wanted_state, reverts__isnull=True)
        if redo:
            # The most recently undone first: order by the undo record that undid it.
            undo_records = Change.objects.filter(**target, user=user, action="undo").order_by("-id").values_list("reverts_id", flat=True)
            undone = set(candidates.values_list("id", flat=True))
            change = next((Change.objects.get(pk=pk) for pk in undo_records if pk in undone), None)
        else:
            change = candidates.order_by("-id").first()
        if change is None:
            raise ValidationError({"history": "Nothing to redo." if redo else "Nothing to undo."})
        source, destination = (change.before, change.after) if redo else (change.after, change.before)
        if _current(target_kind, document, change) != source:
            raise ValidationError({"history": f"Cannot {'redo' if redo else 'undo'} “{change.summary}”: what it touched has changed since."})
        with _revisions_bumped_once(target_kind, document):
            if target_kind == "pyramid":
                apply_scu_states(document, destination)
            else:
                apply_annotation_state(document, destination)
        change.undo_state = Change.UndoState.APPLIED if redo else Change.UndoState.UNDONE
        change.save(update_fields=["undo_state"])
        verb = "Redo" if redo else "Undo"
        record = _record(target, user, "redo" if redo else "undo", f"{verb}: {change.summary}", source, destination,
                         undo_state=Change.UndoState.NONE, reverts=change)
        return Outcome(change, document.revision, record)


def undo(target_kind: str, document_id: int, user, expected_revision: int | None = None) -> Outcome:
    return _revert(target_kind, document_id, user, redo=False, expected_revision=expected_revision)


def redo(target_kind: str, document_id: int, user, expected_revision: int | None = None) -> Outcome:
    return _revert(target_kind, document_id, user, redo=True, expected_revision=expected_revision)
