"""The lightweight-pyramid API: the whole protocol through REST, and who may do what."""

import pytest
from rest_framework.test import APIClient

from annotation.lightweight.models import LiteAssignment, LiteStatement

from tests.lightweight.test_crowd_submissions import own

pytestmark = pytest.mark.django_db

STATEMENTS = {
    "A": ["Alpha comes before beta here", "Gamma closes the first sentence"],
    "B": ["Delta opens the second reference", "Zeta ends the second reference"],
}


def make_run(as_user, world, **extra):
    body = {
        "dataset": world.d1.pk,
        "name": "crowd",
        "statements_per_writer": 2,
        "writers_per_reference": 1,
        "statements_per_reference": 1,
        "judges_per_task": 2,
        **extra,
    }
    response = as_user("coord").post("/api/lightweight/", body, format="json")
    assert response.status_code == 201, response.data
    return response.data["id"]


def test_only_the_datasets_coordinators_see_a_run(as_user, world):
    run = make_run(as_user, world)
    assert as_user("anon").get(f"/api/lightweight/{run}/").status_code == 401
    for role in ("alice", "bob", "carol", "other_coord"):
        assert as_user(role).get(f"/api/lightweight/{run}/").status_code == 404, role
        assert as_user(role).get("/api/lightweight/").data["count"] == 0
    assert as_user("admin").get(f"/api/lightweight/{run}/").status_code == 200
    body = {"dataset": world.d1.pk, "name": "mine"}
    assert (
        as_user("alice").post("/api/lightweight/", body, format="json").status_code == 403
    )  # sees D1, may not change it


def test_a_dataset_you_may_not_see_is_refused_as_one_that_does_not_exist(as_user, world):
    """Otherwise 403 against "does not exist" would tell which dataset ids exist."""
    hidden = as_user("other_coord").post("/api/lightweight/", {"dataset": world.d1.pk, "name": "mine"}, format="json")
    missing = as_user("other_coord").post(
        "/api/lightweight/", {"dataset": world.d1.pk + 1000, "name": "mine"}, format="json"
    )
    assert hidden.status_code == missing.status_code == 400
    assert str(hidden.data["dataset"][0]).replace(str(world.d1.pk), "N") == str(missing.data["dataset"][0]).replace(
        str(world.d1.pk + 1000), "N"
    )
    assert "does not exist" in str(hidden.data["dataset"][0])


