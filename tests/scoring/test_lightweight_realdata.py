"""The released lightweight-pyramid data reproduced by the file readers and ``scoring.lightweight``.

REALSumm's raw answers (both folders) give every aggregated label of Lite2-3Pyramid's REALSumm
package and REALSumm's published per-summary scores; the Lite2-3Pyramid package gives the same
system scores. Skipped when ../shared/data is absent.
"""

import json
from collections import Counter
from functools import cache

import pytest

from annotation.formats.lightweight_csv import read_phase2_results, read_statements
from annotation.formats.lite23pyramid import read_lite23
from scoring.lightweight import Settings, evaluate

from tests.conftest import shared_data
from tests.scoring.released_inputs import assignments_from_lite23, assignments_from_phase2

pytestmark = pytest.mark.realdata

ABS_BART = 0.48349483849483854
EXTRACTIVE_IN_ABS_FOLDER = {"banditsumm_out", "neusumm_out"}


def realsumm(*parts):
    return shared_data("realsumm", "human_annotations", "SCUs_and_annotations", *parts)


@cache
def results(folder):
    out = []
    for path in sorted(realsumm(f"SCU_rating_results_{folder}_systems").glob("*.csv")):
        out.extend(read_phase2_results(path.read_text(encoding="utf-8")))
    return tuple(out)


@cache
def scored(folder, agreement="sequence-matcher"):
    return evaluate(assignments_from_phase2(list(results(folder))), Settings(agreement=agreement))


def test_counts_of_the_raw_answers():
    rows = [("abs", r) for r in results("abs")] + [("ext", r) for r in results("ext")]
    assert len(rows) == 7743
    tasks = Counter((folder, r.task.event, r.task.summary, r.task.statements) for folder, r in rows)
    assert len(tasks) == 2500 and set(tasks.values()) == {3, 4}
    assert all(r.worker is None for _, r in rows)
    labels = scored("abs").labels + scored("ext").labels
    assert len(labels) == 26400
    assert sum(1 for label in labels if label.answers == 4 and label.present_answers == 2) == 277
    assert not any(label.present for label in labels if label.answers == 4 and label.present_answers == 2)


def test_blank_padding_anywhere_is_dropped_and_ids_follow_the_statement_list():
    statements = read_statements(realsumm("SCUs_list.csv").read_text(encoding="utf-8"))
    text = {(s.event, s.question): s.text for s in statements}
    for r in results("abs")[:400]:
        for qid, t in r.task.statements:
            assert text[(r.task.event, qid)] == t != "BLANK"


def label_file(folder, system):
    prefix = "ext_" if folder == "ext" or system in EXTRACTIVE_IN_ABS_FOLDER else "abs_"
    return shared_data("lite2-3pyramid", "data", "REALSumm", "labels", f"{prefix}{system}.label")


@pytest.mark.parametrize("folder", ["abs", "ext"])
def test_labels_equal_the_released_aggregated_labels(folder):
    package = shared_data("lite2-3pyramid", "data", "REALSumm")
    documents = package.joinpath("ids.txt").read_text().split()
    statements = read_statements(realsumm("SCUs_list.csv").read_text(encoding="utf-8"))
    order = {}
    for s in statements:
        if not s.is_blank:
            order.setdefault(s.event, []).append(s.question)
    got = {(label.topic, label.summary, label.statement): label.present for label in scored(folder).labels}
    systems = {s for _, s, _ in got}
    assert len(systems) == (16 if folder == "abs" else 9)
    for system in systems:
        lines = label_file(folder, system).read_text().splitlines()
        for document, line in zip(documents, lines, strict=True):
            mine = ["1" if got[(document, system, q)] else "0" for q in order[document]]
            assert mine == line.split("\t"), (system, document)
    summaries = scored(folder).summaries
    assert len(summaries) == 100 * len(systems)
    assert all(s.statements == len(order[s.topic]) for s in summaries)


@pytest.mark.parametrize("folder", ["abs", "ext"])
def test_published_scores_to_1e_12(folder):
    # doc_id i is line i of the package's ids.txt (the references agree line by line)
    documents = shared_data("lite2-3pyramid", "data", "REALSumm", "ids.txt").read_text().split()
    by_summary = {(s.topic, s.system): s.score for s in scored(folder).summaries}
    systems = {s.system: s for s in scored(folder).systems}
    for system, mine in systems.items():
        if folder == "abs" and system == "bart_out":
            # abs.json's bart_out.txt entry is a copy of the extractive BART entry: use the paper's figure
            assert mine.score == pytest.approx(ABS_BART, abs=1e-12)
            continue
        json_file = "ext" if system in EXTRACTIVE_IN_ABS_FOLDER else folder  # published with the extractive ones
        published = json.loads(shared_data("realsumm", "scores_dicts_json", f"{json_file}.json").read_text())
        values = [
            doc["system_summaries"][f"{system}.txt"]["scores"]["litepyramid_recall"] for doc in published.values()
        ]
        assert mine.summaries == len(values) == 100
        assert mine.score == pytest.approx(sum(values) / len(values), abs=1e-12), system
        for doc in published.values():
            document = documents[doc["doc_id"]]
            assert by_summary[(document, system)] == pytest.approx(
                doc["system_summaries"][f"{system}.txt"]["scores"]["litepyramid_recall"], abs=1e-12
            )


def test_no_worker_ids_means_no_filter_under_either_measure():
    a, b = scored("abs", "sequence-matcher"), scored("abs", "positional")
    assert a.workers == b.workers == ()
    assert [s.score for s in a.systems] == [s.score for s in b.systems]


def test_lite23_package_gives_the_same_system_scores():
    package = read_lite23(shared_data("lite2-3pyramid", "data", "REALSumm"))
    assert len(package.documents) == 100 and len(package.systems) == 25
    assert all(len(s.summaries) == 100 for s in package.systems)
    result = evaluate(assignments_from_lite23(package), Settings())
    lite = {s.system: s.score for s in result.systems}
    raw = {}
    for folder in ("abs", "ext"):
        for s in scored(folder).systems:
            prefix = "ext_" if folder == "ext" or s.system in EXTRACTIVE_IN_ABS_FOLDER else "abs_"
            raw[prefix + s.system] = s.score
    assert set(lite) == set(raw)
    for system in lite:
        assert lite[system] == pytest.approx(raw[system], abs=1e-12)
    assert lite["abs_bart_out"] == pytest.approx(ABS_BART, abs=1e-12)


@pytest.mark.parametrize("year, total", [("DUC2005", 494), ("DUC2006", 1021)])
def test_litepyramids_statement_batches(year, total):
    folder = shared_data("litepyramids", "Phase1_SCU_writing", "dataset", year)
    batches = [read_statements(folder.joinpath(f"batch{b}.csv").read_text(encoding="utf-8")) for b in (1, 2)]
    assert len(batches[0]) == len(batches[1]) == total
    used = [{(s.event, s.question) for s in batch if s.for_use} for batch in batches]
    assert not used[0] & used[1]
    for chosen in used:
        per_topic = Counter(event for event, _ in chosen)
        assert set(per_topic.values()) == {16}
