"""Workers sent by MTurk and Prolific: ids from the URL (validated, recorded), MTurk's preview, and
each platform's end of the task."""

import re
from html import unescape
from urllib.parse import urlencode

import pytest
from django.test import Client

from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteReservation, LiteWriting

from tests.lightweight.test_crowd_submissions import own
from tests.lightweight.world import client_for, small_run

pytestmark = pytest.mark.django_db
MTURK = {
    "assignmentId": "3AMYWKA6YBLU92KSOGLNT786ESQ6OQ",
    "hitId": "3XU9MCX6VODXPI3L8I02CM94TFWR2S",
    "workerId": "A1B2C3D4E5F6G7",
    "turkSubmitTo": "https://workersandbox.mturk.com",
}
PROLIFIC = {
    "PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e",
    "STUDY_ID": "60aa11bb22cc33dd44ee55ff",
    "SESSION_ID": "6123456789abcdef01234567",
}


@pytest.fixture
def run():
    return small_run()


def link_url(run, kind=CrowdLink.Kind.JUDGING, **params):
    link = CrowdLink.objects.create(pyramid=run, kind=kind, batch=1 if kind == CrowdLink.Kind.JUDGING else None)
    return f"/lightweight/crowd/{link.token}/" + (f"?{urlencode(params)}" if params else "")


def answers_for(page) -> dict:
    """Every statement of the judging page answered present."""
    return {name: "present" for name in re.findall(r'name="(a\d+)" value="present"', page.content.decode())}


def test_mturk_worker_is_taken_from_the_url_recorded_and_hands_in_to_mturk():
    run = small_run()
    url = link_url(run, **MTURK)
    crowd = Client(enforce_csrf_checks=True)  # MTurk's frame sends no cookie of this site: no CSRF token
    page = crowd.get(url)
    assert page.status_code == 200 and "Your worker id" not in page.content.decode()  # nothing to type
    assert LiteReservation.objects.get().worker_id == MTURK["workerId"]
    assert "X-Frame-Options" not in page  # MTurk shows the page in its frame, and only MTurk may
    assert "frame-ancestors https://www.mturk.com https://workersandbox.mturk.com" in page["Content-Security-Policy"]
    task = page.context["task"]
    key = re.search(r'name="key" value="([^"]+)"', page.content.decode()).group(1)  # the worker's, in the form
    assert (
        crowd.post(url, {"task": task.pk, **answers_for(page)}, HTTP_COOKIE="").status_code == 400
    )  # without it: refused
    done = Client(enforce_csrf_checks=True).post(
        url, {"task": task.pk, "key": key, **answers_for(page)}
    )  # no cookie at all
    assert done.status_code == 200
    stored = LiteAssignment.objects.get()
    assert (stored.worker_id, stored.platform, stored.platform_assignment, stored.platform_task) == (
        MTURK["workerId"],
        "mturk",
        MTURK["assignmentId"],
        MTURK["hitId"],
    )
    html = unescape(done.content.decode())
    # MTurk's external-question submit: a POST of assignmentId (and the code, as surveycode) to turkSubmitTo
    form = re.search(r'<form method="post" action="([^"]+)" data-mturk-submit>(.*?)</form>', html, re.S)
    assert form.group(1) == "https://workersandbox.mturk.com/mturk/externalSubmit"
    fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', form.group(2)))
    assert fields == {"assignmentId": MTURK["assignmentId"], "surveycode": stored.completion_code}
    assert "form-action 'self' https://workersandbox.mturk.com" in done["Content-Security-Policy"]
    # The same assignment opened again shows its end again: one MTurk assignment, one task.
    again = crowd.get(url)
    assert again.context["code"] == stored.completion_code and LiteAssignment.objects.count() == 1
    other_hit = crowd.get(url.replace(MTURK["assignmentId"], "3OTHERASSIGNMENT"))  # batch 1's only task is answered
    assert "please return this HIT on MTurk" in other_hit.content.decode()


def test_typed_ids_keep_the_csrf_check_and_record_no_platform(run):
    url = link_url(run)
    crowd = Client(enforce_csrf_checks=True)
    assert crowd.post(url, {"worker": "j1"}).status_code == 403
    relaxed = Client()
    relaxed.post(url, {"worker": "j1"})
    page = relaxed.get(url)
    relaxed.post(url, {"task": page.context["task"].pk, **answers_for(page)})
    stored = LiteAssignment.objects.get()
    assert (stored.worker_id, stored.platform, stored.platform_assignment) == ("j1", "", "")


def test_mturk_preview_shows_the_task_without_a_hold_and_takes_no_answer(run):
    url = link_url(run, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId=MTURK["hitId"])
    page = Client().get(url)
    html = page.content.decode()
    assert page.status_code == 200 and "Accept the HIT on MTurk" in html
    assert html.count(" disabled>") == 2 * len(page.context["task"].statement_ids) and 'type="submit"' not in html
    assert not LiteReservation.objects.exists()
    refused = Client().post(url, {"task": page.context["task"].pk, **answers_for(page)})
    assert refused.status_code == 400 and "This is a preview" in refused.content.decode()
    assert not LiteAssignment.objects.exists()


@pytest.mark.parametrize(
    "params",
    [
        {**MTURK, "workerId": "a1b2c3"},  # MTurk ids are upper case
        {**MTURK, "workerId": "A" * 65},  # too long
        {**MTURK, "workerId": "<script>"},
        {**MTURK, "hitId": ""},
        {**MTURK, "turkSubmitTo": "https://evil.example"},  # the end of the task would post there
        {**MTURK, "turkSubmitTo": "https://www.mturk.com.evil.example"},
        {k: v for k, v in MTURK.items() if k != "workerId"},  # accepted HIT without a worker
        {**PROLIFIC, "PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1"},  # 23 digits
        {**PROLIFIC, "STUDY_ID": "60aa11bb22cc33dd44ee55fg"},  # not hex
        {"PROLIFIC_PID": PROLIFIC["PROLIFIC_PID"]},
    ],
)
def test_damaged_platform_parameters_are_refused(run, params):
    url = link_url(run, **params)
    page = Client().get(url)
    assert page.status_code == 400 and "This link cannot be used" in page.content.decode()
    assert not LiteReservation.objects.exists()
    assert Client().post(url, {"task": 1}).status_code == 400 and not LiteAssignment.objects.exists()


