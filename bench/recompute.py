"""Benchmark: recomputation after one edit on DUC 2006 topic D0603 (114 SCUs, 22 peer annotations),
both conventions with the jackknife, as the background runner does it (``recompute_annotations``).

Prints numbers; it is not a test. Uses DATABASE_URL if set, else a fresh SQLite file.

    python bench/recompute.py [--data ../shared/data/duc2006] [--topic D0603] [--rounds 30]
"""

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from _django import fresh_database  # noqa: E402  (bench/ is on sys.path as the script's folder)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "duc2006"))
    parser.add_argument("--topic", default="D0603")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    data = Path(args.data)
    files = [data / "allpyramids" / f"{args.topic}.pyr", *sorted((data / "allpans").glob(f"*.{args.topic}.*.pan"))]
    if not files[0].exists():
        sys.exit(f"no {files[0]}: the DUC 2006 data lives in ../shared/data/duc2006")
    fresh_database()
    from django.db import connection
    from django.db.models import F
    from django.test.utils import CaptureQueriesContext

    from annotation.jobs.queue import runner
    from annotation.peers.models import PeerAnnotation
    from annotation.peers.recompute import recompute_annotations
    from annotation.pyramids.models import Pyramid
    from annotation.transfer.ducview_import import import_paths

    runner.synchronous = True
    import_paths(files, "bench-recompute")
    pyramid = Pyramid.objects.get(topic__external_id=args.topic)
    ids = list(PeerAnnotation.objects.filter(pyramid=pyramid).values_list("id", flat=True))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {connection.vendor}; "
        f"{args.topic}: {pyramid.scus.count()} SCUs, {len(ids)} peer annotations"
    )

    def timed(what, edit):
        times, cpu = [], []
        for _ in range(args.rounds):
            edit()
            start, start_cpu = time.perf_counter(), time.process_time()
            with CaptureQueriesContext(connection) as queries:
                written = recompute_annotations(ids)
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
        # CPU time is the steady figure on a shared machine; wall time adds waiting for the CPU and the disk.
        print(
            f"after {what}, {written} scores written, {len(queries)} statements: wall p50 "
            f"{statistics.median(times):.1f} ms, "
            f"p95 {percentile(times, 95):.1f} ms; CPU p50 {statistics.median(cpu):.1f} ms, p95 "
            f"{percentile(cpu, 95):.1f} ms"
        )

    timed(
        f"a pyramid edit (all {len(ids)} annotations stale)",
        lambda: Pyramid.objects.filter(pk=pyramid.pk).update(revision=F("revision") + 1),
    )
    one = ids[0]
    timed(
        "a match edit (1 annotation stale)",
        lambda: PeerAnnotation.objects.filter(pk=one).update(revision=F("revision") + 1),
    )


if __name__ == "__main__":
    main()
