"""Lightweight-pyramid pages, mounted at /lightweight/ (namespace ``lightweight``)."""

from django.urls import path, re_path

from annotation.lightweight.models import CROWD_TOKEN_PATTERN

from . import views

app_name = "lightweight"
urlpatterns = [
    path("", views.runs, name="runs"),
    path("<int:pk>/", views.run_page, name="run"),
    path("<int:pk>/settings/", views.run_settings, name="settings"),
    path("<int:pk>/chart.csv", views.chart_csv, name="chart_csv"),
    path("<int:pk>/do/<slug:action>/", views.run_action, name="action"),
    re_path(rf"^crowd/{CROWD_TOKEN_PATTERN}/$", views.crowd, name="crowd"),
]
