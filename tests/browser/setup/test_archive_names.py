"""The import page's *Whose work is it* field in Chromium: an archive imported without it gives its
names' work to imported identities; with ``ann1=ann1`` typed in, ann1's work goes to the account
ann1 (the page's upload sends the field with the files). Screenshot in
test-artifacts/setup-import-names.png."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.peers.models import PeerAnnotation

from tests.browser.setup.browser import open_as
from tests.dashboards.helpers import build_toy

pytestmark = pytest.mark.browser


def test_the_page_maps_an_archive_name_to_an_account(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    source = build_toy("Names source")
    chief = get_user_model().objects.create_user("chief")
    source.coordinators.add(chief)
    api = APIClient()
    api.force_authenticate(chief)
    path = tmp_path / "names.zip"
    path.write_bytes(b"".join(api.get(reverse("api:dataset-archive", args=[source.pk])).streaming_content))
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{people.dataset.pk}/import/")
    page.fill("#id_users", "ann1=ann1")
    page.set_input_files("#id_files", str(path))
    page.get_by_role("button", name="Import").click()
    page.wait_for_selector("[data-import-report]")
    page.screenshot(path=str(artifacts / "setup-import-names.png"), full_page=True)
    imported = PeerAnnotation.objects.filter(pyramid__topic__dataset=people.dataset)
    owners = set(imported.values_list("annotator__username", flat=True))
    assert "ann1" in owners and "ann2" not in owners and "ann2@imported" in owners, owners
    assert errors == []
