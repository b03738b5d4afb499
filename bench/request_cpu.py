"""Benchmark: the CPU cost of one request of each endpoint class, in the production shape (prints numbers; not a test).

The production shape, as bench/api_load.py and bench/lightweight_crowd.py start it: gunicorn
(pyramid_app/gunicorn_conf.py) with DEBUG off (a random SECRET_KEY, collected static files, the
production limits: throttles, crowd holds per client), PostgreSQL, Redis and a real Celery worker.
Plain HTTP on loopback, so the HTTPS redirect and secure-only cookies are switched off.

Each endpoint class is measured on its own, in a window of that class only:

- add contributor      POST /api/contributors/        --clients editors, each its own pyramid and token
- full pyramid         GET  /api/pyramids/{id}/full/  the same editors
- match create         POST /api/matches/             the same users as peer annotators (the annotator's save),
                                                        each in its own annotation of a peer of its topic
- crowd judging page   GET  /lightweight/crowd/<token>/   --crowd workers, each from its own 127.0.x.y
- crowd submit         POST the same page (every statement answered, CSRF included)

One method for every CPU figure: the user + system CPU seconds (/proc/<pid>/stat) each process
accrues during the window: the gunicorn master and workers ("app"), the Celery worker's processes
("worker"), this database's PostgreSQL backends (pg_stat_activity, sampled every half second so a
closed connection's CPU is not lost; the bench's own connections left out) and the Redis server
(the whole server: shared with anything else using it), divided by the window's requests. A write
window closes only when the work it caused is done (stored scores and agreement current, the
worker idle: its delayed dashboard recomputation included), so the worker's CPU is counted; the
crowd's submit windows likewise wait for the run's scores. The crowd alternates: all workers
submit (one window), then all load their next task (another), --rounds times.

Printed: per class, requests, CPU ms per request of each process group and in total, requests/s
and p50/p95 latency at the concurrency used, and the goals of issue 22 beside them; then the
worker's CPU split by task (each task's own CPU, noted by the worker itself: ``_task_cpu.py``) and
Celery's own (the rest). ``--profile-worker DIR`` runs every task under cProfile and prints each
task kind's top functions. CPU per
request is the robust figure on a shared machine; requests/s and latency depend on what else runs.

``--breakdown N`` replaces the windows by where the CPU goes: on the same data, with the Celery
worker running, ``bench/_breakdown.py`` hands N requests of each class, one at a time, to Django's
WSGI handler in a process of production settings, and prints the stack's floor (views that do
nothing, ``bench/_floor_urls.py``), each class's CPU, statements and PostgreSQL's own CPU, and
its CPU by phase.

    DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/request_cpu.py [--clients 20] [--window 20]
        [--crowd 50] [--rounds 3]
    DATABASE_URL=postgres://... REDIS_URL=redis://... python bench/request_cpu.py --breakdown 200 --topics 20
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (shared plumbing: database, gunicorn subprocess, Celery worker)
import _task_cpu as task_cpu  # noqa: E402  (the worker's CPU per task)
import api_load  # noqa: E402  (the synthetic DUC-sized pyramids and their editors)
import lightweight_crowd as crowd  # noqa: E402  (the crowd's run, its addresses, the database's CPU)

# Issue 22's goals per request (ms of CPU).
GOALS = {
    "add contributor": "app <= 8, worker <= 3, db <= 2",
    "full pyramid": "total <= 13 (150 req/s on 2 cores)",
    "match create": "(as add contributor)",
    "crowd page": "app + db <= 5",
    "crowd submit": "app + db <= 5",
}


def redis_pid(url: str) -> int | None:
    import redis

    return redis.Redis.from_url(url).info("server").get("process_id")


def own_backends() -> set[int]:
    """This process's database backend (its checks between windows are not the app's cost)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return {cursor.fetchone()[0]}


class Meter:
    """CPU seconds of the process groups over one window (see the module's docstring), and the
    worker's split by task (``bench/_task_cpu.py``'s log: CPU seconds and runs per task name)."""

    def __init__(self, server_pid: int, worker_pid: int, redis: int | None, task_log: Path):
        self.groups = {
            "app": b.process_tree(server_pid),
            "worker": b.process_tree(worker_pid),
            "redis": [redis] if redis else [],
        }
        self.task_log, self.offset = task_log, 0

    def start(self):
        self.before = {kind: b.cpu_seconds(pids) for kind, pids in self.groups.items()}
        self.offset = task_cpu.read(self.task_log, self.offset)[1]
        self.database = crowd.DatabaseCpu(exclude=own_backends())
        self.database.start()

    def stop(self) -> tuple[dict[str, float], dict[str, list]]:
        used = {
            kind: sum(after - self.before[kind].get(pid, 0.0) for pid, after in b.cpu_seconds(pids).items())
            for kind, pids in self.groups.items()
        }
        used["db"] = self.database.stop()
        rows, self.offset = task_cpu.read(self.task_log, self.offset)
        tasks: dict[str, list] = defaultdict(lambda: [0, 0.0])
        for name, cpu, _, _ in rows:
            tasks[name][0] += 1
            tasks[name][1] += cpu
        return used, dict(tasks)


