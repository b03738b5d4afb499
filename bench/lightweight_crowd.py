"""Benchmark: a crowd on the in-app judging page (prints numbers; not a test).

--workers crowd workers (threads, each its own HTTP session from its own loopback address, 127.0.x.y,
so the production per-client limits apply as to a real crowd: CROWD_RATE, CROWD_HOLDS_*) open the judging link of a
lightweight pyramid served by gunicorn (its production configuration, pyramid_app/gunicorn_conf.py) on
PostgreSQL, with a real Celery worker recomputing the scores (REDIS_URL required). Each worker
arrives at a seeded random moment within the first --arrive-over seconds (default: --think, as a
crowd recruited together does; 0 with --think 0 is the burst, all at once; --arrive-over 300 a crowd
coming in over five minutes), gives its id, then --tasks times loads its
next task page, reads for a seeded random time (uniform 0..2x --think: 0 means no reading at all)
and submits an answer for every statement (16), as the page's form does (CSRF included). The app
runs as deployed: DEBUG off (a random SECRET_KEY, collected static files), plain HTTP on loopback.
Data: synthetic, made here: --topics topics x 8 peers x 2 batches of 16 statements, 5 judges per
task; by default a quarter more topics than the crowd needs, so no worker runs out of tasks.

Printed: p50/p95/p99 latency of "load task page" and "submit answers", errors, requests/s, the
CPU seconds the app (gunicorn), PostgreSQL (this database's server processes), the Celery worker
and this client spent, per task (one page + one submission), the load average before and after,
the check that every submitted answer is stored exactly once (one row per completion code, no
duplicates), that no task got more answers than its judges (each page view holds a slot,
LIGHTWEIGHT_RESERVATION_SECONDS) and no hold is left, how many tasks were left started but not
complete (tasks are completed before new ones start), and how soon after the crowd the stored
scores are current. CPU per task is the robust figure on a shared machine; wall-clock latency
depends on what else runs. ``--profile-app DIR`` also prints, per kind of request, the app's CPU,
statements and time in the database measured inside gunicorn (``bench/_app_profile.py``; with
``--cprofile``, each kind's profile) and what PostgreSQL's backends were doing (wait events sampled
every 20 ms): where a request's time goes, CPU or waiting for locks.

    DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/lightweight_crowd.py [--workers 200] [--tasks 3]
        [--think 20] [--arrive-over S] [--seed 1] [--profile-app DIR [--cprofile]]
"""

import argparse
import math
import os
import re
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (shared plumbing: database, gunicorn subprocess, Celery worker)

TASK = re.compile(r'name="task" value="(\d+)"')
ANSWER = re.compile(r'name="(a\d+)"')
CODE = re.compile(r"data-completion-code>([0-9A-F]{8})<")
ANSWERS_PER_TOPIC = 8 * 2 * 5  # make_data: 8 peers x 2 batches, 5 judges each


def make_data(topics: int) -> str:
    """The run, its tasks and a judging link; returns the link's token."""
    from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
    from annotation.lightweight.models import CrowdLink, LightweightPyramid, LiteStatement
    from annotation.lightweight.work import create_tasks

    dataset = Dataset.objects.create(name="crowd-bench")
    run = LightweightPyramid.objects.create(dataset=dataset, name="crowd", judges_per_task=5)
    for t in range(topics):
        topic = Topic.objects.create(dataset=dataset, external_id=f"T{t:03d}")
        refs = [
            ReferenceSummary.objects.create(topic=topic, external_id=r, text=f"Reference {r} of topic {t}.")
            for r in "ABCD"
        ]
        for p in range(8):
            PeerSummary.objects.create(
                topic=topic,
                external_id=f"T{t:03d}.M.100.A.{p}",
                text=f"Peer {p} says the harbour of town {t} reopened after the storm. " * 6,
            )
        LiteStatement.objects.bulk_create(
            [
                LiteStatement(
                    pyramid=run,
                    topic=topic,
                    reference=refs[k % 4],
                    external_id=f"q{k}",
                    batch=1 + k // 16,
                    text=f"Statement {k} about the harbour of town {t} and its reopening",
                )
                for k in range(32)
            ]
        )
    print(f"tasks: {create_tasks(run)}", flush=True)
    from django.db import connection

    if connection.vendor == "postgresql":  # what autovacuum does within a minute of a real run's set-up:
        with connection.cursor() as cursor:  # fresh tables' statistics (planned as 10 rows, not 1,500)
            cursor.execute("ANALYZE")
    return CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.JUDGING).token


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] * 1000 if values else float("nan")


