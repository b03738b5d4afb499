"""The transfer's endpoints under /api/, and the file actions it adds to the datasets, pyramids and
annotations (by basename; the router is assembled in ``pyramid_app/api_urls.py``)."""

from django.urls import path

from annotation.transfer import api

extends = {"dataset": [api.DatasetDownloads], "pyramid": [api.PyramidExport], "annotation": [api.AnnotationExport]}
urlpatterns = [
    path("datasets/<int:pk>/import/", api.DatasetImportView.as_view(), name="dataset-import"),
    path("datasets/<int:pk>/archive/", api.DatasetArchiveView.as_view(), name="dataset-archive"),
    path("datasets/<int:pk>/pyramid-agreement/", api.PyramidAgreementView.as_view(), name="dataset-pyramid-agreement"),
]
