"""Read peer annotations from the database as the pure inputs of ``scoring`` (the pyramids' half:
``pyramids.scoring_inputs``).

Each loader runs a fixed number of queries however large the data (no per-row queries), because
recomputation, exports and dashboards call them for hundreds of annotations at once. The models'
default orderings are cleared (``order_by()``): they join other tables only to sort rows that are
grouped here anyway.
"""

from collections.abc import Iterable

from annotation.peers.models import PeerMatch
from scoring.model import PeerAnnotation as ScoringAnnotation


def load_annotations(annotation_ids: Iterable[int]) -> dict[int, ScoringAnnotation]:
    """annotation id -> SCU uid counts (repetitions) and the number of non-matching units."""
    ids = list(set(annotation_ids))
    counts: dict[int, dict[int, int]] = {i: {} for i in ids}
    non_matching = dict.fromkeys(ids, 0)
    for annotation_id, uid in (
        PeerMatch.objects.filter(annotation_id__in=ids).order_by().values_list("annotation_id", "scu__uid")
    ):
        if uid is None:
            non_matching[annotation_id] += 1
        else:
            counts[annotation_id][uid] = counts[annotation_id].get(uid, 0) + 1
    return {i: ScoringAnnotation(counts[i], non_matching[i]) for i in ids}
