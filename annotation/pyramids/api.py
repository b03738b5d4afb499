"""The pyramids' REST views: pyramids, their SCUs and contributors, and the editing actions that
are not plain CRUD (parts, move, split, merge), each one locked, validated and recorded in the
pyramid's history (``pyramids.actions``) like the builder's actions.

A pyramid with its SCUs and contributors is one document, versioned by the pyramid's revision
(``history.api``). The pyramid resource gathers actions from higher concepts, added where the
router is assembled (``pyramid_app/api_urls.py``): its ``full`` read with the annotations' scores
(``peers.api``) and its ``export`` (``transfer.api``).
"""

from django.db.models import Count, Model, Prefetch
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response

from annotation.access import rules
from annotation.api.serializers import django_errors_as_drf
from annotation.api.versions import expected_revision
from annotation.api.viewsets import ScopedViewSet
from annotation.corpus.models import ReferenceSummary
from annotation.history.api import HistoryActions, VersionedMixin
from annotation.pyramids import actions, assistance, deltas, filters, serializers
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

WEIGHTED_SCUS = SCU.objects.annotate(weight=Count("contributors")).order_by("uid")


def pyramid_texts(prefix: str = "") -> Prefetch:
    """The pyramid's references in name order; its SCUs are read as rows by the serializer (scu_documents)."""
    return Prefetch(f"{prefix}references", queryset=ReferenceSummary.objects.order_by("external_id"))


class PyramidDocument:
    """A pyramid and its parts (SCUs, contributors) are one document: the pyramid's revision
    versions them, and an action answers with the SCUs it touched (``deltas``)."""

    def document_of(self, obj: Model) -> tuple[type[Model], int]:
        if isinstance(obj, Pyramid):
            return Pyramid, obj.pk
        if isinstance(obj, SCU):
            return Pyramid, obj.pyramid_id
        if isinstance(obj, Contributor):
            return Pyramid, obj.scu.pyramid_id
        raise TypeError(f"{type(obj).__name__} is not part of a pyramid")

    def delta(self, outcome) -> dict | None:
        return deltas.delta(outcome)

    def topic_of(self, pyramid: Pyramid):
        return pyramid.topic


def _input(serializer_class, request) -> dict:
    data = serializer_class(data=request.data)
    data.is_valid(raise_exception=True)
    return data.validated_data


def _visible_scu(request, pk: int, field: str) -> SCU:
    scu = rules.visible(request.user, SCU.objects.filter(pk=pk)).first()
    if scu is None:
        raise ValidationError({field: [f"SCU {pk} does not exist."]})
    return scu


class ContributorActions:
    """Parts of a contributor, moving it to another SCU, splitting it off into a new SCU."""

    @action(detail=True, methods=["post"], url_path="parts")
    def add_part(self, request, pk=None):
        """Add a span of the contributor's reference as one more part (discontinuous contributor)."""
        contributor = self.get_object()
        span = _input(serializers.PartInput, request)
        with django_errors_as_drf():
            outcome = actions.add_part_to(
                contributor,
                request.user,
                start=span["start"],
                end=span["end"],
                expected_revision=expected_revision(request),
            )
        return self._answer(
            outcome, part={"id": outcome.value.pk, "start": outcome.value.start, "end": outcome.value.end}
        )

    @action(detail=True, methods=["delete"], url_path=r"parts/(?P<part_id>\d+)")
    def remove_part(self, request, pk=None, part_id=None):
        contributor = self.get_object()
        part = contributor.parts.filter(pk=part_id).first()
        if part is None:
            raise ValidationError({"part": [f"Part {part_id} is not a part of this contributor."]})
        with django_errors_as_drf():
            return self._answer(actions.remove_part(part, request.user, expected_revision=expected_revision(request)))

    @action(detail=True, methods=["post"])
    def move(self, request, pk=None):
        """Move the contributor to another SCU of the same pyramid (the one-per-reference rule is checked)."""
        contributor = self.get_object()
        target = _visible_scu(request, _input(serializers.MoveInput, request)["scu"], "scu")
        with django_errors_as_drf():
            return self._answer(
                actions.move_contributor(
                    contributor, target, request.user, expected_revision=expected_revision(request)
                )
            )

    @action(detail=True, methods=["post"])
    def split(self, request, pk=None):
        """Take the contributor out of its SCU into a new SCU (label defaults to its text)."""
        contributor = self.get_object()
        data = _input(serializers.SplitInput, request)
        with django_errors_as_drf():
            outcome = actions.split_contributor(
                contributor, request.user, label=data.get("label"), expected_revision=expected_revision(request)
            )
        return self._answer(
            outcome, scu={"id": outcome.value.pk, "uid": outcome.value.uid, "label": outcome.value.label}
        )


def _builder_of(request, obj: Model) -> None:
    """Proposals are for whoever may build the pyramid (its builder, its coordinators): a reader of
    a finished pyramid (a peer annotator) is refused, as for any write. (Where the dataset builds
    unassisted the service refuses everyone: ``assistance.AssistanceOff``.)"""
    if not rules.can_change(request.user, obj):
        raise PermissionDenied("Only the pyramid's builder and the dataset's coordinators see its proposals.")