def concurrently(actors, action) -> tuple[list[float], list[str], float]:
    """Run ``action(actor, timings, errors)`` on a thread per actor, all released together;
    returns the successful requests' seconds, the errors and the wall-clock seconds."""
    timings, errors = [], []
    barrier = threading.Barrier(len(actors) + 1)

    def run(actor):
        barrier.wait()
        try:
            action(actor, timings, errors)
        except Exception as error:  # counted, not raised: the other threads go on
            errors.append(repr(error))

    threads = [threading.Thread(target=run, args=(actor,), daemon=True) for actor in actors]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return timings, errors, time.perf_counter() - start


def timed(session, method: str, url: str, expected: int, timings: list, errors: list, **kwargs):
    start = time.perf_counter()
    response = session.request(method, url, timeout=120, **kwargs)
    if response.status_code != expected:
        errors.append(f"{method} {response.status_code}")
        return None
    timings.append(time.perf_counter() - start)
    return response


class Editor:
    """An API client editing its own pyramid: its token, ETag and the contributors it may still add."""

    def __init__(self, base: str, token: str, pyramid_id: int, seed: int, session=None):
        import random

        import requests

        self.session = session or requests.Session()  # or bench/_breakdown.py's in-process one
        self.session.headers["Authorization"] = f"Token {token}"
        self.base, self.pyramid_id, self.rng = base, pyramid_id, random.Random(seed)
        response = self.session.get(f"{base}/api/pyramids/{pyramid_id}/full/", timeout=120)
        response.raise_for_status()
        self.etag = response.headers["ETag"]
        targets = api_load.Client._targets(self, response.json())
        self.rng.shuffle(targets)
        # One contributor per (SCU, reference): a second would be refused.
        self.targets = list({(scu, ref): (scu, ref, start, end) for scu, ref, start, end in targets}.values())

    def add_contributors(self, deadline: float, timings: list, errors: list, at_least: int = 0) -> None:
        done = 0
        while self.targets and (time.monotonic() < deadline or done < at_least):
            done += 1
            scu, reference, start, end = self.targets.pop()
            response = timed(
                self.session,
                "POST",
                f"{self.base}/api/contributors/",
                201,
                timings,
                errors,
                headers={"If-Match": self.etag},
                json={"scu": scu, "reference": reference, "parts": [{"start": start, "end": end}]},
            )
            if response is not None:
                self.etag = response.headers.get("ETag", self.etag)

    def read_full(self, deadline: float, timings: list, errors: list) -> None:
        while time.monotonic() < deadline:
            timed(self.session, "GET", f"{self.base}/api/pyramids/{self.pyramid_id}/full/", 200, timings, errors)

    def annotate(self, annotation_id: int) -> None:
        """Also a peer annotator: its own annotation of a peer of the topic, matched span by span to the SCUs."""
        self.session.close()  # idle since its first read (past gunicorn's keep-alive): connect anew
        response = self.session.get(f"{self.base}/api/annotations/{annotation_id}/full/", timeout=120)
        response.raise_for_status()
        document = response.json()
        self.annotation_id, self.annotation_etag = annotation_id, response.headers["ETag"]
        self.scus = [scu["id"] for scu in document["pyramid"]["scus"]]
        self.peer_spans = api_load.chunks(document["peer"]["text"], self.rng)

    def add_matches(self, deadline: float, timings: list, errors: list, at_least: int = 0) -> None:
        done = 0
        while time.monotonic() < deadline or done < at_least:
            done += 1
            start, end = self.rng.choice(self.peer_spans)
            response = timed(
                self.session,
                "POST",
                f"{self.base}/api/matches/",
                201,
                timings,
                errors,
                headers={"If-Match": self.annotation_etag},
                json={
                    "annotation": self.annotation_id,
                    "scu": self.rng.choice(self.scus),
                    "parts": [{"start": start, "end": end}],
                },
            )
            if response is not None:
                self.annotation_etag = response.headers.get("ETag", self.annotation_etag)


