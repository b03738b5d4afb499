"""Serializers: strict about their input, validating through the models and services.

- Unknown or read-only keys are refused (a typo must not be silently ignored); keys that identify
  an object's place (its topic, pyramid, ...) cannot change after creation.
- Related ids are looked up among the objects the requesting user may see, so an id you may not
  see is "does not exist" (400), never a leak.
- Model ``clean`` rules and the editing services give field-level messages; their Django
  ``ValidationError`` becomes a 400 with the same fields.
"""
from contextlib import contextmanager

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.settings import api_settings
from rest_framework.validators import UniqueTogetherValidator, UniqueValidator

from scoring.model import Convention

from annotation.models import (
    SCU, Assignment, Contributor, ContributorPart, Dataset, PeerAnnotation, PeerMatch, PeerMatchPart,
    PeerSummary, Pyramid, ReferenceSummary, Topic,
)
from annotation.pyramids.spans import MAX_PARTS, validate_span
from annotation.corpus import assignments
from annotation.peers import actions as peer_actions
from annotation.peers import results
from annotation.pyramids import actions as pyramid_actions
from annotation.jobs import queue
from annotation.access import rules as permissions
from annotation.pyramids.scu_documents import pyramid_scus
from annotation.api.versions import expected_revision


NON_FIELD_ERRORS_KEY = api_settings.NON_FIELD_ERRORS_KEY
SCORE_CONVENTION = Convention.NIST.value  # the documents show the official scores; exports offer both


@contextmanager
def django_errors_as_drf():
    """Re-raise a model/service ValidationError as DRF's, keeping its field names."""
    try:
        yield
    except DjangoValidationError as error:
        if hasattr(error, "error_dict"):
            detail = {(NON_FIELD_ERRORS_KEY if key == NON_FIELD_ERRORS else key): value for key, value in error.message_dict.items()}
        else:
            detail = {NON_FIELD_ERRORS_KEY: error.messages}
        raise serializers.ValidationError(detail) from error


class StrictMixin:
    """Refuse input keys that are not writable fields of this serializer."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            errors = {}
            for key in data:
                field = self.fields.get(key)
                if field is None:
                    errors[key] = ["Unknown field."]
                elif field.read_only:
                    errors[key] = ["This field is read-only."]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class VisibleRelationsMixin:
    """Related ids are looked up among the objects the requesting user may see: one you may not
    see is "does not exist" (400) like one that does not exist."""

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        for field in fields.values():
            related = getattr(field, "child_relation", field)
            queryset = getattr(related, "queryset", None)
            if request is not None and queryset is not None and queryset.model in permissions.RULES:
                related.queryset = permissions.visible(request.user, queryset)
        return fields


class PermissionBeforeUniquenessMixin:
    """On a create, who may create here is asked before any uniqueness check: a uniqueness error
    (400 for a taken name, 403 for a free one) would tell someone who may not create here the names
    of what they may not see (a hidden topic's id, another's dataset or run). The field-level unique
    validators run after the permission check, with the serializer's own ones."""

    def get_fields(self):
        fields = super().get_fields()
        self._unique_fields = {}
        for name, field in fields.items():
            unique = [v for v in field.validators if isinstance(v, UniqueValidator)]
            if unique:
                field.validators = [v for v in field.validators if not isinstance(v, UniqueValidator)]
                self._unique_fields[name] = (field, unique)
        return fields

    def run_validators(self, value):
        self.fields  # noqa: B018  (builds ``_unique_fields``)
        view, request = self.context.get("view"), self.context.get("request")
        uniqueness = self._unique_fields or any(isinstance(v, UniqueTogetherValidator) for v in self.get_validators())
        creating = self.instance is None and getattr(view, "action", None) == "create"
        if uniqueness and creating and request is not None and isinstance(value, dict):
            permissions.check_create(request.user, self.Meta.model, value)
        for name, (field, validators) in self._unique_fields.items():
            if field.source in value:
                try:
                    for validator in validators:
                        validator(value[field.source], field)
                except serializers.ValidationError as error:
                    raise serializers.ValidationError({name: error.detail}) from None
        super().run_validators(value)