class Proposals:
    """The assisted builder (``assistance``, issue 30 §2): what to propose, and accepting it as one
    action each (one undo step), recorded as proposed. Refused (403) where assistance is off."""

    @extend_schema(responses={200: serializers.SCUProposalSerializer(many=True)})
    @action(detail=True, methods=["get"], url_path="proposals", pagination_class=None, filter_backends=[])
    def scu_proposals(self, request, pk=None):
        """Proposed new SCUs for the text no contributor covers yet, best first."""
        pyramid = self.get_object()
        _builder_of(request, pyramid)
        return Response(serializers.SCUProposalSerializer(assistance.scu_proposals(pyramid), many=True).data)

    @extend_schema(request=serializers.AcceptSCUInput)
    @action(detail=True, methods=["post"], url_path="accept-scu")
    def accept_scu(self, request, pk=None):
        """Accept a proposed SCU (its label as drafted or edited, its contributors) as a new SCU."""
        pyramid = self.get_object()
        data = _input(serializers.AcceptSCUInput, request)
        accepted = serializers.accepted_contributors(pyramid, data["contributors"])
        with django_errors_as_drf():
            outcome = actions.accept_scu(
                pyramid,
                request.user,
                label=data["label"],
                contributors=accepted,
                expected_revision=expected_revision(request),
            )
        return self._answer(
            outcome, scu={"id": outcome.value.pk, "uid": outcome.value.uid, "label": outcome.value.label}
        )


class SCUActions:
    @extend_schema(responses={200: serializers.ContributorProposalSerializer(many=True)})
    @action(detail=True, methods=["get"], url_path="proposals", pagination_class=None, filter_backends=[])
    def contributor_proposals(self, request, pk=None):
        """The SCU's likely contributors in the references it has none from yet, best first."""
        scu = self.get_object()
        _builder_of(request, scu)
        return Response(
            serializers.ContributorProposalSerializer(assistance.contributor_proposals(scu), many=True).data
        )

    @extend_schema(request=serializers.AcceptContributorsInput)
    @action(detail=True, methods=["post"], url_path="accept")
    def accept_contributors(self, request, pk=None):
        """Add the accepted proposed contributors to this SCU, all in one action (one undo step)."""
        scu = self.get_object()
        data = _input(serializers.AcceptContributorsInput, request)
        accepted = serializers.accepted_contributors(scu.pyramid, data["contributors"])
        with django_errors_as_drf():
            return self._answer(
                actions.accept_contributors(
                    scu, request.user, contributors=accepted, expected_revision=expected_revision(request)
                )
            )

    @action(detail=True, methods=["post"])
    def merge(self, request, pk=None):
        """Merge the ``sources`` SCUs into this one; a reference that would contribute twice is
        reported, nothing changes."""
        target = self.get_object()
        sources = [_visible_scu(request, pk, "sources") for pk in _input(serializers.MergeInput, request)["sources"]]
        with django_errors_as_drf():
            return self._answer(
                actions.merge_scus(target, sources, request.user, expected_revision=expected_revision(request))
            )


class PyramidViewSet(PyramidDocument, Proposals, HistoryActions, VersionedMixin, ScopedViewSet):
    """Pyramids: a topic's SCUs built from its references by one annotator (``creator``).

    Status and references are metadata written here; content (SCUs, contributors) is written through
    ``scus/`` and ``contributors/``, each versioned by the pyramid's ETag. ``full/`` reads the whole
    pyramid in one request; ``undo/``, ``redo/`` and ``history/`` act on the whole document."""

    versioned_writes = False  # status and references are metadata; content writes go through SCUs and contributors
    base_queryset = Pyramid.objects.prefetch_related("references")
    serializer_class = serializers.PyramidSerializer
    filterset_class = filters.PyramidFilter


class SCUViewSet(PyramidDocument, SCUActions, VersionedMixin, ScopedViewSet):
    """Summary Content Units of pyramids: a label and the contributors that express it.

    Writes send the pyramid's ETag as If-Match (409 on a conflict); ``merge/`` folds other SCUs into
    this one. Deleting an SCU is refused while peers are matched to it."""

    base_queryset = WEIGHTED_SCUS
    serializer_class = serializers.SCUSerializer
    filterset_class = filters.SCUFilter

    def perform_destroy(self, instance):
        """Refused (400) while peers are matched to it."""
        with django_errors_as_drf():
            self._outcome = actions.delete_scu(instance, self.request.user, expected_revision=self.destroy_revision())


class ContributorViewSet(PyramidDocument, ContributorActions, VersionedMixin, ScopedViewSet):
    """Contributors of SCUs: the span(s) of one reference summary that express the SCU (several
    parts when discontinuous). Writes send the pyramid's ETag as If-Match; ``parts/``, ``move/`` and
    ``split/`` add or remove a part, move it to another SCU, or make it an SCU of its own."""

    # With its SCU: the document (pyramid) that versions a contributor is read with it.
    base_queryset = Contributor.objects.select_related("scu").prefetch_related(
        Prefetch("parts", queryset=ContributorPart.objects.order_by("start"))
    )
    serializer_class = serializers.ContributorSerializer
    filterset_class = filters.ContributorFilter

    def perform_destroy(self, instance):
        """Removing an SCU's last contributor removes the SCU (refused while peers are matched to it)."""
        with django_errors_as_drf():
            self._outcome = actions.remove_contributor(
                instance, self.request.user, expected_revision=self.destroy_revision()
            )
