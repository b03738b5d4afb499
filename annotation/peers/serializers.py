"""The peers' REST serializers: peer annotations and their matches (each change one recorded
action of ``peers.actions``), and the ``full`` documents an editor reads in one request: an
annotation with its pyramid, a pyramid with the stored scores of the annotations against it."""

from django.http import Http404
from rest_framework import serializers

from annotation.api.serializers import (
    CanEditMixin,
    ComposedRelatedField,
    StrictMixin,
    StrictModelSerializer,
    django_errors_as_drf,
    expected_revision_of,
    keep_outcome,
    requesting_user,
)
from annotation.corpus.models import Assignment, PeerSummary
from annotation.corpus.serializers import PeerTextSerializer, TopicBriefSerializer
from annotation.jobs import queue
from annotation.peers import actions, assignments, results
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.serializers import PyramidContentSerializer, SpanSerializer, validate_spans
from annotation.pyramids.spans import MAX_PARTS
from scoring.model import Convention

SCORE_CONVENTION = Convention.NIST.value  # the documents show the official scores; exports offer both


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
    assignment = (
        Assignment.objects.select_related("topic")
        .filter(pk=assignment_id, annotator_id=user.pk, task=Assignment.Task.ANNOTATE_PEERS)
        .first()
    )
    if assignment is None:
        raise Http404("No such assignment of yours.")
    peer = assignment.topic.peersummarys.filter(pk=peer_id).first() if str(peer_id).isdigit() else None
    if peer is None:
        raise Http404("No such peer in this assignment's topic.")
    return assignment, peer


class StartAnnotationInput(StrictMixin, serializers.Serializer):
    """What the first action of an untouched peer may set as it creates the annotation."""

    status = serializers.ChoiceField(choices=PeerAnnotation.Status.choices, required=False)


def annotation_or_place(serializer, attrs) -> PeerSummary:
    """A write names the ``annotation``, or (the first write of an untouched peer: issue 21) the
    ``assignment`` and ``peer``, which become ``attrs["place"]`` (a 404 for anyone else's). Returns
    the peer, whose text the spans are checked against."""
    place = [key for key in ("assignment", "peer") if key in attrs]
    if "annotation" in attrs and place:
        raise serializers.ValidationError(
            {
                key: ["Give the annotation, or the assignment and peer of a peer not annotated yet; not both."]
                for key in place
            }
        )
    if "annotation" not in attrs:
        if len(place) < 2:
            raise serializers.ValidationError(
                {"annotation": ["This field is required (or the assignment and peer of a peer not annotated yet)."]}
            )
        attrs["place"] = own_peer(requesting_user(serializer), attrs.pop("assignment"), attrs.pop("peer"))
    return attrs["annotation"].peer if "annotation" in attrs else attrs["place"][1]


def with_peer(annotations):
    """Annotations read with their peer (a match's spans are checked against its text)."""
    return annotations.select_related("peer")


class MatchParts(serializers.ListSerializer):
    """A match's parts: those it was just written with (``editing.write_match`` keeps them on the
    match, so the save's answer reads nothing again), else its stored ones."""

    def get_attribute(self, instance):
        written = getattr(instance, "written_parts", None)
        return written if written is not None else super().get_attribute(instance)


class PeerMatchSerializer(StrictModelSerializer):
    """A match (``scu`` null: a non-matching unit) with its peer spans (``peer_actions.match_span``,
    which uses ``editing.add_match``); changing ``scu`` afterwards moves it.

    The first match of an untouched peer (no annotation yet: issue 21) names the ``assignment`` and
    ``peer`` in place of the ``annotation``: the annotation is created with it, in one request and
    one transaction (``assignments.annotation_for``: once, whatever the tabs), or not at all."""

    annotation = ComposedRelatedField(PeerAnnotation, with_peer, required=False)
    assignment = serializers.IntegerField(
        write_only=True,
        required=False,
        help_text="Your peer annotation assignment "
        "(in place of `annotation`, with `peer`: the first match of an untouched peer).",
    )
    peer = serializers.IntegerField(
        write_only=True, required=False, help_text="A peer summary of that assignment's topic (with `assignment`)."
    )
    parts = MatchParts(child=SpanSerializer(), allow_empty=False, max_length=MAX_PARTS)

    class Meta:
        model = PeerMatch
        fields = ["id", "annotation", "assignment", "peer", "scu", "parts"]
        create_only = ["annotation", "assignment", "peer", "parts"]

    def validate(self, attrs):
        if self.instance is None:
            peer = annotation_or_place(self, attrs)
            attrs["parts"] = validate_spans(attrs["parts"], peer.text, "Part of the peer summary")
        return attrs

    def create(self, validated_data):
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.match_span(
                    validated_data["annotation"],
                    requesting_user(self),
                    scu=validated_data.get("scu"),
                    spans=validated_data["parts"],
                    expected_revision=expected_revision_of(self),
                ),
            )

    def update(self, instance, validated_data):
        if "scu" not in validated_data:
            return instance
        with django_errors_as_drf():
            return keep_outcome(
                self,
                actions.move_match(
                    instance, validated_data["scu"], requesting_user(self), expected_revision=expected_revision_of(self)
                ),
            )


