"""Benchmark: what the builder's contributor proposals would spare the construction bench's robot at
other thresholds, without a browser (prints numbers; not a test).

Issue 30: bench/reproduce_pyramid.py measures the assisted builder at the threshold the model was
trained with (``train_proposals``' precision target); this asks whether a lower one would pay,
with the engine's training and features untouched (only ``contributor_threshold`` is replaced). On
the construction bench's sample (``--pyramids`` topics spread over the release's sorted pyramid
files, as it spreads them), the robot's work is replayed in the engine's own terms: each expert SCU
started from its first contributor (``proposal_training.seeds``), the pyramid so far holding the
expert's earlier SCUs whole (as the robot leaves them), and the list the builder would show
(``proposals.contributor_proposals``: each other reference's most confident candidate at or above
the threshold) reviewed as the bench reviews it (``reproduce_pyramid.review``: exact, near, wrong)
and costed by its reading policies (``reproduce_pyramid.policies``).

*Exact* here is offline: equal after trimming spaces and punctuation at both ends of both spans (the
builder's word snapping, textspans.js, also snaps a part that cuts a word, which this leaves as is).
At the model's own threshold the figures are checked against the browser run's.

    SHARED_DATA=../shared/data python bench/proposal_reading.py --dataset duc2006 --model FILE
        [--pyramids 4] [--thresholds 0.3,0.5,0.7]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _release  # noqa: E402
import builder_proposals  # noqa: E402
import reproduce_pyramid  # noqa: E402

from annotation.pyramids.proposal_training import from_pyr, pyramid_files, seed_scu, seeds  # noqa: E402
from annotation.pyramids.proposals import Topic, contributor_proposals, load_model  # noqa: E402

Contributor, Scu = reproduce_pyramid.Contributor, reproduce_pyramid.Scu


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the spaces and punctuation at its ends (what the builder keeps of a drag)."""
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return start, end


def as_contributor(texts: dict[str, str], number: dict[str, int], reference: str, parts) -> Contributor:
    """A contributor in the construction bench's terms: its reference numbered, its parts trimmed."""
    r = number[reference]
    return Contributor(r, tuple(sorted((r, *trimmed(texts[reference], s, e)) for s, e in parts)))


PERFECT = "a perfect engine"


def reviewed_lists(expert, model, thresholds: list[float]) -> dict:
    """Per threshold, the lists the builder would show as the robot builds ``expert``, reviewed; and
    under ``PERFECT`` the lists of an engine that proposes every contributor still to make, exactly,
    and nothing else (what the flow itself can spare)."""
    topic = Topic(expert.references)
    texts = {r.key: r.text for r in expert.references}
    number = {key: k for k, key in enumerate(sorted(texts))}
    out: dict = {t: [] for t in [*thresholds, PERFECT]}
    done = []
    for index, seed in seeds(expert):
        scu = expert.scus[index]
        ours = Scu(index, tuple(as_contributor(texts, number, c.reference, c.parts) for c in scu.contributors))
        wanted = [c for c in ours.contributors if c.reference != number[seed.reference]]
        draft = seed_scu(topic, seed)
        lowest = dataclasses.replace(model, contributor_threshold=min(thresholds))
        found = contributor_proposals(expert.references, draft, [*done, draft], lowest, topic=topic)
        for t in thresholds:
            shown = [as_contributor(texts, number, p.reference, p.parts) for p in found if p.confidence >= t]
            out[t].append(reproduce_pyramid.review(shown, ours, wanted))
        out[PERFECT].append(reproduce_pyramid.review(wanted, ours, wanted))
        done.append(scu)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a proposals model (reproduce_pyramid.py prints its file)")
    parser.add_argument("--pyramids", type=int, default=4)
    parser.add_argument("--thresholds", default="0.2,0.3,0.4,0.5,0.6,0.7,0.8", help="comma-separated")
    parser.add_argument("--data", default=None)
    _release.add_release_argument(parser)
    args = parser.parse_args()
    release = Path(_release.release_folder(args))
    model = load_model(Path(args.model))
    if model is None:
        sys.exit(f"--model {args.model}: no proposals model of this code's format there")
    sample = _release.spread(list(pyramid_files(release / "allpyramids")), args.pyramids)
    experts = [from_pyr(f) for f in sample]
    refused = reproduce_pyramid.refusal(model, builder_proposals.release_pyramids(release))
    if refused:
        sys.exit(f"the proposals model may not be measured on {release}: {refused}")
    thresholds = sorted({float(t) for t in args.thresholds.split(",")} | {model.contributor_threshold})
    lists: dict = {t: [] for t in [*thresholds, PERFECT]}
    for expert in experts:
        for t, found in reviewed_lists(expert, model, thresholds).items():
            lists[t] += found
    print(
        f"{release.name}, pyramids {', '.join(f.name for f in sample)}; model trained on "
        f"{_release.files_line([Path(s) for s in model.trained_on])}; its threshold "
        f"{model.contributor_threshold:.3f}; load {os.getloadavg()[0]:.1f}"
    )
    for t in [*thresholds, PERFECT]:
        print(f"  {t if t == PERFECT else f'threshold {t:.3f}'}: {reproduce_pyramid.shown_line(lists[t])}")
        for name, (reads, clicks, accepted, spared) in reproduce_pyramid.policies(lists[t]).items():
            if name != "skip the list":
                print(
                    f"    reading {name:>22}: {reads} reads + {clicks} clicks, {accepted} accepted, "
                    f"{spared} hand actions spared: {spared - reads - clicks:+d}"
                )


if __name__ == "__main__":
    main()
