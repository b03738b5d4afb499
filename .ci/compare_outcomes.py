"""Every collected test was reported: the node ids of `pytest --collect-only -q` (COLLECTED) equal
those of a run's ``--record-outcomes`` (OUTCOMES); with ``--no-skips`` (REQUIRE_SERVICES=1) none was
skipped. Prints what differs and exits 1 on any difference; a parallel run that lost tests (a worker
crashed, a report swallowed) therefore fails even when pytest's own exit status is 0."""
import argparse
import sys
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


def recorded(text: str) -> dict[str, str]:
    return {nodeid: outcome for outcome, _, nodeid in (line.partition(" ") for line in text.splitlines() if line)}


def differences(collected_ids: list[str], outcomes: dict[str, str], no_skips: bool) -> list[str]:
    problems = [f"collected, never reported: {nodeid}" for nodeid in collected_ids if nodeid not in outcomes]
    expected = set(collected_ids)
    problems += [f"reported, not collected: {nodeid}" for nodeid in outcomes if nodeid not in expected]
    problems += [f"{outcome}: {nodeid}" for nodeid, outcome in outcomes.items() if outcome in ("failed", "error")]
    if no_skips:
        problems += [f"skipped (REQUIRE_SERVICES=1 allows none): {nodeid}" for nodeid, outcome in outcomes.items() if outcome == "skipped"]
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("collected", type=Path)
    parser.add_argument("outcomes", type=Path)
    parser.add_argument("--no-skips", action="store_true")
    args = parser.parse_args(argv)
    ids, outcomes = collected(args.collected.read_text()), recorded(args.outcomes.read_text())
    problems = differences(ids, outcomes, args.no_skips)
    counts = {o: list(outcomes.values()).count(o) for o in ("passed", "skipped", "failed", "error")}
    print(f"{len(ids)} collected, {len(outcomes)} reported: " + ", ".join(f"{n} {o}" for o, n in counts.items()))
    for problem in problems:
        print(problem)
    if problems:
        print(f"FAILED: {len(problems)} difference(s) between the tests collected and the tests reported", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
