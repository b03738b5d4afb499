"""The history's REST serializer: one recorded change of a document, as its ``history/`` lists it."""

from rest_framework import serializers

from annotation.history.models import Change


class ChangeSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Change
        fields = ["id", "action", "summary", "user", "revision", "undo_state", "created_at", "before", "after"]
