"""The app's model registry for Django, nothing more.

Django finds an app's models by importing ``<app>.models``; the models themselves live with their
concept (``annotation/<concept>/models.py``), and the code imports them from there. This module
imports every concept's models, so it sits in the top layer with the other entry points
(``pyproject.toml``, ``[tool.importlinter]``): a module of a concept importing it would depend on
every concept. Tests and benches still import names from here, which is why ``__all__`` stays.
"""

from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.api.models import IdempotentRequest
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.dashboards.models import DatasetDashboard, Judgment
from annotation.history.models import Change
from annotation.lightweight.models import (
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteResult,
    LiteStatement,
    LiteTask,
    LiteWorkerKey,
    LiteWriting,
)
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, PeerMatchPart, TopicAgreement
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid, PyramidAgreement

__all__ = [
    "Dataset",
    "Topic",
    "ReferenceSummary",
    "PeerSummary",
    "Pyramid",
    "SCU",
    "Contributor",
    "ContributorPart",
    "PyramidAgreement",
    "PeerAnnotation",
    "PeerMatch",
    "PeerMatchPart",
    "Assignment",
    "AnnotationScore",
    "TopicAgreement",
    "Change",
    "IdempotentRequest",
    "Judgment",
    "Adjudication",
    "PyramidAdjudication",
    "DatasetDashboard",
    "LightweightPyramid",
    "LiteStatement",
    "LiteWriting",
    "LiteTask",
    "LiteAssignment",
    "LiteReservation",
    "LiteWorkerKey",
    "CrowdLink",
    "LiteResult",
]
