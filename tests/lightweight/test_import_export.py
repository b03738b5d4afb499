"""import_lightweight / export_lightweight on the released REALSumm data and on small files."""

import io
import json
import time

import pytest
from django.core.management import CommandError, call_command

from annotation.lightweight.models import LightweightPyramid, LiteAssignment, LiteResult, LiteStatement, LiteTask
from annotation.lightweight.scores import recompute

from tests.conftest import shared_data

ABS_BART = 0.48349483849483854


def export(dataset, level, **options):
    out = io.StringIO()
    call_command("export_lightweight", dataset=dataset, level=level, format="json", stdout=out, **options)
    return json.loads(out.getvalue())


def realsumm_folder(kind):
    return shared_data("realsumm", "human_annotations", "SCUs_and_annotations", f"SCU_rating_results_{kind}_systems")


@pytest.mark.realdata
@pytest.mark.django_db(transaction=True)
def test_realsumm_two_datasets_then_lite23_give_the_published_scores():
    out = io.StringIO()
    call_command("import_lightweight", str(realsumm_folder("abs")), dataset="realsumm-abs", stdout=out)
    call_command("import_lightweight", str(realsumm_folder("ext")), dataset="realsumm-ext", stdout=out)
    assert LiteAssignment.objects.count() == 7743
    assert LiteTask.objects.count() == 2500
    systems = {r["system"]: r for r in export("realsumm-abs", "system")}
    assert systems["bart_out"]["score"] == pytest.approx(ABS_BART, abs=1e-12)
    assert systems["bart_out"]["summaries"] == 100
    ext = {r["system"]: r["score"] for r in export("realsumm-ext", "system")}
    assert len(systems) == 16 and len(ext) == 9
    labels = export("realsumm-abs", "label") + export("realsumm-ext", "label")
    assert len(labels) == 26400
    assert (
        sum(1 for label in labels if label["answers"] == 4 and label["present_answers"] == 2 and label["label"] == 0)
        == 277
    )
    summaries = export("realsumm-abs", "summary")
    assert len(summaries) == 1600 and set(summaries[0]) >= {
        "topic",
        "system",
        "summary",
        "present",
        "statements",
        "score",
    }
    # what the background task stores (run here directly; the worker test covers the queue)
    run = LightweightPyramid.objects.get(dataset__name="realsumm-abs")
    assert recompute(run.pk)
    stored = {r["system"]: r["score"] for r in LiteResult.objects.get(pyramid=run).payload["systems"]}
    assert stored["bart_out"] == pytest.approx(ABS_BART, abs=1e-12)

    # re-import adds nothing
    out = io.StringIO()
    call_command("import_lightweight", str(realsumm_folder("abs")), dataset="realsumm-abs", stdout=out)
    assert "nothing new" in out.getvalue() and LiteAssignment.objects.count() == 7743

    call_command(
        "import_lightweight", str(shared_data("lite2-3pyramid", "data", "REALSumm")), dataset="lite23", stdout=out
    )
    lite = {r["system"]: r["score"] for r in export("lite23", "system")}
    assert lite["abs_bart_out"] == pytest.approx(ABS_BART, abs=1e-12)
    for system, score in ext.items():
        assert lite[f"ext_{system}"] == pytest.approx(score, abs=1e-12)
    assert export("lite23", "worker") == []


RESULTS = (
    "AssignmentId,WorkerId,Input.eventId,Input.summaryId,Input.qIdList,Input.summary_text,"
    "Input.statement_1,Input.statement_2,Input.statement_3,Answer.S1Answer,Answer.S2Answer,Answer.S3Answer\n"
    "A1,good1,D1,D1.M.100.A.7,\"['1', '2', '3']\",Peer.,s one,s two,s three,p,p,n\n"
    "A2,good2,D1,D1.M.100.A.7,\"['1', '2', '3']\",Peer.,s one,s two,s three,p,p,n\n"
    "A3,bad,D1,D1.M.100.A.7,\"['1', '2', '3']\",Peer.,s one,s two,s three,n,n,p\n"
    "A4,good1,D1,D1.M.100.B.9,\"['1', '2', '3']\",Peer 2.,s one,s two,s three,p,,n\n"
)


