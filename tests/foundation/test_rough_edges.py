"""Rough edges of running the app: /setup/, the favicon, `make test` beside `make run`, `make run PORT=`."""

import shlex
import shutil
import subprocess
import sys
import tomllib

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.corpus.models import Dataset
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group

from tests.conftest import REPO


def _make_dry_run(tmp_path, target: str, *args: str) -> str:
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    installed = venv / ".installed"
    installed.touch()  # newer than pyproject.toml: the project itself is installed (as `make run` leaves it)
    return subprocess.run(
        ["make", "-n", target, f"VENV={venv}", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout


def test_make_test_installs_the_test_extras_without_reinstalling_the_project(tmp_path):
    """`pip install -e .` rewrites the editable finder module in site-packages, which every Django
    process imported and runserver's autoreloader watches: a `make run` serving meanwhile restarted."""
    commands = _make_dry_run(tmp_path, "install-test").splitlines()
    pip = [c for c in commands if "pip install" in c]
    assert pip and not any(" -e " in f" {c} " or "-e ." in c for c in pip), commands
    # The list it installs is the test extras of pyproject.toml, exactly.
    [extract] = [c for c in commands if "tomllib" in c]
    listed = subprocess.run(
        extract.split(" > ")[0], shell=True, cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    with open(REPO / "pyproject.toml", "rb") as file:
        assert listed == tomllib.load(file)["project"]["optional-dependencies"]["test"]


def test_make_run_takes_another_port(tmp_path):
    commands = _make_dry_run(tmp_path, "run", "PORT=8001")
    [serve] = [c for c in commands.splitlines() if "runserver" in c]
    assert shlex.split(serve)[-1] == "127.0.0.1:8001"


@pytest.mark.django_db
def test_setup_landing_is_the_dataset_list_for_coordinators(client):
    url = "/setup/"
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    User = get_user_model()
    annotator = User.objects.create_user("ann")
    annotator.groups.add(role_group(ANNOTATOR))
    client.force_login(annotator)
    response = client.get(url)
    assert response.status_code == 403
    coordinator = User.objects.create_user("coord")
    coordinator.groups.add(role_group(COORDINATOR))
    Dataset.objects.create(name="Mine").coordinators.add(coordinator)
    client.force_login(coordinator)
    response = client.get(url, follow=True)
    assert response.redirect_chain[-1][0] == reverse("dashboards:list")
    page = response.content.decode()
    assert "Mine" in page and reverse("setup:dataset_new") in page


@pytest.mark.django_db
def test_favicon_is_named_by_the_pages_and_served_at_favicon_ico(client):
    from django.contrib.staticfiles import finders

    response = client.get("/favicon.ico")
    assert response.status_code == 302
    icon = response["Location"]
    assert icon.endswith("frontend/favicon.svg") and finders.find("frontend/favicon.svg")
    page = client.get(reverse("login")).content.decode()
    assert f'<link rel="icon" href="{icon}"' in page
