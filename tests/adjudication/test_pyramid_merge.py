"""The pure part of pyramid adjudication (``annotation/adjudication/pyramid_merge.py``), on SCU
states written by hand: no database."""

import pytest

from annotation.adjudication import pyramid_merge


def scu(label, **refs):
    """An SCU state (``pyramids.document_states.scu_states``): reference -> list of (start, end) parts."""
    return {
        "label": label,
        "comment": "",
        "contributors": [
            {"reference": r, "comment": "", "legacy_issue": "", "parts": [[r, s, e] for s, e in parts]}
            for r, parts in sorted(refs.items())
        ],
    }


A = {1: scu("rain falls", A=[(0, 4)], B=[(0, 4)]), 2: scu("sun shines", A=[(5, 9)])}
B = {7: scu("rain  falls", A=[(0, 4)], B=[(0, 4)]), 8: scu("it is sunny", A=[(5, 9)], C=[(5, 8), (10, 12)])}


def test_items_and_their_choices():
    items = {i.key: i for i in pyramid_merge.items(A, B, [(1, 7), (2, 8)])}
    assert items["m1-7"].agreed, "labels equal up to white space, same contributors"
    assert items["m1-7"].choices == ()
    sun = items["m2-8"]
    assert (sun.label_differs, sun.contributors_differ, sun.differences) == (True, True, ["label", "weight 1 vs 2"])
    assert [(r.reference, r.kind) for r in sun.references] == [("A", "same"), ("C", "only_b")]
    assert sun.choices == ("a", "b", "union_a", "union_b", "both", "drop")


def test_union_a_differs_from_union_b_only_when_it_can():
    same_label = {2: scu("sun", A=[(5, 9)])}
    extra_reference = {8: scu("sun", A=[(5, 9)], C=[(1, 3)])}
    item = pyramid_merge.items(same_label, extra_reference, [(2, 8)])[0]
    assert item.choices == ("a", "b", "union_a", "both", "drop"), "same label, no reference with other words: one union"


def test_merge_by_hand():
    items = pyramid_merge.items(A, B, [(1, 7), (2, 8)])
    merged = pyramid_merge.merge(items, {"m2-8": "union_a"})
    assert [key for key, _ in merged] == ["m1-7", "m2-8"]
    sun = merged[1][1]
    assert sun["label"] == "sun shines"
    assert [(c["reference"], c["parts"]) for c in sun["contributors"]] == [
        ("A", [["A", 5, 9]]),
        ("C", [["C", 5, 8], ["C", 10, 12]]),
    ]
    both = pyramid_merge.merge(items, {"m2-8": "both"})
    assert [key for key, _ in both] == ["m1-7", "m2-8", "m2-8#2"] and both[2][1]["label"] == "it is sunny"
    assert pyramid_merge.merge(items, {"m2-8": "drop"}) == [merged[0]]
    merged[0][1]["label"] = "changed"
    assert A[1]["label"] == "rain falls", "the merge copies: the sources are never changed"


def test_contributors_aligned_across_item_pairs_are_noted():
    items = {i.key: i for i in pyramid_merge.items(A, B, [(1, 7)], moved=[(1, 7, "A"), (2, 8, "A")])}
    assert set(items) == {"m1-7", "a2", "b8"}
    assert items["m1-7"].elsewhere == ()
    assert items["a2"].elsewhere == ("A: B has it in SCU 8 “it is sunny”",)
    assert items["b8"].elsewhere == ("A: A has it in SCU 2 “sun shines”",)


def test_bad_decisions():
    items = pyramid_merge.items(A, B, [(1, 7), (2, 8)])
    assert [i.key for i in pyramid_merge.undecided(items, {"m2-8": "keep"})] == ["m2-8"]
    with pytest.raises(ValueError, match="undecided: m2-8"):
        pyramid_merge.merge(items, {})
