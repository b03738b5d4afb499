"""The test-only URLconf of ``bench/_breakdown.py`` (never the app's): the stack's floor, views
that do nothing, beside the app's own routes (included unchanged, so the app's requests resolve
as in production, after two failed matches).

- ``bare/``: a plain Django view answering ``ok`` (through every middleware of the settings);
- ``api/``: a DRF ``APIView`` GET answering ``{}`` with the project's DRF defaults (token then
  session authentication, ``IsAuthenticated``, the JSON renderer);
- ``api-query/``: the same plus one trivial ORM statement (does the user exist).
"""

from django.contrib.auth.models import User
from django.http import HttpResponse
from django.urls import include, path
from rest_framework.response import Response
from rest_framework.views import APIView


def bare(request):
    return HttpResponse(b"ok", content_type="text/plain")


class Empty(APIView):
    def get(self, request):
        return Response({})


class OneQuery(APIView):
    def get(self, request):
        return Response({"exists": User.objects.filter(pk=request.user.pk).exists()})


urlpatterns = [
    path("__floor/bare/", bare),
    path("__floor/api/", Empty.as_view()),
    path("__floor/api-query/", OneQuery.as_view()),
    path("", include("pyramid_app.urls")),
]
