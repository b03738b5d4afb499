"""The browsable API (what a logged-in browser sees at /api/) renders every page."""

import pytest

from tests.access.test_permissions import ENDPOINTS, target


@pytest.mark.parametrize("role", ["alice", "coord"])
def test_every_page_renders_as_html(world, role):
    from django.test import Client

    client = Client()
    client.force_login(world.users[role])
    assert client.get("/api/", HTTP_ACCEPT="text/html").status_code == 200
    for endpoint, (_, name, _, _) in ENDPOINTS.items():
        listing = client.get(f"/api/{endpoint}/", HTTP_ACCEPT="text/html")
        assert listing.status_code == 200 and b"<html" in listing.content, endpoint
        detail = client.get(f"/api/{endpoint}/{target(world, name).pk}/", HTTP_ACCEPT="text/html")
        assert detail.status_code == 200 and b"<form" in detail.content, endpoint
