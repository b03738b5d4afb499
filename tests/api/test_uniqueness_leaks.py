"""A uniqueness error never tells someone who may not create here what exists: a name taken by
something hidden from them and a free name get the same answer (the permission check comes first,
``PermissionBeforeUniquenessMixin``), while the dataset's coordinator is still told of a duplicate."""

import pytest
from django.urls import reverse

from annotation.corpus.models import Dataset, Topic
from annotation.corpus.roles import COORDINATOR, role_group
from annotation.lightweight.models import LightweightPyramid

pytestmark = pytest.mark.django_db


@pytest.fixture
def hidden(world):
    """In D1, where carol annotates T1 only: a topic T2 and a crowd run "secret run", both hidden
    from her; D2 is hidden from her too."""
    Topic.objects.create(dataset=world.d1, external_id="T2")
    LightweightPyramid.objects.create(dataset=world.d1, name="secret run")
    return world


def cases(w):
    """(endpoint, body with a taken name, body with a free name)."""
    return [
        ("api:topic-list", {"dataset": w.d1.pk, "external_id": "T2"}, {"dataset": w.d1.pk, "external_id": "T9"}),
        ("api:dataset-list", {"name": "D2"}, {"name": "A fresh name"}),
        ("api:lightweight-list", {"dataset": w.d1.pk, "name": "secret run"}, {"dataset": w.d1.pk, "name": "fresh run"}),
        (
            "api:reference-list",
            {"topic": w.t1.pk, "external_id": "A", "text": "x"},
            {"topic": w.t1.pk, "external_id": "Z", "text": "x"},
        ),
        (
            "api:peer-list",
            {"topic": w.t1.pk, "external_id": "1", "text": "x"},
            {"topic": w.t1.pk, "external_id": "9", "text": "x"},
        ),
    ]


@pytest.mark.parametrize("who", ["carol", "bob"])
@pytest.mark.parametrize("case", range(5))
def test_a_taken_hidden_name_and_a_free_one_get_the_same_answer(hidden, as_user, who, case):
    endpoint, taken, free = cases(hidden)[case]
    api = as_user(who)
    a, b = api.post(reverse(endpoint), taken, format="json"), api.post(reverse(endpoint), free, format="json")
    assert (a.status_code, a.json()) == (b.status_code, b.json()), (a.json(), b.json())
    assert a.status_code == 403


@pytest.mark.parametrize("case", range(5))
def test_the_coordinator_is_still_told_of_a_duplicate(hidden, as_user, case):
    endpoint, taken, _ = cases(hidden)[case]
    if endpoint == "api:dataset-list":
        hidden.users["coord"].groups.add(role_group(COORDINATOR))  # coordinators start datasets
    answer = as_user("coord").post(reverse(endpoint), taken, format="json")
    assert answer.status_code == 400, answer.json()
    assert "exists" in str(answer.json()) or "unique" in str(answer.json())
    assert Dataset.objects.filter(name="D2").count() == 1