class StrictModelSerializer(StrictMixin, PermissionBeforeUniquenessMixin, VisibleRelationsMixin,
                            serializers.ModelSerializer):
    """ModelSerializer that scopes related ids to the user, refuses moves and runs ``full_clean``.

    ``Meta.create_only``: fields that may be given on creation only (where the object lives, and
    texts that spans point into).
    """

    def to_internal_value(self, data):
        if self.instance is not None and isinstance(data, dict):
            moved = {key: ["Cannot be changed after creation."] for key in getattr(self.Meta, "create_only", ()) if key in data}
            if moved:
                raise serializers.ValidationError(moved)
        return super().to_internal_value(data)

    def _save(self, instance, validated_data):
        many = {name: validated_data.pop(name) for name in list(validated_data) if name in self._many_to_many()}
        for name, value in validated_data.items():
            setattr(instance, name, value)
        with transaction.atomic():
            with django_errors_as_drf():
                instance.full_clean()
            instance.save()
            for name, value in many.items():
                getattr(instance, name).set(value)
        return instance

    def _many_to_many(self):
        return {f.name for f in self.Meta.model._meta.many_to_many}

    def create(self, validated_data):
        return self._save(self.Meta.model(), validated_data)

    def update(self, instance, validated_data):
        return self._save(instance, validated_data)


class DatasetSerializer(StrictModelSerializer):
    """A dataset; its coordinators are chosen among ``rules.coordinator_candidates`` (anyone else is
    "does not exist", 400), so a coordinator cannot make an annotator or an imported identity one."""

    class Meta:
        model = Dataset
        fields = ["id", "name", "description", "coordinators", "created_at"]
        read_only_fields = ["created_at"]

    def get_fields(self):
        fields = super().get_fields()
        instance = self.instance if isinstance(self.instance, Dataset) else None
        fields["coordinators"].child_relation.queryset = permissions.coordinator_candidates(instance)
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
            raise serializers.ValidationError({"references": [f"Reference {', '.join(foreign)} belongs to another topic than the pyramid."]})
        if self.instance is not None and "references" in attrs:
            # Weights count references: one with contributors cannot leave the pyramid.
            used = set(ContributorPart.objects.filter(contributor__scu__pyramid=self.instance).values_list("reference__external_id", flat=True))
            dropped = sorted(used - {r.external_id for r in references})
            if dropped:
                raise serializers.ValidationError({"references": [f"Reference {', '.join(dropped)} has contributors in this pyramid: remove them first."]})
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


def _user(serializer):
    return serializer.context["request"].user


def _done(serializer, outcome):
    """Keep the action's outcome for the view (its revision and delta go into the answer); the object."""
    serializer.outcome = outcome
    return outcome.value


def _revision(serializer) -> int | None:
    """The document revision the client last read (If-Match), checked by the action under its lock."""
    return expected_revision(serializer.context["request"]) if serializer.context.get("versioned") else None


class SCUSerializer(StrictModelSerializer):
    """An SCU, created from its first contributor's span(s) in one reference (``create_scu``: the
    uid is the next free one). ``weight`` is its number of contributors (derived, read-only).
    Changes go through ``pyramid_actions``, so each is one entry of the pyramid's history."""

    weight = serializers.IntegerField(read_only=True)
    reference = serializers.PrimaryKeyRelatedField(queryset=ReferenceSummary.objects.all(), write_only=True)
    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS, write_only=True)

    class Meta:
        model = SCU
        fields = ["id", "pyramid", "uid", "label", "comment", "weight", "reference", "parts"]
        read_only_fields = ["uid"]
        create_only = ["pyramid", "reference", "parts"]

    def validate(self, attrs):
        if self.instance is None:
            if "comment" in attrs:
                raise serializers.ValidationError({"comment": ["Comment the SCU once it exists (PATCH)."]})
            reference = attrs["reference"]
            attrs["parts"] = validate_spans(attrs["parts"], reference.text, f"Part of reference {reference.external_id}")
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return _done(self, pyramid_actions.create_scu(
                validated_data["pyramid"], _user(self), label=validated_data["label"],
                reference=validated_data["reference"], spans=validated_data["parts"], expected_revision=_revision(self),
            ))

    def update(self, instance, validated_data):
        if not validated_data:
            return instance
        with django_errors_as_drf():
            return _done(self, pyramid_actions.update_scu(instance, _user(self), label=validated_data.get("label"), comment=validated_data.get("comment"),
                                                          expected_revision=_revision(self)))