def worker_address(number: int) -> str:
    """The loopback address a simulated worker connects from (all of 127.0.0.0/8 reaches the server)."""
    return f"127.0.{1 + number // 250}.{1 + number % 250}"


def address_session(address: str):
    """A requests session whose connections leave from ``address`` (a simulated client of its own)."""
    import requests
    from requests.adapters import HTTPAdapter

    class FromAddress(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, source_address=(address, 0), **kwargs)

    session = requests.Session()
    session.mount("http://", FromAddress())
    return session


def crowd_worker(base, token, name, address, tasks, timings, errors, codes, barrier, think, arrive_over, seed):
    import random

    import requests

    rng = random.Random(f"{seed}:{name}")

    session = address_session(address)
    url = f"{base}/lightweight/crowd/{token}/"

    def timed(kind, method, *args, **kwargs):
        start = time.perf_counter()
        try:
            response = session.request(method, *args, timeout=60, **kwargs)
        except requests.RequestException as error:
            errors.append(f"{kind}: {error}")
            return None
        timings[kind].append(time.perf_counter() - start)
        if response.status_code != 200:
            errors.append(f"{kind}: HTTP {response.status_code}")
            return None
        return response

    barrier.wait()
    time.sleep(
        rng.uniform(0, arrive_over)
    )  # arriving: all at once in the burst, spread over --arrive-over seconds else
    page = timed("load task page", "GET", url)
    if page is None:
        return
    page = timed(
        "give worker id", "POST", url, data={"worker": name, "csrfmiddlewaretoken": session.cookies.get("csrftoken")}
    )
    for n in range(tasks):
        if n:
            page = timed("load task page", "GET", url)
        if page is None:
            return
        task = TASK.search(page.text)
        if task is None:
            errors.append(
                "no task left"
                if "no more tasks" in page.text
                else "all tasks held by others"
                if "being judged right now" in page.text
                else "task page without a task"
            )
            return
        answers = {
            name_: ("present" if i % 3 else "absent")
            for i, name_ in enumerate(dict.fromkeys(ANSWER.findall(page.text)))
        }
        time.sleep(rng.uniform(0, 2 * think))  # reading the summary and the statements
        done = timed(
            "submit answers",
            "POST",
            url,
            data={"task": task.group(1), **answers, "csrfmiddlewaretoken": session.cookies.get("csrftoken")},
        )
        if done is None:
            return
        code = CODE.search(done.text)
        if code is None:
            errors.append("submission without a completion code")
            return
        codes.append((name, int(task.group(1)), code.group(1)))


def gunicorn_line() -> str:
    from pyramid_app import gunicorn_conf

    return f"gunicorn ({gunicorn_conf.workers} {gunicorn_conf.worker_class} workers x {gunicorn_conf.threads} threads)"


