"""Benchmark: the CPU of one saved match at an annotator's pace, every process counted (prints numbers; not a test).

Issue 33: an annotator saves one match every few seconds, so each save pays the background work's
whole fixed cost, which ``bench/request_cpu.py``'s 20 editors at full speed share out. Here one
client, in the production shape (gunicorn with the production configuration and DEBUG off,
PostgreSQL, Redis, the Celery workers (scores, dashboards) and Celery beat with docker-compose.yml's
options, ``peer_cost.our_workers``), sends ``POST /api/matches/`` (the annotator's save) every 1-3 s
(uniformly drawn, seeded), ``--writes`` times; the window then lasts until every derived figure is
current: stored scores, topic and construction agreement, the dataset's dashboard, the workers idle.
The sweeps beat sends meanwhile are in the figures, as they are in production.

Data: ``bench/request_cpu.py``'s (``--pyramids`` synthetic DUC-sized pyramids of one dataset, 120
SCUs and 22 annotated peers each), the client being the first pyramid's annotator of a new
annotation of its first peer.

Printed, per write: the CPU (``/proc``) of the app (gunicorn), the worker's processes, beat,
Redis (the whole server) and this database's PostgreSQL backends; the worker's split by task
(each task's own CPU, noted by the pool process: ``bench/_task_cpu.py``; the rest is Celery's
own); the statements of each write and of the page's reads (``bench/_app_profile.py`` counts
them per request, its handful of microseconds a statement included in the app's CPU); then the
reads the annotator page makes to open a peer (``--reads``, one at a time, each its own CPU).
``--profile-worker DIR``: each task kind under cProfile, top functions printed (CPU inflated).

    DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/human_pace.py [--writes 30] [--reads 20]
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (database, gunicorn, Celery worker)
import api_load  # noqa: E402  (the synthetic pyramids)
import lightweight_crowd as crowd  # noqa: E402  (the database's CPU)
import peer_cost  # noqa: E402  (our workers as docker-compose runs them)
import request_cpu  # noqa: E402  (the editors, their annotations, the meter)


def everything_current(drain, timeout: float = 180) -> float:
    """Wait until every derived figure is current and the worker idle; returns the seconds waited."""
    from annotation.dashboards.snapshots import stale_datasets
    from annotation.pyramids.construction import stale_topics

    start = time.monotonic()
    request_cpu.scores_current(timeout)
    while stale_topics() or stale_datasets():
        if time.monotonic() - start > timeout:
            sys.exit(f"agreement or dashboards still stale {timeout:.0f} s after the writes")
        time.sleep(0.3)
    drain()
    return time.monotonic() - start


def requests_logged(directory: Path, since: int) -> tuple[list[list[str]], int]:
    """``bench/_app_profile.py``'s lines appended since byte ``since``: kind, CPU s, wall s, statements, ..."""
    path = directory / "requests.log"
    data = path.read_bytes() if path.exists() else b""
    complete = data[since : data.rfind(b"\n") + 1] if len(data) > since else b""
    return [line.split() for line in complete.decode().splitlines()], since + len(complete)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=30, help="matches saved (default: %(default)s)")
    parser.add_argument("--pace", type=float, nargs=2, default=(1.0, 3.0), help="seconds between writes, min max")
    parser.add_argument("--reads", type=int, default=20, help="peers opened after the writes (default: %(default)s)")
    parser.add_argument("--pyramids", type=int, default=20, help="synthetic pyramids of the dataset")
    parser.add_argument("--scus", type=int, default=120)
    parser.add_argument("--peers", type=int, default=22)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile-worker", metavar="DIR", help="cProfile each task kind (CPU inflated)")
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://... and REDIS_URL=redis://...: the bench measures the production shape")
    env = b.production_env(b.setup_django())
    pyramids = request_cpu.synthetic_pyramids(env, args.pyramids, args.scus, args.peers)
    tokens = api_load.editor_tokens(pyramids[:1])
    annotation_id = request_cpu.own_annotations(pyramids[:1])[0]
    b.close_db_connections()
    log_dir = b.make_log_dir()
    task_log = log_dir / "task-cpu.log"
    app_dir = log_dir / "app"
    app_dir.mkdir()
    profile_dir = Path(args.profile_worker).resolve() if args.profile_worker else None
    if profile_dir:
        profile_dir.mkdir(parents=True, exist_ok=True)
    env = {**env, "BENCH_APP_PROFILE_DIR": str(app_dir)}
    if profile_dir:
        env["BENCH_TASK_PROFILE_DIR"] = str(profile_dir)
    server_pids: list[int] = []
    with (
        peer_cost.our_workers(env, log_dir, redis_url) as (worker_pids, drain),
        b.server("gunicorn", env, log_dir, server_pids, config="bench/_app_profile.py") as base,
    ):
        editor = request_cpu.Editor(base, tokens[0], pyramids[0].pk, args.seed)
        editor.annotate(annotation_id)
        timings, errors = [], []
        editor.add_matches(0, timings, errors, at_least=3)  # warm-up: the server and the worker have run once
        everything_current(drain)
        scores, dashboards, beat = worker_pids
        meter = request_cpu.Meter(server_pids[0], scores, request_cpu.redis_pid(redis_url), task_log)
        meter.groups["worker"] = b.process_tree(scores) + b.process_tree(dashboards)
        meter.groups["beat"] = [beat]
        workers = "Celery workers as docker-compose.yml runs them (" + " / ".join(
            " ".join(b.compose_worker_options(service)) for service in ("worker", "dashboards")
        )
        print(b.machine_line(crowd.gunicorn_line() + ", DEBUG off", workers + ") and beat on Redis"))
        _, offset = requests_logged(app_dir, 0)
        rng = random.Random(args.seed)
        timings, errors = [], []
        loads = os.getloadavg()
        meter.start()
        start = time.monotonic()
        for _ in range(args.writes):
            editor.add_matches(0, timings, errors, at_least=1)
            time.sleep(rng.uniform(*args.pace))  # an annotator's pace, not a wait for an event
        writing = time.monotonic() - start
        settled = everything_current(drain)
        used, tasks = meter.stop()
        logged, offset = requests_logged(app_dir, offset)
        count = len(timings)
        print(
            f"\n{count} matches saved one at a time every {args.pace[0]:g}-{args.pace[1]:g} s ({writing:.0f} s), "
            f"everything current {settled:.1f} s after; {len(errors)} errors {errors[:3]}; load average "
            f"{loads[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
        )
        print("| per write, ms of CPU | app | worker | beat | Redis | database | total |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        per = {kind: used[kind] * 1000 / max(1, count) for kind in ("app", "worker", "beat", "redis", "db")}
        print(
            f"| POST /api/matches/ | {per['app']:.1f} | {per['worker']:.1f} | {per['beat']:.1f} | "
            f"{per['redis']:.1f} | {per['db']:.1f} | {sum(per.values()):.1f} |"
        )
        writes = [row for row in logged if row[0].startswith("POST")]
        statements = sorted(int(row[3]) for row in writes)
        if statements:
            handling = sorted(float(row[1]) * 1000 for row in writes)
            print(
                f"statements per write: {statements[0]}-{statements[-1]} (median {statements[len(statements) // 2]}); "
                f"handling thread's CPU per write, median {handling[len(handling) // 2]:.1f} ms; "
                f"latency p50 {api_load.percentile(timings, 50) * 1000:.0f} ms"
            )
        print("\nthe worker's CPU by task, per write")
        request_cpu.print_task_table(tasks, count, used["worker"], "write")

        if args.reads:
            read_peers(base, editor, meter, app_dir, offset, args.reads)
    if profile_dir:
        request_cpu.print_profiles(profile_dir)
    if os.environ.get("BENCH_KEEP_TASK_LOG"):  # every task's line, with its time and arguments
        import shutil

        shutil.copy(task_log, os.environ["BENCH_KEEP_TASK_LOG"])
    b.cleanup(False, log_dir)


def read_peers(base: str, editor, meter, app_dir: Path, offset: int, reads: int) -> None:
    """Open the annotation ``reads`` times as the annotator page does (``annotation_reads``), one
    request at a time, each kind of read in a window of its own: the app's and database's CPU and
    the statements per request."""
    print(f"\nopening a peer, each read {reads} times one at a time; ms of CPU per request")
    print("| read | app | database | app + database | statements |")
    print("|---|---:|---:|---:|---:|")
    total = {"app": 0.0, "db": 0.0, "statements": 0}
    for name, url in annotation_reads(base, editor.annotation_id).items():
        meter.start()
        for _ in range(reads):
            editor.session.get(url, timeout=60).raise_for_status()
        used, _ = meter.stop()
        logged, offset = requests_logged(app_dir, offset)
        statements = sorted(int(row[3]) for row in logged)
        per = {kind: used[kind] * 1000 / reads for kind in ("app", "db")}
        for kind in per:
            total[kind] += per[kind]
        total["statements"] += statements[len(statements) // 2]
        print(
            f"| {name} | {per['app']:.1f} | {per['db']:.1f} | {per['app'] + per['db']:.1f} | "
            f"{statements[0]}-{statements[-1]} |"
        )
    print(
        f"| opening a peer | {total['app']:.1f} | {total['db']:.1f} | {total['app'] + total['db']:.1f} | "
        f"{total['statements']} |"
    )


def annotation_reads(base: str, annotation_id: int) -> dict[str, str]:
    """What the annotator page fetches to open a peer (``frontend/static/frontend/js/annotator.js``
    and ``next_peer.js``): its document, its suggestions (read ahead), its stored score (polled)."""
    return {
        "full/": f"{base}/api/annotations/{annotation_id}/full/",
        "suggestions/": f"{base}/api/annotations/{annotation_id}/suggestions/",
        "score/": f"{base}/api/annotations/{annotation_id}/score/",
    }


if __name__ == "__main__":
    main()