class ContributorSerializer(StrictModelSerializer):
    """A contributor with its parts, added whole or not at all (``add_contributor_to``, which uses
    ``editing.add_contributor``); only its comment changes afterwards."""

    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS)

    class Meta:
        model = Contributor
        fields = ["id", "scu", "reference", "comment", "legacy_issue", "parts"]
        read_only_fields = ["legacy_issue"]
        create_only = ["scu", "reference", "parts"]
        validators = []  # the service reports a second contributor from one reference on the field "reference"

    def validate(self, attrs):
        if self.instance is None:
            reference = attrs["reference"]
            attrs["parts"] = validate_spans(attrs["parts"], reference.text, f"Part of reference {reference.external_id}")
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return _done(self, pyramid_actions.add_contributor_to(
                validated_data["scu"], _user(self), reference=validated_data["reference"],
                spans=validated_data["parts"], comment=validated_data.get("comment", ""), expected_revision=_revision(self),
            ))

    def update(self, instance, validated_data):
        if "comment" not in validated_data:
            return instance
        with django_errors_as_drf():
            return _done(self, pyramid_actions.update_contributor(instance, _user(self), comment=validated_data["comment"], expected_revision=_revision(self)))


class PeerAnnotationSerializer(StrictModelSerializer):
    """One annotator's reading of a peer; its annotator is whoever creates it."""

    annotator = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = PeerAnnotation
        fields = ["id", "peer", "pyramid", "annotator", "status", "source", "revision", "created_at", "updated_at"]
        create_only = ["peer", "pyramid"]
        validators = []  # uniqueness per annotator is checked by full_clean, once the annotator is set

    def create(self, validated_data):
        validated_data["annotator"] = self.context["request"].user
        return super().create(validated_data)

    def update(self, instance, validated_data):
        """Only ``status`` and ``source`` change (their fields validate them); what ``full_clean``
        would check (the peer, pyramid and annotator, their topic, uniqueness) is fixed at creation,
        and each check is a query on "Done, next peer". Only those columns are written."""
        for name, value in validated_data.items():
            setattr(instance, name, value)
        if validated_data:
            instance.save(update_fields=[*validated_data, "updated_at"])
        return instance


def own_peer(user, assignment_id, peer_id) -> tuple[Assignment, PeerSummary]:
    """The assignment (the caller's own peer annotation work: 404 for anyone else, coordinators
    included, as annotation is blind) and one of its topic's peers."""
    if not str(assignment_id).isdigit():  # a router's pk is any text: no such assignment
        raise Http404("No such assignment of yours.")
    assignment = (Assignment.objects.select_related("topic")
                  .filter(pk=assignment_id, annotator_id=user.pk, task=Assignment.Task.ANNOTATE_PEERS).first())
    if assignment is None:
        raise Http404("No such assignment of yours.")
    peer = assignment.topic.peersummarys.filter(pk=peer_id).first() if str(peer_id).isdigit() else None
    if peer is None:
        raise Http404("No such peer in this assignment's topic.")
    return assignment, peer


class StartAnnotationInput(StrictMixin, serializers.Serializer):
    """What the first action of an untouched peer may set as it creates the annotation."""

    status = serializers.ChoiceField(choices=PeerAnnotation.Status.choices, required=False)