def database_pids(exclude=()) -> list[int]:
    """The PostgreSQL server processes serving this database (but not this connection's nor those in ``exclude``)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [pid for (pid,) in cursor.fetchall() if pid not in exclude]


class DatabaseCpu(threading.Thread):
    """The CPU seconds of this database's server processes, sampled every half second while the crowd
    works: a connection closed during the run (``DB_CONN_MAX_AGE``) takes its server process, and
    its CPU time, with it, so one reading at the end would miss it. ``exclude``: backends of the
    bench's own connections (its checks between requests are not the app's cost)."""

    def __init__(self, exclude=()):
        super().__init__(daemon=True)
        self.exclude = set(exclude)
        self.before = b.cpu_seconds(database_pids(self.exclude))
        self.latest: dict[int, float] = {}
        self.stopping = threading.Event()

    def run(self):
        from django.db import connection

        try:
            while not self.stopping.wait(0.5):
                self.latest.update(b.cpu_seconds(database_pids(self.exclude)))
        finally:
            connection.close()

    def stop(self) -> float:
        self.stopping.set()
        self.join()
        self.latest.update(b.cpu_seconds(database_pids(self.exclude)))
        return sum(after - self.before.get(pid, 0.0) for pid, after in self.latest.items())


class DatabaseWaits(threading.Thread):
    """What this database's server processes are doing, sampled every 20 ms while the crowd works
    (``--profile-app``): per sample, each backend's state and wait event (``pg_stat_activity``:
    ``CPU`` for an active backend waiting on nothing, ``Lock/transactionid`` for one waiting for
    another transaction's row lock, ``Lock/advisory`` for a client's hold lock, ``Client/ClientRead``
    for one waiting for the app's next statement), with the first words of its statement."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples = 0
        self.seen: dict[tuple[str, str], int] = defaultdict(int)
        self.stopping = threading.Event()

    def run(self):
        from django.db import connection

        try:
            with connection.cursor() as cursor:
                while not self.stopping.wait(0.02):
                    cursor.execute(
                        "SELECT state, wait_event_type, wait_event, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) "
                        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                        "AND backend_type = 'client backend'"
                    )
                    self.samples += 1
                    for state, kind, event, query in cursor.fetchall():
                        if state == "idle":
                            continue
                        what = "CPU" if state == "active" and kind is None else f"{kind}/{event}"
                        self.seen[(f"{what} ({state})", query if state == "active" else "")] += 1
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join()
        print(f"PostgreSQL backends not idle, per sample ({self.samples} samples, every 20 ms):")
        for (what, query), n in sorted(self.seen.items(), key=lambda item: -item[1])[:15]:
            print(f"  {n / max(1, self.samples):6.2f}  {what:38s} {query}")


def print_requests(log: Path, top: int = 18) -> None:
    """The app's cost per request kind (``bench/_app_profile.py``'s log), and with profiles their top functions."""
    import pstats
    import statistics

    rows = defaultdict(list)
    for line in log.read_text().splitlines():
        kind, cpu, wall, count, db, slowest, *sql = line.split()
        rows[kind.replace("_", " ")].append(
            (float(cpu), float(wall), int(count), float(db), float(slowest), " ".join(sql))
        )
    print(
        "app per request kind (handling thread's CPU; wall; statements; time in the database; its slowest statement):"
    )
    for kind, values in sorted(rows.items()):
        cpu, wall, count, db, slowest = (sorted(v[i] for v in values) for i in range(5))
        slow = max(values, key=lambda v: v[4])
        print(
            f"  {kind:9s} n={len(values):4d}  CPU mean {1000 * statistics.mean(cpu):5.1f} ms  wall p50 "
            f"{1000 * wall[len(wall) // 2]:6.0f} "
            f"p95 {1000 * wall[int(0.95 * (len(wall) - 1))]:6.0f} ms  statements {statistics.mean(count):4.1f}  "
            f"database mean {1000 * statistics.mean(db):6.1f} p95 {1000 * db[int(0.95 * (len(db) - 1))]:6.0f} ms; "
            f"slowest {1000 * slow[4]:.0f} ms: {slow[5]}"
        )
    for kind in sorted(rows):
        files = sorted(log.parent.glob(f"{kind.replace(' ', '_')}.*.prof"))
        if files:
            print(f"\n--- profile of {kind} (CPU clock, every process) ---")
            stats = pstats.Stats(*map(str, files))
            stats.sort_stats("cumulative").print_stats(top)


def wait_scores_current(timeout: float = 60) -> float | None:
    """Seconds until the stored scores are those of the run's last answer (None: not within ``timeout``)."""
    from annotation.lightweight.models import LightweightPyramid, LiteResult

    start = time.monotonic()
    while time.monotonic() - start < timeout:
        run = LightweightPyramid.objects.get(dataset__name="crowd-bench")
        if LiteResult.objects.filter(pyramid=run, revision=run.revision).exists():
            return time.monotonic() - start
        time.sleep(0.2)
    return None


