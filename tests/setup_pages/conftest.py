"""A coordinator of a dataset (in the coordinator role), a coordinator of another dataset, an
annotator assigned to a topic of the dataset, and a user with no role; fast password hashing."""
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Dataset, Topic
from annotation.roles import ANNOTATOR, COORDINATOR, role_group

PASSWORD = "set-it-up-2026"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def people(db):
    coord = User.objects.create_user("coord", password=PASSWORD)
    coord.groups.add(role_group(COORDINATOR))
    other = User.objects.create_user("other", password=PASSWORD)
    other.groups.add(role_group(COORDINATOR))
    ann = User.objects.create_user("ann", password=PASSWORD)
    ann.groups.add(role_group(ANNOTATOR))
    nobody = User.objects.create_user("nobody", password=PASSWORD)
    dataset = Dataset.objects.create(name="Pilot")
    dataset.coordinators.add(coord)
    Dataset.objects.create(name="Elsewhere").coordinators.add(other)
    topic = Topic.objects.create(dataset=dataset, external_id="D0601")
    Assignment.objects.create(topic=topic, annotator=ann, task="annotate_peers")
    return SimpleNamespace(coord=coord, other=other, ann=ann, nobody=nobody, dataset=dataset, topic=topic)
