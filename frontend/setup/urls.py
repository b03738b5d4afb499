"""Set-up pages, mounted at /setup/ (namespace ``setup``)."""
from django.urls import path

from . import views

app_name = "setup"
D = "<int:dataset_id>/"
urlpatterns = [
    path("datasets/new/", views.dataset_create, name="dataset_new"),
    path(D, views.dataset, name="dataset"),
    path(D + "topics/add/", views.topics_add, name="topics_add"),
    path(D + "topics/zip/", views.topics_zip, name="topics_zip"),
    path(D + "import/", views.ducview, name="ducview"),
    path(D + "people/", views.people, name="people"),
    path(D + "export/", views.exports, name="exports"),
]
