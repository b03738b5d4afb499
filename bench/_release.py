"""A DUCView release for the benches that replay an expert's work (reproduce_expert.py, reproduce_pyramid.py).

A release is a folder laid out as NIST's: ``allpyramids/`` (the expert pyramids, ``.pyr``) and
``allpans/`` (the expert peer annotations, ``.pan``). File names differ from release to release
(``D0601.pyr``, ``D0701-AGHI.pyr``, ``D0711-A-ABCF.pyr``...), so the benches never parse them: the
project's importer (``annotation/transfer/ducview_import.py``, which takes each file's topic and
peer from its name, else from its content, ``annotation/formats/identity.py``) reads the release
into the bench's database, and the topics are read back from there. The dataset is named after the
release's folder, so a database always says which release it holds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import _browser as b

SUBFOLDERS = ("allpyramids", "allpans")
DATASETS = ("duc2006", "duc2007-main")  # folders of SHARED_DATA
OTHER_YEAR = {"duc2006": "duc2007-main", "duc2007-main": "duc2006"}  # what a bench's model is trained on by default


def add_release_argument(parser: argparse.ArgumentParser) -> None:
    """``--dataset``: a release of SHARED_DATA, unless ``--data`` (``_browser.add_common_arguments``,
    added before: its default is replaced) names another folder; ``release_folder`` reads the two."""
    parser.add_argument(
        "--dataset",
        choices=DATASETS,
        default="duc2006",
        help="a release in SHARED_DATA (default: %(default)s); "
        "--data FOLDER reads any other DUCView release (allpyramids/ + allpans/)",
    )
    parser.set_defaults(data=None)


def release_folder(args: argparse.Namespace) -> str:
    """The release the bench replays: ``--data``, else ``--dataset`` in SHARED_DATA."""
    shared = Path(os.environ.get("SHARED_DATA") or b.REPO.parent / "shared" / "data")
    return args.data or str(shared / args.dataset)


def dataset_name(folder: Path) -> str:
    """The bench dataset of a release: ``bench-`` and the release folder's name (``bench-duc2006``)."""
    return f"bench-{Path(folder).resolve().name}"


def release_paths(folder: Path, subfolders=SUBFOLDERS) -> list[Path]:
    """The release's ``subfolders`` (``allpyramids`` first); stops with what is missing, before
    anything is written."""
    folder = Path(folder)
    missing = [sub for sub in subfolders if not (folder / sub).is_dir()]
    if missing:
        sys.exit(
            f"{folder} is not a DUCView release: no {' and no '.join(f'{m}/' for m in missing)} in it "
            f"(a release holds {' and '.join(f'{s}/' for s in SUBFOLDERS)})"
        )
    return [folder / sub for sub in subfolders]


def import_release(folder: Path, subfolders=SUBFOLDERS) -> str:
    """Flush the bench's database and import the release's ``subfolders`` with the project's
    importer into its dataset (``dataset_name``); returns that name. Stops when the importer
    rejected a file (the bench would replay less than the expert did)."""
    name = dataset_name(folder)
    report = b.fresh_database_with(
        release_paths(folder, subfolders), name, f"{Path(folder).name} ({', '.join(subfolders)})"
    )
    rejected = [f"{o['file']}: {o['reason']}" for o in report.outcomes if o["status"] == "rejected"]
    if rejected:
        sys.exit(f"the importer rejected {len(rejected)} file(s) of {folder}:\n  " + "\n  ".join(rejected[:10]))
    return name


def spread(items: list, count: int) -> list:
    """``count`` items spread evenly over ``items`` (the first always among them; deterministic)."""
    count = min(count, len(items))
    return [items[i * len(items) // count] for i in range(count)]


def sample_topics(dataset: str, count: int) -> list[str]:
    """``count`` topics of the imported release that have a pyramid, spread evenly over their sorted ids."""
    from annotation.corpus.models import Topic

    topics = sorted(
        Topic.objects.filter(dataset__name=dataset, pyramids__isnull=False)
        .values_list("external_id", flat=True)
        .distinct()
    )
    if not topics:
        sys.exit(f"no pyramids were imported into {dataset}")
    return spread(topics, count)


def training_folder(release: Path, train: str | None) -> Path | None:
    """The release whose expert files train a bench's model: ``--train``, else the other DUC year
    (None for another release: the bench then asks which)."""
    if train:
        return Path(train)
    other = OTHER_YEAR.get(release.resolve().name)
    return release.resolve().parent / other if other else None


def files_line(files: list[Path]) -> str:
    """Which files trained a model: per folder and kind (suffix), its pattern and how many."""
    by_folder: dict[tuple[Path, str], list[Path]] = {}
    for path in files:
        by_folder.setdefault((path.resolve().parent, path.suffix), []).append(path)
    return "; ".join(
        f"{folder}/*{suffix} ({len(found)} files)" for (folder, suffix), found in sorted(by_folder.items())
    )
