"""Benchmark: the statistics of the dashboards on DUC 2006 or 2007 (prints numbers; not a test).

Imports a DUC folder (default ../shared/data/duc2006; ../shared/data/duc2007-main for 2007) into a
fresh SQLite file (or DATABASE_URL) with NIST's content responsiveness from the folder's score table
(``scoring/<year>_modified_scores.txt`` and its header file), then times, as a worker runs them
inside the dashboard computation:
- loading the SCU vectors and annotations (once per snapshot);
- per convention, the system statistics: intervals of the means, every pairwise test (Holm),
  groups, SCU-level tests, reference- and topic-stability curves, the power table;
- per convention, the bootstrap intervals of the meta-evaluation correlations shown by default;
- the whole dashboard snapshot, as the worker's task computes and stores it.

    python bench/significance.py [--data ../shared/data/duc2006 | ../shared/data/duc2007-main] [--repeat 3]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data" / "duc2006"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = Path(args.data)
    if not data.is_dir():
        sys.exit(f"no data at {data}")
    tmp = tempfile.mkdtemp()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.pop("REDIS_URL", None)  # nothing scheduled on a broker: this process times the work itself
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from annotation.corpus.models import Topic
    from annotation.dashboards import figures, snapshots
    from annotation.dashboards import statistics as system_statistics
    from annotation.dashboards.judgments import import_duc_table
    from annotation.dashboards.models import DatasetDashboard, Judgment
    from annotation.peers.results import score_rows
    from annotation.transfer.ducview_import import import_paths
    from scoring.model import Convention

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}, database {connection.vendor}"
    )
    name = data.name
    import_paths([str(data)], name)
    for table in sorted((data / "scoring").glob("*_modified_scores.txt")):
        import_duc_table(name, table)
    topics = Topic.objects.filter(dataset__name=name)
    summarizers = figures._summarizers(topics)
    print(f"{name}: {topics.count()} topics, {Judgment.objects.filter(topic__dataset__name=name).count()} judgments")
    judgments = list(
        Judgment.objects.filter(topic__dataset__name=name).values_list(
            "topic__dataset__name", "topic__external_id", "summary", "metric", "value"
        )
    )
    rows = {c: score_rows(topics, c) for c in Convention}  # the dashboard computes these anyway
    dataset = topics.first().dataset

    def once():
        times = {}

        def timed(key, func):
            start, cpu = time.perf_counter(), time.process_time()
            result = func()
            times[key] = (time.perf_counter() - start, time.process_time() - cpu)
            return result

        peers = timed("load SCU vectors and annotations", lambda: system_statistics.load_peer_inputs(topics))
        for c in Convention:
            timed(
                f"system statistics ({c.value})",
                lambda c=c: system_statistics.compute(
                    name, rows[c], lambda r: figures._summarizer_of(r, summarizers), c, peers
                ),
            )
            found = []
            timed(
                f"meta-evaluation with intervals ({c.value})",
                lambda c=c, found=found: [
                    snapshots._metaeval(dataset, c, rows[c], summarizers, judgments, score, found)
                    for score in snapshots.METAEVAL_SCORES
                ],
            )
        return times

    # Wall time depends on the machine's load; the process's CPU time is what an idle worker would take.
    runs = [once() for _ in range(args.repeat)]
    for key in runs[0]:
        wall, cpu = [r[key][0] for r in runs], [r[key][1] for r in runs]
        print(
            f"{key}: {statistics.median(wall):.2f} s wall, {statistics.median(cpu):.2f} s CPU (median of {len(wall)})"
        )
    wall, cpu = [sum(v[0] for v in r.values()) for r in runs], [sum(v[1] for v in r.values()) for r in runs]
    print(
        f"total, both conventions: {statistics.median(wall):.2f} s wall (min {min(wall):.2f}), "
        f"{statistics.median(cpu):.2f} s CPU; load average now {os.getloadavg()[0]:.1f}"
    )
    # What the worker runs: the whole snapshot (score tables, agreement, charts and the statistics
    # above), computed from scratch (no previous snapshot's rows to reuse) and stored.
    whole = []
    for _ in range(args.repeat):
        DatasetDashboard.objects.filter(dataset=dataset).delete()
        start = time.perf_counter()
        snapshots.recompute_dataset(dataset.pk)
        whole.append(time.perf_counter() - start)
    print(
        f"whole dashboard snapshot from scratch (the worker's task): {statistics.median(whole):.2f} s wall "
        f"(median of {len(whole)}); "
        f"load average now {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
