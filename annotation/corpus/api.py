"""The corpus's REST views: datasets, topics, their reference and peer summaries, assignments.

Two of these resources gather actions from higher concepts, added where the router is assembled
(``pyramid_app/api_urls.py``, from each concept's ``urls.extends``): a dataset's downloads
(``transfer.api``), an assignment's peer work (``peers.api``, ``adjudication.api``).
"""

from django.db import transaction

from annotation.api import access
from annotation.api.versions import RepresentationVersionMixin
from annotation.api.viewsets import ScopedViewSet
from annotation.corpus import datasets, filters, serializers
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic


class DatasetViewSet(RepresentationVersionMixin, ScopedViewSet):
    """Datasets. Coordinators create them and become their coordinators; ``scores`` and
    ``agreement`` are for its coordinators."""

    base_queryset = Dataset.objects.prefetch_related("coordinators")
    serializer_class = serializers.DatasetSerializer

    def perform_create(self, serializer):
        access.check_create(self.request.user, Dataset, serializer.validated_data)
        with transaction.atomic():
            datasets.add_creator(serializer.save(), self.request.user)
        self._reload(serializer)


class TopicViewSet(RepresentationVersionMixin, ScopedViewSet):
    """A dataset's topics: the unit a pyramid is built for, with its reference and peer summaries.

    Listed are the topics of the datasets you take part in (coordinators: all of theirs; annotators:
    those they are assigned); ``dataset`` filters."""

    base_queryset = Topic.objects.all()
    serializer_class = serializers.TopicSerializer
    filterset_class = filters.TopicFilter


class ReferenceSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    """The reference summaries of topics: the human summaries a pyramid's SCUs are drawn from.

    Their text is fixed once a contributor points into it (offsets are Unicode code points)."""

    base_queryset = ReferenceSummary.objects.all()
    serializer_class = serializers.ReferenceSummarySerializer
    filterset_class = filters.ReferenceSummaryFilter


class PeerSummaryViewSet(RepresentationVersionMixin, ScopedViewSet):
    """The peer summaries of topics: the system (or held-out reference) summaries annotated against a pyramid.

    ``system_id`` groups a system's peers across topics (the system-level scores)."""

    base_queryset = PeerSummary.objects.all()
    serializer_class = serializers.PeerSummarySerializer
    filterset_class = filters.PeerSummaryFilter


class AssignmentViewSet(RepresentationVersionMixin, ScopedViewSet):
    """Assignments: which annotator builds a topic's pyramid or annotates its peers.

    Coordinators create and change them; an annotator reads their own and starts a peer's
    annotation through ``peers/{peer}/annotation/``."""

    base_queryset = Assignment.objects.all()
    serializer_class = serializers.AssignmentSerializer
    filterset_class = filters.AssignmentFilter
