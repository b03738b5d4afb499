"""The pure parts of bench/reproduce_pyramid.py: DUCView's minimum for building a pyramid, the
robot's plan and its action count, and the check of the stored pyramid, on tiny cases counted by
hand (no browser, no database)."""

import importlib.util
import sys
from pathlib import Path

import pytest

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


def test_the_robot_makes_the_contributors_in_the_texts_order():
    assert [c.reference for c in MIXED.contributors] == [10, 20, 30]  # reference 10's is discontinuous
    assert [c.reference for c in ALL_DISCONTINUOUS.contributors] == [10, 20]


def test_with_the_texts_side_by_side_the_robot_works_down_the_page_across_the_columns():
    lengths = {10: 100, 20: 50, 30: 200}  # reference 20 is half as long: its 25th character is half-way down
    contributors = [
        Contributor(10, ((10, 60, 70),)),
        Contributor(20, ((20, 25, 30),)),
        Contributor(30, ((30, 20, 30),)),
    ]
    # reference 30's starts a tenth of the way down, 20's half-way, 10's at 60%
    assert [c.reference for c in bench.plan(contributors, POSITION, lengths)] == [30, 20, 10]
    assert [c.reference for c in bench.plan(contributors, POSITION)] == [10, 20, 30]  # the texts' order
    level = [Contributor(20, ((20, 25, 30),)), Contributor(10, ((10, 50, 55),))]  # as far down: left column first
    assert [c.reference for c in bench.plan(level, POSITION, lengths)] == [10, 20]


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

    upcoming: list = []
    cursor = 0

    def drag_part(self, run, texts, part, how):
        self.calls.append((how, part))
        run.act(how, 1.0)


def test_rebuilding_counts_every_key_and_drag_by_hand():
    robot, run = FakeRobot(), bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={})  # --flow keys
    assert robot.calls == [
        ("select", (10, 0, 5)),
        ("new", "n"),  # weight 1: 2
        ("select", (10, 6, 9)),
        ("new", "n"),
        ("part", (10, 20, 25)),  # N selects the new contributor: Shift+drag at once
        ("select", (20, 0, 4)),
        ("add", "a"),
        ("select", (30, 3, 8)),
        ("add", "a"),  # MIXED: 7
        ("select", (10, 40, 44)),
        ("new", "n"),
        ("part", (10, 50, 52)),
        ("select", (20, 10, 12)),
        ("add", "a"),
        ("part", (20, 30, 33)),  # A selects the new contributor: Shift+drag; ALL_DISCONTINUOUS: 6
    ]
    assert run.total == 15 and run.waited_ms == 15.0
    assert (
        bench.our_minimum([WEIGHT_1, MIXED, ALL_DISCONTINUOUS]) == 1 + run.total
    )  # and the Start that opens the builder


def test_quick_building_costs_one_gesture_per_part():
    robot, run = FakeRobot(), bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={}, quick=True)
    assert robot.calls == [
        ("new", (10, 0, 5)),  # weight 1: a drag makes the SCU
        ("new", (10, 6, 9)),
        ("part", (10, 20, 25)),
        ("add", (20, 0, 4)),  # a Ctrl+drag adds to the SCU just made
        ("add", (30, 3, 8)),
        ("new", (10, 40, 44)),
        ("part", (10, 50, 52)),
        ("add", (20, 10, 12)),
        ("part", (20, 30, 33)),
    ]
    # 9 parts: 9 gestures, against DUCView's 2 + 9 + 11 = 22 (test_ducview_minimum_as_counted_in_ducview)
    assert run.total == 9 and bench.our_minimum([WEIGHT_1, MIXED, ALL_DISCONTINUOUS], quick=True) == 1 + 9
    # the robot scrolls knowing the parts to come, in this order
    assert robot.upcoming == [p for s in (WEIGHT_1, MIXED, ALL_DISCONTINUOUS) for c in s.contributors for p in c.parts]


