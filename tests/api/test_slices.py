"""The REST API is cut by concept: each concept's package serves its resources, ``annotation/api/``
keeps only what they share, and the router is assembled at the top (``pyramid_app/api_urls.py``),
where a higher concept's actions join a lower concept's resource. That the shared plumbing imports
no concept is the layer order's (``tests/foundation/test_layers.py``): it is a layer below them all."""

import re
import types

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured

from annotation.access import rules
from annotation.api import access
from annotation.corpus.models import Dataset
from annotation.peers import api as peers_api
from annotation.pyramids import api as pyramids_api
from pyramid_app import api_urls

from tests.foundation.test_import_cycles import imported, project_modules


def test_every_resource_is_served_by_its_concept():
    served = {prefix: viewset.__module__ for prefix, viewset, _ in api_urls.router.registry}
    assert served and all(re.fullmatch(r"annotation\.(?!api\.)\w+\.api", module) for module in served.values()), served


def test_a_resource_gathers_the_actions_of_higher_concepts_under_its_concepts_name():
    viewsets = {basename: viewset for _, viewset, basename in api_urls.router.registry}
    pyramid = viewsets["pyramid"]
    assert issubclass(pyramid, pyramids_api.PyramidViewSet) and issubclass(pyramid, peers_api.PyramidScores)
    assert {action.__name__ for action in pyramid.get_extra_actions()} >= {"full", "export", "undo", "redo", "history"}
    # The OpenAPI schema describes the resource by the concept's docstring, not a mixin's.
    assert (pyramid.__name__, pyramid.__doc__) == ("PyramidViewSet", pyramids_api.PyramidViewSet.__doc__)
    assert {action.__name__ for action in viewsets["assignment"].get_extra_actions()} == {
        "peer_full",
        "peer_suggestions",
        "peer_annotation",
        "peer_carry_over",
    }


def test_actions_for_a_resource_no_concept_routes_fail_at_start_up():
    stray = types.SimpleNamespace(extends={"nothing": [object]})
    with pytest.raises(ImproperlyConfigured, match="nothing"):
        api_urls.router_of((*api_urls.SLICES, stray))


def test_the_base_classes_apply_the_access_rule_and_refuse_without_it(monkeypatch):
    registered = access.rule()
    assert (registered.visible, registered.can_change, registered.check_create) == (
        rules.visible,
        rules.can_change,
        rules.check_create,
    )
    monkeypatch.setattr(access, "_rule", None)
    with pytest.raises(ImproperlyConfigured, match="No access rule"):
        access.visible(AnonymousUser(), Dataset.objects.all())


def test_the_pages_use_the_concepts_services_not_their_rest_code():
    modules = project_modules()
    rest = re.compile(r"annotation\.\w+\.(api|serializers|filters|urls)")
    offenders = {
        module: sorted(target for target in imported(module, path, modules) if rest.fullmatch(target))
        for module, path in modules.items()
        if module.startswith("frontend")
    }
    assert {module: targets for module, targets in offenders.items() if targets} == {}


def test_the_architecture_page_names_the_concept_whose_code_serves_each_route():
    from annotation.architecture import url_patterns

    rows = "\n".join(url_patterns())
    assert "| `/api/datasets/<pk>/scores/` | dataset-scores | `annotation.transfer.api.DatasetDownloads` |" in rows
    assert "| `/api/datasets/<pk>/` | dataset-detail | `annotation.corpus.api.DatasetViewSet` |" in rows
    assert "| `/api/pyramids/<pk>/undo/` | pyramid-undo | `annotation.history.api.HistoryActions` |" in rows
    assert "| `/api/scus/<pk>/merge/` | scu-merge | `annotation.pyramids.api.SCUViewSet` |" in rows
