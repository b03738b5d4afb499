"""Exports: files of one pyramid or annotation, and a dataset's scores and agreement with exactly
the rows of the management commands."""
import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation.models import Dataset
from annotation.services.demo import load_demo

from .conftest import client_for


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
    assert as_json.json() == expected and expected, "same rows and keys as the command"
    as_csv = client.get(url, {"format": "csv", "convention": convention})
    assert as_csv.status_code == 200 and as_csv["Content-Type"].startswith("text/csv")
    assert "attachment" in as_csv["Content-Disposition"]
    assert as_csv.content.decode() == command(name, "--dataset", "Demo", "--convention", convention, "--format", "csv")
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
