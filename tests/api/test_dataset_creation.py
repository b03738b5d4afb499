"""Coordinators create datasets over the API and become their coordinators; annotators cannot."""

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.corpus.models import Dataset
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group


def _client(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_coordinator_creates_a_dataset_and_coordinates_it(db):
    coord = User.objects.create_user("fresh-coord")
    coord.groups.add(role_group(COORDINATOR))
    response = _client(coord).post("/api/datasets/", {"name": "Pilot 2026"}, format="json")
    assert response.status_code == 201, response.content
    dataset = Dataset.objects.get(name="Pilot 2026")
    assert response.json()["coordinators"] == [coord.pk]
    assert list(dataset.coordinators.all()) == [coord]
    # and may then add topics to it (the same rule as any coordinator)
    assert (
        _client(coord).post("/api/topics/", {"dataset": dataset.pk, "external_id": "T1"}, format="json").status_code
        == 201
    )


def test_an_annotator_may_not_create_datasets(db):
    ann = User.objects.create_user("ann")
    ann.groups.add(role_group(ANNOTATOR))
    assert _client(ann).post("/api/datasets/", {"name": "Mine"}, format="json").status_code == 403
    assert not Dataset.objects.exists()
