"""The pure parts of bench/reproduce_pyramid.py: DUCView's minimum for building a pyramid, the
robot's plan and its action count, and the check of the stored pyramid, on tiny cases counted by
hand (no browser, no database)."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "reproduce_pyramid.py"
spec = importlib.util.spec_from_file_location("reproduce_pyramid", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # dataclasses look their module up while the class is made
spec.loader.exec_module(bench)
Contributor, Scu = bench.Contributor, bench.Scu

POSITION = {10: 0, 20: 1, 30: 2}  # reference id -> its place on the page
WEIGHT_1 = Scu(1, (Contributor(10, ((10, 0, 5),)),))
# A merge of what two references say, one of them in two parts (a discontinuous contributor).
MIXED = Scu(
    2,
    bench.plan(
        [Contributor(10, ((10, 6, 9), (10, 20, 25))), Contributor(20, ((20, 0, 4),)), Contributor(30, ((30, 3, 8),))],
        POSITION,
    ),
)
ALL_DISCONTINUOUS = Scu(
    3,
    bench.plan(
        [Contributor(20, ((20, 10, 12), (20, 30, 33))), Contributor(10, ((10, 40, 44), (10, 50, 52)))], POSITION
    ),
)


def test_the_robot_makes_a_continuous_contributor_first_else_the_first_in_the_texts():
    assert [c.reference for c in MIXED.contributors] == [20, 10, 30]  # reference 10's is discontinuous
    assert [c.reference for c in ALL_DISCONTINUOUS.contributors] == [10, 20]


def test_ducview_minimum_as_counted_in_ducview():
    # Open the texts (1). Weight 1: a drag and New SCU (2). MIXED: 3 contributors (a drag and New SCU
    # or Add Contributor each: 6), one further part (a drag and Add Contributor: 2), a click on its
    # contributor's node first (1): 9. ALL_DISCONTINUOUS: 2 contributors (4), 2 further parts (4),
    # a click on each contributor's node (2), one click back on the SCU's node between them (1): 11.
    assert bench.ducview_minimum([WEIGHT_1, MIXED, ALL_DISCONTINUOUS]) == 1 + 2 + 9 + 11
    assert bench.ducview_minimum([]) == 1


class FakeRobot:
    """Stands in for the browser: counts each call as the BuilderRobot does."""

    def __init__(self):
        self.calls = []

    def key(self, run, kind, key):
        self.calls.append((kind, key))
        run.act(kind, 1.0)

    def drag_part(self, run, texts, part, shift):
        self.calls.append(("part" if shift else "select", part))
        run.act("part" if shift else "select", 1.0)


def test_rebuilding_counts_every_key_and_drag_by_hand():
    robot, run = FakeRobot(), bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={})
    assert robot.calls == [
        ("select", (10, 0, 5)),
        ("new", "n"),  # weight 1: 2
        ("select", (20, 0, 4)),
        ("new", "n"),  # MIXED from its continuous contributor
        ("select", (10, 6, 9)),
        ("add", "a"),
        ("part", (10, 20, 25)),  # A selects the new contributor: Shift+drag
        ("select", (30, 3, 8)),
        ("add", "a"),  # MIXED: 7
        ("select", (10, 40, 44)),
        ("new", "n"),
        ("enter", "Enter"),
        ("next-contributor", "."),
        ("part", (10, 50, 52)),
        ("select", (20, 10, 12)),
        ("add", "a"),
        ("part", (20, 30, 33)),  # ALL_DISCONTINUOUS: 8
    ]
    assert run.total == 17 and run.waited_ms == 17.0
    assert (
        bench.our_minimum([WEIGHT_1, MIXED, ALL_DISCONTINUOUS]) == 1 + run.total
    )  # and the Start that opens the builder


def test_the_check_names_missing_and_extra_contributors_then_other_groupings():
    a, b, c = Contributor(10, ((10, 0, 5),)), Contributor(20, ((20, 0, 4),)), Contributor(30, ((30, 3, 8),))
    assert bench.differences([[a, b], [c]], [[b, a], [c]]) == []  # labels, ids and order aside
    assert bench.differences([[a, b]], [[a, b], [c]]) == [f"missing contributor {c}"]
    longer = Contributor(10, ((10, 0, 6),))
    assert bench.differences([[longer, b], [c]], [[a, b], [c]]) == [
        f"missing contributor {a}",
        f"extra contributor {longer}",
    ]
    # The same contributors, grouped otherwise (a merge not made): the SCUs that differ.
    assert bench.differences([[a], [b], [c]], [[a, b], [c]]) == [
        f"SCU grouped otherwise: {[a]}",
        f"SCU grouped otherwise: {[b]}",
    ]


def test_an_scu_of_several_contributors_grouped_otherwise_is_named_in_text_order():
    a, b, c = Contributor(10, ((10, 0, 5),)), Contributor(20, ((20, 0, 4),)), Contributor(30, ((30, 3, 8),))
    assert bench.differences([[c, a], [b]], [[a, b, c]]) == [
        f"SCU grouped otherwise: {[a, c]}",
        f"SCU grouped otherwise: {[b]}",
    ]
