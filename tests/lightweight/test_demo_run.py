"""The demo (``manage.py load_demo``, what ``make run`` loads) holds a lightweight run, so the crowd
guide's "a run on the demo data" exists on a fresh install: statements from the expert pyramid,
sampled, judging tasks and a judging link; loading again adds nothing."""

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteStatement
from annotation.pyramids.models import SCU

pytestmark = pytest.mark.django_db


def test_the_demo_holds_a_crowd_run_ready_to_judge():
    call_command("load_demo", stdout=StringIO())
    run = LightweightPyramid.objects.get(dataset__name="Demo")
    statements = LiteStatement.objects.filter(pyramid=run)
    assert statements.count() == SCU.objects.filter(pyramid__topic__dataset=run.dataset).count()  # one per SCU label
    assert statements.filter(batch=1).exists() and statements.filter(batch=2).exists()
    assert run.tasks.count() >= 2 and CrowdLink.objects.filter(pyramid=run, kind="judging", active=True).count() == 1
    call_command("load_demo", stdout=StringIO())
    assert (
        LightweightPyramid.objects.count() == 1
        and LiteStatement.objects.filter(pyramid=run).count() == statements.count()
    )
    client = Client()
    client.force_login(User.objects.get(username="coordinator"))
    page = client.get(reverse("lightweight:run", args=[run.pk])).content.decode()
    assert "Crowd pilot" in page and reverse("lightweight:crowd", args=[run.links.get().token]) in page
