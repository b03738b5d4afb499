"""The pure parts of bench/reproduce_expert.py: DUCView's minimum, the robot's decisions and its
action count, on tiny cases counted by hand (no browser, no database)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "reproduce_expert.py"
spec = importlib.util.spec_from_file_location("reproduce_expert", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # dataclasses look their module up while the class is made
spec.loader.exec_module(bench)
Match, PeerRun = bench.Match, bench.PeerRun


def test_ducview_minimum_counts_three_actions_per_match_its_autoannotate_does_not_make():
    contributors = {1: ["dams hold water"], 2: ["the river flooded", "a flood"]}
    matches = [
        (1, "Dams hold water"),  # case differs: not exact, done by hand
        (2, "the river\n  flooded"),  # the same text, spacing aside: Autoannotate makes it
        (None, "the river flooded"),  # a non-matching unit: never automatic
        (2, "floods again"),  # no such contributor
        (3, "a flood"),  # a contributor's text, but of another SCU
    ]
    # By hand: one action opens the peer; 4 matches by hand, 3 actions each.
    assert bench.ducview_minimum(matches, contributors) == (1 + 3 * 4, 1)
    assert bench.ducview_minimum([], contributors) == (1, 0)


def test_covered_share_is_the_share_of_the_expert_span():
    assert bench.covered_share(((0, 10),), ((2, 10),)) == 0.8
    assert bench.covered_share(((0, 10), (20, 30)), ((5, 25),)) == 0.5  # 5 + 5 of 20 characters
    assert bench.covered_share(((0, 10),), ((10, 20),)) == 0.0


def test_a_suggestion_is_accepted_once_per_expert_match_of_its_scu_covering_half():
    run = PeerRun(peer="1", todo=[Match(1, ((0, 10),)), Match(1, ((40, 50),))])
    assert run.judge(1, ((0, 4),)) is False  # 40 % of the first: rejected
    assert run.judge(1, ((0, 6),)) is True  # 60 %: accepted, the first is reproduced
    assert run.judge(1, ((0, 10),)) is False  # the first is done: this one would be a third
    assert run.judge(2, ((40, 50),)) is False  # another SCU
    assert run.judge(1, ((45, 50),)) is True  # the repetition
    assert run.todo == [] and run.actions == {"read": 5}


def test_scu_pick_clicks_what_is_in_sight_else_types_the_shortest_filter():
    order = [(1, "Dams hold water"), (2, "River floods"), (3, "Rivers dry up"), (4, "Dry/wet seasons")]
    assert bench.scu_pick(2, order, {1, 2}, 2) == [("click", 2)]
    # "r" keeps SCU 1 (wateR) first; "i" keeps [2, 3]: SCU 2 first, Enter.
    assert bench.scu_pick(2, order, {1}, 1) == [("find", "/"), ("type", "i"), ("enter", 2)]
    # SCU 3: r, i, v, e, r, s, " ", d, r keep SCU 1 or 2 ahead of it; "y" (dry) keeps [3, 4].
    assert bench.scu_pick(3, order, set(), 1) == [("find", "/"), ("type", "y"), ("enter", 3)]
    # SCU 4: d, r keep 1 first, y keeps 3 first, "/" is never typed, w, e, t, s, e, a keep 1, s, o keep 2;
    # "n" is in SCU 4's label only.
    assert bench.scu_pick(4, order, set(), 1) == [("find", "/"), ("type", "n"), ("enter", 4)]
    # No letter puts SCU 2 first ("b" and "a" keep [1, 2]), but "b" leaves it in sight of a 2-row list.
    assert bench.scu_pick(2, [(1, "ab"), (2, "ba")], set(), 2) == [("find", "/"), ("type", "b"), ("click", 2)]
    with pytest.raises(ValueError):
        bench.scu_pick(2, [(1, "abc"), (2, "ab")], set(), 1)  # every text of "ab" also finds "abc" first


class FakeRobot:
    """Stands in for the browser: shows scripted suggestions, counts each call as the Robot does."""

    def __init__(self, suggestions, in_sight, rows=1):
        self.suggestions = list(suggestions)
        self.in_sight, self.rows = in_sight, rows
        self.calls = []

    def key(self, run, kind, key):
        self.calls.append((kind, key))
        run.act(kind, 1.0)

    def click(self, run, kind, selector):
        self.calls.append((kind, selector))
        run.act(kind, 1.0)

    def type(self, run, char):
        self.calls.append(("type", char))
        run.act("type", 1.0)

    def drag(self, run, u16, shift):
        self.calls.append(("select", u16, shift))
        run.act("select", 1.0)

    def shown(self):
        """The next page of suggestions (9 at most, as the annotator shows them), and how many after."""
        page, self.suggestions = self.suggestions[:9], self.suggestions[9:]
        return [(n, scu, parts) for n, (scu, parts) in enumerate(page, 1)], len(self.suggestions)

    def sight(self):
        return self.in_sight, self.rows


def test_reproducing_a_peer_counts_every_action_by_hand():
    text = "Dams hold water. The river floods often, as rivers do. Nothing else here at all."
    expert = [Match(1, ((0, 15),)), Match(2, ((17, 32), (42, 48))), Match(None, ((55, 67),))]
    order = [(1, "Dams hold water"), (2, "River floods"), (3, "Rivers dry up")]
    suggestions = [
        (1, ((5, 15),)),  # 10 of 15 characters of the expert's SCU 1: kept
        (2, ((17, 21),)),  # SCU 2 but 4 of 21 characters: struck (2)
        (3, ((42, 48),)),  # an SCU the expert did not match: struck (3)
    ]
    robot = FakeRobot(suggestions, in_sight={1})
    run = PeerRun(peer="1", todo=list(expert))
    bench.reproduce_peer(robot, run, text, order)
    # By hand: three suggestions read (3), two struck (2) and A (1); SCU 2's match: two drags, the
    # second with Shift (2), SCU 2 not in sight: "/" (the selection leaves the filter unfocused),
    # "i", then Enter (3); the non-matching unit: one drag and "No SCU" (2). 13 actions.
    assert run.actions == {
        "read": 3,
        "strike": 2,
        "accept": 1,
        "select": 3,
        "find": 1,
        "type": 1,
        "enter": 1,
        "no-scu": 1,
    }
    assert run.total == 13
    assert [c for c in robot.calls if c[0] in ("strike", "accept")] == [
        ("strike", "2"),
        ("strike", "3"),
        ("accept", "a"),
    ]
    assert run.waited_ms == 10.0  # every action but the three readings waited (1 ms each here)
    assert [c for c in robot.calls if c[0] in ("find", "type", "enter")] == [
        ("find", "/"),
        ("type", "i"),
        ("enter", "Enter"),
    ]
    assert [c for c in robot.calls if c[0] == "select"] == [
        ("select", (17, 32), False),
        ("select", (42, 48), True),
        ("select", (55, 67), False),
    ]
    assert run.todo == []
    # DUCView's minimum for the same peer: open it, then 3 matches by hand (no contributor text is exact).
    minimum, automatic = bench.ducview_minimum(
        [(m.scu, " ".join(text[s:e] for s, e in m.parts)) for m in expert], {1: ["dams hold water"]}
    )
    assert (minimum, automatic) == (10, 0)
    # Perfect suggestions: a read for SCUs 1 and 2 and one A (3), a drag and "No SCU" for the unit (2), Done.
    assert bench.perfect_floor(expert, opens=0) == 3 + 2 + 1
    assert bench.perfect_floor([Match(None, ((0, 1), (3, 4)))], opens=1) == 1 + 3 + 1
    # Ten suggested matches: ten reads and two A (nine are shown at once).
    assert bench.perfect_floor([Match(k, ((k, k + 1),)) for k in range(10)], opens=0) == 10 + 2 + 1


def test_suggestions_shown_nine_at_a_time_only_wrong_ones_are_struck_and_a_last_wrong_page_is_left():
    text = "x" * 200
    expert = [Match(1, ((0, 10),)), Match(2, ((100, 110),))]
    # Page 1: nine wrong ones (struck, then A to see the next); page 2: the right one for SCU 2 and a
    # wrong one (struck, A); nothing after. Then SCU 1 by hand (in sight: a drag and a click).
    page1 = [(9, ((k, k + 1),)) for k in range(9)]
    robot = FakeRobot([*page1, (3, ((50, 60),)), (2, ((100, 106),))], in_sight={1})
    run = PeerRun(peer="1", todo=list(expert))
    bench.reproduce_peer(robot, run, text, [(1, "a"), (2, "b")])
    assert [c[1] for c in robot.calls if c[0] in ("strike", "accept")] == [*"123456789", "a", "1", "a"]
    assert run.actions == {"read": 11, "strike": 10, "accept": 2, "select": 1, "pick": 1}
    # Only wrong ones left after the last page's A: no key is spent on them.
    robot = FakeRobot([(3, ((50, 60),))], in_sight={1, 2})
    run = PeerRun(peer="1", todo=list(expert))
    bench.reproduce_peer(robot, run, text, [(1, "a"), (2, "b")])
    assert run.actions == {"read": 1, "select": 2, "pick": 2}


@pytest.mark.parametrize(
    ("text", "cp", "u16"), [("abc", 2, 2), ("a\U0001f600b", 2, 3), ("\U0001f600\U0001f600x", 2, 4)]
)
def test_offsets_between_code_points_and_utf16(text, cp, u16):
    assert bench.to_u16(text, cp) == u16
    assert sys.modules["_robot"].to_cp(text, u16) == cp  # (the robot's module, which the bench imports)


def test_the_model_is_trained_on_the_other_year_unless_told(tmp_path):
    shared = tmp_path / "data"
    assert sys.modules["_release"].training_folder(shared / "duc2006", None) == (shared / "duc2007-main").resolve()
    assert sys.modules["_release"].training_folder(shared / "duc2007-main", None) == (shared / "duc2006").resolve()
    assert sys.modules["_release"].training_folder(shared / "odd-release", None) is None  # the bench then asks which
    assert sys.modules["_release"].training_folder(shared / "duc2006", str(shared / "x")) == shared / "x"
    files = [shared / "duc2006" / "allpans" / name for name in ("a.pan", "b.pan")] + [shared / "c.pan"]
    assert (
        sys.modules["_release"].files_line(files)
        == f"{shared}/*.pan (1 files); {shared}/duc2006/allpans/*.pan (2 files)"
    )
