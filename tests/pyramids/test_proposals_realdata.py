"""The builder's proposals on real expert pyramids (../shared/data): a model trained on a few DUC 2006
pyramids, measured with the bench's own function (bench/builder_proposals.py ``evaluate``) on DUC
2007 main pyramid it never saw, ranks better than the rules and reaches the floors measured
(docs/results/builder_proposals.md, "The test's floor"): a regression in the features, the
candidates or the training shows here before the bench is run."""

import importlib.util
import sys
from pathlib import Path

import pytest

from annotation.pyramids.proposal_training import fit, ranking_curve, training_selection

from tests.conftest import shared_data

BENCH = Path(__file__).resolve().parents[2] / "bench" / "builder_proposals.py"
spec = importlib.util.spec_from_file_location("builder_proposals", BENCH)
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench
spec.loader.exec_module(bench)

TRAIN = ("D0601.pyr", "D0603.pyr")  # DUC 2006
MEASURED = ("D0701-AGHI.pyr",)  # DUC 2007 main
# Measured 2026-11-29 with this configuration (docs/results/builder_proposals.md, "The test's
# floor"), set a little below what was measured so that only a real loss trips them.
# Measured: best F1 0.441 (the rules' 0.407), seeded draft B-cubed F1 0.602 (unmatched counted); 0.500
# and 0.611 with the larger trees of before 2026-11-29 10:30 UTC (their settings are chosen on whole
# years: two pyramids fill fewer leaves of 40 examples).
FLOOR = {"best_f1": 0.42, "draft_bcubed_f1": 0.55}


@pytest.mark.realdata
def test_a_model_trained_on_one_year_ranks_better_than_the_rules_on_the_other():
    data = shared_data()
    train = [bench.from_pyr(data / "duc2006" / "allpyramids" / name) for name in TRAIN]
    measured = [bench.from_pyr(data / "duc2007-main" / "allpyramids" / name) for name in MEASURED]
    model = fit(training_selection(train))
    assert sorted(Path(p).name for p in model.trained_on) == sorted(TRAIN)
    learnt = bench.evaluate(model, measured)
    rules = ranking_curve(None, measured)
    assert learnt["curve"]["best_f1"] >= FLOOR["best_f1"]
    assert learnt["curve"]["best_f1"] > rules["best_f1"]
    c = learnt["contributors"]
    assert c.right <= c.proposed and c.found <= c.expected and c.expected > 0
    assert learnt["seeded"]["counted"]["bcubed_f1"] >= FLOOR["draft_bcubed_f1"]
    with pytest.raises(bench.SawMeasuredYear):
        bench.evaluate(model, train[:1])