class CrowdWorker:
    """A crowd worker with its own address and session, holding the task its last page showed."""

    def __init__(self, url: str, number: int, session=None):
        self.url, self.name = url, f"W{number:04d}"
        self.session = session or crowd.address_session(crowd.worker_address(number))
        self.page = None

    def csrf(self) -> str:
        return self.session.cookies.get("csrftoken")

    def arrive(self, timings, errors) -> None:
        if timed(self.session, "GET", self.url, 200, timings, errors) is not None:
            self.page = timed(
                self.session,
                "POST",
                self.url,
                200,
                timings,
                errors,
                data={"worker": self.name, "csrfmiddlewaretoken": self.csrf()},
            )

    def load(self, timings, errors) -> None:
        self.page = timed(self.session, "GET", self.url, 200, timings, errors)

    def submit(self, timings, errors) -> None:
        task = crowd.TASK.search(self.page.text) if self.page is not None else None
        if task is None:
            errors.append("no task on the page")
            return
        answers = {
            n: ("present" if i % 3 else "absent")
            for i, n in enumerate(dict.fromkeys(crowd.ANSWER.findall(self.page.text)))
        }
        done = timed(
            self.session,
            "POST",
            self.url,
            200,
            timings,
            errors,
            data={"task": task.group(1), **answers, "csrfmiddlewaretoken": self.csrf()},
        )
        if done is not None and crowd.CODE.search(done.text) is None:
            errors.append("submission without a completion code")


def print_task_table(tasks: dict, count: int, worker_cpu: float, unit: str) -> None:
    """The worker's CPU by task ({name: (runs, CPU seconds)}) per ``unit`` (``count`` of them), then
    Celery's own: the rest of ``worker_cpu``, the worker's processes' CPU outside any task."""
    print(f"| task | runs | ms per {unit} | ms per run |")
    print("|---|---:|---:|---:|")
    for task, (runs, cpu) in sorted(tasks.items(), key=lambda kv: -kv[1][1]):
        print(f"| {task} | {runs} | {cpu * 1000 / max(1, count):.2f} | {cpu * 1000 / runs:.1f} |")
    rest = worker_cpu - sum(cpu for _, cpu in tasks.values())
    print(f"| Celery's own (outside tasks) | | {rest * 1000 / max(1, count):.2f} | |")


def synthetic_pyramids(env: dict, topics: int, scus: int, peers: int) -> list:
    """A fresh database of ``topics`` synthetic topics (``api_load.synthetic_dataset``) with the static
    files collected for the production shape; their pyramids by topic (each with its SCU count ``n``)."""
    from django.core.management import call_command
    from django.db.models import Count

    from annotation.pyramids.models import Pyramid

    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    b.collect_static(env)
    api_load.synthetic_dataset(topics, scus, peers)
    return list(Pyramid.objects.annotate(n=Count("scus")).select_related("topic").order_by("topic__external_id"))


def own_annotations(pyramids) -> list[int]:
    """Each editor (the pyramid's creator) also annotates a peer of its topic: an assignment to
    annotate peers and its own, new annotation of the topic's first peer; their ids, in order."""
    from annotation.corpus.models import Assignment
    from annotation.peers.models import PeerAnnotation
    from annotation.pyramids.models import Pyramid

    ids = []
    for pyramid in pyramids:
        creator = (
            Pyramid.objects.filter(pk=pyramid.pk).values_list("creator_id", flat=True).get()
        )  # set by editor_tokens
        Assignment.objects.create(topic=pyramid.topic, annotator_id=creator, task=Assignment.Task.ANNOTATE_PEERS)
        peer = pyramid.topic.peersummarys.order_by("external_id").first()
        ids.append(PeerAnnotation.objects.create(peer=peer, pyramid=pyramid, annotator_id=creator).pk)
    return ids


def scores_current(timeout: float = 120) -> None:
    """Wait until every stored score and agreement is current (what the writes made stale is done)."""
    from annotation.peers.recompute import stale_work

    deadline = time.monotonic() + timeout
    while any(stale_work()):
        if time.monotonic() > deadline:
            sys.exit(f"scores still stale {timeout:.0f} s after the window")
        time.sleep(0.3)


def print_worker_split(merged: dict, by_task: dict) -> None:
    """The worker's CPU per request split by task (runs, ms per request, ms per run); "Celery's
    own" is the rest of the worker's processes' CPU (consumer, countdowns, remote control)."""
    for name, tasks in by_task.items():
        count, used = merged[name][0], merged[name][1]
        if not used["worker"]:
            continue
        print(f"\nworker CPU of the {name} windows, by task ({count} requests)")
        print_task_table(tasks, count, used["worker"], "request")
        print(f"| worker in all | | {used['worker'] * 1000 / max(1, count):.2f} | |")


