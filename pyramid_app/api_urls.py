"""The API under /api/, assembled from the concepts' slices: one router for their resources, their
other endpoints, the token endpoint, the OpenAPI schema and docs.

Each concept lists its resources (``routes``) and other endpoints (``urlpatterns``) in its
``urls.py``. A higher concept may add actions to a lower one's resource (``extends``, by basename:
the dataset's downloads from ``transfer``, an assignment's peer work from ``peers`` and
``adjudication``): the lower concept cannot import them, so the resource's viewset is composed
here, the one place above every concept, with the higher concepts' mixins first.
"""

from django.core.exceptions import ImproperlyConfigured
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from annotation.adjudication import urls as adjudication
from annotation.corpus import urls as corpus
from annotation.lightweight import urls as lightweight
from annotation.peers import urls as peers
from annotation.pyramids import urls as pyramids
from annotation.transfer import urls as transfer
from pyramid_app.api_token import TokenView

SLICES = (corpus, pyramids, peers, adjudication, lightweight, transfer)  # bottom to top of the layers


def composed(viewset, basename: str):
    """``viewset`` with the actions higher concepts add to it (the highest first in the MRO); named
    and documented as the concept's own, which the OpenAPI schema describes the resource by."""
    mixins = [mixin for urls in reversed(SLICES) for mixin in getattr(urls, "extends", {}).get(basename, ())]
    if not mixins:
        return viewset
    return type(
        viewset.__name__,
        (*mixins, viewset),
        {"__doc__": viewset.__doc__, "__module__": viewset.__module__, "__qualname__": viewset.__qualname__},
    )


def router_of(slices) -> DefaultRouter:
    routes = [route for urls in slices for route in getattr(urls, "routes", ())]
    unknown = {name for urls in slices for name in getattr(urls, "extends", {})} - {
        basename for _, _, basename in routes
    }
    if unknown:
        raise ImproperlyConfigured(f"Actions added to resources no concept routes: {', '.join(sorted(unknown))}.")
    router = DefaultRouter()
    for prefix, viewset, basename in routes:
        router.register(prefix, composed(viewset, basename), basename=basename)
    return router


router = router_of(SLICES)

app_name = "api"
urlpatterns = [
    path("auth/token/", TokenView.as_view(), name="token"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api:schema", template_name="api/swagger_ui.html"),
        name="docs",
    ),
    *router.urls,
    *(pattern for urls in SLICES for pattern in getattr(urls, "urlpatterns", ())),
]
