"""A peer annotation as the audit history records it (``annotation.history.changes``): its whole
list of matches (small), and applying it back for undo and redo. Registered with the history here,
the package that owns peer annotations; the history itself is a layer below.
"""

from annotation.history import changes
from annotation.peers import queries
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU


def read_matches(annotation_id: int) -> list[dict]:
    """The annotation's matches as ``full`` shows them (``FullMatchSerializer``'s fields) and each
    one's SCU uid (``uid``), in one statement (``queries.match_rows``)."""
    matches: dict[int, dict] = {}
    for pk, scu, uid, review_note, part, start, end in queries.match_rows(annotation_id):
        match = matches.setdefault(pk, {"id": pk, "scu": scu, "review_note": review_note, "parts": [], "uid": uid})
        if part is not None:
            match["parts"].append({"id": part, "start": start, "end": end})
    return list(matches.values())


def as_full(matches: list[dict]) -> list[dict]:
    """``read_matches``'s matches without their uids: as ``full`` shows them."""
    return [{k: v for k, v in m.items() if k != "uid"} for m in matches]


def annotation_state(annotation: PeerAnnotation) -> dict:
    """{matches: [{scu: uid or None, parts: [[start, end], ...]}]} in a stable order (one
    statement, ``read_matches``; an action reads it before and after). The matches read are kept
    on ``annotation`` as ``full`` shows them (``matches_read``): read after an action, under its
    lock, they are the action's delta (``deltas.delta``), not read again."""
    matches = read_matches(annotation.pk)
    annotation.matches_read = as_full(matches)
    states = [{"scu": m["uid"], "parts": [[p["start"], p["end"]] for p in m["parts"]]} for m in matches]
    return {"matches": sorted(states, key=lambda m: (m["parts"], m["scu"] is None, m["scu"] or 0))}


def apply_annotation_state(annotation: PeerAnnotation, state: dict) -> None:
    annotation.matches_read = None  # what was read before no longer holds
    uids = dict(SCU.objects.filter(pyramid_id=annotation.pyramid_id).values_list("uid", "id"))
    annotation.matches.all().delete()
    for m in state["matches"]:
        match = PeerMatch.objects.create(annotation=annotation, scu_id=uids[m["scu"]] if m["scu"] is not None else None)
        PeerMatchPart.objects.bulk_create(PeerMatchPart(match=match, start=s, end=e) for s, e in m["parts"])


changes.register(
    "annotation",
    changes.DocumentKind(
        PeerAnnotation,
        lambda annotation, keys: annotation_state(annotation),
        apply_annotation_state,
        lambda change: None,
    ),
)
