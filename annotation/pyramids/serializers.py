"""The pyramids' REST serializers: a pyramid's metadata, its SCUs and contributors (each change one
recorded action of ``pyramids.actions``), and the pyramid content the ``full`` documents embed."""

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.api.serializers import (
    StrictMixin,
    StrictModelSerializer,
    django_errors_as_drf,
    expected_revision_of,
    keep_outcome,
    requesting_user,
)
from annotation.corpus.models import ReferenceSummary
from annotation.corpus.serializers import TextSerializer
from annotation.pyramids import actions
from annotation.pyramids.models import LABEL_LENGTH, SCU, Contributor, ContributorPart, Pyramid
from annotation.pyramids.scu_documents import pyramid_scus
from annotation.pyramids.spans import MAX_PARTS, validate_span


class PyramidSerializer(StrictModelSerializer):
    """A pyramid; its creator is whoever creates it."""

    creator = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = Pyramid
        fields = ["id", "topic", "creator", "references", "status", "source", "revision", "created_at", "updated_at"]
        create_only = ["topic"]

    def validate(self, attrs):
        topic = attrs.get("topic") or self.instance.topic
        references = attrs.get("references", ())
        foreign = sorted(r.external_id for r in references if r.topic_id != topic.pk)
        if foreign:
            raise serializers.ValidationError(
                {"references": [f"Reference {', '.join(foreign)} belongs to another topic than the pyramid."]}
            )
        if self.instance is not None and "references" in attrs:
            # Weights count references: one with contributors cannot leave the pyramid.
            used = set(
                ContributorPart.objects.filter(contributor__scu__pyramid=self.instance).values_list(
                    "reference__external_id", flat=True
                )
            )
            dropped = sorted(used - {r.external_id for r in references})
            if dropped:
                raise serializers.ValidationError(
                    {
                        "references": [
                            f"Reference {', '.join(dropped)} has contributors in this pyramid: remove them first."
                        ]
                    }
                )
        return attrs

    def create(self, validated_data):
        validated_data["creator"] = self.context["request"].user
        return super().create(validated_data)


class SpanSerializer(StrictMixin, serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)


def validate_spans(spans: list[dict], text: str, what: str) -> list[tuple[int, int]]:
    """Check every span against the text (the models' rule); errors are keyed by part index, as DRF does."""
    errors = {}
    for index, span in enumerate(spans):
        try:
            validate_span(span["start"], span["end"], text, what)
        except DjangoValidationError as error:
            errors[index] = error.message_dict
    if errors:
        raise serializers.ValidationError({"parts": errors})
    return [(span["start"], span["end"]) for span in spans]


class SCUSerializer(StrictModelSerializer):
    """An SCU, created from its first contributor's span(s) in one reference (``create_scu``: the
    uid is the next free one). ``weight`` is its number of contributors (derived, read-only).
    Changes go through ``pyramid_actions``, so each is one entry of the pyramid's history."""

    weight = serializers.IntegerField(read_only=True)
    reference = serializers.PrimaryKeyRelatedField(queryset=ReferenceSummary.objects.all(), write_only=True)
    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS, write_only=True)

    class Meta:
        model = SCU
        fields = ["id", "pyramid", "uid", "label", "comment", "proposed", "weight", "reference", "parts"]
        read_only_fields = ["uid", "proposed"]
        create_only = ["pyramid", "reference", "parts"]

    def validate(self, attrs):
        if self.instance is None:
            if "comment" in attrs:
                raise serializers.ValidationError({"comment": ["Comment the SCU once it exists (PATCH)."]})
            reference = attrs["reference"]
            attrs["parts"] = validate_spans(
                attrs["parts"], reference.text, f"Part of reference {reference.external_id}"
            )
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.create_scu(
                    validated_data["pyramid"],
                    requesting_user(self),
                    label=validated_data["label"],
                    reference=validated_data["reference"],
                    spans=validated_data["parts"],
                    expected_revision=expected_revision_of(self),
                ),
            )

    def update(self, instance, validated_data):
        if not validated_data:
            return instance
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.update_scu(
                    instance,
                    requesting_user(self),
                    label=validated_data.get("label"),
                    comment=validated_data.get("comment"),
                    expected_revision=expected_revision_of(self),
                ),
            )


class ContributorSerializer(StrictModelSerializer):
    """A contributor with its parts, added whole or not at all (``add_contributor_to``, which uses
    ``editing.add_contributor``); only its comment changes afterwards."""

    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS)

    class Meta:
        model = Contributor
        fields = ["id", "scu", "reference", "comment", "legacy_issue", "proposed", "parts"]
        read_only_fields = ["legacy_issue", "proposed"]
        create_only = ["scu", "reference", "parts"]
        validators = []  # the service reports a second contributor from one reference on the field "reference"

    def validate(self, attrs):
        if self.instance is None:
            reference = attrs["reference"]
            attrs["parts"] = validate_spans(
                attrs["parts"], reference.text, f"Part of reference {reference.external_id}"
            )
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.add_contributor_to(
                    validated_data["scu"],
                    requesting_user(self),
                    reference=validated_data["reference"],
                    spans=validated_data["parts"],
                    comment=validated_data.get("comment", ""),
                    expected_revision=expected_revision_of(self),
                ),
            )

    def update(self, instance, validated_data):
        if "comment" not in validated_data:
            return instance
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.update_contributor(
                    instance,
                    requesting_user(self),
                    comment=validated_data["comment"],
                    expected_revision=expected_revision_of(self),
                ),
            )


class ContributorPartSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContributorPart
        fields = ["id", "reference", "start", "end"]


class FullContributorSerializer(serializers.ModelSerializer):
    """A contributor with its DUCView label (its parts' texts joined with '...') and parts."""

    label = serializers.CharField(read_only=True)  # derived from the parts, never written
    parts = ContributorPartSerializer(many=True)

    class Meta:
        model = Contributor
        fields = ["id", "reference", "label", "comment", "legacy_issue", "review_note", "proposed", "parts"]


class FullSCUSerializer(serializers.ModelSerializer):
    weight = serializers.IntegerField()
    contributors = FullContributorSerializer(many=True)

    class Meta:
        model = SCU
        fields = ["id", "uid", "label", "comment", "proposed", "weight", "contributors"]


class PyramidContentSerializer(serializers.ModelSerializer):
    """What an annotator reads of the pyramid a peer is annotated against."""

    references = TextSerializer(many=True)
    scus = serializers.SerializerMethodField()

    class Meta:
        model = Pyramid
        fields = ["id", "revision", "references", "scus"]

    @extend_schema_field(FullSCUSerializer(many=True))
    def get_scus(self, pyramid) -> list[dict]:
        """Read as rows, not instances, and kept per state of the pyramid (``pyramid_scus``)."""
        return pyramid_scus(pyramid)


# SCUs merged in one request (a pyramid has about 100 SCUs; the bound keeps one request's work small).
MAX_MERGE_SOURCES = 100


class PartInput(StrictMixin, serializers.Serializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)


class MoveInput(StrictMixin, serializers.Serializer):
    scu = serializers.IntegerField()


class SplitInput(StrictMixin, serializers.Serializer):
    label = serializers.CharField(required=False, allow_blank=False, validators=[LABEL_LENGTH])


class MergeInput(StrictMixin, serializers.Serializer):
    sources = serializers.ListField(child=serializers.IntegerField(), allow_empty=False, max_length=MAX_MERGE_SOURCES)


class AcceptedContributorInput(StrictMixin, serializers.Serializer):
    """A proposed contributor the expert accepted: its reference (an id, looked up among the
    pyramid's own references: ``accepted_contributors``) and parts (as proposed, or edited)."""

    reference = serializers.IntegerField()
    parts = PartInput(many=True, allow_empty=False, max_length=MAX_PARTS)


# Contributors accepted in one request: one per reference of the pyramid (DUC has 4-10 references).
MAX_ACCEPTED = 50


class AcceptContributorsInput(StrictMixin, serializers.Serializer):
    contributors = AcceptedContributorInput(many=True, allow_empty=False, max_length=MAX_ACCEPTED)


class AcceptSCUInput(AcceptContributorsInput):
    label = serializers.CharField(allow_blank=False, validators=[LABEL_LENGTH])


def accepted_contributors(pyramid: Pyramid, accepted: list[dict]) -> list[tuple[ReferenceSummary, list]]:
    """(reference, spans) of each accepted contributor, its reference one of the pyramid's (any
    other is "not one of the pyramid's references", whether it exists or not) and its spans inside
    the reference's text."""
    references = {r.pk: r for r in pyramid.references.all()}
    out, errors = [], {}
    for index, contributor in enumerate(accepted):
        reference = references.get(contributor["reference"])
        if reference is None:
            errors[index] = {"reference": ["This reference summary is not one of the pyramid's references."]}
            continue
        try:
            spans = validate_spans(contributor["parts"], reference.text, f"Part of reference {reference.external_id}")
        except serializers.ValidationError as error:
            errors[index] = error.detail
            continue
        out.append((reference, spans))
    if errors:
        raise serializers.ValidationError({"contributors": errors})
    return out


class ProposedPartSerializer(serializers.Serializer):
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class ProposedContributorSerializer(serializers.Serializer):
    reference = serializers.IntegerField()
    parts = ProposedPartSerializer(many=True)
    text = serializers.CharField()


class ContributorProposalSerializer(ProposedContributorSerializer):
    """A proposed contributor (``assistance.contributor_proposals``), best first."""

    confidence = serializers.FloatField()
    why = serializers.CharField()


class SCUProposalSerializer(serializers.Serializer):
    """A proposed new SCU (``assistance.scu_proposals``), best first."""

    label = serializers.CharField()
    confidence = serializers.FloatField()
    contributors = ProposedContributorSerializer(many=True)
