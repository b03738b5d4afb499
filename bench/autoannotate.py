"""Benchmark: ranked Autoannotate suggestions against expert annotations (prints numbers; not a test).

Trains the ranking model (annotation/pyramids/suggestion_model.py, as `manage.py train_suggestions`
does) on the DUCView .pan files of one year and reports on another year's, which the model never
saw; also reports the hand-set rules that serve without a model. For every .pan file (one
annotator, one peer) suggestions are computed as the annotator page computes them:
- "pyramid": the pyramid alone (each peer as its annotator's first of the topic);
- "both": the pyramid and the same annotator's earlier peers of the topic, the peers being taken
  in natural order (peer k sees the expert's matches of the peers before k, never another annotator's).

A suggestion is right when it names an SCU the expert matched in that peer and covers at least half
of the expert's span (annotation/pyramids/suggestion_features.py: is_right).
- precision: share of the suggestions that are right;
- recall: share of the expert's SCU matches for which some suggestion is right.
The misses and the wrong suggestions are profiled by kind.

    python bench/autoannotate.py --train ../shared/data/duc2006 --test ../shared/data/duc2007-main
"""

import argparse
import dataclasses
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotation.pyramids import suggestion_model  # noqa: E402  (the repository is put on sys.path first)
from annotation.pyramids.suggestion_features import covers, is_right  # noqa: E402  (the repository is put on sys.path first)


def cases(folder: Path):
    files = sorted((folder / "allpans").glob("*.pan"))
    if not files:
        sys.exit(f"no .pan files in {folder / 'allpans'}")
    return suggestion_model.ducview_cases(files)


def alone(case):
    return dataclasses.replace(case, earlier=(), seen=())


def train(found, name: str):
    """The model trained on ``cases(folder)`` as `manage.py train_suggestions` trains it: each peer
    with its annotator's earlier peers, and again as the annotator's first (the pyramid alone)."""
    return suggestion_model.fit_each_peer_twice([case for *_, case in found], [topic for topic, *_ in found], name)


def measure(found_cases, model):
    """(suggestions, precision, recall, ms per peer, misses by kind, wrong suggestions by kind)."""
    shown = right = expert = recalled = 0
    misses, wrong = Counter(), Counter()
    started = time.perf_counter()
    for case in found_cases:
        out = suggestion_model.ranked(case, model)
        shown += len(out)
        for c, _ in out:
            if is_right(c.scu, [c.span], case.expert):
                right += 1
            elif any(scu == c.scu for scu, _ in case.expert):
                wrong["the expert's SCU, too little of its span"] += 1
            else:
                wrong["an SCU the expert did not match here"] += 1
        expert += len(case.expert)
        pool = None
        for match in case.expert:
            if any(is_right(c.scu, [c.span], [match]) for c, _ in out):
                recalled += 1
                continue
            if pool is None:
                pool = suggestion_model.case_candidates(case)
            mine = [c for c in pool if c.scu == match[0]]
            if not mine:
                misses["no candidate: the peer shares (almost) no words with the SCU"] += 1
            elif not any(covers([c.span], match[1]) >= 0.5 for c in mine):
                misses["candidate, but its span covers < half of the expert's"] += 1
            elif any(c.scu == match[0] for c, _ in out):
                misses["the SCU suggested, but in another clause"] += 1
            else:
                misses["a right candidate ranked below the threshold"] += 1
    ms = 1000 * (time.perf_counter() - started) / max(len(found_cases), 1)
    return shown, right / max(shown, 1), recalled / max(expert, 1), ms, misses, wrong


def curve(found_cases, model):
    """Precision and recall at every threshold on the reported year itself (an upper bound of what
    choosing the threshold could give): the best recall at a precision and the best precision at a recall."""
    items, total = [], 0
    for k, case in enumerate(found_cases):
        found = suggestion_model.case_candidates(case)
        for c, p in zip(found, model.confidences(found), strict=True):
            items.append((p, [(k, j) for j, match in enumerate(case.expert) if is_right(c.scu, [c.span], [match])]))
        total += len(case.expert)
    items.sort(key=lambda item: -item[0])
    points, right, recalled = [], 0, set()
    for n, (_, satisfied) in enumerate(items, 1):
        right += bool(satisfied)
        recalled.update(satisfied)
        points.append((right / n, len(recalled) / max(total, 1)))
    return (
        lambda at_precision: max((r for p, r in points if p >= at_precision), default=0.0),
        lambda at_recall: max((p for p, r in points if r >= at_recall), default=0.0),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    data = ROOT.parent / "shared" / "data"
    parser.add_argument("--train", default=str(data / "duc2006"), help="a DUC folder (with allpans/) to train on")
    parser.add_argument("--test", default=str(data / "duc2007-main"), help="a DUC folder to report on")
    args = parser.parse_args()
    started = time.perf_counter()
    found = cases(Path(args.train))
    train_cases = [case for *_, case in found]
    test = [case for *_, case in cases(Path(args.test))]
    read = time.perf_counter() - started
    started = time.perf_counter()
    model = train(found, Path(args.train).name)
    trained = time.perf_counter() - started
    print(
        f"{platform.node()} ({os.cpu_count()} cores), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"train on {Path(args.train).name} ({len(train_cases)} peer annotations), report on {Path(args.test).name} "
        f"({len(test)}); files read in {read:.0f} s, model trained in {trained:.0f} s, threshold {model.threshold:.3f}"
    )
    print(
        f"{'ranking':<8} {'source':<8} {'suggestions':>11} {'per peer':>8} {'precision':>9} {'recall':>7} "
        f"{'ms/peer':>7}"
    )
    profiles = {}
    for name, ranker in (("rules", None), ("model", model)):
        for source, found in (("pyramid", [alone(c) for c in test]), ("both", test)):
            shown, precision, recall, ms, misses, wrong = measure(found, ranker)
            profiles[(name, source)] = (misses, wrong)
            print(
                f"{name:<8} {source:<8} {shown:>11} {shown / len(found):>8.1f} {precision:>9.3f} "
                f"{recall:>7.3f} {ms:>7.1f}"
            )
    for source, found, goal in (("pyramid", [alone(c) for c in test], (0.75, 0.6)), ("both", test, (0.85, 0.75))):
        recall_at, precision_at = curve(found, model)
        print(
            f"model, {source}, any threshold: recall at precision >= {goal[0]}: {recall_at(goal[0]):.3f}; "
            f"precision at recall >= {goal[1]}: {precision_at(goal[1]):.3f}"
        )
    for source in ("pyramid", "both"):
        misses, wrong = profiles[("model", source)]
        print(f"model, {source}: misses by kind: " + "; ".join(f"{k} {v}" for k, v in misses.most_common()))
        print(f"model, {source}: wrong suggestions by kind: " + "; ".join(f"{k} {v}" for k, v in wrong.most_common()))


if __name__ == "__main__":
    main()
