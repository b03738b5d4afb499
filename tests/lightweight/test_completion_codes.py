"""Completion codes: shown and exported per submission, checked against the platform's list, and
the scores counting only verified answers when the coordinator asks (saying so)."""

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.formats.errors import LightweightFormatError
from annotation.formats.lightweight_csv import MAX_ROWS, read_code_pairs
from annotation.lightweight import codes as lightweight_codes
from annotation.lightweight import scores
from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteTask

from tests.lightweight.world import client_for, judge_every_task, small_run

pytestmark = pytest.mark.django_db
# One task per peer and batch, 2 statements; judges answer each of their tasks the same way.
ANSWERS = {"j1": "pp", "j2": "pn", "j3": "nn"}


@pytest.fixture
def run():
    run = small_run(peers=1)
    run.threshold = 0  # no worker filter: the counted answers alone decide
    run.save()
    link = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING)
    for worker, codes in ANSWERS.items():
        judge_every_task(link, worker, codes)
    assert LiteAssignment.objects.count() == len(ANSWERS) * LiteTask.objects.filter(pyramid=run).count()
    return run


def code(worker, batch=1):
    return LiteAssignment.objects.get(worker_id=worker, task__batch=batch).completion_code


def test_reading_the_platforms_lists():
    mturk = 'HITId,AssignmentId,WorkerId,Answer.surveycode\nH1,A1,W1,ab12cd34\nH1,A2,W2,"EF56AB78"\n'
    assert read_code_pairs(mturk) == [("W1", "ab12cd34"), ("W2", "EF56AB78")]
    template = "WorkerId,Answer.completion_code_box,Answer.other\nW1,C1,x\n"  # a survey-link HIT's own field name
    assert read_code_pairs(template) == [("W1", "C1")]
    prolific = "Submission id,Participant id,Status,Completion code\nS1,5f1a,APPROVED,C0DE\n"
    assert read_code_pairs(prolific) == [("5f1a", "C0DE")]
    pasted = "worker\tcode\nW1\tAB12\n\nW2, CD34\nW3;EF56\nW4   0A0B\n"
    assert read_code_pairs(pasted) == [("W1", "AB12"), ("W2", "CD34"), ("W3", "EF56"), ("W4", "0A0B")]
    for bad, message in (
        ("W1 AB C\n", "line 1: expected a worker id and a completion code"),
        ("W1,AB\nW2,\n", "line 2: the completion code is empty"),
        ("WorkerId,Answer.surveycode\nW1,\n", "line 2: the completion code is empty"),
        ("W1," + "A" * 65 + "\n", "line 1: a worker id has at most"),
        ("WorkerId,Answer.a\nW1,x\n", "no Answer.surveycode column"),
        ("\n\n", "no (worker id, completion code) pair"),
    ):
        with pytest.raises(LightweightFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
            read_code_pairs(bad)
    with pytest.raises(LightweightFormatError, match="more than"):  # bounded
        read_code_pairs("W,C\n" * (MAX_ROWS + 1))


def test_checking_codes_verifies_flags_shared_and_unknown_codes(run):
    j1 = code("j1")
    pairs = [("j1", j1.lower()), ("j2", code("j2")), ("j9", j1), ("j3", "FFFFFFFF"), ("j1", code("j1", 2))]
    report = lightweight_codes.check(run, pairs)
    assert (report.pairs, report.verified, report.already, report.unmatched_count) == (5, 3, 0, 2)
    assert report.shared == [{"code": j1, "workers": ["j1", "j9"]}]
    assert report.unmatched == [
        {"worker": "j9", "code": j1, "reason": lightweight_codes.OTHER_WORKER},
        {"worker": "j3", "code": "FFFFFFFF", "reason": lightweight_codes.NO_SUCH_CODE},
    ]
    verified = set(LiteAssignment.objects.filter(verified_at__isnull=False).values_list("worker_id", "task__batch"))
    assert verified == {("j1", 1), ("j1", 2), ("j2", 1)}
    again = lightweight_codes.check(run, pairs[:1])
    assert (again.verified, again.already) == (0, 1)


def expected_scores(workers):
    """Majority per statement over these workers' answers (a tie is absent), score = share present."""
    per_statement = [sum(ANSWERS[w][k] == "p" for w in workers) for k in range(2)]
    return sum(n * 2 > len(workers) for n in per_statement) / 2


def test_verified_only_scores_count_only_verified_answers_and_say_so(run):
    coordinator = client_for("coord", run.dataset)
    pasted = f"j1,{code('j1')}\nj1,{code('j1', 2)}\nj3,{code('j3')}\nj3,{code('j3', 2)}\n"
    page = coordinator.post(f"/lightweight/{run.pk}/do/check-codes/", {"pairs": pasted}, follow=True)
    assert "4 pairs checked: 4 submissions newly verified, 0 matching nothing" in page.content.decode()
    everyone = scores.compute(run)
    assert {s.score for s in everyone.summaries} == {expected_scores(["j1", "j2", "j3"])}
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
    coordinator.post(f"/lightweight/{run.pk}/settings/", {**form, "verified_only": "on"})
    run.refresh_from_db()
    assert run.verified_only
    verified = scores.compute(run)
    assert (
        {s.score for s in verified.summaries}
        == {expected_scores(["j1", "j3"])}
        != {expected_scores(["j1", "j2", "j3"])}
    )
    rows = list(
        csv.DictReader(
            io.StringIO(coordinator.get(f"/api/lightweight/{run.pk}/scores/?level=summary&format=csv").content.decode())
        )
    )
    assert {r["counted"] for r in rows} == {"verified answers only"} and {float(r["score"]) for r in rows} == {
        expected_scores(["j1", "j3"])
    }
    overridden = coordinator.get(f"/api/lightweight/{run.pk}/scores/?level=summary&verified_only=false").json()
    assert {r["counted"] for r in overridden} == {"all answers"}
    scores.recompute(run.pk)
    html = coordinator.get(f"/lightweight/{run.pk}/").content.decode()
    assert "Counted: <strong>verified answers only</strong>; 2 unverified answers left out" in html
    unverified = html.split('data-submissions="unverified"')[1].split("</table>")[0]
    assert unverified.count("<tr>") == 1 + 2 + 2  # header, j2's two answers, the two writings
    assert code("j2") in unverified and code("j1") not in unverified


def test_submissions_show_every_code_and_uploads_are_bounded(run, settings):
    coordinator = client_for("coord", run.dataset)
    rows = coordinator.get(f"/api/lightweight/{run.pk}/submissions/").json()
    assert sorted(r["completion_code"] for r in rows if r["kind"] == "judging") == sorted(
        LiteAssignment.objects.values_list("completion_code", flat=True)
    )
    upload = SimpleUploadedFile("batch.csv", b"WorkerId,Answer.surveycode\nj1,\xff\n")
    page = coordinator.post(f"/lightweight/{run.pk}/do/check-codes/", {"file": upload}, follow=True)
    assert "Nothing was checked: batch.csv is not UTF-8 text." in page.content.decode()
    page = coordinator.post(f"/lightweight/{run.pk}/do/check-codes/", {"pairs": "j1 a b"}, follow=True)
    assert "Nothing was checked: line 1: expected a worker id and a completion code" in page.content.decode()
    assert not LiteAssignment.objects.filter(verified_at__isnull=False).exists()
    assert (
        client_for("other").post(f"/lightweight/{run.pk}/do/check-codes/", {"pairs": f"j1,{code('j1')}"}).status_code
        == 404
    )
