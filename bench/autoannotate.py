"""Benchmark: Autoannotate suggestions against the expert annotations of DUC 2006 (prints numbers; not a test).

For every .pan file (one annotator, one peer), suggestions are computed as the annotator page
computes them (annotation/pyramids/suggestions.py): from the pyramid (contributor words in a peer
sentence) and from the same annotator's earlier annotations of the topic, the peers being taken in
numeric order (peer k sees the expert's matches of the peers before k, never another annotator's).
A suggestion is an expert match when the expert matched the same SCU on an overlapping span.

- recall: share of the expert's SCU matches for which some suggestion is an expert match;
- precision: share of the suggestions that are expert matches.

    python bench/autoannotate.py [--data ../shared/data/duc2006]
"""
import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotation.formats.ducview import parse_peer_annotation  # noqa: E402
from annotation.formats.nist_names import parse_nist_filename  # noqa: E402
from annotation.corpus.natural_order import natural_key  # noqa: E402
from annotation.pyramids.suggestions import from_earlier, from_pyramid, merge  # noqa: E402


def spans(match) -> tuple[tuple[int, int], ...]:
    return tuple((p.start, p.end) for p in match.parts)


def hits(suggestion, expert) -> bool:
    return any(scu == suggestion.scu and any(a[0] < b[1] and b[0] < a[1] for a in parts for b in suggestion.parts) for scu, parts in expert)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "duc2006"))
    args = parser.parse_args()
    folder = Path(args.data) / "allpans"
    if not folder.is_dir():
        sys.exit(f"no DUC data at {folder}")
    groups = defaultdict(list)  # (annotator, topic) -> [(peer, pan)]
    started = time.perf_counter()
    for path in sorted(folder.glob("*.pan")):
        name = parse_nist_filename(path.name)
        pan, _ = parse_peer_annotation(path.read_bytes())
        groups[(name.annotator, name.topic)].append((name.peer, pan))
    read = time.perf_counter() - started
    totals = {k: defaultdict(int) for k in ("pyramid", "earlier", "both")}
    timing, peers = 0.0, 0
    for (annotator, topic), items in sorted(groups.items()):
        items.sort(key=lambda item: natural_key(item[0]))
        for k, (peer, pan) in enumerate(items):
            refs = {r.id: r.text for r in pan.pyramid.references}
            contributors = [(scu.uid, " ".join(refs[p.reference][p.start:p.end] for p in c.parts))
                            for scu in pan.pyramid.scus for c in scu.contributors if c.parts]
            earlier = [(m.scu_uid, [items[j][1].text[p.start:p.end] for p in m.parts], items[j][0])
                       for j in range(k) for m in items[j][1].matches]
            t0 = time.perf_counter()
            by_source = {"pyramid": merge([], from_pyramid(pan.text, contributors)),
                         "earlier": merge([], from_earlier(pan.text, earlier))}
            by_source["both"] = merge([], from_earlier(pan.text, earlier), from_pyramid(pan.text, contributors))
            timing += time.perf_counter() - t0
            peers += 1
            expert = [(m.scu_uid, spans(m)) for m in pan.matches]
            for source, found in by_source.items():
                t = totals[source]
                t["suggestions"] += len(found)
                t["correct"] += sum(hits(s, expert) for s in found)
                t["expert"] += len(expert)
                t["recalled"] += sum(any(hits(s, [e]) for s in found) for e in expert)
    print(f"DUC 2006: {peers} peer annotations, {len(groups)} (annotator, topic) groups; files read in {read:.1f} s; "
          f"suggestions computed in {1000 * timing / peers:.1f} ms per peer")
    print(f"{'source':<10} {'suggestions':>11} {'per peer':>8} {'precision':>9} {'recall':>7}")
    for source, t in totals.items():
        print(f"{source:<10} {t['suggestions']:>11} {t['suggestions'] / peers:>8.1f} {t['correct'] / max(t['suggestions'], 1):>9.3f} "
              f"{t['recalled'] / max(t['expert'], 1):>7.3f}")
    print("precision: share of suggestions that are expert matches (same SCU, overlapping span); "
          "recall: share of expert matches that appear among the suggestions")


if __name__ == "__main__":
    main()