def print_profiles(directory: Path, top: int = 25) -> None:
    """Each task kind's profile (every process's merged), its top functions by cumulative time."""
    import io
    import pstats

    files: dict[str, list[str]] = defaultdict(list)
    for path in sorted(directory.glob("*.prof")):
        files[path.name.rsplit(".", 2)[0]].append(str(path))
    for task, paths in sorted(files.items()):
        out = io.StringIO()
        stats = pstats.Stats(*paths, stream=out)
        stats.sort_stats("cumulative").print_stats(top)
        print(f"\n--- profile of {task} (all runs, every pool process) ---")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clients", type=int, default=20, help="concurrent API editors, one pyramid each (default: %(default)s)"
    )
    parser.add_argument("--window", type=float, default=20.0, help="seconds of each API window (default: %(default)s)")
    parser.add_argument("--scus", type=int, default=120, help="SCUs per synthetic pyramid (default: %(default)s)")
    parser.add_argument(
        "--peers", type=int, default=22, help="peer annotations per synthetic pyramid (default: %(default)s)"
    )
    parser.add_argument(
        "--crowd",
        type=int,
        default=50,
        help="concurrent crowd workers, each its own address (default: %(default)s; 0: no crowd windows)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="crowd windows of each kind (default: %(default)s)")
    parser.add_argument(
        "--topics", type=int, default=10, help="topics of the crowd's run (16 tasks each; default: %(default)s)"
    )
    parser.add_argument(
        "--profile-worker",
        metavar="DIR",
        help="run each worker task under cProfile and print the top functions per task kind (the profiles are "
        "left in DIR; CPU figures are then inflated by the profiler)",
    )
    parser.add_argument(
        "--breakdown",
        type=int,
        metavar="N",
        help="instead of the windows: the stack's floor and each class's CPU by phase, N requests each, "
        "in-process (bench/_breakdown.py; --crowd workers judge)",
    )
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        sys.exit("set DATABASE_URL=postgres://... and REDIS_URL=redis://...: the bench measures the production shape")
    judged = 2 * (3 * args.breakdown + 20) + args.crowd if args.breakdown else args.crowd * (args.rounds + 1)
    if args.breakdown and not args.crowd:
        sys.exit("--breakdown needs crowd workers (--crowd)")
    if judged > args.topics * 16 * 5 * 0.9:
        sys.exit("not enough crowd tasks: raise --topics or lower --crowd / --rounds")
    env = b.production_env(b.setup_django())
    from annotation.lightweight.models import LiteAssignment

    pyramids = synthetic_pyramids(env, args.clients, args.scus, args.peers)
    tokens = api_load.editor_tokens(pyramids)
    annotations = own_annotations(pyramids)
    crowd_token = crowd.make_data(args.topics) if args.crowd else None
    b.close_db_connections()
    log_dir = b.make_log_dir()
    results = []  # (class, requests, (cpu by group, cpu by task), seconds, timings, errors)
    server_pids = []
    profile_dir = Path(args.profile_worker).resolve() if args.profile_worker else None
    if profile_dir:
        profile_dir.mkdir(parents=True, exist_ok=True)
    task_log = log_dir / "task-cpu.log"
    if args.breakdown:
        with b.celery_worker(env, log_dir, redis_url, task_log):
            print(
                b.machine_line(
                    "none (Django's WSGI handler in-process), DEBUG off", "Celery worker (2 processes) on Redis"
                ),
                flush=True,
            )
            given = {
                "requests": args.breakdown,
                "tokens": tokens,
                "pyramids": [p.pk for p in pyramids],
                "annotations": annotations,
                "crowd": crowd_token,
                "workers": args.crowd,
            }
            subprocess.run(
                [sys.executable, str(Path(__file__).with_name("_breakdown.py"))],
                cwd=b.REPO,
                check=True,
                env={**env, "BENCH_BREAKDOWN": json.dumps(given)},
            )
        b.cleanup(False, log_dir)
        return
    with (
        b.celery_worker(env, log_dir, redis_url, task_log, profile_dir) as control,
        b.server("gunicorn", env, log_dir, server_pids) as base,
    ):
        if crowd_token:
            crowd.warm_up(base, crowd_token)
        editors = [
            Editor(base, token, p.pk, seed) for seed, (token, p) in enumerate(zip(tokens, pyramids, strict=True))
        ]
        for editor, annotation_id in zip(editors, annotations, strict=True):
            editor.annotate(annotation_id)
        b.wait_worker_idle(control)
        meter = Meter(server_pids[0], control.bench_pid, redis_pid(redis_url), task_log)
        print(b.machine_line(crowd.gunicorn_line() + ", DEBUG off", "Celery worker (2 processes) on Redis"), flush=True)

        def window(name, actors, action, settle=None):
            for actor in (
                actors
            ):  # idle since the last window (past gunicorn's keep-alive): connect anew, as a returning client does
                actor.session.close()
            meter.start()
            timings, errors, seconds = concurrently(actors, action)
            if settle:
                settle()
            used = meter.stop()
            results.append((name, len(timings), used, seconds, timings, errors))
            print(f"  {name}: {len(timings)} requests in {seconds:.1f} s, {len(errors)} errors", flush=True)

        def drained():
            time.sleep(1)  # the app's runner thread publishes after the answer
            scores_current()
            time.sleep(1)  # the worker's own publications (agreement -> dashboards)
            b.wait_worker_idle(control)

        concurrently(
            editors, lambda e, t, x: e.add_contributors(0, t, x, at_least=1)
        )  # warm-up: every server process has written
        drained()
        deadline = lambda: time.monotonic() + args.window  # noqa: E731  (a one-line helper of this test)
        end = deadline()
        window("add contributor", editors, lambda e, t, x: e.add_contributors(end, t, x), settle=drained)
        end = deadline()
        window("full pyramid", editors, lambda e, t, x: e.read_full(end, t, x))
        concurrently(editors, lambda e, t, x: e.add_matches(0, t, x, at_least=1))  # warm-up
        drained()
        end = deadline()
        window("match create", editors, lambda e, t, x: e.add_matches(end, t, x), settle=drained)

        url = f"{base}/lightweight/crowd/{crowd_token}/"
        workers = [CrowdWorker(url, i) for i in range(args.crowd)]
        if workers:
            concurrently(workers, lambda w, t, x: w.arrive(t, x))  # not measured: each worker holds its first task

        def crowd_drained():
            if crowd.wait_scores_current(120) is None:
                sys.exit("the crowd run's scores were not current 120 s after the window")
            b.wait_worker_idle(control)

        for _ in range(args.rounds if workers else 0):
            window("crowd submit", workers, lambda w, t, x: w.submit(t, x), settle=crowd_drained)
            window("crowd page", workers, lambda w, t, x: w.load(t, x))
    merged = {}
    by_task: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
    for name, count, (used, tasks), seconds, timings, errors in results:
        m = merged.setdefault(name, [0, defaultdict(float), 0.0, [], []])
        m[0] += count
        for kind, value in used.items():
            m[1][kind] += value
        for task, (runs, cpu) in tasks.items():
            by_task[name][task][0] += runs
            by_task[name][task][1] += cpu
        m[2] += seconds
        m[3] += timings
        m[4] += errors
    print(
        f"\n{args.clients} API editors (synthetic pyramids: {args.scus} SCUs, {args.peers} peers each), "
        f"{args.crowd} crowd workers x {args.rounds} rounds; CPU in ms per request"
    )
    print(
        "| endpoint class | requests | app | worker | database | Redis | total | requests/s | p50 ms | p95 "
        "ms | concurrency | errors | goal (issue 22) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in [
        n for n in ("add contributor", "full pyramid", "match create", "crowd page", "crowd submit") if n in merged
    ]:
        count, used, seconds, timings, errors = merged[name]
        per = {kind: value * 1000 / max(1, count) for kind, value in used.items()}
        concurrency = args.clients if name in ("add contributor", "full pyramid", "match create") else args.crowd
        print(
            f"| {name} | {count} | {per['app']:.1f} | {per['worker']:.1f} | {per['db']:.1f} | {per['redis']:.1f} | "
            f"{sum(per.values()):.1f} | {count / seconds:.1f} | {api_load.percentile(timings, 50) * 1000:.0f} | "
            f"{api_load.percentile(timings, 95) * 1000:.0f} | {concurrency} | {len(errors)} | {GOALS[name]} |"
        )
    print_worker_split(merged, by_task)
    if profile_dir:
        print_profiles(profile_dir)
    stored = LiteAssignment.objects.filter(task__pyramid__dataset__name="crowd-bench")
    if workers:
        print(
            f"crowd answers stored: {stored.count()} "
            f"({stored.values('worker_id', 'task_id').distinct().count()} distinct worker-task pairs)"
        )
    errors = [e for m in merged.values() for e in m[4]]
    if errors:
        print(f"first errors: {errors[:5]}")
    if os.environ.get("BENCH_KEEP_TASK_LOG"):
        import shutil

        shutil.copy(task_log, os.environ["BENCH_KEEP_TASK_LOG"])
    b.cleanup(False, log_dir)


if __name__ == "__main__":
    main()