def test_the_robot_scrolls_to_show_the_next_part_with_as_many_following_ones_as_fit():
    # parts at these heights in the pane's content; a pane of 300 px, 20 px clear of each edge: 260 usable
    spans = [(500, 520), (600, 620), (740, 760), (900, 920)]
    assert bench.scroll_target(spans, 300, 20) == 500 - 20  # the first three fit (500-760), the fourth not
    assert bench.scroll_target([(500, 520), (300, 320)], 300, 20) == 300 - 20  # the next one above: both shown
    assert bench.scroll_target([(500, 520), (1000, 1020)], 300, 20) == 500 - 20  # alone: at the top
    assert bench.scroll_target([(500, 900)], 300, 20) == 500 - 20  # taller than the pane: its start in sight


class ProposingRobot(FakeRobot):
    """A builder that proposes, for each new SCU, the contributors listed for it (in that order)."""

    def __init__(self, proposed):
        super().__init__()
        self.proposed = list(proposed)

    def proposals(self, run):
        shown = self.proposed.pop(0)
        for _ in shown:
            run.act("read")
        return shown

    def click(self, run, kind, selector):
        self.calls.append((kind, selector))
        run.act(kind)


def test_assisted_rebuilding_reads_every_proposal_and_accepts_the_exact_ones_with_the_fewest_clicks():
    b_right = MIXED.contributors[1]
    c_wrong = Contributor(30, ((30, 3, 9),))  # one character more than the expert's: left alone
    other = Contributor(20, ((20, 30, 33),))
    robot = ProposingRobot([[], [b_right, c_wrong], [other]])
    run = bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={}, assisted=True)
    assert robot.calls == [
        ("select", (10, 0, 5)),
        ("new", "n"),  # nothing proposed: nothing read
        ("select", (10, 6, 9)),
        ("new", "n"),
        ("part", (10, 20, 25)),  # two read; B's is right, C's is not: its ✓ beats C's ✕ and Accept all
        ("accept", '.proposal[data-k="0"] [data-assist=accept]'),
        ("select", (30, 3, 8)),
        ("add", "a"),
        ("select", (10, 40, 44)),
        ("new", "n"),
        ("part", (10, 50, 52)),  # its proposal is not one of its contributors: drag and A as before
        ("select", (20, 10, 12)),
        ("add", "a"),
        ("part", (20, 30, 33)),
    ]
    assert run.actions["read"] == 3 and run.total == 14 + 3  # a click for a drag and A; 3 reads
    # B's exact (it spares a drag and A); C's covers 5 of the expert's 5 characters (near); the last
    # covers 3 of the 5 characters of reference 20's two parts in that SCU: near too.
    assert run.shown == [(), ((bench.EXACT, 2), (bench.NEAR, 0)), ((bench.NEAR, 0),)]

    robot = ProposingRobot([[c_wrong, b_right, Contributor(30, ((30, 0, 2),))]])
    wanted = [b_right, Contributor(30, ((30, 0, 2),))]
    run = bench.PyramidRun()
    assert bench.accept_proposed(robot, run, robot.proposed[0], wanted) == set(wanted)
    assert robot.calls == [  # one wrong of three: its ✕ and Accept all
        ("reject", '.proposal[data-k="0"] [data-assist=reject]'),
        ("accept-all", "[data-assist=accept-all]"),
    ]


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


def test_other_reading_policies_are_counted_from_the_same_lists():
    exact, near, wrong = bench.EXACT, bench.NEAR, bench.WRONG
    lists = [
        ((exact, 2), (near, 0)),
        ((wrong, 0), (exact, 3), (exact, 2)),
        ((exact, 2), (exact, 2)),
        (),
    ]
    assert bench.policies(lists) == {
        # reads 2+3+2; clicks: a ✓ (1), a ✓ each or ✕ and Accept all (2), Accept all (1); 5 accepted
        "every one": (7, 4, 5, 11),
        # the first list read to its near one (2 reads, a ✓), the second stops at once (1 read), the
        # third read whole and accepted at once (2 reads, Accept all)
        "until one is not exact": (5, 2, 3, 6),
        "the first only": (3, 2, 2, 4),
        "skip the list": (0, 0, 0, 0),
    }
    assert bench.hand_cost(MIXED.contributors[0]) == 3  # a drag, A and a Shift+drag


