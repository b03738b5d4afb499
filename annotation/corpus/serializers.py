"""The corpus's REST serializers: datasets, topics, their reference and peer summaries, assignments,
and the brief forms the documents of other concepts embed (``TopicBriefSerializer``, the texts)."""

from rest_framework import exceptions, serializers
from rest_framework.validators import UniqueTogetherValidator

from annotation.api import access
from annotation.api.serializers import StrictModelSerializer
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic


class DatasetSerializer(StrictModelSerializer):
    """A dataset; its coordinators are chosen among ``rules.coordinator_candidates`` (anyone else is
    "does not exist", 400), so a coordinator cannot make an annotator or an imported identity one."""

    class Meta:
        model = Dataset
        fields = ["id", "name", "description", "assisted_building", "coordinators", "created_at"]
        read_only_fields = ["created_at"]

    def get_fields(self):
        fields = super().get_fields()
        instance = self.instance if isinstance(self.instance, Dataset) else None
        fields["coordinators"].child_relation.queryset = access.coordinator_candidates(instance)
        return fields


class TopicSerializer(StrictModelSerializer):
    class Meta:
        model = Topic
        fields = ["id", "dataset", "external_id", "title", "narrative", "revision"]
        create_only = ["dataset"]


class ReferenceSummarySerializer(StrictModelSerializer):
    class Meta:
        model = ReferenceSummary
        fields = ["id", "topic", "external_id", "text"]
        create_only = ["topic", "text"]


class PeerSummarySerializer(StrictModelSerializer):
    class Meta:
        model = PeerSummary
        fields = ["id", "topic", "external_id", "system_id", "text"]
        create_only = ["topic", "text"]


class AssignmentSerializer(StrictModelSerializer):
    created_by = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = Assignment
        fields = ["id", "topic", "annotator", "task", "status", "created_by", "created_at"]
        create_only = ["topic", "annotator", "task"]

    def get_validators(self):
        """No uniqueness check while validating: it would tell anyone who may not assign here that
        another annotator has this task (400) where everyone else gets the 403. The model's
        ``full_clean`` checks it on save, after the view's permission check."""
        return [v for v in super().get_validators() if not isinstance(v, UniqueTogetherValidator)]

    def validate_topic(self, topic):
        """Who may not assign in this topic is told so before the other fields are looked up
        (otherwise "user 7 does not exist" vs 403 would tell which user ids exist)."""
        request = self.context.get("request")
        if self.instance is None and request is not None and not access.can_change(request.user, topic):
            raise exceptions.PermissionDenied("You may not create this here.")
        return topic

    def create(self, validated_data):
        validated_data["created_by"] = self.context["request"].user
        return super().create(validated_data)


class TopicBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["id", "external_id", "title"]


class TextSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReferenceSummary
        fields = ["id", "external_id", "text"]


class PeerTextSerializer(serializers.ModelSerializer):
    class Meta:
        model = PeerSummary
        fields = ["id", "external_id", "text"]
