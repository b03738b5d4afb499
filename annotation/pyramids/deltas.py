"""What an editing action changed in a pyramid, in the shape of its ``full`` document, so an editor
patches its copy of the document instead of reloading it (docs/editing-api.md, "Deltas").

Every SCU the action touched (the uids its history record names) as ``full`` shows it, and the
uids of those that no longer exist. An undo/redo may recreate SCUs, contributors and parts with
new ids: replace by uid. (A peer annotation's delta: ``peers.deltas``.)
"""

from annotation.history.changes import Outcome
from annotation.pyramids.scu_documents import scu_documents


def pyramid_delta(pyramid_id: int, revision: int, uids) -> dict:
    uids = sorted(set(uids))
    scus = scu_documents(pyramid_id, uids=uids)
    present = {scu["uid"] for scu in scus}
    return {
        "document": "pyramid",
        "id": pyramid_id,
        "revision": revision,
        "scus": scus,
        "removed_scus": [uid for uid in uids if uid not in present],
    }


def delta(outcome: Outcome) -> dict | None:
    """The delta of a pyramid action's outcome (None when nothing was recorded)."""
    change = outcome.change
    if change is None:
        return None
    uids = {int(k) for k in (change.before or {})} | {int(k) for k in (change.after or {})}
    return pyramid_delta(change.pyramid_id, outcome.revision, uids)
