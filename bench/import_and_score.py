"""Benchmark: import + score all of ../shared/data/duc2006 from scratch, then scoring alone in memory.

Prints numbers; it is not a test. Uses DATABASE_URL if set (e.g. PostgreSQL), else a fresh SQLite
file in a temporary folder. Without REDIS_URL scores are computed in-process during the import,
so "import + score" includes the scoring-on-save work.

    python bench/import_and_score.py [--data ../shared/data/duc2006] [--repeat 5]
"""

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "duc2006"))
    parser.add_argument("--repeat", type=int, default=5, help="rounds of in-memory scoring")
    args = parser.parse_args()
    if not Path(args.data).is_dir():
        sys.exit(f"no data at {args.data}: the DUC 2006 pyramids live in ../shared/data/duc2006")
    tmp = tempfile.mkdtemp()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("DEBUG", "1")  # development mode: the built-in secret key
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.peers.models import PeerAnnotation
    from annotation.peers.results import score_annotations
    from annotation.peers.scoring_inputs import load_annotations
    from annotation.pyramids.scoring_inputs import load_pyramids
    from annotation.transfer.ducview_import import import_paths
    from scoring.model import Convention
    from scoring.scores import score_peer

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {connection.vendor}"
    )

    start = time.perf_counter()
    report = import_paths([args.data], "bench-duc2006")
    annotations = list(PeerAnnotation.objects.all())
    score_annotations(annotations, Convention.NIST)  # the export path, on top of scoring-on-save
    seconds = time.perf_counter() - start
    print(
        f"import + score duc2006: {seconds:.2f} s for {report.annotations_created} peer annotations "
        f"({report.annotations_created / seconds:.1f} annotations/s, {report.files} files)"
    )

    pyramids = load_pyramids(a.pyramid_id for a in annotations)
    inputs = load_annotations(a.pk for a in annotations)
    pairs = [(pyramids[a.pyramid_id], inputs[a.pk]) for a in annotations]
    for convention in Convention:
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            for pyramid, annotation in pairs:
                score_peer(pyramid, annotation, convention)
            best = min(best, time.perf_counter() - start)
        print(
            f"scoring alone ({convention.value}, incl. jackknife): {best / len(pairs) * 1000 * 1000:.1f} "
            f"ms per 1,000 peers (best of {args.repeat})"
        )


if __name__ == "__main__":
    main()
