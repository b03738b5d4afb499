"""What an editing action changed, in the shape of the ``full`` documents, so an editor patches its
copy of the document instead of reloading it (docs/editing-api.md, "Deltas").

- pyramid: every SCU the action touched (the uids its history record names) as ``full`` shows it,
  and the uids of those that no longer exist. An undo/redo may recreate SCUs, contributors and parts
  with new ids: replace by uid.
- annotation: all its matches (an annotation holds a few dozen at most; undo/redo recreate them).
"""
from annotation.models import PeerMatch
from annotation.history.changes import Outcome
from annotation.pyramids.scu_documents import scu_documents


def pyramid_delta(pyramid_id: int, revision: int, uids) -> dict:
    uids = sorted(set(uids))
    scus = scu_documents(pyramid_id, uids=uids)
    present = {scu["uid"] for scu in scus}
    return {"document": "pyramid", "id": pyramid_id, "revision": revision,
            "scus": scus, "removed_scus": [uid for uid in uids if uid not in present]}


def annotation_delta(annotation_id: int, revision: int) -> dict:
    """The matches as ``full`` shows them (``FullMatchSerializer``'s fields), read in one statement
    (the matches joined with their parts) and put together here: every save of the annotator
    answers with them, and the prefetch's two statements and DRF's serializer cost the request more
    than the save itself (docs/performance.md)."""
    matches: dict[int, dict] = {}
    rows = (PeerMatch.objects.filter(annotation_id=annotation_id).order_by("id", "parts__start", "parts__id")
            .values_list("id", "scu_id", "review_note", "parts__id", "parts__start", "parts__end"))
    for pk, scu, review_note, part, start, end in rows:
        match = matches.setdefault(pk, {"id": pk, "scu": scu, "review_note": review_note, "parts": []})
        if part is not None:
            match["parts"].append({"id": part, "start": start, "end": end})
    return {"document": "annotation", "id": annotation_id, "revision": revision, "matches": list(matches.values())}


def delta(outcome: Outcome) -> dict | None:
    """The delta of an action's outcome (None when nothing was recorded)."""
    change = outcome.change
    if change is None:
        return None
    if change.pyramid_id:
        uids = {int(k) for k in (change.before or {})} | {int(k) for k in (change.after or {})}
        return pyramid_delta(change.pyramid_id, outcome.revision, uids)
    return annotation_delta(change.annotation_id, outcome.revision)
