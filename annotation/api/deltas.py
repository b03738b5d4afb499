"""What an editing action changed, in the shape of the ``full`` documents, so an editor patches its
copy of the document instead of reloading it (docs/editing-api.md, "Deltas").

- pyramid: every SCU the action touched (the uids its history record names) as ``full`` shows it,
  and the uids of those that no longer exist. An undo/redo may recreate SCUs, contributors and parts
  with new ids: replace by uid.
- annotation: all its matches (an annotation holds a few dozen at most; undo/redo recreate them).
"""
from django.db.models import Prefetch

from annotation.models import PeerMatch, PeerMatchPart
from annotation.history.changes import Outcome
from annotation.pyramids.scu_documents import scu_documents
from annotation.api.serializers import FullMatchSerializer

_MATCHES = PeerMatch.objects.order_by("id").prefetch_related(Prefetch("parts", queryset=PeerMatchPart.objects.order_by("start")))


def pyramid_delta(pyramid_id: int, revision: int, uids) -> dict:
    uids = sorted(set(uids))
    scus = scu_documents(pyramid_id, uids=uids)
    present = {scu["uid"] for scu in scus}
    return {"document": "pyramid", "id": pyramid_id, "revision": revision,
            "scus": scus, "removed_scus": [uid for uid in uids if uid not in present]}


def annotation_delta(annotation_id: int, revision: int) -> dict:
    matches = _MATCHES.filter(annotation_id=annotation_id)
    return {"document": "annotation", "id": annotation_id, "revision": revision, "matches": FullMatchSerializer(matches, many=True).data}


def delta(outcome: Outcome) -> dict | None:
    """The delta of an action's outcome (None when nothing was recorded)."""
    change = outcome.change
    if change is None:
        return None
    if change.pyramid_id:
        uids = {int(k) for k in (change.before or {})} | {int(k) for k in (change.after or {})}
        return pyramid_delta(change.pyramid_id, outcome.revision, uids)
    return annotation_delta(change.annotation_id, outcome.revision)
