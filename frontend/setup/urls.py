"""Set-up pages, mounted at /setup/ (namespace ``setup``)."""

from django.urls import path, register_converter

from . import views


class SummaryKind:
    """``reference`` or ``peer`` (in addresses: ``references/3/``, ``peers/7/``)."""

    regex = "reference|peer"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(SummaryKind, "summary_kind")

app_name = "setup"
D = "<int:dataset_id>/"
T = D + "topics/<int:topic_id>/"
S = T + "<summary_kind:kind>s/<int:summary_id>/"
urlpatterns = [
    path("", views.landing, name="landing"),
    path("datasets/new/", views.dataset_create, name="dataset_new"),
    path(D, views.dataset, name="dataset"),
    path(D + "building/", views.building, name="building"),
    path(D + "topics/add/", views.topics_add, name="topics_add"),
    path(D + "topics/zip/", views.topics_zip, name="topics_zip"),
    path(T, views.topic, name="topic"),
    path(T + "delete/", views.topic_delete, name="topic_delete"),
    path(S, views.summary, name="summary"),
    path(S + "remove/", views.summary_remove, name="summary_remove"),
    path(D + "import/", views.ducview, name="ducview"),
    path(D + "pyramid-set/", views.pyramid_set, name="pyramid_set"),
    path(D + "people/", views.people, name="people"),
    path(D + "export/", views.exports, name="exports"),
]
