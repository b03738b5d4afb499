"""Benchmark: import + score all of REALSumm's crowd answers (both folders, 7,743 assignments) from scratch.

Prints numbers; it is not a test. Uses DATABASE_URL if set (PostgreSQL: flushed first), else a
fresh SQLite file in a temporary folder. Without REDIS_URL the stored scores are recomputed
in-process at the end of each import (what a worker does with Redis), so "import + score" is the
time until the stored system scores are there.

    python bench/lightweight_import.py [--data ../shared/data/realsumm] [--repeat 3]
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
ANSWERS = Path("human_annotations", "SCUs_and_annotations")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "realsumm"))
    parser.add_argument("--repeat", type=int, default=3, help="rounds (fresh database each)")
    args = parser.parse_args()
    folders = [Path(args.data) / ANSWERS / f"SCU_rating_results_{kind}_systems" for kind in ("abs", "ext")]
    if not all(f.is_dir() for f in folders):
        sys.exit(f"no REALSumm answers under {args.data}: they live in ../shared/data/realsumm")
    tmp = tempfile.mkdtemp()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.jobs.queue import runner
    from annotation.lightweight.importing import get_run, import_paths
    from annotation.lightweight.models import LiteAssignment, LiteResult

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {connection.vendor}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    times, cpus = [], []
    for _ in range(args.repeat):
        if connection.vendor == "postgresql":
            call_command("flush", interactive=False, verbosity=0)
        call_command("migrate", verbosity=0)
        start, cpu = time.perf_counter(), time.process_time()
        scores = {}
        for kind, folder in zip(("abs", "ext"), folders, strict=True):
            run = get_run(f"realsumm-{kind}", "imported")
            reports = import_paths(run, [folder])
            assert not any(r.error for r in reports), [r.error for r in reports if r.error]
            runner.wait()  # the recomputation the import scheduled, on the in-process background thread
            result = LiteResult.objects.get(pyramid=run)
            scores[kind] = {r["system"]: r["score"] for r in result.payload["systems"]}
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        times.append(seconds)
        cpus.append(cpu)
        assert LiteAssignment.objects.count() == 7743
        assert abs(scores["abs"]["bart_out"] - 0.48349483849483854) < 1e-12
        print(
            f"import + score REALSumm (both folders, 7,743 assignments, 25 systems): {seconds:.2f} s wall, "
            f"{cpu:.2f} s CPU of this process"
        )
        if connection.vendor == "sqlite":
            connection.close()
            os.remove(connection.settings_dict["NAME"])
    print(
        f"best {min(times):.2f} s wall ({min(cpus):.2f} s CPU), median {sorted(times)[len(times) // 2]:.2f} s wall "
        f"over {len(times)} rounds (goal: under 3 s); load average now {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
