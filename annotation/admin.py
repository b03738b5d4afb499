"""Admin pages for every model: the coordinators' back office and the place to browse data."""

from django.contrib import admin
from django.db.models import Count

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.dashboards.models import Judgment
from annotation.history.models import Change
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, PeerMatchPart, TopicAgreement
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid, PyramidAgreement


class ContributorPartInline(admin.TabularInline):
    model = ContributorPart
    extra = 0
    fields = ("reference", "start", "end", "text")
    readonly_fields = ("text",)


class ContributorInline(admin.TabularInline):
    model = Contributor
    extra = 0
    fields = ("reference", "label", "comment", "legacy_issue")
    readonly_fields = ("label",)
    show_change_link = True


class PeerMatchPartInline(admin.TabularInline):
    model = PeerMatchPart
    extra = 0
    fields = ("start", "end", "text")
    readonly_fields = ("text",)


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "topic_count", "created_at")
    search_fields = ("name", "description")
    filter_horizontal = ("coordinators",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_topics=Count("topics"))

    @admin.display(ordering="_topics", description="topics")
    def topic_count(self, obj):
        return obj._topics


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("external_id", "dataset", "title", "revision")
    list_filter = ("dataset",)
    search_fields = ("external_id", "title", "narrative")


@admin.register(ReferenceSummary)
class ReferenceSummaryAdmin(admin.ModelAdmin):
    list_display = ("external_id", "topic", "length")
    list_filter = ("topic__dataset",)
    search_fields = ("external_id", "topic__external_id", "text")
    list_select_related = ("topic__dataset",)

    @admin.display(description="characters")
    def length(self, obj):
        return len(obj.text)


@admin.register(PeerSummary)
class PeerSummaryAdmin(ReferenceSummaryAdmin):
    list_display = ("external_id", "topic", "system_id", "length")


@admin.register(Pyramid)
class PyramidAdmin(admin.ModelAdmin):
    list_display = ("id", "topic", "creator", "status", "scu_count", "source", "updated_at")
    list_filter = ("status", "topic__dataset")
    search_fields = ("topic__external_id", "creator__username", "source")
    list_select_related = ("topic__dataset", "creator")
    filter_horizontal = ("references",)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_scus=Count("scus"))

    @admin.display(ordering="_scus", description="SCUs")
    def scu_count(self, obj):
        return obj._scus


@admin.register(SCU)
class SCUAdmin(admin.ModelAdmin):
    list_display = ("uid", "label", "weight", "pyramid")
    list_filter = ("pyramid__topic__dataset",)
    search_fields = ("label", "comment", "pyramid__topic__external_id")
    list_select_related = ("pyramid__topic__dataset", "pyramid__creator")
    inlines = [ContributorInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_weight=Count("contributors"))

    @admin.display(ordering="_weight", description="weight")
    def weight(self, obj):
        return obj._weight


@admin.register(Contributor)
class ContributorAdmin(admin.ModelAdmin):
    list_display = ("id", "scu", "reference", "label", "legacy_issue")
    list_filter = ("scu__pyramid__topic__dataset", ("legacy_issue", admin.EmptyFieldListFilter))
    search_fields = ("scu__label", "comment", "legacy_issue", "parts__reference__external_id")
    list_select_related = ("scu", "reference__topic")
    inlines = [ContributorPartInline]


@admin.register(PeerAnnotation)
class PeerAnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "peer", "annotator", "pyramid", "status", "match_count", "source")
    list_filter = ("status", "peer__topic__dataset")
    search_fields = ("peer__external_id", "peer__topic__external_id", "annotator__username", "source")
    list_select_related = ("peer__topic", "annotator", "pyramid__topic", "pyramid__creator")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_matches=Count("matches"))

    @admin.display(ordering="_matches", description="matches")
    def match_count(self, obj):
        return obj._matches


@admin.register(PeerMatch)
class PeerMatchAdmin(admin.ModelAdmin):
    list_display = ("id", "annotation", "scu")
    search_fields = ("scu__label", "annotation__peer__external_id")
    list_select_related = ("annotation__peer__topic", "annotation__annotator", "scu")
    raw_id_fields = ("annotation", "scu")
    inlines = [PeerMatchPartInline]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("annotator", "topic", "task", "status", "created_at")
    list_filter = ("task", "status", "topic__dataset")
    search_fields = ("annotator__username", "topic__external_id")
    list_select_related = ("annotator", "topic__dataset")


@admin.register(AnnotationScore)
class AnnotationScoreAdmin(admin.ModelAdmin):
    list_display = ("annotation", "convention", "modified", "computed_at")
    list_filter = ("convention",)
    search_fields = ("annotation__peer__external_id", "annotation__peer__topic__external_id")
    list_select_related = ("annotation__peer__topic", "annotation__annotator")
    readonly_fields = ("values",)

    @admin.display(description="modified score")
    def modified(self, obj):
        return obj.values.get("modified")


@admin.register(TopicAgreement)
class TopicAgreementAdmin(admin.ModelAdmin):
    list_display = ("topic", "topic_revision", "computed_at")
    search_fields = ("topic__external_id",)
    readonly_fields = ("values",)


@admin.register(PyramidAgreement)
class PyramidAgreementAdmin(admin.ModelAdmin):
    """Stored construction agreement of a topic's pyramids (``pyramids.construction``)."""

    list_display = ("topic", "topic_revision", "computed_at")
    search_fields = ("topic__external_id",)
    readonly_fields = ("values", "pyramid_revisions")


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Imported judgments (content responsiveness...), browsed by dataset, topic and metric."""

    list_display = ("topic", "summary", "metric", "value", "source")
    list_filter = ("metric", "topic__dataset")
    search_fields = ("summary", "metric", "topic__external_id", "source")
    list_select_related = ("topic__dataset",)


@admin.register(Change)
class ChangeAdmin(admin.ModelAdmin):
    """The audit history: who changed which pyramid or annotation, when, and how (read-only)."""

    list_display = ("created_at", "user", "action", "summary", "pyramid", "annotation", "revision", "undo_state")
    list_filter = ("action", "undo_state")
    search_fields = ("summary", "user__username")
    list_select_related = ("user", "pyramid__topic", "annotation__peer__topic")
    readonly_fields = [f.name for f in Change._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
