"""Whom a dataset archive's work goes to (``annotation/transfer/identities.py``).

An archive names annotators, pyramid creators and adjudicators, and anyone can write one: the
names alone never attribute work to this installation's accounts of those names ("admin",
"coordinator", "alice"). Without a mapping the work goes to imported identities (inactive, no
login); the importing coordinator attributes a name to an account explicitly, through each path
in: the command (``--map-user``), the import page (its *Whose work is it* field) and the API
(``users``). An adjudicator is restored only when mapped to a coordinator of this very dataset.
"""

import html
import io
import json
import zipfile
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.corpus.models import Dataset
from annotation.corpus.roles import COORDINATOR, IMPORTED_ANNOTATOR, role_group
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid

from tests.dashboards.helpers import adjudicated, adjudicated_pyramid_topic, build_toy
from tests.transfer.test_archive_round_trip import with_manifest

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("in_process_jobs")]

User = get_user_model()
RENAMED = {"ann1": "admin", "ann2": "coordinator", "ann6": "alice"}  # the names a forged manifest gives


@pytest.fixture
def forged():
    """A dataset's archive whose manifest names the installation's own accounts "admin" (a
    superuser), "coordinator" (coordinating another dataset) and "alice" (an annotator) as its
    annotators and pyramid creators, and "coordinator" as the adjudicator of both kinds; the
    coordinator "boss" of an empty dataset imports it."""
    source = build_toy("Forged source")
    adjudicated(source.topics.get(external_id="T1").peersummarys.get(external_id="1"), "judge", {"3": "both"})
    adjudicated_pyramid_topic(source, "T3")
    User.objects.create_superuser("admin", None, None)
    coordinator = User.objects.create_user("coordinator")
    coordinator.groups.add(role_group(COORDINATOR))
    Dataset.objects.create(name="Theirs").coordinators.add(coordinator)
    User.objects.create_user("alice")
    boss = User.objects.create_user("boss")
    boss.groups.add(role_group(COORDINATOR))
    source.coordinators.add(boss)
    api = APIClient()
    api.force_authenticate(boss)
    download = api.get(reverse("api:dataset-archive", args=[source.pk]))
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    for entry in manifest["files"]:
        for key in ("annotator", "creator"):
            entry[key] = RENAMED.get(entry.get(key), entry.get(key))
        if entry.get("adjudication"):
            entry["adjudication"]["adjudicator"] = "coordinator"
    copy = Dataset.objects.create(name="Forged copy")
    copy.coordinators.add(boss)
    return {"data": with_manifest(archive, manifest), "copy": copy, "boss": boss, "coordinator": coordinator}


def by_api(forged, users="") -> tuple[int, dict]:
    api = APIClient()
    api.force_authenticate(forged["boss"])
    answer = api.post(
        reverse("api:dataset-import", args=[forged["copy"].pk]),
        {"files": [SimpleUploadedFile("forged.zip", forged["data"])], "users": users},
        format="multipart",
    )
    return answer.status_code, answer.json()


def by_page(forged, users="") -> tuple[int, str]:
    client = Client()
    client.force_login(forged["boss"])
    answer = client.post(
        reverse("setup:ducview", args=[forged["copy"].pk]),
        {"files": [SimpleUploadedFile("forged.zip", forged["data"])], "users": users},
    )
    return answer.status_code, html.unescape(answer.content.decode())


def by_command(forged, tmp_path, users="") -> tuple[int, str]:
    path = tmp_path / "forged.zip"
    path.write_bytes(forged["data"])
    out = StringIO()
    try:
        call_command(
            "import_ducview",
            str(path),
            dataset=forged["copy"].name,
            map_user=[u for u in users.split(",") if u],
            stdout=out,
        )
    except CommandError as error:
        return 400, str(error)
    return 200, out.getvalue()


PATHS = {
    "api": lambda forged, tmp_path, users="": by_api(forged, users),
    "page": lambda forged, tmp_path, users="": by_page(forged, users),
    "command": by_command,
}