def _release_tree(root, files):
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def test_the_proposals_model_trains_on_every_pyramid_of_the_other_year_unless_told(tmp_path):
    data = tmp_path / "data"
    _release_tree(data, ["duc2006/allpyramids/D0601.pyr", "duc2006/allpans/D0601.M.250.A.A.pan"])
    _release_tree(data, ["duc2007-main/allpyramids/D0702-AB.pyr", "duc2007-main/allpyramids/more/D0701-AB.PYR"])
    _release_tree(data, ["duc2007-main/allpyramids/notes.txt", "odd/allpyramids/X.pyr"])
    folder, files = bench.training_files(data / "duc2006", None)
    assert folder == (data / "duc2007-main").resolve()
    assert [f.name for f in files] == ["D0702-AB.pyr", "D0701-AB.PYR"]  # every .pyr under it, sorted by path
    folder, files = bench.training_files(data / "duc2007-main", None)
    assert [f.name for f in files] == ["D0601.pyr"]  # pyramids only, never the peer annotations
    assert [f.name for f in bench.training_files(data / "duc2006", str(data / "odd"))[1]] == ["X.pyr"]
    with pytest.raises(SystemExit, match="which release trains"):
        bench.training_files(data / "odd", None)
    with pytest.raises(SystemExit, match="no .pyr files"):
        bench.training_files(data / "duc2006", str(data / "duc2006" / "allpans"))


def test_a_model_that_learnt_from_a_pyramid_of_the_release_is_refused():
    from annotation.pyramids.proposal_training import ExpertPyramid
    from annotation.pyramids.proposals import ProposalModel, ReferenceText

    texts = (ReferenceText("A", "The river flooded."), ReferenceText("B", "Floods hit the town."))
    measured = [
        ExpertPyramid("D0601.pyr", "", texts, ()),
        ExpertPyramid("D0602.pyr", "", (ReferenceText("A", "Something else."),), ()),
    ]
    # The same texts under other keys and in another order are the same topic.
    seen = ExpertPyramid(
        "D0601-copy.pyr", "", (ReferenceText("2", texts[1].text), ReferenceText("1", texts[0].text)), ()
    )
    elsewhere = ExpertPyramid("D0701.pyr", "", (ReferenceText("A", "Another topic."),), ())

    def model(*learnt):
        return ProposalModel(
            None, 0.5, None, 0.5, frozenset(p.fingerprint for p in learnt), tuple(p.source for p in learnt)
        )

    assert "D0601.pyr" in bench.refusal(model(elsewhere, seen), measured)
    assert bench.refusal(model(elsewhere), measured) is None


def test_in_quick_building_a_proposal_is_accepted_only_when_that_spares_a_gesture():
    b_right, c_right = MIXED.contributors[1], MIXED.contributors[2]
    c_wrong = Contributor(30, ((30, 3, 9),))
    # one right of two: a key for it (its number) costs what its Ctrl+drag costs: made by hand
    robot = ProposingRobot([[], [b_right, c_wrong], []])
    run = bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={}, assisted=True, quick=True, wide=True)
    assert ("add", (20, 0, 4)) in robot.calls and run.actions["accept"] == 0
    assert run.shown[1] == ((bench.EXACT, 1), (bench.NEAR, 0))  # a right one spares one gesture
    # both right, nothing else: Shift+Y takes both (the list is hidden with the texts side by side)
    robot = ProposingRobot([[], [b_right, c_right], []])
    run = bench.PyramidRun()
    bench.rebuild(robot, run, [WEIGHT_1, MIXED, ALL_DISCONTINUOUS], texts={}, assisted=True, quick=True, wide=True)
    assert ("accept-all", "Shift+Y") in robot.calls
    assert ("add", b_right.parts[0]) not in robot.calls and ("add", c_right.parts[0]) not in robot.calls
    assert run.total == 9 - 2 + 1 + 2  # two Ctrl+drags spared for Shift+Y, two proposals read
