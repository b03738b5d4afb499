"""Exports: files of one pyramid or annotation, and a dataset's scores and agreement with exactly
the rows of the management commands."""

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.corpus.models import Dataset
from annotation.peers.demo import load_demo
from annotation.pyramids.models import SCU

from tests.api.world import client_for
from tests.conftest import without_provenance


@pytest.fixture
def demo(db):
    load_demo()
    return Dataset.objects.get(name="Demo")


def command(name: str, *args) -> str:
    out = io.StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("kind,name", [("scores", "export_scores"), ("agreement", "export_agreement")])
@pytest.mark.parametrize("convention", ["nist", "sacrerouge"])
def test_dataset_rows_equal_the_commands(demo, kind, name, convention):
    client = client_for(User.objects.get(username="coordinator"))
    url = f"/api/datasets/{demo.pk}/{kind}/"
    as_json = client.get(url, {"format": "json", "convention": convention})
    assert as_json.status_code == 200 and as_json["Content-Type"] == "application/json"
    expected = json.loads(command(name, "--dataset", "Demo", "--convention", convention, "--format", "json"))
    assert json.loads(without_provenance(as_json.content, "json")) == expected and expected, (
        "same rows and keys as the command"
    )
    as_csv = client.get(url, {"format": "csv", "convention": convention})
    assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv")
    assert "attachment" in as_csv["Content-Disposition"]
    assert without_provenance(as_csv.content, "csv") == command(
        name, "--dataset", "Demo", "--convention", convention, "--format", "csv"
    )
    assert len(list(csv.DictReader(io.StringIO(as_csv.content.decode())))) == len(expected)


def test_default_convention_is_nist(demo):
    rows = client_for(User.objects.get(username="coordinator")).get(f"/api/datasets/{demo.pk}/scores/").json()
    assert {row["convention"] for row in rows} == {"nist"}


@pytest.mark.parametrize("query,field", [({"convention": "duc"}, "convention"), ({"format": "xlsx"}, "format")])
def test_bad_export_parameters(demo, query, field):
    response = client_for(User.objects.get(username="coordinator")).get(f"/api/datasets/{demo.pk}/scores/", query)
    assert response.status_code == 400 and field in response.json()


@pytest.mark.parametrize("kind", ["pyramids", "annotations"])
def test_json_export_is_the_full_document_as_a_file(world, as_user, kind):
    pk = world.pyramid.pk if kind == "pyramids" else world.annotation.pk
    client = as_user("alice")
    response = client.get(f"/api/{kind}/{pk}/export/", {"format": "json"})
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert response.json() == client.get(f"/api/{kind}/{pk}/full/").json()


@pytest.mark.parametrize("kind", ["pyramids", "annotations"])
def test_ducview_export_is_the_services_file(world, as_user, kind):
    from annotation.transfer.ducview_export import export_annotation, export_pyramid

    obj, export, suffix = (
        (world.pyramid, export_pyramid, ".pyr") if kind == "pyramids" else (world.annotation, export_annotation, ".pan")
    )
    response = as_user("alice").get(f"/api/{kind}/{obj.pk}/export/", {"format": "ducview"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/xml")
    assert response["Content-Disposition"].endswith(f'{suffix}"')
    assert response.content == export(obj)


def test_ducview_export_reads_back(world, as_user):
    from annotation.formats import parse_peer_annotation, parse_pyramid

    pyramid, _ = parse_pyramid(
        as_user("alice").get(f"/api/pyramids/{world.pyramid.pk}/export/", {"format": "ducview"}).content
    )
    assert [(scu.uid, len(scu.contributors)) for scu in pyramid.scus] == [(1, 1), (2, 1)]
    pan, _ = parse_peer_annotation(
        as_user("alice").get(f"/api/annotations/{world.annotation.pk}/export/", {"format": "ducview"}).content
    )
    assert [m.scu_uid for m in pan.matches] == [1] and pan.text == world.peer1.text


def test_export_of_an_invisible_object_is_404_in_every_format(world, as_user):
    for fmt in ("json", "ducview"):
        response = as_user("bob").get(f"/api/annotations/{world.annotation.pk}/export/", {"format": fmt})
        assert response.status_code == 404 and response.json() == {
            "detail": "No PeerAnnotation matches the given query."
        }


def test_what_ducview_cannot_hold_is_a_400(world, as_user):
    SCU.objects.create(pyramid=world.pyramid, uid=3, label="Imported without contributors")
    response = as_user("alice").get(f"/api/pyramids/{world.pyramid.pk}/export/", {"format": "ducview"})
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert "SCU 3: no contributor" in response.json()["format"][0]
