"""Benchmark: automatic pyramid scores (every ranked suggestion accepted) against the expert scores
(prints numbers; not a test).

The ranking model is trained on one DUC year's .pan files as bench/autoannotate.py trains it (its
functions), then every peer of the other year is scored from its pyramid alone: the suggestions
(annotation/peers/ranked_suggestions.py's ranking, the pyramid alone: no annotation of that peer
or of any other peer is read) are all accepted and scored by scoring/scores.py
(annotation/pyramids/automatic_scores.py). The expert score is the modified score of the peer's .pan
file (equal to NIST's official table: tests/transfer/test_ducview_real_data.py).

Printed per direction and ranking (the model; the hand-set rules that serve without one): each
system's mean automatic and expert score, and the system-level Pearson (Fisher-z 95% interval of
scoring/correlation.py and the bootstrap interval of scoring/intervals.py, the one the meta-evaluation
page shows) and the summary-level Pearson (scoring/metaeval.py; bootstrap interval).

    python bench/automatic_score.py --train ../shared/data/duc2006 --test ../shared/data/duc2007-main
"""

import argparse
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from autoannotate import cases, train  # noqa: E402  (the repository and bench/ are put on sys.path first)

from annotation.formats.ducview import parse_peer_annotation  # noqa: E402  (the repository and bench/ are put on sys.path first)
from annotation.formats.errors import DucViewError  # noqa: E402  (the repository and bench/ are put on sys.path first)
from annotation.formats.nist_names import parse_nist_filename  # noqa: E402  (the repository and bench/ are put on sys.path first)
from annotation.pyramids.automatic_scores import accepted, automatic_score  # noqa: E402  (the repository and bench/ are put on sys.path first)
from scoring.intervals import correlation_interval  # noqa: E402  (the repository and bench/ are put on sys.path first)
from scoring.metaeval import Observation, meta_evaluate  # noqa: E402  (the repository and bench/ are put on sys.path first)
from scoring.model import PeerAnnotation, Pyramid  # noqa: E402  (the repository and bench/ are put on sys.path first)
from scoring.scores import prepare, score_prepared  # noqa: E402  (the repository and bench/ are put on sys.path first)


def expert(folder: Path) -> dict[tuple[str, str, str], tuple[object, float | None]]:
    """(topic, annotator, peer) -> (the prepared pyramid of its .pan file, the expert's modified score),
    keyed as suggestion_model.ducview_cases keys its cases."""
    out, memo, prepared = {}, {}, {}
    for path in sorted((folder / "allpans").glob("*.pan")):
        try:
            name = parse_nist_filename(path.name)
            key = (name.topic, name.annotator or "", name.peer_key or path.stem)
        except DucViewError:
            key = (path.stem, path.stem, path.stem)
        pan, _ = parse_peer_annotation(path.read_bytes(), pyramids=memo)
        if id(pan.pyramid) not in prepared:
            pyramid = Pyramid.of(
                [r.id for r in pan.pyramid.references],
                {s.uid: [[p.reference for p in c.parts] for c in s.contributors if c.parts] for s in pan.pyramid.scus},
            )
            prepared[id(pan.pyramid)] = (pan.pyramid, prepare(pyramid))
        ready = prepared[id(pan.pyramid)][1]
        score = score_prepared(ready, PeerAnnotation(Counter(m.scu_uid for m in pan.matches), len(pan.non_matching)))
        out[key] = (ready, score.modified)
    return out


def report(found, scored, model, label: str) -> None:
    started = time.perf_counter()
    observations = []
    for topic, annotator, peer, case in found:
        ready, expert_score = scored[(topic, annotator, peer)]
        observations.append(
            Observation(
                topic,
                peer,
                {"automatic": automatic_score(ready, accepted(case, model)).modified, "expert": expert_score},
            )
        )
    ms = 1000 * (time.perf_counter() - started) / max(len(found), 1)
    result = meta_evaluate(observations, "automatic", "expert", ("pearson",))
    system, summary = result.system["pearson"], result.summary["pearson"]
    boot_system = correlation_interval(result.pairs.values, "system", "pearson")
    boot_summary = correlation_interval(result.pairs.values, "summary", "pearson")
    print(f"\n{label}: {len(found)} peer annotations, {ms:.0f} ms per peer")
    print(f"{'system':>8} {'automatic':>9} {'expert':>7}")
    for s in sorted(system.x_means, key=lambda s: -system.y_means[s]):
        print(f"{s:>8} {system.x_means[s]:>9.3f} {system.y_means[s]:>7.3f}")
    c = system.correlation
    print(
        f"system level ({c.n} systems): Pearson {c.value:.3f}, Fisher-z 95% [{c.ci_low:.3f}, {c.ci_high:.3f}]; "
        f"bootstrap 95% [{boot_system.low:.3f}, {boot_system.high:.3f}]; lower end (the lower of the two) "
        f"{min(c.ci_low, boot_system.low):.3f}"
    )
    print(
        f"summary level ({summary.topics} topics, {len(summary.skipped)} skipped): Pearson {summary.value:.3f}, "
        f"bootstrap 95% [{boot_summary.low:.3f}, {boot_summary.high:.3f}]"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data = ROOT.parent / "shared" / "data"
    parser.add_argument("--train", default=str(data / "duc2006"), help="a DUC folder (with allpans/) to train on")
    parser.add_argument("--test", default=str(data / "duc2007-main"), help="a DUC folder to report on")
    parser.add_argument(
        "--one-way", action="store_true", help="skip the reverse direction (train on --test, report on --train)"
    )
    args = parser.parse_args()
    print(
        f"{platform.node()} ({os.cpu_count()} cores), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    folders = [(Path(args.train), Path(args.test))] + ([] if args.one_way else [(Path(args.test), Path(args.train))])
    for train_on, test_on in folders:
        started = time.perf_counter()
        model = train(cases(train_on), train_on.name)
        found = cases(test_on)
        print(
            f"\ntrained on {train_on.name} in {time.perf_counter() - started:.0f} s (threshold {model.threshold:.3f}); "
            f"reporting on {test_on.name}"
        )
        scored = expert(test_on)
        for ranking, ranker in (("model", model), ("rules", None)):
            report(found, scored, ranker, f"{test_on.name}, ranked by the {ranking}")


if __name__ == "__main__":
    main()
