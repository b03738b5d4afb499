"""Pure-Python scoring core of the pyramid app (no Django here, on purpose).

``model`` describes pyramids and annotations, ``scores`` computes the pyramid scores (NIST and
SacreROUGE conventions, jackknife), ``agreement`` alpha_Dice between annotators, ``correlation``
Pearson/Spearman/Kendall with sample sizes and reasons.

Statistics over systems (which differences are real): ``intervals`` (bootstrap intervals of system
means and of meta-evaluation correlations), ``significance`` (paired permutation tests, Holm,
groups, SCU-level tests), ``stability`` (ranking vs number of references and of topics), ``power``
(topics needed), all seeded; ``batch_correlation`` computes correlations on many resamples at once.

Lightweight Pyramids: ``lightweight`` scores crowd answers (worker filter, majority labels,
summary and system scores, topic alpha), ``lite_statements`` filters and samples their statements.
"""

from .agreement import (
    AgreementSummary,
    Alpha,
    alpha_dice,
    alpha_dice_summary,
    dice_distance,
    peer_matrix,
)
from .correlation import Correlation, kendall, mean_abs_difference, pearson, spearman
from .model import SCU, Contributor, Convention, PeerAnnotation, Pyramid
from .scores import (
    PeerScore,
    compute_xa,
    reference_annotation,
    round_half_up,
    score_peer,
    score_reference,
    scu_vector,
)

__all__ = [
    "Alpha",
    "AgreementSummary",
    "Contributor",
    "Convention",
    "Correlation",
    "PeerAnnotation",
    "PeerScore",
    "Pyramid",
    "SCU",
    "alpha_dice",
    "alpha_dice_summary",
    "compute_xa",
    "dice_distance",
    "kendall",
    "mean_abs_difference",
    "peer_matrix",
    "pearson",
    "reference_annotation",
    "round_half_up",
    "score_peer",
    "score_reference",
    "scu_vector",
    "spearman",
]
