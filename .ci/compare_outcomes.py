"""Every collected test was reported: the node ids of `pytest --collect-only -q` (COLLECTED) equal
those of a run's ``--record-outcomes`` (OUTCOMES); with ``--no-skips`` (REQUIRE_SERVICES=1) none was
skipped. Node ids are counted, not only compared: schemathesis collects its API operations under
one shared node id. Prints what differs and exits 1 on any difference; a parallel run that lost
tests (a worker crashed, a report swallowed, copies of one node id run once) therefore fails even
when pytest's own exit status is 0."""

import argparse
import sys
from collections import Counter
from pathlib import Path


def collected(text: str) -> list[str]:
    """The node ids `pytest --collect-only -q` printed: its lines up to the first blank one."""
    ids = []
    for line in text.splitlines():
        if not line.strip():
            break
        if "::" in line and not line.startswith(" "):
            ids.append(line.strip())
    return ids


def recorded(text: str) -> list[tuple[str, str]]:
    """(node id, outcome) of each test run."""
    return [(nodeid, outcome) for outcome, _, nodeid in (line.partition(" ") for line in text.splitlines() if line)]


def differences(collected_ids: list[str], outcomes: list[tuple[str, str]], no_skips: bool) -> list[str]:
    expected, reported = Counter(collected_ids), Counter(nodeid for nodeid, _ in outcomes)
    problems = []
    for nodeid in sorted(expected.keys() | reported.keys()):
        if expected[nodeid] > reported[nodeid]:
            problems.append(
                f"collected {expected[nodeid]}, reported {reported[nodeid]}: {nodeid}"
                if reported[nodeid]
                else f"collected, never reported: {nodeid}"
            )
        elif reported[nodeid] > expected[nodeid]:
            problems.append(
                f"reported {reported[nodeid]}, collected {expected[nodeid]}: {nodeid}"
                if expected[nodeid]
                else f"reported, not collected: {nodeid}"
            )
    problems += [f"{outcome}: {nodeid}" for nodeid, outcome in outcomes if outcome in ("failed", "error")]
    if no_skips:
        problems += [
            f"skipped (REQUIRE_SERVICES=1 allows none): {nodeid}"
            for nodeid, outcome in outcomes
            if outcome == "skipped"
        ]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collected", type=Path)
    parser.add_argument("outcomes", type=Path)
    parser.add_argument("--no-skips", action="store_true")
    args = parser.parse_args(argv)
    ids, outcomes = collected(args.collected.read_text()), recorded(args.outcomes.read_text())
    problems = differences(ids, outcomes, args.no_skips)
    counts = Counter(outcome for _, outcome in outcomes)
    print(
        f"{len(ids)} collected, {len(outcomes)} reported: "
        + ", ".join(f"{counts[o]} {o}" for o in ("passed", "skipped", "failed", "error"))
    )
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"FAILED: {len(problems)} difference(s) between the tests collected and the tests reported", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
