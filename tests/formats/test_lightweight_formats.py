"""Lightweight-pyramid file formats on small files written in the released shapes."""

import pytest

from annotation.formats.errors import LightweightFormatError
from annotation.formats.lightweight_csv import (
    Phase2Task,
    parse_qid_list,
    read_phase1_results,
    read_phase2_results,
    read_statements,
    write_phase2_input,
)
from annotation.formats.lite23pyramid import read_lite23

# REALSumm's shape: Input./Answer. only, answers in S10..S16, S1..S9 order, a trailing empty column,
# BLANK padding (one BLANK between real statements), no worker ids.
STATEMENTS = ",".join(f"Input.statement_{k}" for k in range(1, 17))
ANSWERS = ",".join(f"Answer.S{k}Answer" for k in list(range(10, 17)) + list(range(1, 10)))
REALSUMM = (
    f"Input.eventId,Input.summaryId,Input.qIdList,Input.summary_text,{STATEMENTS},{ANSWERS},\n"
    "d1,sys_a,\"['10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '20', '21', '22', '23', '24', '25']\","
    '"A summary, with a comma.",Fact one.,BLANK,Fact three.,'
    + ",".join(["BLANK"] * 13)
    + ","
    # answers for S10..S16 then S1..S9
    + ",".join(["n"] * 7)
    + ",p,p,n,"
    + ",".join(["n"] * 6)
    + ",\n"
)


def test_realsumm_shape_blank_padding_and_answer_columns_in_any_order():
    (row,) = read_phase2_results(REALSUMM)
    assert row.worker is None
    assert row.task.statements == (("10", "Fact one."), ("12", "Fact three."))
    assert row.answers == (("10", True), ("12", False))  # S2 (a BLANK) answered p is ignored
    assert row.task.summary_text == "A summary, with a comma."


def test_identical_rows_get_distinct_stable_keys():
    rows = read_phase2_results(REALSUMM + REALSUMM.split("\n", 1)[1])
    assert len({r.assignment for r in rows}) == 2
    again = read_phase2_results(REALSUMM + REALSUMM.split("\n", 1)[1])
    assert [r.assignment for r in rows] == [r.assignment for r in again]


def test_mturk_results_with_worker_ids_and_blank_answers_round_trip():
    tasks = [Phase2Task("D0601", "D0601.M.250.A.12", "Peer text.", (("0", "It rained."), ("1", "=1+1 is two.")))]
    batch = write_phase2_input(tasks)
    header, line = batch.splitlines()[:2]
    assert header.split(",")[:5] == ["eventId", "summaryId", "qIdList", "summary_text", "statement_1"]
    assert "\"['0', '1']\"" in line and "'=1+1 is two." in line  # a formula cell is neutralised
    results_csv = (
        "HITId,AssignmentId,WorkerId,"
        + ",".join(f"Input.{c}" for c in header.split(","))
        + ","
        + ",".join(f"Answer.S{k}Answer" for k in range(1, 17))
        + "\n"
        + "H1,A1,W1,"
        + line
        + ",p,,"
        + ",".join([""] * 14)
        + "\n"
    )
    (row,) = read_phase2_results(results_csv)
    assert (row.worker, row.assignment) == ("W1", "A1")
    assert row.answers == (("0", True), ("1", None))


@pytest.mark.parametrize(
    "bad, message",
    [
        ("['1', '2'", "qIdList"),
        ("__import__('os')", "qIdList"),
        (repr([str(i) for i in range(17)]), "at most 16"),
    ],
)
def test_bad_qid_lists_are_refused_with_the_row(bad, message):
    with pytest.raises(LightweightFormatError, match=message):
        parse_qid_list(bad, 5)


def test_unknown_answer_value_names_the_row_and_position():
    text = REALSUMM.replace(",p,p,n,", ",yes,p,n,", 1)
    with pytest.raises(LightweightFormatError, match=r"row 2: answer 1 is 'yes'"):
        read_phase2_results(text)


def test_missing_columns_are_named():
    with pytest.raises(LightweightFormatError, match="Input.qIdList"):
        read_phase2_results("Input.eventId,Input.summaryId\nd,s\n")


def test_statement_file_key_is_event_and_question():
    text = (
        "eventId,questionId,questionText,answer,author,sourceSummaryId,forUse\n"
        'D0630,0,"Online sales hurt book clubs.",Y,A3C,D0630.M.250.C.C,0\n'
        "D0631,0,Another topic restarts the ids.,Y,A3C,D0631.M.250.C.C,1\n"
    )
    rows = read_statements(text)
    assert [(r.event, r.question, r.for_use) for r in rows] == [("D0630", "0", False), ("D0631", "0", True)]
    with pytest.raises(LightweightFormatError, match="appears twice"):
        read_statements(text + "D0631,0,dup,Y,,x,1\n")


def test_phase1_results():
    text = (
        "HITId,AssignmentId,WorkerId,Input.eventId,Input.summId,Input.summary_text,"
        + ",".join(f"Answer.s{k}" for k in range(1, 9))
        + "\n"
        + "H,A9,W7,D0601,D0601.M.250.A.A,Ref text.,One fact here.,Two,"
        + ",".join([""] * 6)
        + "\n"
    )
    (row,) = read_phase1_results(text)
    assert (row.worker, row.assignment, row.summary) == ("W7", "A9", "D0601.M.250.A.A")
    assert row.statements[:2] == ("One fact here.", "Two") and len(row.statements) == 8


def test_lite23_folder(tmp_path):
    (tmp_path / "ids.txt").write_text("d1\nd2\n")
    (tmp_path / "SCUs.txt").write_text("a\tb\nc\n")
    (tmp_path / "labels").mkdir()
    (tmp_path / "summaries").mkdir()
    (tmp_path / "labels" / "abs_x.label").write_text("1\t0\n1\n")
    (tmp_path / "summaries" / "abs_x.summary").write_text("s1\ns2\n")
    data = read_lite23(tmp_path)
    assert data.statements == (("a", "b"), ("c",))
    assert data.systems[0].labels == ((True, False), (True,))
    (tmp_path / "labels" / "abs_y.label").write_text("1\t0\n1\t1\n")
    with pytest.raises(LightweightFormatError, match=r"abs_y.label line 2: 2 labels for 1 statements"):
        read_lite23(tmp_path)