def test_whole_protocol_through_the_api(as_user, world):
    coord = as_user("coord")
    run = make_run(as_user, world)
    writing = coord.post(f"/api/lightweight/{run}/links/", {"kind": "writing"}, format="json").data["token"]
    crowd = APIClient()  # crowd workers are not logged in: the token is the credential
    assert crowd.get(f"/api/crowd/{writing}/").status_code == 400  # no worker id
    crowd = APIClient(REMOTE_ADDR="127.0.0.1")  # workers sharing an address are workers of their own
    for worker in ("w1", "w2"):
        work = crowd.get(f"/api/crowd/{writing}/", {"worker": worker}).data
        assert work["kind"] == "writing" and work["statements"] == 2 and len(work["key"]) >= 32
        ref = next(k for k, r in world.refs.items() if r.pk == work["reference"])
        short = crowd.post(
            f"/api/crowd/{writing}/",
            {"worker": worker, "key": work["key"], "reference": work["reference"], "statements": ["x"]},
            format="json",
        )
        assert short.status_code == 400 and "all 2 statements" in str(short.data)
        keyless = crowd.post(
            f"/api/crowd/{writing}/",
            {"worker": worker, "reference": work["reference"], "statements": STATEMENTS[ref]},
            format="json",
        )
        assert keyless.status_code == 400 and "not open to you" in str(keyless.data)
        done = crowd.post(
            f"/api/crowd/{writing}/",
            {"worker": worker, "key": work["key"], "reference": work["reference"], "statements": STATEMENTS[ref]},
            format="json",
        )
        assert done.status_code == 201 and len(done.data["completion_code"]) == 8
    assert crowd.get(f"/api/crowd/{writing}/", {"worker": "w3"}).data["done"] is True

    assert coord.post(f"/api/lightweight/{run}/filter/").data == {"kept": 4}
    report = coord.post(f"/api/lightweight/{run}/sample/", {}, format="json").data
    assert report[0]["batches"] == [2, 2] and report[0]["short"] == []
    assert coord.post(f"/api/lightweight/{run}/make-tasks/").data == {"created": 4}  # 2 peers x 2 batches
    tasks_csv = coord.get(f"/api/lightweight/{run}/mturk-input/?format=csv&batch=1").content.decode()
    assert tasks_csv.startswith("eventId,summaryId,qIdList,summary_text,statement_1")

    judging = coord.post(f"/api/lightweight/{run}/links/", {"kind": "judging", "batch": 1}, format="json").data["token"]
    codes, keys = {}, {}
    for worker, answer in (("j1", "present"), ("j2", "absent"), ("j1", "present"), ("j2", "absent")):
        task = crowd.get(f"/api/crowd/{judging}/", {"worker": worker, "key": keys.get(worker, "")}).data
        assert task["kind"] == "judging" and len(task["statements"]) == 2
        keys[worker] = task["key"]
        ids = [s["id"] for s in task["statements"]]
        partial = crowd.post(
            f"/api/crowd/{judging}/",
            {"worker": worker, "key": keys[worker], "task": task["task"], "answers": {ids[0]: answer}},
            format="json",
        )
        assert partial.status_code == 400 and "every statement" in str(partial.data)
        body = {"worker": worker, "key": keys[worker], "task": task["task"], "answers": {i: answer for i in ids}}
        done = crowd.post(f"/api/crowd/{judging}/", body, format="json")
        assert done.status_code == 201
        again = crowd.post(f"/api/crowd/{judging}/", body, format="json")  # a double submission
        assert again.data["completion_code"] == done.data["completion_code"]
        codes[(worker, task["task"])] = done.data["completion_code"]
    assert len(codes) == 4 and LiteAssignment.objects.count() == 4
    assert crowd.get(f"/api/crowd/{judging}/", {"worker": "j3"}).data["done"] is True  # 2 judges each
    keyless = crowd.get(f"/api/crowd/{judging}/", {"worker": "j1"}).data  # j1's id without its key: answered as j3
    assert keyless["done"] is True and keyless["key"] != keys["j1"]

    # j1 always present, j2 always absent: they never agree, both are removed, nothing is left
    workers = coord.get(f"/api/lightweight/{run}/scores/?level=worker").data
    assert {w["worker"]: (w["agreement"], w["removed"]) for w in workers} == {"j1": (0.0, True), "j2": (0.0, True)}
    assert coord.get(f"/api/lightweight/{run}/scores/?level=summary").data == []
    # without the worker filter: a tie on every statement -> absent
    summary = coord.get(f"/api/lightweight/{run}/scores/?level=summary&agreement=none").data
    assert len(summary) == 2 and all(r["statements"] == 2 and r["score"] == 0 for r in summary)
    bad = coord.get(f"/api/lightweight/{run}/scores/?level=summary&threshold=7")
    assert bad.status_code == 400
    dashboard = coord.get(f"/api/lightweight/{run}/dashboard/").data
    assert dashboard["progress"]["assignments"] == 4 and dashboard["progress"]["tasks"] == 4
    assert dashboard["costs"]["so_far"] == "2.80"  # 2 writings x 0.50 + 4 judgments x 0.45
    assert as_user("bob").get(f"/api/lightweight/{run}/dashboard/").status_code == 404
    statements = coord.get(f"/api/lite-statements/?pyramid={run}").data
    assert statements["count"] == 4
    assert as_user("bob").get(f"/api/lite-statements/?pyramid={run}").data["count"] == 0


def test_settings_changes_are_validated_and_recomputed(as_user, world):
    run = make_run(as_user, world)
    coord = as_user("coord")
    assert coord.patch(f"/api/lightweight/{run}/", {"threshold": 2}, format="json").status_code == 400
    before = coord.get(f"/api/lightweight/{run}/").data["revision"]
    assert coord.patch(f"/api/lightweight/{run}/", {"agreement": "sequence-matcher"}, format="json").status_code == 200
    assert coord.get(f"/api/lightweight/{run}/").data["revision"] == before + 1
    assert coord.patch(f"/api/lightweight/{run}/", {"dataset": world.d2.pk}, format="json").status_code == 400


def test_upload_of_results_and_round_trip_of_the_mturk_files(as_user, world):
    coord = as_user("coord")
    run = make_run(as_user, world)
    text = (
        "AssignmentId,WorkerId,Input.eventId,Input.summaryId,Input.qIdList,Input.summary_text,"
        "Input.statement_1,Input.statement_2,Answer.S1Answer,Answer.S2Answer\n"
        "A1,W1,T1,1,\"['q1', 'q2']\",Alpha is here.,Alpha is mentioned,Zeta is mentioned,p,n\n"
    )
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = coord.post(
        f"/api/lightweight/{run}/upload/", {"file": SimpleUploadedFile("r.csv", text.encode())}, format="multipart"
    )
    assert response.status_code == 200, response.data
    assert response.data["created"]["assignments"] == 1
    exported = coord.get(f"/api/lightweight/{run}/mturk-input/?format=csv").content.decode()
    assert "Alpha is mentioned" in exported and "['q1', 'q2']" in exported
    bad = coord.post(
        f"/api/lightweight/{run}/upload/", {"file": SimpleUploadedFile("r.csv", b"a,b\n1,2\n")}, format="multipart"
    )
    assert bad.status_code == 400 and "not a lightweight-pyramid file" in str(bad.data)
    assert LiteStatement.objects.filter(pyramid_id=run).count() == 2
    assert (
        as_user("bob")
        .post(
            f"/api/lightweight/{run}/upload/", {"file": SimpleUploadedFile("r.csv", text.encode())}, format="multipart"
        )
        .status_code
        == 404
    )


