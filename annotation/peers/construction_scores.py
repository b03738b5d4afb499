"""The scores construction agreement's practical test compares (``pyramids.construction``): the
peers annotated against each pyramid of a topic, scored. Registered with it, a layer below, when
the app is ready (``annotation.apps``)."""

import statistics
from collections import defaultdict

from annotation.peers.models import PeerAnnotation
from annotation.peers.results import counted, score_annotations
from annotation.pyramids.construction import PeerScores, score_peers_with
from scoring.model import Convention


def practical_scores(pyramid_ids: list[int]) -> PeerScores:
    """convention -> pyramid id -> peer id -> modified score (mean over the annotators of that
    peer against that pyramid; None when undefined), for the annotations that count."""
    annotations = list(counted(PeerAnnotation.objects.filter(pyramid_id__in=pyramid_ids)).order_by("id"))
    out = {}
    for convention in Convention:
        scored = score_annotations(annotations, convention)
        found: dict[tuple[int, int], list[float | None]] = defaultdict(list)
        for a in annotations:
            found[(a.pyramid_id, a.peer_id)].append(scored[a.pk].modified)
        per_pyramid: dict[int, dict[int, float | None]] = defaultdict(dict)
        for (pyramid_id, peer_id), values in found.items():
            per_pyramid[pyramid_id][peer_id] = None if None in values else statistics.fmean(values)
        out[convention.value] = per_pyramid
    return out


score_peers_with(practical_scores)
