"""The pure parts of bench/automatic_score.py on real data (DUC 2007 main, no training: seconds):
its expert scores are NIST's official ones, and its automatic scores with the hand-set rules are the
scores of the suggestions from the pyramid alone, computed again here from the pieces."""

import importlib.util
import sys
from pathlib import Path

import pytest

from annotation.pyramids.suggestion_model import PeerCase, ranked

from tests.conftest import shared_data

BENCH = Path(__file__).resolve().parents[2] / "bench" / "automatic_score.py"
spec = importlib.util.spec_from_file_location("automatic_score", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)

pytestmark = pytest.mark.realdata


def test_expert_scores_are_nists_and_automatic_ones_rest_on_the_pyramid_alone():
    folder = shared_data("duc2007-main")
    scored = bench.expert(folder)
    official = {}
    for line in (folder / "scoring" / "2007_modified_scores.txt").read_text().splitlines():
        fields = line.split()
        if len(fields) >= 3:
            official[(fields[0], fields[1])] = float(fields[2])
    assert len(scored) == 299
    assert {(topic, peer): round(value, 4) for (topic, _, peer), (_, value) in scored.items()} == {
        key: value for key, value in official.items() if key in {(t, p) for t, _, p in scored}
    }
    found = [f for f in bench.cases(folder) if f[0] == "D0701"]
    assert found
    for topic, annotator, peer, case in found:
        ready, _ = scored[(topic, annotator, peer)]
        uids = bench.accepted(case, None)
        blind = [c.scu for c, _ in ranked(PeerCase(case.text, case.scus, case.weights), None)]
        assert uids == blind  # neither the expert's matches nor earlier peers
        weights = {s.uid: sum(1 for c in s.contributors if c.parts) for s in ready_scus(folder, topic)}
        observed = sum(weights[u] for u in set(uids))
        assert bench.automatic_score(ready, uids).modified == pytest.approx(observed / ready.base.max_weight_xa)


def ready_scus(folder, topic):
    from annotation.formats.ducview import parse_peer_annotation

    path = next((folder / "allpans").glob(f"{topic}.*.pan"))
    return [s for s in parse_peer_annotation(path.read_bytes())[0].pyramid.scus if any(c.parts for c in s.contributors)]
