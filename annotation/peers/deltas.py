"""What an editing action changed in a peer annotation, in the shape of its ``full`` document, so
an editor patches its copy instead of reloading it (docs/editing-api.md, "Deltas"): all its
matches (an annotation holds a few dozen at most; undo/redo recreate them). (A pyramid's delta:
``pyramids.deltas``.)
"""

from annotation.history.changes import Outcome
from annotation.peers import document_states


def annotation_delta(annotation_id: int, revision: int) -> dict:
    """The matches as ``full`` shows them, read in one statement (``document_states.read_matches``)
    and put together there: every save of the annotator answers with them, and the prefetch's two
    statements and DRF's serializer cost the request more than the save itself (docs/performance.md)."""
    matches = document_states.as_full(document_states.read_matches(annotation_id))
    return {"document": "annotation", "id": annotation_id, "revision": revision, "matches": matches}


def delta(outcome: Outcome) -> dict | None:
    """The delta of an annotation action's outcome (None when nothing was recorded): the matches
    the action read after its change, under its lock (``document_states.annotation_state`` keeps
    them on the annotation), else read now."""
    change = outcome.change
    if change is None:
        return None
    read = getattr(outcome.document, "matches_read", None)
    if read is None:
        return annotation_delta(change.annotation_id, outcome.revision)
    return {"document": "annotation", "id": change.annotation_id, "revision": outcome.revision, "matches": read}
