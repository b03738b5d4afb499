"""Benchmark: the assisted builder's proposals (issue 30, section 2), trained on one year of expert
pyramids and measured on the other (prints numbers; not a test).

For each direction (DUC 2006 -> DUC 2007 main, and back), the model is trained by the project's own
code (``annotation.pyramids.proposal_training.fit``, as ``manage.py train_proposals`` does) on every
``.pyr`` of the training year, or taken from ``--model`` (refused when it learnt from any pyramid of
the year measured); the files that trained it are printed. On every pyramid of the other year
(``proposal_training.measure``):

- **contributor proposals**: the expert starts each SCU from its first contributor (references in
  key order) and accepts every proposal; precision = right proposals / proposals, recall = right
  proposals / the expert's contributors of those SCUs in the other references;
- **SCU proposals** on the empty pyramid: precision = right proposals / proposals, recall = expert
  SCUs of two or more references that a right proposal maps to / such expert SCUs;
- **the draft pyramids** against the expert's, with the app's construction agreement
  (``scoring.pyramid_agreement``: contributors aligned by Dice >= 0.5, pairwise and B-cubed F1 over
  the aligned ones, and again with every unmatched contributor counted as a singleton):
  *seeded*: the expert starts every SCU and accepts every contributor proposal;
  *all proposals*: every SCU proposal accepted (and the contributor proposals made for it), then the
  expert starts each SCU none of whose contributors the draft covers yet, accepting every proposal;
  *seeds alone*: the expert's starts with no proposal accepted, for scale (what the drafts owe to
  the expert's own contributors rather than to the proposals).

A proposal is right (issue 30) when it covers at least half of an expert contributor's characters,
in the SCU the expert put that contributor in; a proposed SCU when all its spans map that way to one
expert SCU. Figures are pooled over the year's pyramids (micro-averages); B-cubed over all items.

    SHARED_DATA=../shared/data python bench/builder_proposals.py [--train duc2006|duc2007-main]
        [--model FILE] [--pyramids N]
"""

from __future__ import annotations

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

from annotation.pyramids.proposal_training import (  # noqa: E402  (the repository is put on sys.path first)
    TARGET_PRECISION,
    Counts,
    ExpertPyramid,
    candidate_reach,
    fit,
    from_pyr,
    measure,
    pyramid_files,
    ranking_curve,
    seed_scu,
    seeds,
    span_pyramid,
    training_selection,
)
from annotation.pyramids.proposals import ProposalModel, Topic, load_model  # noqa: E402
from scoring.pyramid_agreement import (  # noqa: E402
    align_contributors,
    clustering_agreement,
    with_unmatched_as_singletons,
)

YEARS = ("duc2006", "duc2007-main")


def shared_data() -> Path:
    return Path(os.environ.get("SHARED_DATA") or REPO.parent / "shared" / "data")


def release_pyramids(release: Path) -> list[ExpertPyramid]:
    """The expert pyramids of a DUCView release (its ``allpyramids/``)."""
    return [from_pyr(p) for p in pyramid_files(release / "allpyramids")]


def year_pyramids(year: str, data: Path | None = None) -> list[ExpertPyramid]:
    return release_pyramids((data or shared_data()) / year)


def trained_for(
    training: list[ExpertPyramid], measured: list[ExpertPyramid], target: float | None = TARGET_PRECISION
) -> ProposalModel:
    """A model trained on the ``training`` pyramids, none of the ``measured`` ones' topics among them
    (ValueError when nothing is left to learn from)."""
    return fit(training_selection(training, {p.fingerprint for p in measured}), target)


def trained_on(year: str, data: Path | None = None, target: float | None = TARGET_PRECISION) -> ProposalModel:
    """A model trained on every pyramid of ``year``, none of the other year's topics among them."""
    return trained_for(year_pyramids(year, data), year_pyramids(YEARS[1 - YEARS.index(year)], data), target)


class SawMeasuredYear(ValueError):
    pass


def check_held_out(model: ProposalModel, measured: list[ExpertPyramid]) -> None:
    """Refuse a model that learnt from any pyramid measured (a model would be used on it only by
    mistake: ``proposals.usable`` already ignores it, which would measure the rules instead)."""
    saw = [p.source for p in measured if p.fingerprint in model.seen]
    if saw:
        raise SawMeasuredYear(f"the model learnt from {len(saw)} pyramid(s) measured, e.g. {saw[0]}")


def draft_agreement(expert: ExpertPyramid, scus) -> dict:
    """Construction agreement of a draft against the expert's pyramid (the expert is side A)."""
    a = span_pyramid("expert", expert.references, expert.scus)
    b = span_pyramid("draft", expert.references, scus)
    alignment = align_contributors(a, b)
    plain = clustering_agreement(alignment)
    counted = clustering_agreement(with_unmatched_as_singletons(a, b, alignment))
    return {
        "aligned": len(alignment.aligned),
        "unmatched_expert": len(alignment.unmatched_a),
        "unmatched_draft": len(alignment.unmatched_b),
        "plain": plain,
        "counted": counted,
    }


