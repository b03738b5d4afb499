"""Pyramid construction agreement on the PyrEval MATTER pyramids (prints figures; not a test).

Reads independent DUCView pyramids of the same references with the project's .pyr reader, moves
their spans onto the first file's copy of the texts (``annotation.pyramids.agreement_inputs``)
and prints, for every pair, the figures of ``scoring.pyramid_agreement`` (definitions there and in
docs/pyramid-agreement.md): contributor alignment, clustering agreement, SCU alignment, weights,
the same at other overlap thresholds, and the practical test: each reference scored (modified
score, NIST) against the pyramid of the other references, built by each annotator.

    [SHARED_DATA=../shared/data] python bench/pyramid_agreement.py [--data FOLDER]
        [--threshold 0.5] [FILE.pyr ...]   (default FOLDER: $SHARED_DATA/pyreval-matter/Scoring/pyrs/manual_pyramids)
"""

import argparse
import datetime
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from annotation.formats.ducview import parse_pyramid  # noqa: E402  (the repository is put on sys.path first)
from annotation.pyramids.agreement_inputs import span_pyramids  # noqa: E402  (the repository is put on sys.path first)
from scoring.model import Convention  # noqa: E402  (the repository is put on sys.path first)
from scoring.pyramid_agreement import pairwise, score_agreement  # noqa: E402  (the repository is put on sys.path first)
from scoring.scores import reference_annotation, score_reference  # noqa: E402  (the repository is put on sys.path first)

MATTER = (
    "12_10_09_MATTER.pyr",
    "Becky_MATTER.pyr",
    "IA/12_10_09_MATTER_fixed.pyr",
    "IA/Yinghui_12_10_09_MATTER_fixed.pyr",
    "Yinghui_12_10_09_MATTER.pyr",
)
OTHER_THRESHOLDS = (0.25, 0.75)


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def short(name):
    return name.removesuffix(".pyr").replace("_MATTER", "")


def reference_scores(pyramid):
    """reference -> modified score against the pyramid of the other references (NIST)."""
    scoring = pyramid.scoring_pyramid()
    return {
        ref: score_reference(scoring, ref, reference_annotation(scoring, ref), Convention.NIST).modified
        for ref in scoring.references
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(os.environ.get("SHARED_DATA") or REPO.parent / "shared" / "data")
    parser.add_argument("--data", default=str(shared / "pyreval-matter" / "Scoring" / "pyrs" / "manual_pyramids"))
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument(
        "files", nargs="*", default=list(MATTER), help="pyramid files under --data (default: the MATTER ones)"
    )
    args = parser.parse_args()
    folder = Path(args.data)
    if not folder.is_dir():
        sys.exit(f"no data at {folder}")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python {platform.python_version()}"
    )
    started = time.perf_counter()
    named = []
    # In path order, as import_pyramid_set numbers them and the stored pairs take them: A is the first of a pair.
    for name in sorted(args.files):
        parsed, report = parse_pyramid((folder / name).read_bytes())
        named.append((short(name), parsed))
        weights = Counter(len(s.contributors) for s in parsed.scus)
        print(
            f"{short(name):28} refs {','.join(r.id for r in parsed.references):40} SCUs {len(parsed.scus):3}  "
            f"contributors {sum(weights[w] * w for w in weights):3}  by weight "
            f"{dict(sorted(weights.items(), reverse=True))}"
            + (f"  ({len(report.messages())} reader messages)" if report.messages() else "")
        )
    spans = span_pyramids(named)
    results = pairwise(spans, args.threshold)
    print(
        f"\nthreshold {args.threshold} (character-overlap Dice of two contributors); "
        "A = first of the pair in path order, B = second\n"
    )
    print(
        f"{'A':26} {'B':26} {'aligned/A/B':>11} {'unm A/B':7} {'Dice':>4} {'=':>3} | {'pair P/R/F1':>17} "
        f"{'pairs':>5} | {'B3 P/R/F1':>17} | {'alpha':>5} | {'SCUs A/B matched ident':>22} | "
        f"{'w =':>4} {'MAD':>5} {'r':>5} {'rho':>5} | {'cw =':>4} {'cMAD':>5}"
    )
    for (a, b), r in results.items():
        c, s, w, cw = r.clustering, r.scus, r.weights, r.contributor_weights
        print(
            f"{a:26} {b:26} {len(r.contributors.aligned):3}/{r.contributors_a:3}/{r.contributors_b:3} "
            f"{len(r.contributors.unmatched_a):3}/{len(r.contributors.unmatched_b):<3} "
            f"{fmt(r.contributors.mean_dice, 2)} {r.contributors.exact:3} | "
            f"{fmt(c.pairwise_precision, 2)}/{fmt(c.pairwise_recall, 2)}/{fmt(c.pairwise_f1)} {c.pairs:5} | "
            f"{fmt(c.bcubed_precision, 2)}/{fmt(c.bcubed_recall, 2)}/{fmt(c.bcubed_f1)} | {fmt(c.alpha.value, 2):>5} | "
            f"{r.scus_a:3}/{r.scus_b:3} {len(s.matched):7} {s.identical:5} | "
            f"{fmt(w.exact_share, 2):>4} {fmt(w.mean_abs_difference, 2):>5} {fmt(w.pearson.value, 2):>5} "
            f"{fmt(w.spearman.value, 2):>5} | "
            f"{fmt(cw.exact_share, 2):>4} {fmt(cw.mean_abs_difference, 2):>5}"
        )
    print(f"\nother thresholds: aligned contributors and B-cubed F1 at {', '.join(map(str, OTHER_THRESHOLDS))}")
    others = {t: pairwise(spans, t) for t in OTHER_THRESHOLDS}
    for key in results:
        print(
            f"{key[0]:26} {key[1]:26} "
            + "  ".join(
                f"{t}: {len(others[t][key].contributors.aligned):3} {fmt(others[t][key].clustering.bcubed_f1)}"
                for t in OTHER_THRESHOLDS
            )
        )
    print("\npractical test: each reference's modified score (NIST) against the pyramid of the other references")
    scores = {p.name: reference_scores(p) for p in spans}
    for p in spans:
        print(f"{p.name:28} " + "  ".join(f"{ref}: {fmt(v)}" for ref, v in scores[p.name].items()))
    print(f"\n{'A':26} {'B':26} {'n':>2} {'Pearson r [95% CI]':>24} {'MAD':>6} {'> 0.06':>7}")
    for a, b in results:
        sa = score_agreement(scores[a], scores[b])
        ci = f"[{fmt(sa.pearson.ci_low, 2)}, {fmt(sa.pearson.ci_high, 2)}]"
        print(
            f"{a:26} {b:26} {sa.n:2} {fmt(sa.pearson.value):>8} {ci:>15} {fmt(sa.mean_abs_difference):>6} "
            f"{sa.above_noise:3}/{sa.n:<3}"
        )
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