def owners(dataset) -> dict[str, int]:
    """username -> how many annotations and pyramids of the dataset are theirs."""
    counts: dict[str, int] = {}
    annotators = PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset, annotator__isnull=False)
    creators = Pyramid.objects.filter(topic__dataset=dataset, creator__isnull=False)
    names = [
        *annotators.values_list("annotator__username", flat=True),
        *creators.values_list("creator__username", flat=True),
    ]
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.parametrize("path", PATHS)
def test_an_archive_never_attributes_work_to_the_accounts_it_names(forged, tmp_path, path):
    status, _ = PATHS[path](forged, tmp_path)
    assert status == 200
    copy = forged["copy"]
    got = owners(copy)
    assert not {"admin", "coordinator", "alice"} & got.keys(), got
    assert {"admin@imported", "coordinator@imported", "alice@imported"} <= got.keys(), got
    for name in got:
        identity = User.objects.get(username=name)
        assert not identity.is_active and not identity.has_usable_password(), name
        assert identity.groups.filter(name=IMPORTED_ANNOTATOR).exists(), name
    # the accounts own nothing anywhere in the copy, and no adjudication is attributed to anyone
    for name in ("admin", "coordinator", "alice"):
        assert not PeerAnnotation.objects.filter(annotator__username=name).exists()
    assert Adjudication.objects.get(annotation__pyramid__topic__dataset=copy).adjudicator is None
    assert PyramidAdjudication.objects.get(topic__dataset=copy).adjudicator is None
    # importing again finds the same identities: nothing new, nothing twice
    identities = User.objects.count()
    before = sum(got.values())
    PATHS[path](forged, tmp_path)
    assert User.objects.count() == identities and sum(owners(copy).values()) == before


@pytest.mark.parametrize("path", PATHS)
def test_the_importing_coordinator_maps_names_to_accounts(forged, tmp_path, path):
    """alice's work to alice, explicitly; "coordinator" mapped too, but coordinating another dataset
    does not make them this one's adjudicator; mapped to "boss" (this dataset's coordinator), it does."""
    status, _ = PATHS[path](forged, tmp_path, "alice=alice,coordinator=coordinator")
    assert status == 200
    copy = forged["copy"]
    got = owners(copy)
    assert got.get("alice") == owners(Dataset.objects.get(name="Forged source")).get("ann6") > 0
    assert "coordinator" in got and "admin@imported" in got and "admin" not in got
    # a coordinator of another dataset adjudicates nothing here
    assert Adjudication.objects.get(annotation__pyramid__topic__dataset=copy).adjudicator is None
    assert PyramidAdjudication.objects.get(topic__dataset=copy).adjudicator is None


def test_an_adjudicator_mapped_to_this_datasets_coordinator_is_restored(forged, tmp_path):
    status, report = by_api(forged, "coordinator=boss")
    assert status == 200, report
    copy = forged["copy"]
    assert Adjudication.objects.get(annotation__pyramid__topic__dataset=copy).adjudicator == forged["boss"]
    assert PyramidAdjudication.objects.get(topic__dataset=copy).adjudicator == forged["boss"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "users, why",
    [
        ("alice=nobody", "no account 'nobody'"),
        ("zed=alice", "nobody called 'zed'"),
        ("alice", "is not ARCHIVE_NAME=USERNAME"),
    ],
)
def test_a_mapping_that_cannot_be_used_imports_nothing(forged, tmp_path, path, users, why):
    status, said = PATHS[path](forged, tmp_path, users)
    assert status == 400 and why in str(said), said
    assert not PeerAnnotation.objects.filter(pyramid__topic__dataset=forged["copy"]).exists()


def test_names_are_mapped_for_archives_only(forged, tmp_path):
    pan = zipfile.ZipFile(io.BytesIO(forged["data"]))
    name = next(n for n in pan.namelist() if n.endswith(".pan"))
    api = APIClient()
    api.force_authenticate(forged["boss"])
    answer = api.post(
        reverse("api:dataset-import", args=[forged["copy"].pk]),
        {"files": [SimpleUploadedFile(name.rsplit("/", 1)[-1], pan.read(name))], "users": "alice=alice"},
        format="multipart",
    )
    assert answer.status_code == 400 and "only for a dataset archive" in str(answer.json())