MAX_ACCEPTED = 100  # matches one "accept" may make (a peer holds a few dozen at most)


class AcceptedMatchSerializer(StrictMixin, serializers.Serializer):
    scu = serializers.PrimaryKeyRelatedField(queryset=SCU.objects.all())
    parts = SpanSerializer(many=True, allow_empty=False, max_length=MAX_PARTS)


class AcceptMatchesSerializer(StrictMixin, serializers.Serializer):
    """Several matches to SCUs made in one action (``peer_actions.accept_matches``: Autoannotate's
    reviewed suggestions accepted with one key, so one revision and one undo step). Names the
    annotation, or the assignment and peer of an untouched peer, as a single match does."""

    annotation = ComposedRelatedField(PeerAnnotation, with_peer, required=False)
    assignment = serializers.IntegerField(required=False, help_text="Your peer annotation assignment (with `peer`).")
    peer = serializers.IntegerField(required=False, help_text="A peer summary of that assignment's topic.")
    matches = AcceptedMatchSerializer(many=True, allow_empty=False, max_length=MAX_ACCEPTED)

    def validate(self, attrs):
        peer = annotation_or_place(self, attrs)
        for at, match in enumerate(attrs["matches"]):
            match["parts"] = validate_spans(match["parts"], peer.text, f"Part of the peer summary (match {at + 1})")
        return attrs


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
        fields = [
            "id",
            "revision",
            "status",
            "can_edit",
            "topic",
            "creator",
            "references",
            "scus",
            "scores",
            "scores_delayed",
        ]

    def get_scores_delayed(self, pyramid) -> str | None:
        """Why scores that are not current cannot be recomputed now (e.g. Redis unreachable); None otherwise."""
        rows = self.get_scores(pyramid)
        return queue.scoring_delayed() if any(not row["current"] for row in rows) else None

    def get_scores(self, pyramid) -> list[dict]:
        rows = []
        for annotation in pyramid.visible_annotations:
            score = next(iter(annotation.scores.all()), None)
            current = _current(score)
            rows.append(
                {
                    "annotation": annotation.pk,
                    "peer": annotation.peer.external_id,
                    "annotator": annotation.annotator.username if annotation.annotator_id else "",
                    "version": results.version_of(annotation),
                    "modified": score.values.get("modified") if current else None,
                    "original": score.values.get("original") if current else None,
                    "convention": SCORE_CONVENTION,
                    "current": current,
                }
            )
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
        fields = [
            "id",
            "revision",
            "status",
            "can_edit",
            "annotator",
            "peer",
            "pyramid",
            "matches",
            "score",
            "next",
            "progress",
        ]

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
        return {
            "convention": SCORE_CONVENTION,
            "current": current,
            "values": score.values if current else None,
            "delayed": None if current else queue.scoring_delayed(),
        }


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
        return {
            s.convention: s.values
            for s in annotation.scores.all()
            if (s.annotation_revision, s.pyramid_revision) == (annotation.revision, annotation.pyramid.revision)
        }

    def get_current(self, annotation) -> bool:
        return len(self._current(annotation)) == len(Convention)

    def get_scores(self, annotation) -> dict | None:
        return self._current(annotation) if self.get_current(annotation) else None

    def get_delayed(self, annotation) -> str | None:
        return None if self.get_current(annotation) else queue.scoring_delayed()
