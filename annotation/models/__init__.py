"""The domain model, one module per concept group.

corpus: Dataset, Topic, ReferenceSummary, PeerSummary
pyramid: Pyramid, SCU, Contributor, ContributorPart
peer: PeerAnnotation, PeerMatch, PeerMatchPart
work: Assignment
results: AnnotationScore, TopicAgreement (stored results of background computations)
history: Change (audit history, undo/redo)
idempotency: IdempotentRequest (answers to POSTs sent with an Idempotency-Key)
lightweight: LightweightPyramid, LiteStatement, LiteWriting, LiteTask, LiteAssignment, LiteReservation, CrowdLink, LiteResult
"""
from .corpus import Dataset, PeerSummary, ReferenceSummary, Topic
from .history import Change
from .idempotency import IdempotentRequest
from .peer import PeerAnnotation, PeerMatch, PeerMatchPart
from .pyramid import SCU, Contributor, ContributorPart, Pyramid
from .results import AnnotationScore, TopicAgreement
from .work import Assignment
from .judgments import Judgment
from .dashboard import DatasetDashboard
from .lightweight import CrowdLink, LightweightPyramid, LiteAssignment, LiteReservation, LiteResult, LiteStatement, LiteTask, LiteWriting

__all__ = [
    "Dataset", "Topic", "ReferenceSummary", "PeerSummary",
    "Pyramid", "SCU", "Contributor", "ContributorPart",
    "PeerAnnotation", "PeerMatch", "PeerMatchPart",
    "Assignment", "AnnotationScore", "TopicAgreement", "Change", "IdempotentRequest",
    "Judgment",
    "DatasetDashboard",
    "LightweightPyramid", "LiteStatement", "LiteWriting", "LiteTask", "LiteAssignment", "LiteReservation", "CrowdLink", "LiteResult",
]
