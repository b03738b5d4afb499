"""A peer annotation as the audit history records it (``annotation.history.changes``): its whole
list of matches (small), and applying it back for undo and redo. Registered with the history here,
the package that owns peer annotations; the history itself is a layer below.
"""

from annotation.history import changes
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU


def annotation_state(annotation: PeerAnnotation) -> dict:
    """{matches: [{scu: uid or None, parts: [[start, end], ...]}]} in a stable order (one
    statement: the matches joined with their parts; an action reads it before and after)."""
    matches: dict[int, dict] = {}
    rows = (
        PeerMatch.objects.filter(annotation=annotation)
        .order_by("id", "parts__start", "parts__end")
        .values_list("id", "scu__uid", "parts__start", "parts__end")
    )
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


changes.register(
    "annotation",
    changes.DocumentKind(
        PeerAnnotation,
        lambda annotation, keys: annotation_state(annotation),
        apply_annotation_state,
        lambda change: None,
    ),
)
