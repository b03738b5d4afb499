"""Phase-1 statement filters and sampling."""

import pytest

from annotation.formats.lightweight_csv import read_statements
from scoring.lite_statements import (
    DUPLICATE,
    MULTIPLE_SENTENCES,
    TOO_LONG,
    TOO_SHORT,
    Statement,
    chunk,
    content_lemmas,
    filter_statements,
    sample_batches,
    sentence_count,
    tokens,
    top_up,
)

from tests.conftest import shared_data


def decide(*texts, reference="R1"):
    return filter_statements([Statement(i, reference, t) for i, t in enumerate(texts)])


def test_length_and_sentence_filters_after_stripping():
    d = decide(
        "...The storm hit the coast on Monday!",
        "The storm hit the coast. It killed ten people.",
        "The storm hit",  # 3 tokens: dropped
        "The storm hit hard",  # 4 tokens: kept
        " ".join(["word"] * 21),
        " ".join(["word"] * 19) + " end",
    )
    assert d[0].kept and d[0].text == "The storm hit the coast on Monday"
    assert [x.reason for x in d[1:]] == [MULTIPLE_SENTENCES, TOO_SHORT, None, TOO_LONG, None]


def test_abbreviations_and_initials_do_not_split_sentences():
    assert sentence_count("He met Dr. Jack Kevorkian in the U.S. in 1990") == 1
    assert sentence_count("Kenneth A. Bergstedt was paralyzed") == 1
    assert sentence_count("It rained. Then it snowed") == 2
    assert tokens("Earth's kidney isn't 2,000 miles away") == [
        "Earth",
        "'s",
        "kidney",
        "is",
        "n't",
        "2,000",
        "miles",
        "away",
    ]


def test_near_duplicates_drop_the_larger_and_the_later_on_equal_size():
    d = decide(
        "The cats sat on the mat in the sun",  # {cat, sit, mat, sun}
        "The cat sat on the mat",  # {cat, sit, mat}: contained -> the larger (0) goes
        "On the mat the cat sat",  # same set, equal size, later: dropped
        "A dog barked at the postman",
    )
    assert content_lemmas("The cats sat on the mat") == {"cat", "sit", "mat"}
    assert [(x.kept, x.duplicate_of) for x in d] == [(False, 1), (True, None), (False, 1), (True, None)]


def test_duplicates_are_only_looked_for_within_one_reference():
    statements = [Statement(1, "A", "The cat sat on the mat"), Statement(2, "B", "The cat sat on the mat")]
    assert all(d.kept for d in filter_statements(statements))


def test_sampling_is_seeded_disjoint_and_reports_short_references():
    kept = {"A": list(range(10)), "B": list(range(10, 20)), "C": list(range(20, 26)), "D": list(range(30, 40))}
    one = sample_batches(kept, seed=7)
    assert one == sample_batches(kept, seed=7) and one != sample_batches(kept, seed=8)
    b1, b2 = ({s for _, s in batch} for batch in one.batches)
    assert not b1 & b2 and len(b1) == 16 and len(b2) == 14
    assert [(x.reference, x.batch, x.missing) for x in one.short] == [("C", 2, 2)]
    filled = top_up(one, kept, seed=7)
    b1f, b2f = ({s for _, s in batch} for batch in filled.batches)
    assert b1f == b1 and len(b2f) == 16 and not b1f & b2f and b2 <= b2f
    assert not filled.short
    extra = b2f - b2
    assert all(not 20 <= s < 26 for s in extra)  # taken from the other references
    assert [len(t) for t in chunk(list(filled.batches[1]))] == [16]


def test_top_up_reports_a_topic_that_runs_out():
    kept = {"A": list(range(5)), "B": list(range(10, 14))}
    filled = top_up(sample_batches(kept, seed=1), kept, seed=1)
    assert sum(len(b) for b in filled.batches) == 9
    assert [(x.reference, x.batch, x.missing) for x in filled.short] == [(None, 2, 7)]


@pytest.mark.realdata
@pytest.mark.parametrize("year", ["DUC2005", "DUC2006"])
def test_released_statements_chosen_for_use_pass_the_length_and_sentence_filters(year):
    rows = read_statements(
        shared_data("litepyramids", "Phase1_SCU_writing", "dataset", year, "batch1.csv").read_text(encoding="utf-8")
    )
    decisions = filter_statements([Statement((r.event, r.question), r.source, r.text) for r in rows])
    for row, d in zip(rows, decisions, strict=True):
        if row.for_use:
            assert d.kept or d.reason == DUPLICATE, (row.text, d.reason)