def test_unknown_or_inactive_links_are_404():
    assert APIClient().get("/api/crowd/nope/", {"worker": "w"}).status_code == 404


def test_mturk_round_trip_export_tasks_then_import_results(as_user, world):
    """Tasks made in the app go to MTurk as the released input file; MTurk's results file (its own
    columns added, answers in any column order) comes back onto the same tasks."""
    import csv
    import io

    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotation.lightweight import work as lightweight_work
    from annotation.lightweight.models import LiteTask

    coord = as_user("coord")
    run = make_run(as_user, world, statements_per_reference=2)
    from annotation.lightweight.models import LightweightPyramid

    lightweight_work.submit_writing(
        LightweightPyramid.objects.get(pk=run), world.refs["A"], "w1", STATEMENTS["A"], own("w1", run)
    )
    lightweight_work.submit_writing(
        LightweightPyramid.objects.get(pk=run), world.refs["B"], "w2", STATEMENTS["B"], own("w2", run)
    )
    coord.post(f"/api/lightweight/{run}/sample/", {}, format="json")
    assert coord.post(f"/api/lightweight/{run}/make-tasks/").data == {"created": 2}  # one batch of 4, 2 peers
    exported = coord.get(f"/api/lightweight/{run}/mturk-input/?format=csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert len(rows) == 2 and all(r["statement_4"] and not r["statement_5"] for r in rows)
    out = io.StringIO()
    answer_columns = [f"Answer.S{k}Answer" for k in (3, 1, 4, 2)]
    writer = csv.writer(out)
    writer.writerow(
        ["HITId", "AssignmentId", "WorkerId", "AssignmentStatus"] + [f"Input.{c}" for c in rows[0]] + answer_columns
    )
    for n, row in enumerate(rows):
        for worker in ("MT1", "MT2", "MT3"):
            writer.writerow(
                [
                    f"H{n}",
                    f"A{n}{worker}",
                    worker,
                    "Approved",
                    *row.values(),
                    "p",
                    "n",
                    "p",
                    "" if worker == "MT3" else "n",
                ]
            )
    upload = SimpleUploadedFile("Batch_123_batch_results.csv", out.getvalue().encode())
    response = coord.post(f"/api/lightweight/{run}/upload/", {"file": upload}, format="multipart")
    assert response.status_code == 200, response.data
    assert response.data["created"] == {"assignments": 6}  # nothing else new: the same topics, peers, statements, tasks
    assert LiteTask.objects.filter(pyramid_id=run).count() == 2
    labels = coord.get(f"/api/lightweight/{run}/scores/?level=label").data
    assert len(labels) == 8 and all(label["answers"] == 3 for label in labels)
    # S1 n, S2 n/n/blank -> blank counted present by default: 2 absent vs 1 present -> absent; S3, S4 present
    assert sorted(label["label"] for label in labels) == [0, 0, 0, 0, 1, 1, 1, 1]


def test_statements_from_the_expert_pyramids_scu_labels(as_user, world):
    coord = as_user("coord")
    run = make_run(as_user, world, origin="expert")
    assert coord.post(f"/api/lightweight/{run}/from-expert/").data == {"created": 2}  # SCUs "Alpha" and "Zeta"
    assert coord.post(f"/api/lightweight/{run}/from-expert/").data == {"created": 0}  # nothing twice
    texts = {s.text: s.scu_id for s in LiteStatement.objects.filter(pyramid_id=run)}
    assert texts == {"Alpha": world.scu1.pk, "Zeta": world.scu2.pk}
    assert as_user("alice").post(f"/api/lightweight/{run}/from-expert/").status_code == 404


def test_comparison_with_expert_scores_against_scipy():
    from scipy import stats

    from annotation.lightweight.dashboard import comparison

    summaries = [
        {"topic": f"D{t}", "summary": f"D{t}.{s}", "system": str(s), "score": (t * 7 + s * 3) % 10 / 10}
        for t in range(4)
        for s in range(5)
    ]
    expert = {(r["topic"], r["summary"]): ((r["score"] * 10 + int(r["system"])) % 10) / 10 for r in summaries[:-1]}
    result = comparison(summaries, expert)
    assert len(result["points"]) == 19  # the peer without an expert score is left out
    x = [p["lightweight"] for p in result["points"]]
    y = [p["expert"] for p in result["points"]]
    assert result["summary_level"]["pearson"]["value"] == pytest.approx(stats.pearsonr(x, y)[0])
    assert result["summary_level"]["kendall"]["value"] == pytest.approx(stats.kendalltau(x, y)[0])
    sx = [s["lightweight"] for s in result["systems"]]
    sy = [s["expert"] for s in result["systems"]]
    assert result["system_level"]["spearman"]["value"] == pytest.approx(stats.spearmanr(sx, sy)[0])
    assert [s["summaries"] for s in result["systems"]] == [4, 4, 4, 4, 3]
    assert comparison(summaries, {}) is None
