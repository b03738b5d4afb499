""" "The datasets this user coordinates" has one implementation, the access rule's
(``rules.coordinated_datasets``), and every page asks it: the start page, the dashboards (list and
per-dataset check), the adjudication pages and the crowd runs once each computed it themselves, in
four slightly different ways."""

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import AnonymousUser, User

from annotation.access.rules import coordinated_datasets, coordinates, is_coordinator
from annotation.corpus.models import Dataset
from annotation.corpus.roles import COORDINATOR, role_group

pytestmark = pytest.mark.django_db

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
# A page computing the list itself: the reverse relation of ``Dataset.coordinators``, a filter on
# it, or the coordinator group read directly.
OWN_RULE = re.compile(r"\.coordinated_datasets\.|filter\(coordinators|coordinators__|name=COORDINATOR")


@pytest.fixture
def people():
    d1, d2 = Dataset.objects.create(name="d1"), Dataset.objects.create(name="d2")
    users = {name: User.objects.create_user(name) for name in ("coord", "role_only", "annotator", "inactive")}
    users["root"] = User.objects.create_superuser("root")
    users["role_only"].groups.add(role_group(COORDINATOR))
    d1.coordinators.add(users["coord"], users["inactive"])
    users["inactive"].is_active = False
    users["inactive"].save()
    return [d1, d2], users


def test_each_user_coordinates_what_the_rule_says(people):
    (d1, d2), users = people
    assert set(coordinated_datasets(users["root"])) == {d1, d2}
    assert list(coordinated_datasets(users["coord"])) == [d1]
    for name in ("role_only", "annotator", "inactive"):
        assert not coordinated_datasets(users[name]).exists(), name
    assert not coordinated_datasets(AnonymousUser()).exists()
    # A list never offers a dataset the per-dataset check then refuses, nor leaves one out.
    for user in users.values():
        assert {d for d in (d1, d2) if coordinates(user, d)} == set(coordinated_datasets(user)), user.username
    assert (
        is_coordinator(users["coord"]) and is_coordinator(users["role_only"]) and not is_coordinator(users["annotator"])
    )


def test_no_page_computes_the_coordinated_datasets_itself():
    offenders = [
        f"{path.relative_to(FRONTEND.parent)}:{number}: {line.strip()}"
        for path in sorted(FRONTEND.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if OWN_RULE.search(line)
    ]
    assert not offenders, "ask annotation.access.rules (coordinated_datasets, is_coordinator) instead:\n" + "\n".join(
        offenders
    )
