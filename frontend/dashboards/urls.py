"""Coordinator dashboards, mounted at /datasets/ (namespace ``dashboards``)."""

from django.urls import path, re_path

from . import adjudication, construction, views

app_name = "dashboards"
D = "<int:dataset_id>/"
urlpatterns = [
    path("", views.dataset_list, name="list"),
    path(D, views.overview, name="overview"),
    path(D + "assignments/", views.assignment_create, name="assignment_create"),
    path(D + "assignments/<int:assignment_id>/", views.assignment_update, name="assignment_update"),
    path(D + "assignments/<int:assignment_id>/delete/", views.assignment_delete, name="assignment_delete"),
    path(D + "status.json", views.status, name="status"),
    path(D + "agreement/", views.agreement, name="agreement"),
    re_path(r"^(?P<dataset_id>[0-9]+)/agreement\.(?P<fmt>csv|json)$", views.agreement_export, name="agreement_export"),
    path(D + "agreement/<str:topic>/", views.agreement_topic, name="agreement_topic"),
    path(D + "agreement/<str:topic>/<str:peer>/", views.agreement_peer, name="agreement_peer"),
    path(
        D + "agreement/<str:topic>/<str:peer>/adjudicate/<int:pyramid_id>/", adjudication.adjudicate, name="adjudicate"
    ),
    path(D + "pyramid-agreement/<str:topic>/", construction.topic, name="construction_topic"),
    path(
        D + "pyramid-agreement/<str:topic>/adjudicate/<int:a>-<int:b>/",
        adjudication.adjudicate_pyramids,
        name="adjudicate_pyramids",
    ),
    re_path(
        r"^(?P<dataset_id>[0-9]+)/pyramid-agreement\.(?P<fmt>csv|json)$",
        construction.export,
        name="construction_export",
    ),
    path(D + "scores/", views.scores, name="scores"),
    re_path(r"^(?P<dataset_id>[0-9]+)/scores\.(?P<fmt>csv|json)$", views.scores_export, name="scores_export"),
    path(D + "significance/", views.significance, name="significance"),
    re_path(r"^(?P<dataset_id>[0-9]+)/charts/(?P<chart>[a-z]+)\.csv$", views.chart_export, name="chart_export"),
    re_path(
        r"^(?P<dataset_id>[0-9]+)/statistics\.(?P<fmt>csv|json)$", views.statistics_export, name="statistics_export"
    ),
    path(D + "metaeval/", views.metaeval, name="metaeval"),
    re_path(r"^(?P<dataset_id>[0-9]+)/metaeval\.(?P<fmt>csv|json)$", views.metaeval_export, name="metaeval_export"),
]
