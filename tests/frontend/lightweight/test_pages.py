"""The lightweight pages without a browser: who may open them, rate limiting, refused submissions."""

import pytest
from django.test import Client

from annotation.corpus.models import Dataset
from annotation.lightweight import work
from annotation.lightweight.models import CrowdLink, LightweightPyramid

from tests.lightweight.test_crowd_submissions import own, shown_task
from tests.lightweight.world import client_for, small_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run():
    return small_run()


def test_run_pages_are_for_the_datasets_coordinators(run):
    assert client_for("coord", run.dataset).get(f"/lightweight/{run.pk}/").status_code == 200
    other = client_for("other", Dataset.objects.create(name="Other"))
    assert other.get(f"/lightweight/{run.pk}/").status_code == 404
    assert other.post(f"/lightweight/{run.pk}/do/filter/").status_code == 404
    assert Client().get(f"/lightweight/{run.pk}/").status_code == 302  # to the login page
    page = other.get("/lightweight/").content.decode()
    assert f"/lightweight/{run.pk}/" not in page and "Storms" not in page  # not listed, not offered to create in


def test_judging_refused_submission_keeps_answers_and_double_submission_counts_once(run):
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)
    crowd = Client()
    url = f"/lightweight/crowd/{link.token}/"
    assert "Your worker id" in crowd.get(url).content.decode()
    assert crowd.post(url, {"worker": "two words"}).status_code == 200  # refused: asked again
    crowd.post(url, {"worker": "j1"})
    task = shown_task(crowd, url)
    first, second = task.statement_ids
    refused = crowd.post(url, {"task": task.pk, f"a{first}": "absent"})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "Please answer statement 2." in html
    assert html.count("checked") == 1 and 'value="absent"' in html.split("checked")[0].rsplit("<input", 1)[1]
    done = crowd.post(url, {"task": task.pk, f"a{first}": "absent", f"a{second}": "present"})
    again = crowd.post(url, {"task": task.pk, f"a{first}": "present", f"a{second}": "present"})
    assert done.status_code == again.status_code == 200
    assert done.context["code"] == again.context["code"]
    assert task.assignments.get().answers == "np"
    assert "no more tasks" in crowd.get(url).content.decode()  # the only batch-1 task is done by j1


def test_crowd_pages_are_rate_limited(run, settings):
    settings.CROWD_RATE = "3/min"
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.WRITING)
    crowd = Client()
    statuses = [crowd.get(f"/lightweight/crowd/{link.token}/").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


def test_closed_links_say_so_and_unknown_links_are_404(run):
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, active=False)
    closed = Client().get(f"/lightweight/crowd/{link.token}/")
    assert closed.status_code == 410 and "This link is closed" in closed.content.decode()
    assert Client().get("/lightweight/crowd/nope/").status_code == 404
    assert Client().get(f"/api/crowd/{link.token}/").status_code == 404  # the API hands out no work either


def test_coordinators_close_and_reopen_links_and_no_one_else_can(run):
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING, batch=1)
    other_run = LightweightPyramid.objects.create(dataset=Dataset.objects.create(name="Other"), name="theirs")
    theirs = CrowdLink.objects.create(pyramid=other_run, kind=CrowdLink.Kind.WRITING)
    crowd, url = Client(), f"/lightweight/crowd/{link.token}/"
    crowd.post(url, {"worker": "j1"})
    task = shown_task(crowd, url)
    first, second = task.statement_ids
    crowd.post(url, {"task": task.pk, f"a{first}": "absent", f"a{second}": "present"})

    coordinator = client_for("coord", run.dataset)
    page = coordinator.get(f"/lightweight/{run.pk}/").content.decode()
    assert link.token in page and "Close</button>" in page
    closed = coordinator.post(f"/lightweight/{run.pk}/do/close-link/", {"link": link.pk}, follow=True)
    assert "Link closed" in closed.content.decode() and 'class="closed"' in closed.content.decode()
    link.refresh_from_db()
    assert not link.active and crowd.get(url).status_code == 410
    assert task.assignments.get().answers == "np"  # what was submitted is kept (and still scored)
    coordinator.post(f"/lightweight/{run.pk}/do/reopen-link/", {"link": link.pk})
    link.refresh_from_db()
    assert link.active and crowd.get(url).status_code == 200

    # Another run's link through this run, a made-up id, a GET, someone else: nothing changes.
    assert coordinator.post(f"/lightweight/{run.pk}/do/close-link/", {"link": theirs.pk}).status_code == 404
    assert coordinator.post(f"/lightweight/{run.pk}/do/close-link/", {"link": "x"}).status_code == 404
    assert coordinator.get(f"/lightweight/{run.pk}/do/close-link/?link={link.pk}").status_code == 302
    assert (
        client_for("other", other_run.dataset)
        .post(f"/lightweight/{run.pk}/do/close-link/", {"link": link.pk})
        .status_code
        == 404
    )
    assert CrowdLink.objects.filter(active=True).count() == 2


def test_worker_table_says_why_a_worker_is_kept_once(run):
    from annotation.lightweight import scores

    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING)
    task = work.next_task(link, "alone", own("alone"))
    work.submit_judgments(link, task, "alone", {pk: "present" for pk in task.statement_ids}, own("alone", run))
    scores.recompute(run.pk)
    html = client_for("coord", run.dataset).get(f"/lightweight/{run.pk}/").content.decode()
    row = html.split("<td>alone</td>")[1].split("</tr>")[0]
    assert row.endswith("<td>kept: no other worker answered the same task</td>")
    assert row.count("kept") == 1
