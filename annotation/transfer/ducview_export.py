"""Write stored pyramids and peer annotations as DUCView files (.pyr, .pan).

Reference headers are written as ``TOPIC.REF`` (DUCView reads the id as the last '.'-separated
field), so importing an exported file gives back the same references, SCUs, spans and scores.
"""

from collections import defaultdict

from annotation import formats
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import Contributor, ContributorPart, Pyramid


def pyramid_to_format(pyramid: Pyramid) -> formats.Pyramid:
    topic = pyramid.topic.external_id
    references = list(pyramid.references.order_by("external_id"))
    texts = {r.external_id: r.text for r in references}
    parts = defaultdict(list)
    for contributor_id, ref, start, end in (
        ContributorPart.objects.filter(contributor__scu__pyramid=pyramid)
        .order_by("reference__external_id", "start")
        .values_list("contributor_id", "reference__external_id", "start", "end")
    ):
        parts[contributor_id].append(formats.Part(ref, start, end))
    contributors = defaultdict(list)
    for contributor_id, scu_id, comment in (
        Contributor.objects.filter(scu__pyramid=pyramid).order_by("id").values_list("id", "scu_id", "comment")
    ):
        spans = parts[contributor_id]
        label = "...".join(texts[p.reference][p.start : p.end] for p in spans)
        contributors[scu_id].append(formats.Contributor(label, comment, spans))
    return formats.Pyramid(
        references=[formats.Reference(r.external_id, f"{topic}.{r.external_id}", r.text) for r in references],
        scus=[
            formats.SCU(uid, label, comment, contributors[pk])
            for pk, uid, label, comment in pyramid.scus.order_by("uid").values_list("id", "uid", "label", "comment")
        ],
        header_regex=None,
    )


def export_pyramid(pyramid: Pyramid) -> bytes:
    return formats.write_pyramid(pyramid_to_format(pyramid))


def export_annotation(annotation: PeerAnnotation, pyramid: formats.Pyramid | None = None) -> bytes:
    """``pyramid``: the annotation's pyramid as ``pyramid_to_format`` gives it, when the caller writes
    many annotations of one pyramid (an archive: each .pan holds its whole pyramid, and reading it
    again for each was half of an archive's time)."""
    parts = defaultdict(list)
    for match_id, start, end in (
        PeerMatchPart.objects.filter(match__annotation=annotation)
        .order_by("start")
        .values_list("match_id", "start", "end")
    ):
        parts[match_id].append(formats.PeerPart(start, end))
    text = annotation.peer.text
    matches, non_matching = [], []
    for match_id, uid in PeerMatch.objects.filter(annotation=annotation).order_by("id").values_list("id", "scu__uid"):
        label = "...".join(text[p.start : p.end] for p in parts[match_id])
        (matches if uid else non_matching).append(formats.PeerMatch(uid or 0, label, "", parts[match_id]))
    pan = formats.PeerAnnotationFile(
        pyramid=pyramid if pyramid is not None else pyramid_to_format(annotation.pyramid),
        text=text,
        matches=matches,
        non_matching=non_matching,
        score=None,
    )
    return formats.write_peer_annotation(pan)