def test_prolific_worker_is_recorded_and_sent_back_with_the_study_code():
    run = small_run(peers=2)
    coordinator = client_for("coord", run.dataset)
    form = {
        f: getattr(run, f)
        for f in (
            "statements_per_writer",
            "writers_per_reference",
            "statements_per_reference",
            "judges_per_task",
            "seed",
            "agreement",
            "threshold",
            "blank",
            "topic_filter",
            "pay_writing",
            "pay_judging",
        )
    }
    bad = coordinator.post(f"/lightweight/{run.pk}/settings/", {**form, "prolific_code": "C1 2&"})
    assert bad.status_code == 400 and "letters and digits only" in bad.content.decode()
    url = link_url(run, **PROLIFIC)
    crowd = Client()
    page = crowd.get(url)
    before = crowd.post(url, {"task": page.context["task"].pk, **answers_for(page)})
    assert "data-prolific-complete" not in before.content.decode()  # no study code yet: the worker copies ours
    stored = LiteAssignment.objects.get()
    assert (stored.worker_id, stored.platform, stored.platform_assignment, stored.platform_task) == (
        PROLIFIC["PROLIFIC_PID"],
        "prolific",
        PROLIFIC["SESSION_ID"],
        PROLIFIC["STUDY_ID"],
    )
    assert (
        coordinator.post(f"/lightweight/{run.pk}/settings/", {**form, "prolific_code": "C1A2B3C4"}).status_code == 302
    )
    page = crowd.get(url)  # the other peer's task
    done = crowd.post(url, {"task": page.context["task"].pk, **answers_for(page)})
    html = unescape(done.content.decode())
    assert re.search(
        r'href="https://app\.prolific\.com/submissions/complete\?cc=C1A2B3C4" data-prolific-complete', html
    )
    assert f'href="{url}">Do another task first' in html  # the Prolific parameters stay
    assert LiteAssignment.objects.filter(platform="prolific").count() == 2
    after = unescape(crowd.get(url).content.decode())  # "Do another task first", and nothing is left
    assert "There are no more tasks for you here." in after
    assert re.search(
        r'href="https://app\.prolific\.com/submissions/complete\?cc=C1A2B3C4" data-prolific-complete', after
    )
    stranger = unescape(Client().get(link_url(run, **{**PROLIFIC, "PROLIFIC_PID": "0" * 24})).content.decode())
    assert "data-prolific-complete" not in stranger  # a worker who did nothing here gets no completion link


def test_mturk_statement_writing_is_recorded(run):
    run.writers_per_reference = 2
    run.save()
    url = link_url(run, CrowdLink.Kind.WRITING, **MTURK)
    crowd = Client()
    page = crowd.get(url)
    reference = page.context["reference"]
    done = crowd.post(
        url, {"reference": reference.pk, "s1": "The storm came on Monday", "s2": "The coast was hit hard"}
    )
    assert done.status_code == 200
    writing = LiteWriting.objects.get(platform="mturk")
    assert (writing.worker_id, writing.platform_assignment, writing.platform_task) == (
        MTURK["workerId"],
        MTURK["assignmentId"],
        MTURK["hitId"],
    )
    assert done.context["ending"]["fields"] == {
        "assignmentId": MTURK["assignmentId"],
        "surveycode": writing.completion_code,
    }


def test_an_mturk_workers_second_assignment_is_not_paid_by_the_first_ones_code():
    """Two assignments of one MTurk worker in two tabs show the task the worker holds; once the
    first hands it in, the second's submission is refused, not answered with the first's code."""
    run = small_run(peers=2)
    first = link_url(run, **MTURK)
    second = first.replace(MTURK["assignmentId"], "3SECONDASSIGNMENT")
    crowd = Client()
    page, other_tab = crowd.get(first), crowd.get(second)
    task = page.context["task"]
    assert other_tab.context["task"] == task
    done = crowd.post(first, {"task": task.pk, **answers_for(page)})
    assert crowd.post(first, {"task": task.pk, **answers_for(page)}).context["code"] == done.context["code"]  # a retry
    refused = crowd.post(second, {"task": task.pk, **answers_for(other_tab)})
    assert refused.status_code == 400 and done.context["code"] not in refused.content.decode()
    assert LiteAssignment.objects.get().platform_assignment == MTURK["assignmentId"]
    assert crowd.get(second).context["task"] != task  # the second assignment gets a task of its own


def test_an_mturk_writers_second_assignment_is_not_paid_by_the_first_ones_code(run):
    from annotation.lightweight import work

    run.writers_per_reference = 2
    run.save()
    client, texts = own("A1B2C3", run), ["The storm came on Monday", "The coast was hit hard"]
    reference = work.next_reference(run, "A1B2C3")
    record = {"platform": "mturk", "platform_assignment": "A1", "platform_task": "H1"}
    writing = work.submit_writing(run, reference, "A1B2C3", texts, client, record=record)
    assert work.submit_writing(run, reference, "A1B2C3", texts, client, record=record) == writing  # a retry
    with pytest.raises(work.WorkError, match="not open to you"):
        work.submit_writing(run, reference, "A1B2C3", texts, client, record={**record, "platform_assignment": "A2"})