def warm_up(base: str, token: str, requests_per_worker: int = 20) -> None:
    """A few anonymous page loads so every server worker has imported and compiled what the crowd page needs."""
    import requests

    for _ in range(requests_per_worker):
        requests.get(f"{base}/lightweight/crowd/{token}/", timeout=60).raise_for_status()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=3, help="tasks judged by each worker")
    parser.add_argument(
        "--topics",
        type=int,
        default=None,
        help="topics of the run (16 tasks of 5 judges each); default: a quarter more than the crowd's answers need",
    )
    parser.add_argument(
        "--think",
        type=float,
        default=20.0,
        help="mean seconds a worker spends on a task page before submitting (uniform 0..2x; 0 = a burst, all "
        "arriving at once)",
    )
    parser.add_argument(
        "--arrive-over",
        type=float,
        default=None,
        help="seconds over which the workers arrive (uniformly, seeded); default: --think",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the arrival and reading times")
    parser.add_argument(
        "--profile-app",
        metavar="DIR",
        help="measure each request in the app (CPU, statements, time in the database: bench/_app_profile.py) and "
        "sample PostgreSQL's wait events; with --cprofile also profile each request kind (CPU figures then inflated)",
    )
    parser.add_argument("--cprofile", action="store_true", help="with --profile-app: run each request under cProfile")
    args = parser.parse_args()
    arrive_over = args.think if args.arrive_over is None else args.arrive_over
    topics = args.topics or max(1, math.ceil(1.25 * args.workers * args.tasks / ANSWERS_PER_TOPIC))
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit(
            "set DATABASE_URL=postgres://... and REDIS_URL=redis://...: the crowd benchmark runs the production shape"
        )
    env = b.production_env(b.setup_django())  # the production limits: every simulated worker has its own address
    b.collect_static(env)
    from django.core.management import call_command
    from django.db.models import Count, F

    from annotation.lightweight.models import LiteAssignment, LiteReservation, LiteTask

    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    token = make_data(topics)
    b.close_db_connections()
    log_dir = b.make_log_dir()
    timings, errors, codes = defaultdict(list), [], []
    server_pids = []
    config = "pyramid_app/gunicorn_conf.py"
    if args.profile_app:
        profile_dir = Path(args.profile_app).resolve()
        profile_dir.mkdir(parents=True, exist_ok=True)
        for old in [*profile_dir.glob("*.prof"), *profile_dir.glob("requests.log")]:
            old.unlink()
        env = {**env, "BENCH_APP_PROFILE_DIR": str(profile_dir), "BENCH_APP_PROFILE": "1" if args.cprofile else "0"}
        config = "bench/_app_profile.py"
    with (
        b.celery_worker(env, log_dir, redis_url) as control,
        b.server("gunicorn", env, log_dir, server_pids, config) as base,
    ):
        warm_up(base, token)
        if args.profile_app:  # the warm-up's requests are not the crowd's
            (profile_dir / "requests.log").unlink(missing_ok=True)
            waits = DatabaseWaits()
            waits.start()
        b.wait_worker_idle(control)
        print(b.machine_line(gunicorn_line(), "Celery worker (2 processes) on Redis"))
        load_before = os.getloadavg()
        processes = {"app": b.process_tree(server_pids[0]), "Celery worker": b.process_tree(control.bench_pid)}
        cpu_before = {kind: b.cpu_seconds(pids) for kind, pids in processes.items()}
        database_cpu = DatabaseCpu()
        database_cpu.start()
        barrier = threading.Barrier(args.workers)
        threads = [
            threading.Thread(
                target=crowd_worker,
                args=(
                    base,
                    token,
                    f"W{i:04d}",
                    worker_address(i),
                    args.tasks,
                    timings,
                    errors,
                    codes,
                    barrier,
                    args.think,
                    arrive_over,
                    args.seed,
                ),
            )
            for i in range(args.workers)
        ]
        start, client_cpu = time.perf_counter(), time.process_time()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds, client_cpu = time.perf_counter() - start, time.process_time() - client_cpu
        scores_after = wait_scores_current()  # the recomputations the crowd caused are part of its cost
        b.wait_worker_idle(control)
        cpu = {
            kind: sum(after - cpu_before[kind].get(pid, 0.0) for pid, after in b.cpu_seconds(pids).items())
            for kind, pids in processes.items()
        }
        cpu["PostgreSQL"] = database_cpu.stop()
        if args.profile_app:
            waits.stop()
        load_after = os.getloadavg()
    stored = LiteAssignment.objects.filter(task__pyramid__dataset__name="crowd-bench")
    rows = {(a.worker_id, a.task_id): a.completion_code for a in stored}
    # Once: no (worker, task) stored twice, and every code a worker received is the stored one. A
    # stored answer whose response was lost (a reset connection) is not a second copy: counted apart.
    once = len(rows) == stored.count() and all(rows.get((w, t)) == c for w, t, c in codes)
    unacknowledged = len(rows.keys() - {(w, t) for w, t, _ in codes})
    requests_done = sum(len(v) for v in timings.values())
    pace = (
        "a burst: all at once, no reading time"
        if not args.think and not arrive_over
        else f"arriving over {arrive_over:g} s, reading {args.think:g} s on average"
    )
    print(
        f"{args.workers} workers x {args.tasks} tasks ({pace}, "
        f"{topics} topics, {topics * 16} tasks, seed {args.seed}) in {seconds:.1f} s, "
        f"{requests_done / seconds:.1f} requests/s"
    )
    print(
        "load average (1, 5, 15 min) before {:.1f} {:.1f} {:.1f}, after {:.1f} {:.1f} {:.1f}".format(
            *load_before, *load_after
        )
    )
    for kind, values in timings.items():
        print(
            f"  {kind:16s} n={len(values):4d}  p50 {percentile(values, 50):6.0f} ms  p95 "
            f"{percentile(values, 95):6.0f} ms  "
            f"p99 {percentile(values, 99):6.0f} ms"
        )
    print(f"errors: {len(errors)}" + (f" (first: {errors[:3]})" if errors else ""))
    print(
        f"submissions: {len(codes)} completion codes, {stored.count()} stored rows, each stored once: {once}"
        + (f"; {unacknowledged} stored whose response the worker did not receive" if unacknowledged else "")
    )
    tasks = LiteTask.objects.filter(pyramid__dataset__name="crowd-bench").annotate(n=Count("assignments"))
    print(
        f"tasks with more answers than judges: {tasks.filter(n__gt=F('pyramid__judges_per_task')).count()}; "
        f"complete: {tasks.filter(n__gte=F('pyramid__judges_per_task')).count()}, "
        f"started but not complete: {tasks.filter(n__gt=0, n__lt=F('pyramid__judges_per_task')).count()}; "
        f"holds left: {LiteReservation.objects.filter(task__pyramid__dataset__name='crowd-bench').count()}"
    )
    print(
        "scores: "
        + (
            f"current {scores_after:.1f} s after the last worker finished"
            if scores_after is not None
            else "NOT current 60 s after the last worker finished"
        )
    )
    per_task = 1000 / max(1, len(codes))
    print(
        "CPU seconds: " + ", ".join(f"{kind} {value:.1f}" for kind, value in cpu.items()) + f", client {client_cpu:.1f}"
    )
    print(
        f"CPU per task (page + submission; {requests_done} requests for {len(codes)} tasks): app "
        f"{cpu['app'] * per_task:.1f} ms + "
        f"PostgreSQL {cpu['PostgreSQL'] * per_task:.1f} ms = {(cpu['app'] + cpu['PostgreSQL']) * per_task:.1f} ms "
        f"(Celery worker {cpu['Celery worker'] * per_task:.1f} ms, client {client_cpu * per_task:.1f} ms)"
    )
    if args.profile_app:  # the server has exited: its profiles are written
        print_requests(profile_dir / "requests.log")
    b.cleanup(False, log_dir)


if __name__ == "__main__":
    main()