class PeerMatchSerializer(StrictModelSerializer):
    """A match (``scu`` null: a non-matching unit) with its peer spans (``peer_actions.match_span``,
    which uses ``editing.add_match``); changing ``scu`` afterwards moves it.

    The first match of an untouched peer (no annotation yet: issue 21) names the ``assignment`` and
    ``peer`` in place of the ``annotation``: the annotation is created with it, in one request and
    one transaction (``assignments.annotation_for``: once, whatever the tabs), or not at all."""

    annotation = serializers.PrimaryKeyRelatedField(queryset=PeerAnnotation.objects.select_related("peer"), required=False)  # spans are checked against its text
    assignment = serializers.IntegerField(write_only=True, required=False,
                                          help_text="Your peer annotation assignment (in place of `annotation`, with `peer`: the first match of an " "untouched peer).")
    peer = serializers.IntegerField(write_only=True, required=False, help_text="A peer summary of that assignment's topic (with `assignment`).")
    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS)

    class Meta:
        model = PeerMatch
        fields = ["id", "annotation", "assignment", "peer", "scu", "parts"]
        create_only = ["annotation", "assignment", "peer", "parts"]

    def validate(self, attrs):
        if self.instance is None:
            place = [key for key in ("assignment", "peer") if key in attrs]
            if "annotation" in attrs and place:
                raise serializers.ValidationError({key: ["Give the annotation, or the assignment and peer of a peer not annotated yet; not both."] for key in place})
            if "annotation" not in attrs:
                if len(place) < 2:
                    raise serializers.ValidationError({"annotation": ["This field is required (or the assignment and peer of a peer not annotated yet)."]})
                attrs["place"] = own_peer(_user(self), attrs.pop("assignment"), attrs.pop("peer"))  # a 404 for anyone else's
            peer = attrs["annotation"].peer if "annotation" in attrs else attrs["place"][1]
            attrs["parts"] = validate_spans(attrs["parts"], peer.text, "Part of the peer summary")
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return _done(self, peer_actions.match_span(
                validated_data["annotation"], _user(self), scu=validated_data.get("scu"), spans=validated_data["parts"],
                expected_revision=_revision(self),
            ))

    def update(self, instance, validated_data):
        if "scu" not in validated_data:
            return instance
        with django_errors_as_drf():
            return _done(self, peer_actions.move_match(instance, validated_data["scu"], _user(self), expected_revision=_revision(self)))


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
        if self.instance is None and request is not None and not permissions.can_change(request.user, topic):
            raise exceptions.PermissionDenied("You may not create this here.")
        return topic

    def create(self, validated_data):
        validated_data["created_by"] = self.context["request"].user
        return super().create(validated_data)


# --- One-request reads (the documents of docs/editing-api.md) -----------------------------

class CanEditMixin(serializers.Serializer):
    can_edit = serializers.SerializerMethodField()

    def get_can_edit(self, obj) -> bool:
        return permissions.can_change(self.context["request"].user, obj)


class TopicBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Topic
        fields = ["id", "external_id", "title"]


class TextSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReferenceSummary
        fields = ["id", "external_id", "text"]


class ContributorPartSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContributorPart
        fields = ["id", "reference", "start", "end"]


class FullContributorSerializer(serializers.ModelSerializer):
    """A contributor with its DUCView label (its parts' texts joined with '...') and parts."""

    label = serializers.CharField(read_only=True)   # derived from the parts, never written
    parts = ContributorPartSerializer(many=True)

    class Meta:
        model = Contributor
        fields = ["id", "reference", "label", "comment", "legacy_issue", "review_note", "parts"]


class FullSCUSerializer(serializers.ModelSerializer):
    weight = serializers.IntegerField()
    contributors = FullContributorSerializer(many=True)

    class Meta:
        model = SCU
        fields = ["id", "uid", "label", "comment", "weight", "contributors"]


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


def _current(score) -> bool:
    return score is not None and score.is_current


class PyramidFullSerializer(CanEditMixin, PyramidContentSerializer):
    """A pyramid with everything its page needs, and the stored scores of the annotations against
    it that the user may see and that count (``results.counted``: finished ones; one only opened
    is no score), ``current: false`` while being recomputed (no value is given then)."""

    topic = TopicBriefSerializer()
    scores = serializers.SerializerMethodField()
    scores_delayed = serializers.SerializerMethodField()

    class Meta:
        model = Pyramid
        fields = ["id", "revision", "status", "can_edit", "topic", "creator", "references", "scus", "scores", "scores_delayed"]

    def get_scores_delayed(self, pyramid) -> str | None:
        """Why scores that are not current cannot be recomputed now (e.g. Redis unreachable); None otherwise."""
        rows = self.get_scores(pyramid)
        return queue.scoring_delayed() if any(not row["current"] for row in rows) else None

    def get_scores(self, pyramid) -> list[dict]:
        rows = []
        for annotation in pyramid.visible_annotations:
            score = next(iter(annotation.scores.all()), None)
            current = _current(score)
            rows.append({
                "annotation": annotation.pk, "peer": annotation.peer.external_id,
                "annotator": annotation.annotator.username if annotation.annotator_id else "",
                "version": results.version_of(annotation),
                "modified": score.values.get("modified") if current else None,
                "original": score.values.get("original") if current else None,
                "convention": SCORE_CONVENTION, "current": current,
            })
        return rows


