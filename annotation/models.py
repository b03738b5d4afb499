"""The domain model, one module per concept group.

corpus: Dataset, Topic, ReferenceSummary, PeerSummary
pyramid: Pyramid, SCU, Contributor, ContributorPart, PyramidAgreement (stored construction agreement)
peer: PeerAnnotation, PeerMatch, PeerMatchPart
work: Assignment
results: AnnotationScore, TopicAgreement (stored results of background computations)
adjudication: Adjudication (a peer annotation that settles annotators' disagreements), PyramidAdjudication (the
  topic's pyramid that settles two annotators' pyramids)
history: Change (audit history, undo/redo)
idempotency: IdempotentRequest (answers to POSTs sent with an Idempotency-Key)
lightweight: LightweightPyramid, LiteStatement, LiteWriting, LiteTask, LiteAssignment, LiteReservation,
LiteWorkerKey, CrowdLink, LiteResult
"""
from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.history.models import Change
from annotation.api.models import IdempotentRequest
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid, PyramidAgreement
from annotation.peers.models import AnnotationScore, TopicAgreement
from annotation.corpus.models import Assignment
from annotation.dashboards.models import Judgment
from annotation.dashboards.models import DatasetDashboard
from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteAssignment, LiteReservation, LiteResult, LiteStatement, LiteTask, LiteWorkerKey, LiteWriting

__all__ = [
    "Dataset", "Topic", "ReferenceSummary", "PeerSummary",
    "Pyramid", "SCU", "Contributor", "ContributorPart", "PyramidAgreement",
    "PeerAnnotation", "PeerMatch", "PeerMatchPart",
    "Assignment", "AnnotationScore", "TopicAgreement", "Change", "IdempotentRequest",
    "Judgment", "Adjudication", "PyramidAdjudication",
    "DatasetDashboard",
    "LightweightPyramid", "LiteStatement", "LiteWriting", "LiteTask", "LiteAssignment", "LiteReservation", "LiteWorkerKey", "CrowdLink", "LiteResult",
]
