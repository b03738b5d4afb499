"""Lightweight-pyramid pages, mounted at /lightweight/ (namespace ``lightweight``)."""
from django.urls import path

from . import views

app_name = "lightweight"
urlpatterns = [
    path("", views.runs, name="runs"),
    path("<int:pk>/", views.run_page, name="run"),
    path("<int:pk>/settings/", views.run_settings, name="settings"),
    path("<int:pk>/chart.csv", views.chart_csv, name="chart_csv"),
    path("<int:pk>/do/<slug:action>/", views.run_action, name="action"),
    path("crowd/<str:token>/", views.crowd, name="crowd"),
]