@pytest.mark.django_db(transaction=True)
def test_small_results_file_levels_and_overrides(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(RESULTS)
    call_command("import_lightweight", str(path), dataset="small", stdout=io.StringIO())
    workers = {w["worker"]: w for w in export("small", "worker")}
    assert workers["bad"]["removed"] and workers["bad"]["agreement"] == 0.0
    assert not workers["good1"]["removed"] and workers["good1"]["pairs"] == 2
    systems = {r["system"]: r["score"] for r in export("small", "system")}
    assert systems == {"7": pytest.approx(2 / 3), "9": pytest.approx(2 / 3)}  # blank counted present
    systems = {r["system"]: r["score"] for r in export("small", "system", blank="missing")}
    assert systems["9"] == pytest.approx(1 / 2)
    # no filter: bad's answers count: s1 2p/1n present, s3 1p/2n absent
    assert {r["system"]: r["score"] for r in export("small", "system", agreement="none")}["7"] == pytest.approx(2 / 3)
    with pytest.raises(CommandError, match="threshold"):
        export("small", "system", threshold=2)
    out = io.StringIO()
    call_command("export_lightweight", dataset="small", level="label", format="csv", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "topic,summary,statement,label,answers,counted"  # which answers the scores counted
    assert all(line.endswith(",all answers") for line in lines[1:])


@pytest.mark.django_db(transaction=True)
def test_a_bad_file_writes_nothing_and_is_reported(tmp_path):
    good = tmp_path / "a.csv"
    good.write_text(RESULTS)
    bad = tmp_path / "b.csv"
    bad.write_text(RESULTS.replace(",p,p,n\n", ",p,maybe,n\n", 1))
    with pytest.raises(CommandError, match="1 file"):
        call_command("import_lightweight", str(tmp_path), dataset="mixed", stdout=io.StringIO(), stderr=io.StringIO())
    assert LiteAssignment.objects.count() == 4 and LiteStatement.objects.count() == 3


@pytest.mark.django_db
def test_export_needs_a_known_single_run():
    with pytest.raises(CommandError, match="no lightweight pyramid"):
        export("nothing", "system")


@pytest.mark.django_db(transaction=True)
def test_scores_are_recomputed_after_the_import_commits(tmp_path, settings, request):
    """Eagerly in-process without Redis; on a real Celery worker with it."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        request.getfixturevalue("celery_worker")
    path = tmp_path / "results.csv"
    path.write_text(RESULTS)
    call_command("import_lightweight", str(path), dataset="bg", stdout=io.StringIO())
    run = LightweightPyramid.objects.get(dataset__name="bg")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        result = LiteResult.objects.filter(pyramid=run).first()
        if result and result.revision == run.revision:
            break
        time.sleep(0.2)
    assert result is not None and result.revision == run.revision
    assert {w["worker"] for w in result.payload["workers"] if w["removed"]} == {"bad"}


@pytest.mark.django_db
def test_phase1_results_and_statement_lists_import(tmp_path):
    phase1 = tmp_path / "phase1.csv"
    phase1.write_text(
        "HITId,AssignmentId,WorkerId,Input.eventId,Input.summId,Input.summary_text,"
        + ",".join(f"Answer.s{k}" for k in range(1, 9))
        + "\n"
        "H1,A1,W1,D0601,D0601.M.250.A.A,The reference text.,Fact one is here,Fact two is there,"
        + ",".join([""] * 6)
        + "\n"
    )
    batch = tmp_path / "batch2.csv"
    batch.write_text(
        "eventId,questionId,questionText,answer,author,sourceSummaryId,forUse\n"
        "D0601,0,A statement from the list,Y,W9,D0601.M.250.A.A,1\nD0601,1,BLANK,N,,D0601.M.250.A.A,1\n"
    )
    call_command("import_lightweight", str(phase1), str(batch), dataset="duc", stdout=io.StringIO())
    run = LightweightPyramid.objects.get(dataset__name="duc")
    written = LiteStatement.objects.filter(pyramid=run, writing__isnull=False)
    assert sorted(s.text for s in written) == ["Fact one is here", "Fact two is there"]
    assert {s.author for s in written} == {"W1"} and written[0].reference.external_id == "D0601.M.250.A.A"
    listed = LiteStatement.objects.get(pyramid=run, external_id="0")
    assert (listed.batch, listed.author) == (2, "W9")  # forUse=1 in batch2.csv
    assert not LiteStatement.objects.filter(text="BLANK").exists()
