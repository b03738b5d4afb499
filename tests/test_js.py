"""The node tests of the pure JavaScript modules (tests/js/*.test.mjs: the builder's pyramid model,
the windowed list, find, the score and the text offsets), run by ``make test`` like every other
test: the browser suites exercise these modules only through whole pages, where a broken rule
shows up as some other symptom, if at all."""

import shutil
import subprocess
from pathlib import Path

import pytest

JS_TESTS = sorted((Path(__file__).parent / "js").glob("*.test.mjs"))


def test_the_javascript_modules_pass_their_node_tests():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (needed by `make vendor` too): the JavaScript modules' tests cannot run")
    assert JS_TESTS, "no tests/js/*.test.mjs found"
    run = subprocess.run(
        [node, "--test", *map(str, JS_TESTS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert run.returncode == 0, f"node --test failed:\n{failures(run.stdout)}\n{run.stderr[-2000:]}"


def failures(tap: str) -> str:
    """The failing subtests' reports from node's TAP output (the passing ones would push them out
    of a shortened message, as in a CI run where the one failure was cut off)."""
    lines = tap.splitlines()
    shown = []
    for at, line in enumerate(lines):
        if line.lstrip().startswith("not ok"):
            shown.extend(lines[at : at + 30])
            shown.append("...")
    return "\n".join(shown)[:8000] or tap[-6000:]
