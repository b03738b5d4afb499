"""Every download the pages offer (dashboards and the set-up Export page, which links the API) is
named by dataset, table, convention and date, and says which app version and settings made it."""

import csv
import io
import json
import re
import tomllib
import zipfile
from collections import defaultdict

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.api import downloads
from annotation.dashboards.models import Judgment

from tests.conftest import REPO
from tests.dashboards.helpers import build_toy, make_users

pytestmark = pytest.mark.django_db
LINK = re.compile(r'href="([^"]+)"')
DOWNLOAD = re.compile(r"\.(csv|json)(\?|$)|[?&]format=|/archive/|^/api/\w+/\d+/export/")


def version() -> str:
    with open(REPO / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]["version"]


def offered_downloads(client, dataset) -> set[str]:
    d = dataset.pk
    pages = [
        reverse("dashboards:agreement", args=[d]),
        reverse("dashboards:agreement_topic", args=[d, "T1"]),
        reverse("dashboards:metaeval", args=[d]),
        reverse("setup:exports", args=[d]),
    ]
    for convention in ("nist", "sacrerouge"):
        for references in ("0", "1"):
            query = f"?convention={convention}&references={references}"
            pages += [
                reverse("dashboards:scores", args=[d]) + query,
                reverse("dashboards:significance", args=[d]) + query,
            ]
        pages.append(reverse("dashboards:metaeval", args=[d]) + f"?convention={convention}&score=modified_jk")
    found = set()
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        found |= {
            link.replace("&amp;", "&") for link in LINK.findall(response.content.decode()) if DOWNLOAD.search(link)
        }
    return found


def provenance_of(name: str, body: bytes) -> list[tuple[str, dict]]:
    """(app_version, settings) of every row (or of the archive's manifest)."""
    if name.endswith(".zip"):
        manifest = json.loads(zipfile.ZipFile(io.BytesIO(body)).read("manifest.json"))
        return [(manifest["app_version"], json.loads(manifest["settings"]))]
    if name.endswith(".csv"):
        rows = list(csv.DictReader(io.StringIO(body.decode())))
    else:
        rows = json.loads(body)
    return [(row["app_version"], json.loads(row["settings"])) for row in rows]


def test_every_download_is_named_and_stamped():
    dataset = build_toy()
    coordinator = make_users(dataset)["coord"]
    Judgment.objects.bulk_create(
        [
            Judgment(topic=t, summary=s, metric="content", value=(len(s) + i) % 5)
            for i, t in enumerate(dataset.topics.all())
            for s in ("1", "2", "3")
        ]
    )
    client = Client()
    client.force_login(coordinator)
    links = offered_downloads(client, dataset)
    today = timezone.localdate().isoformat()
    named = re.compile(rf"^Toy-(?P<table>[A-Za-z0-9_.-]+?)-{today}\.(?P<ext>[a-z.-]+)$")
    by_name = defaultdict(list)
    kinds = set()
    for link in sorted(links):
        response = client.get(link)
        assert response.status_code == 200, link
        disposition = response.get("Content-Disposition", f"none for {link}")
        names = re.findall(r'^attachment; filename="([^"]+)"$', disposition)
        assert len(names) == 1, (link, disposition)
        [name] = names
        match = named.match(name)
        assert match, (link, name)
        body = response.getvalue() if hasattr(response, "streaming_content") else response.content
        by_name[name].append((link, body))
        convention = re.search(r"convention=(\w+)", link)
        if convention:
            assert f"-{convention.group(1)}" in match["table"], (link, name)  # the convention is in the name
        if match["ext"] in ("csv", "json", "zip") and "/export/" not in link:
            stamps = provenance_of(name, body)
            assert stamps or match["ext"] != "zip", link
            for app_version, settings in stamps:
                assert app_version == version()
                assert settings["convention"] == (convention.group(1) if convention else "nist"), link
                if "statistics" in link or re.search(
                    r"charts/(systems|stability)", link
                ):  # their intervals are bootstrapped
                    assert settings["seed"] == 20070401, link
                if "references=" in link and "scores" in link:
                    assert settings["references"] == link.split("references=")[1].startswith("1"), link
        kinds.add(re.sub(r"-(nist|sacrerouge).*", "", match["table"]))
    # Two different files never share a name: one name, one content (JSON: the same data, however indented).
    for name, found in by_name.items():
        contents = {json.dumps(json.loads(body)) if name.endswith(".json") else body for _, body in found}
        assert len(contents) == 1, (name, [link for link, _ in found])
    # The pages offer every kind of table, both archives, the documents in each format.
    assert {
        "scores",
        "systems",
        "agreement",
        "metaeval",
        "statistics-pairs",
        "archive",
        "systems-chart",
        "agreement-chart",
    } <= kinds
    assert {n for n in by_name if n.startswith("Toy-archive-")} == {
        f"Toy-archive-nist-{today}.zip",
        f"Toy-archive-sacrerouge-{today}.zip",
    }
    extensions = {name.split(f"{today}.")[1] for name in by_name}
    assert {"csv", "json", "zip", "pyr", "pan", "pyramids.jsonl", "pyramid-annotations.jsonl"} <= extensions


def test_download_names_are_ascii_and_distinct_by_their_settings():
    class Named:
        pk, name = 7, "北京"

    day = timezone.localdate()
    assert (
        downloads.download_name(Named(), "scores", "csv", convention="nist", day=day)
        == f"dataset-7-scores-nist-{day.isoformat()}.csv"
    )
    assert (
        downloads.download_name("DUC 2006/ü", "D0631-pyramid-3", "pyr", day=day)
        == f"DUC-2006-D0631-pyramid-3-{day.isoformat()}.pyr"
    )
    names = {
        downloads.download_name("d", "scores", "csv", convention=c, qualifiers=q, day=day)
        for c in ("nist", "sacrerouge")
        for q in ([], ["peers-only"], ["with-references"])
    }
    assert len(names) == 6


@pytest.mark.browser
def test_chromium_saves_downloads_under_their_names(chromium, live_server, transactional_db):
    """Real clicks on the Export page and a dashboard: the names Chromium suggests (no more
    ``download.json``, nor one name for both archives)."""
    dataset = build_toy()
    coordinator = make_users(dataset)["coord"]
    coordinator.set_password("coordinate-it-2026")
    coordinator.save()
    page = chromium.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "coord")
    page.fill("#id_password", "coordinate-it-2026")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    today = timezone.localdate().isoformat()
    page.goto(f"{live_server.url}/setup/{dataset.pk}/export/")
    saved = {}
    for export in ("archive-nist", "archive-sacrerouge", "scores-json-nist", "agreement-json-sacrerouge"):
        with page.expect_download() as download:
            page.click(f"[data-export={export}]")
        saved[export] = download.value.suggested_filename
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/scores/?convention=sacrerouge")
    with page.expect_download() as download:
        page.click("section .downloads a:text('JSON')")
    saved["dashboard"] = download.value.suggested_filename
    assert saved == {
        "archive-nist": f"Toy-archive-nist-{today}.zip",
        "archive-sacrerouge": f"Toy-archive-sacrerouge-{today}.zip",
        "scores-json-nist": f"Toy-scores-nist-with-references-{today}.json",
        "agreement-json-sacrerouge": f"Toy-agreement-sacrerouge-{today}.json",
        "dashboard": f"Toy-systems-sacrerouge-peers-only-{today}.json",
    }
    page.close()