def _pooled(rows: list[dict]) -> dict:
    """Pairwise and B-cubed F1 pooled over pyramids: pair counts summed, B-cubed item means weighted by items."""

    def f(p, r):
        return 0.0 if not p or not r else 2 * p * r / (p + r)

    out = {k: sum(r[k] for r in rows) for k in ("aligned", "unmatched_expert", "unmatched_draft")}
    for kind in ("plain", "counted"):
        items = sum(r[kind].items for r in rows)
        both = sum(r[kind].together_both for r in rows)
        ta, tb = sum(r[kind].together_a for r in rows), sum(r[kind].together_b for r in rows)
        bp = sum((r[kind].bcubed_precision or 0) * r[kind].items for r in rows) / items if items else 0
        br = sum((r[kind].bcubed_recall or 0) * r[kind].items for r in rows) / items if items else 0
        out[kind] = {
            "pairwise_f1": f(both / tb if tb else 0, both / ta if ta else 0),
            "bcubed_precision": bp,
            "bcubed_recall": br,
            "bcubed_f1": f(bp, br),
        }
    return out


def seeds_alone(measured: list[ExpertPyramid]) -> dict:
    """The draft of the expert's starts alone, no proposal accepted: what the drafts' agreement owes
    to the seeds (expert contributors) rather than to the proposals."""
    rows = []
    for expert in measured:
        topic = Topic(expert.references)
        rows.append(draft_agreement(expert, [seed_scu(topic, seed) for _, seed in seeds(expert)]))
    return _pooled(rows)


def evaluate(model: ProposalModel | None, measured: list[ExpertPyramid]) -> dict:
    """Every figure of the bench for one model on the pyramids measured (the function the realdata
    test calls)."""
    if model is not None:
        check_held_out(model, measured)
    contributors, scus = Counts(), Counts()
    seeded, drafts = [], []
    for expert in measured:
        m = measure(expert, model)
        contributors.add(m.contributors)
        scus.add(m.scus)
        seeded.append(draft_agreement(expert, m.draft_seeded))
        drafts.append(draft_agreement(expert, m.draft))
    return {
        "curve": ranking_curve(model, measured),
        "reach": sum((Counter(candidate_reach(p)) for p in measured), Counter()),
        "pyramids": len(measured),
        "contributors": contributors,
        "scus": scus,
        "seeded": _pooled(seeded),
        "draft": _pooled(drafts),
        "seeds_alone": seeds_alone(measured),
    }


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def report(train: str, test: str, model: ProposalModel, figures: dict, seconds: float) -> str:
    c, s, curve, r = figures["contributors"], figures["scus"], figures["curve"], figures["reach"]
    lines = [
        f"== trained on {train} ({len(model.trained_on)} files), measured on {test} ({figures['pyramids']} pyramids)",
        "   trained on: " + " ".join(Path(p).name for p in model.trained_on),
        f"   thresholds: contributor {model.contributor_threshold:.3f}, pair {model.pair_threshold:.3f}",
        f"   contributor proposals: P {_fmt(c.precision)} R {_fmt(c.recall)}  "
        f"({c.right} right of {c.proposed} proposed; {c.found} of {c.expected} expert contributors found)",
        "   contributor ranking, any threshold (expert's SCUs so far): recall at P >= 0.8 "
        f"{_fmt(curve['recall_at_p80'])}, precision at R >= 0.6 {_fmt(curve['precision_at_r60'])}, "
        f"best F1 {_fmt(curve['best_f1'])}, top candidates' recall {_fmt(curve['ceiling'])}",
        f"   where recall is lost before ranking: {r['wanted']} of {r['groups']} (SCU start, other reference) have "
        f"an expert contributor; some candidate span right for {r['any_span']}, one of those ranked for "
        f"{r['ranked']}, the rules' first for {r['rules_first']}",
        f"   SCU proposals:         P {_fmt(s.precision)} R {_fmt(s.recall)}  "
        f"({s.right} right of {s.proposed} proposed; {s.found} of {s.expected} expert SCUs of weight >= 2 found)",
    ]
    for name, key in (("seeded draft", "seeded"), ("all-proposals draft", "draft"), ("seeds alone", "seeds_alone")):
        d = figures[key]
        lines.append(
            f"   {name:20s} aligned {d['aligned']}, unmatched expert {d['unmatched_expert']} / draft "
            f"{d['unmatched_draft']};  aligned only: pairwise F1 {_fmt(d['plain']['pairwise_f1'])} "
            f"B-cubed F1 {_fmt(d['plain']['bcubed_f1'])};  unmatched as singletons: pairwise F1 "
            f"{_fmt(d['counted']['pairwise_f1'])} B-cubed P {_fmt(d['counted']['bcubed_precision'])} "
            f"R {_fmt(d['counted']['bcubed_recall'])} F1 {_fmt(d['counted']['bcubed_f1'])}"
        )
    lines.append(f"   {seconds:.1f} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", choices=YEARS, help="one direction only: train on this year (default: both)")
    parser.add_argument("--model", help="a trained model instead of training (refused if it saw the year measured)")
    parser.add_argument(
        "--target",
        default=str(TARGET_PRECISION),
        help="the held-out precision the thresholds aim at (default %(default)s), or 'f1' for the best F1",
    )
    parser.add_argument("--pyramids", type=int, help="measure only the first N pyramids (in file order) of the year")
    args = parser.parse_args()
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    for train in [args.train] if args.train else YEARS:
        test = YEARS[1 - YEARS.index(train)]
        started = time.perf_counter()
        target = None if args.target == "f1" else float(args.target)
        model = load_model(Path(args.model)) if args.model else trained_on(train, target=target)
        if model is None:
            sys.exit(f"{args.model}: no model of this version there")
        measured = year_pyramids(test)[: args.pyramids]
        try:
            figures = evaluate(model, measured)
        except SawMeasuredYear as error:
            sys.exit(f"refused: {error}")
        print(report(train, test, model, figures, time.perf_counter() - started), flush=True)


if __name__ == "__main__":
    main()
