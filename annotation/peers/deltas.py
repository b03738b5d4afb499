"""What an editing action changed in a peer annotation, in the shape of its ``full`` document, so
an editor patches its copy instead of reloading it (docs/editing-api.md, "Deltas"): all its
matches (an annotation holds a few dozen at most; undo/redo recreate them). (A pyramid's delta:
``pyramids.deltas``.)
"""

from annotation.history.changes import Outcome
from annotation.peers.models import PeerMatch


def annotation_delta(annotation_id: int, revision: int) -> dict:
    """The matches as ``full`` shows them (``FullMatchSerializer``'s fields), read in one statement
    (the matches joined with their parts) and put together here: every save of the annotator
    answers with them, and the prefetch's two statements and DRF's serializer cost the request more
    than the save itself (docs/performance.md)."""
    matches: dict[int, dict] = {}
    rows = (
        PeerMatch.objects.filter(annotation_id=annotation_id)
        .order_by("id", "parts__start", "parts__id")
        .values_list("id", "scu_id", "review_note", "parts__id", "parts__start", "parts__end")
    )
    for pk, scu, review_note, part, start, end in rows:
        match = matches.setdefault(pk, {"id": pk, "scu": scu, "review_note": review_note, "parts": []})
        if part is not None:
            match["parts"].append({"id": part, "start": start, "end": end})
    return {"document": "annotation", "id": annotation_id, "revision": revision, "matches": list(matches.values())}


def delta(outcome: Outcome) -> dict | None:
    """The delta of an annotation action's outcome (None when nothing was recorded)."""
    change = outcome.change
    if change is None:
        return None
    return annotation_delta(change.annotation_id, outcome.revision)