class MatchPartSerializer(serializers.ModelSerializer):
    class Meta:
        model = PeerMatchPart
        fields = ["id", "start", "end"]


class FullMatchSerializer(serializers.ModelSerializer):
    """A match with its parts; ``review_note`` says why an imported match needs a look (its
    evidence kept at the file's offsets, its label found nowhere), '' otherwise."""

    parts = MatchPartSerializer(many=True)

    class Meta:
        model = PeerMatch
        fields = ["id", "scu", "review_note", "parts"]


class PeerTextSerializer(serializers.ModelSerializer):
    class Meta:
        model = PeerSummary
        fields = ["id", "external_id", "text"]


class AnnotationFullSerializer(CanEditMixin, serializers.ModelSerializer):
    """An annotation with its peer text, matches (``scu: null`` = non-matching), the pyramid it is
    against (references, SCUs with weights and contributors) and its stored score; ``values`` is
    given only while the score is current."""

    peer = PeerTextSerializer()
    pyramid = PyramidContentSerializer()
    matches = FullMatchSerializer(many=True)
    score = serializers.SerializerMethodField()
    next = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = PeerAnnotation
        fields = ["id", "revision", "status", "can_edit", "annotator", "peer", "pyramid", "matches", "score", "next", "progress"]

    def _walk(self, annotation) -> dict:
        if not hasattr(self, "_walked"):
            self._walked = assignments.walk(annotation)
        return self._walked

    def get_next(self, annotation) -> dict | None:
        """The next peer of the topic the annotator has not finished (None: all done, or not an assignment)."""
        return self._walk(annotation)["next"]

    def get_progress(self, annotation) -> dict | None:
        return self._walk(annotation)["progress"]

    def get_score(self, annotation) -> dict:
        score = next(iter(annotation.scores.all()), None)
        current = _current(score)
        return {"convention": SCORE_CONVENTION, "current": current, "values": score.values if current else None,
                "delayed": None if current else queue.scoring_delayed()}


class UnsavedAnnotationFullSerializer(AnnotationFullSerializer):
    """The ``full`` document of a peer not acted on yet (``assignments.unsaved_annotation``): no id,
    no matches, no stored score; editable (only its annotator is shown it)."""

    matches = serializers.SerializerMethodField()

    def get_matches(self, annotation) -> list:
        return []

    def get_score(self, annotation) -> dict:
        return {"convention": SCORE_CONVENTION, "current": False, "values": None, "delayed": None}

    def get_can_edit(self, annotation) -> bool:
        return True


class StoredScoreSerializer(serializers.ModelSerializer):
    """An annotation's stored scores: ``current`` while computed from its present revision and its
    pyramid's; ``scores`` (convention -> ``PeerScore.as_dict()``) only then; ``delayed`` says why
    stale scores cannot be recomputed now (e.g. Redis unreachable)."""

    pyramid_revision = serializers.IntegerField(source="pyramid.revision")
    current = serializers.SerializerMethodField()
    scores = serializers.SerializerMethodField()
    delayed = serializers.SerializerMethodField()

    class Meta:
        model = PeerAnnotation
        fields = ["id", "revision", "pyramid_revision", "current", "scores", "delayed"]

    def _current(self, annotation) -> dict:
        return {s.convention: s.values for s in annotation.scores.all()
                if (s.annotation_revision, s.pyramid_revision) == (annotation.revision, annotation.pyramid.revision)}

    def get_current(self, annotation) -> bool:
        return len(self._current(annotation)) == len(Convention)

    def get_scores(self, annotation) -> dict | None:
        return self._current(annotation) if self.get_current(annotation) else None

    def get_delayed(self, annotation) -> str | None:
        return None if self.get_current(annotation) else queue.scoring_delayed()
