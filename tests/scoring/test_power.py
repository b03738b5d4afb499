"""Topics needed: the paired t-test's published sample sizes (G*Power: d_z = 0.5 -> 34, 0.8 -> 15,
0.2 -> 199 at alpha 0.05 two-sided, power 0.8) and a simulation of the planned test."""

import os
import subprocess
import sys

import numpy as np
import pytest

from scoring.power import power_table, topics_needed

from tests.conftest import REPO


def test_known_sample_sizes():
    assert topics_needed(0.5, 1.0) == 34
    assert topics_needed(0.8, 1.0) == 15
    assert topics_needed(0.2, 1.0) == 199
    assert topics_needed(0.05, 0.1) == 34  # only the ratio matters
    assert topics_needed(0.001, 1.0) is None  # beyond the table
    with pytest.raises(ValueError):
        topics_needed(0, 1.0)


def test_planned_number_of_topics_gives_the_power_in_a_simulation():
    n = topics_needed(0.03, 0.06)
    rng = np.random.default_rng(0)
    diffs = rng.normal(0.03, 0.06, (4000, n))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / np.sqrt(n))
    from scipy import stats

    share = np.mean(np.abs(t) > stats.t.ppf(0.975, n - 1))
    assert share == pytest.approx(0.8, abs=0.03)
    smaller = diffs[:, : n - 8]
    t_small = smaller.mean(axis=1) / (smaller.std(axis=1, ddof=1) / np.sqrt(n - 8))
    assert np.mean(np.abs(t_small) > stats.t.ppf(0.975, n - 9)) < 0.8


def test_table_uses_the_spread_of_observed_paired_differences():
    data = {"a": {"t1": 0.1, "t2": 0.2, "t3": 0.3}, "b": {"t1": 0.2, "t2": 0.2, "t3": 0.2}, "c": {"t1": 0.1}}
    table = power_table(data, differences=(0.05,))
    sd = float(np.std([-0.1, 0.0, 0.1], ddof=1))
    assert table.pairs == 1 and table.sd_quartiles == pytest.approx((sd, sd, sd)) and table.topics == 3
    assert table.rows[0].typical == topics_needed(0.05, sd)
    assert power_table({"a": {"t": 1.0}}).reason


def test_the_spread_does_not_depend_on_the_process_string_hashing():
    """The sd of a pair's differences sums them in the shared topics' sorted order: in a set's order
    (which follows the process's string hashing) its last bits, and with them the table's
    quartiles, changed with the process that computed the dashboard."""
    script = (
        "from scoring.power import difference_sds\n"
        "a = {f'T{t}': ((t * 37 + 1) % 23) / 23 for t in range(20)}\n"
        "b = {f'T{t}': ((t * 11 + 3) % 19) / 19 for t in range(20)}\n"
        "print(repr(difference_sds({'x': a, 'y': b})))\n"
    )
    found = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(8)
    }
    assert len(found) == 1, found
