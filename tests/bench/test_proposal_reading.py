"""bench/proposal_reading.py's offline notion of an exact proposal: spans equal once spaces and
punctuation are trimmed at their ends, as the builder keeps a drag."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "proposal_reading.py"
spec = importlib.util.spec_from_file_location("proposal_reading", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)


def test_spans_are_compared_without_the_spaces_and_punctuation_at_their_ends():
    text = 'He said: "ban alcohol;" and left.'
    assert bench.trimmed(text, 8, 23) == (10, 21)  # ' "ban alcohol;"' -> 'ban alcohol'
    assert bench.trimmed(text, 10, 21) == (10, 21)
    assert bench.trimmed(text, 24, 33) == (24, 32)  # 'and left.' -> 'and left'
    assert bench.trimmed(text, 21, 24) == (24, 24)  # nothing but punctuation and spaces: empty
    texts, number = {"B": text, "A": "x"}, {"A": 0, "B": 1}
    proposed = bench.as_contributor(texts, number, "B", [(8, 23)])
    assert proposed == bench.as_contributor(texts, number, "B", [(10, 21)]) == bench.Contributor(1, ((1, 10, 21),))
