"""Benchmark: concurrent REST API clients, each editing its own DUC-sized pyramid (prints numbers; not a test).

The app runs under gunicorn on 127.0.0.1 (pyramid_app/gunicorn_conf.py, as docker-compose), on PostgreSQL when
DATABASE_URL is set (flushed first, as the other benchmarks do) or a fresh SQLite file otherwise.
Data: ../shared/data/duc2006 imported when present (20 topics: 4 references, 100+ SCUs and 22+
peer annotations each), else a synthetic dataset of the same shape, made up here (--synthetic).

Each of --clients threads logs in with its own token as the annotator who builds one pyramid (a
different one per client: build_pyramid assignment, status in progress) and, until --duration
seconds have passed or it has done --iterations rounds, repeats one round:

- fetch full pyramid   GET  /api/pyramids/{id}/full/
- add contributor      POST /api/contributors/  {scu, reference, parts}  (If-Match: the ETag)
- export DUCView       GET  /api/pyramids/{id}/export/?format=ducview
- remove contributor   DELETE /api/contributors/{id}/  (If-Match), so the pyramid keeps its size

Every write recomputes the scores of the peer annotations against the pyramid, never in the
request: on the server's background thread without REDIS_URL, on a Celery worker subprocess with it. Printed:
p50/p95/p99 per
operation and requests per second over the measured window (after one unmeasured warm-up round
per client). Loopback only; it stops by itself.

    python bench/api_load.py [--clients 20] [--duration 30] [--iterations 500] [--synthetic] [--data DIR]
"""

import argparse
import os
import random
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (shared plumbing: fresh database, gunicorn subprocess, Celery worker)

OPERATIONS = ("fetch full pyramid", "add contributor", "export DUCView", "remove contributor")

# --- A synthetic DUC-sized dataset (original text) ----------------------------------------------

SUBJECTS = [
    "The harbour council",
    "A regional ferry company",
    "The new river bridge",
    "Local fishermen",
    "The town museum",
    "Volunteer divers",
    "The weather service",
    "A group of engineers",
    "The mayor's office",
    "Several shop owners",
    "The coastal railway",
    "Night-time visitors",
    "The lighthouse trust",
    "A school choir",
    "The water utility",
]
VERBS = [
    "announced",
    "postponed",
    "repaired",
    "celebrated",
    "criticised",
    "inspected",
    "funded",
    "reopened",
    "measured",
    "questioned",
    "doubled",
    "rebuilt",
    "documented",
    "welcomed",
    "restricted",
]
OBJECTS = [
    "the northern pier",
    "a storm warning system",
    "the summer festival",
    "the old salt warehouse",
    "a new cycle path",
    "the tidal barrier",
    "the harbour lights",
    "a ferry timetable",
    "the fish market roof",
    "two flooded tunnels",
    "the seawall budget",
    "a rescue boat",
    "the island footpath",
    "a survey of the dunes",
    "the ticket prices",
]
TAILS = [
    "after weeks of debate",
    "despite heavy rain",
    "for the first time in a decade",
    "at a cost of four million",
    "before the autumn tides",
    "with help from the university",
    "on Tuesday morning",
    "to the surprise of residents",
    "following a public vote",
    "while the road stayed closed",
]


def sentence(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}."


def text_of(rng: random.Random, words: int) -> str:
    sentences = []
    while sum(len(s.split()) for s in sentences) < words:
        sentences.append(sentence(rng))
    return " ".join(sentences)


def chunks(text: str, rng: random.Random) -> list[tuple[int, int]]:
    """Non-overlapping spans of 2-5 whole words, in text order."""
    words = [m.span() for m in re.finditer(r"\S+", text)]
    spans, i = [], 0
    while i < len(words):
        n = rng.randint(2, 5)
        group = words[i : i + n]
        spans.append((group[0][0], group[-1][1]))
        i += n
    return spans


def synthetic_dataset(topics: int, scus: int, peers: int, seed: int = 2026) -> None:
    """``topics`` topics like DUC's: 4 references of ~300 words, a pyramid of ``scus`` SCUs (weights 1-4),
    ``peers`` peers each annotated once; all text made up by ``sentence``."""
    from django.contrib.auth.models import User

    from annotation.corpus.models import Dataset, PeerSummary, ReferenceSummary, Topic
    from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
    from annotation.peers.recompute import recompute_annotations, recompute_topics
    from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

    rng = random.Random(seed)
    dataset = Dataset.objects.create(name="bench-synthetic")
    annotator = User.objects.create_user("bench-annotator")
    annotation_ids, topic_ids = [], []
    for t in range(topics):
        topic = Topic.objects.create(dataset=dataset, external_id=f"S{t + 1:04d}")
        topic_ids.append(topic.pk)
        refs = [
            ReferenceSummary.objects.create(topic=topic, external_id=letter, text=text_of(rng, 300))
            for letter in "ABCD"
        ]
        free = {r.pk: chunks(r.text, rng) for r in refs}
        pyramid = Pyramid.objects.create(topic=topic, status=Pyramid.Status.DONE, source="synthetic")
        pyramid.references.set(refs)
        made, plan = [], []
        for uid in range(1, scus + 1):
            weight = rng.choices([1, 2, 3, 4], weights=[40, 27, 20, 13])[0]
            available = [r for r in refs if free[r.pk]]
            chosen = rng.sample(available, min(weight, len(available)))
            if not chosen:
                break
            made.append(SCU(pyramid=pyramid, uid=uid, label=f"Content unit {uid}"))
            plan.append([(r, free[r.pk].pop(rng.randrange(len(free[r.pk])))) for r in chosen])
        SCU.objects.bulk_create(made)
        Pyramid.objects.filter(pk=pyramid.pk).update(last_uid=len(made))
        contributors = [
            Contributor(scu=scu, reference=ref) for scu, spans in zip(made, plan, strict=True) for ref, _ in spans
        ]
        Contributor.objects.bulk_create(contributors)
        spans = [span for spans_of in plan for span in spans_of]
        ContributorPart.objects.bulk_create(
            ContributorPart(contributor=c, reference=ref, start=start, end=end)
            for c, (ref, (start, end)) in zip(contributors, spans, strict=True)
        )
        for p in range(peers):
            peer = PeerSummary.objects.create(topic=topic, external_id=str(p + 1), text=text_of(rng, 250))
            annotation = PeerAnnotation.objects.create(
                peer=peer, pyramid=pyramid, annotator=annotator, status=PeerAnnotation.Status.DONE
            )
            annotation_ids.append(annotation.pk)
            peer_spans = chunks(peer.text, rng)
            picked = rng.sample(peer_spans, min(len(peer_spans), rng.randint(8, 14)))
            matches = [
                PeerMatch(annotation=annotation, scu=rng.choice(made) if i else None) for i in range(len(picked))
            ]
            PeerMatch.objects.bulk_create(matches)
            PeerMatchPart.objects.bulk_create(
                PeerMatchPart(match=m, start=s, end=e) for m, (s, e) in zip(matches, picked, strict=True)
            )
    recompute_annotations(annotation_ids)  # bulk writes bypass scoring on save: store the scores once
    recompute_topics(topic_ids)


# --- The clients ------------------------------------------------------------------------------


class Client(threading.Thread):
    def __init__(self, base: str, token: str, pyramid_id: int, seed: int, start: threading.Barrier, args):
        super().__init__(daemon=True)
        import requests

        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Token {token}"
        self.base, self.pyramid_id, self.rng, self.start_line, self.args = (
            base,
            pyramid_id,
            random.Random(seed),
            start,
            args,
        )
        self.times = defaultdict(list)  # operation -> seconds
        self.errors = defaultdict(int)  # (operation, status) -> count
        self.etag = None
        self.rounds = 0
        self.crash = None

    def _call(self, operation: str, method: str, path: str, expected: int, measured: bool, **kwargs):
        headers = kwargs.pop("headers", {})
        if method in ("POST", "DELETE") and self.etag:
            headers["If-Match"] = self.etag
        start = time.perf_counter()
        response = self.session.request(method, self.base + path, headers=headers, timeout=120, **kwargs)
        elapsed = time.perf_counter() - start
        if response.status_code != expected:
            self.errors[(operation, response.status_code)] += 1
            if response.status_code in (409, 412, 428):
                self._refresh()
            return None
        if measured:
            self.times[operation].append(elapsed)
        self.etag = response.headers.get("ETag", self.etag)
        return response

    def _refresh(self):
        response = self.session.get(f"{self.base}/api/pyramids/{self.pyramid_id}/full/", timeout=120)
        if response.ok:
            self.etag = response.headers.get("ETag") or f'"{response.json()["revision"]}"'

    def _targets(self, document: dict) -> list[tuple[int, int, int, int]]:
        """(SCU, reference, start, end): a span of 2-4 words of a reference the SCU has no contributor from."""
        texts = {r["id"]: r["text"] for r in document["references"]}
        words = {rid: [m.span() for m in re.finditer(r"\S+", text)] for rid, text in texts.items()}
        targets = []
        for scu in document["scus"]:
            used = {c["reference"] for c in scu["contributors"]}
            for rid in texts.keys() - used:
                i = self.rng.randrange(max(1, len(words[rid]) - 4))
                group = words[rid][i : i + self.rng.randint(2, 4)]
                if group:
                    targets.append((scu["id"], rid, group[0][0], group[-1][1]))
        return targets

    def round(self, targets, measured: bool) -> None:
        pid = self.pyramid_id
        full = self._call("fetch full pyramid", "GET", f"/api/pyramids/{pid}/full/", 200, measured)
        if full is not None and not self.etag:
            self.etag = f'"{full.json()["revision"]}"'
        scu, reference, start, end = self.rng.choice(targets)
        added = self._call(
            "add contributor",
            "POST",
            "/api/contributors/",
            201,
            measured,
            json={"scu": scu, "reference": reference, "parts": [{"start": start, "end": end}]},
        )
        self._call("export DUCView", "GET", f"/api/pyramids/{pid}/export/?format=ducview", 200, measured)
        if added is not None:
            self._call("remove contributor", "DELETE", f"/api/contributors/{added.json()['id']}/", 204, measured)

    def run(self):
        try:
            response = self.session.get(f"{self.base}/api/pyramids/{self.pyramid_id}/full/", timeout=120)
            response.raise_for_status()
            self.etag = response.headers.get("ETag") or f'"{response.json()["revision"]}"'
            targets = self._targets(response.json())
            if not targets:
                raise RuntimeError(
                    f"pyramid {self.pyramid_id}: every SCU already has a contributor from every reference"
                )
            self.round(targets, measured=False)  # warm-up
        except Exception as error:  # reported by the main thread
            self.crash = error
        self.start_line.wait()
        if self.crash:
            return
        deadline = time.monotonic() + self.args.duration
        try:
            while self.rounds < self.args.iterations and time.monotonic() < deadline:
                self.round(targets, measured=True)
                self.rounds += 1
        except Exception as error:
            self.crash = error


def editor_tokens(pyramids) -> list[str]:
    """One API token per pyramid, of a new user assigned to build it (the pyramid put in progress)."""
    from rest_framework.authtoken.models import Token

    from annotation.corpus.models import Assignment
    from annotation.pyramids.models import Pyramid

    tokens = []
    for i, pyramid in enumerate(pyramids):
        user = b.create_user(f"bench-client-{i + 1:02d}")
        Assignment.objects.create(topic=pyramid.topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
        Pyramid.objects.filter(pk=pyramid.pk).update(creator=user, status=Pyramid.Status.IN_PROGRESS)
        tokens.append(Token.objects.create(user=user).key)
    return tokens


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of non-empty ``values``."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--clients", type=int, default=20, help="concurrent clients, one pyramid each (default: %(default)s)"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of measured load (default: %(default)s)")
    parser.add_argument(
        "--iterations", type=int, default=500, help="at most this many rounds per client (default: %(default)s)"
    )
    parser.add_argument(
        "--data", default=str(b.DUC2006), help="DUC 2006 pyramids to import when present (default: %(default)s)"
    )
    parser.add_argument("--synthetic", action="store_true", help="made-up DUC-sized data even when --data exists")
    parser.add_argument("--scus", type=int, default=120, help="SCUs per synthetic pyramid (default: %(default)s)")
    parser.add_argument(
        "--peers", type=int, default=22, help="peer annotations per synthetic pyramid (default: %(default)s)"
    )
    parser.add_argument("--keep-db", action="store_true", help="leave the temporary SQLite file (its path is printed)")
    args = parser.parse_args()
    if args.clients < 1 or args.duration <= 0 or args.iterations < 1:
        sys.exit("--clients, --duration and --iterations must be positive")
    redis_url = os.environ.get("REDIS_URL", "")
    child_env = b.setup_django()
    child_env.setdefault("LOG_LEVEL", "WARNING")

    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from annotation.peers.models import PeerAnnotation
    from annotation.pyramids.models import Contributor, Pyramid

    synthetic = args.synthetic or not Path(args.data).is_dir()
    if synthetic:
        if connection.vendor == "postgresql":
            call_command("flush", interactive=False, verbosity=0)
        call_command("migrate", verbosity=0)
        start = time.perf_counter()
        synthetic_dataset(args.clients, args.scus, args.peers)
        print(f"synthetic data: {args.clients} topics in {time.perf_counter() - start:.1f} s", flush=True)
    else:
        b.fresh_database_with_duc2006(args.data)
    pyramids = list(
        Pyramid.objects.annotate(n=Count("scus", distinct=True), peers=Count("annotations", distinct=True))
        .select_related("topic")
        .order_by("topic__external_id", "id")
    )
    if len(pyramids) < args.clients:
        sys.exit(f"{len(pyramids)} pyramids for {args.clients} clients: use --clients {len(pyramids)} or --synthetic")
    pyramids = pyramids[: args.clients]
    tokens = editor_tokens(pyramids)
    contributors_before = {p.pk: Contributor.objects.filter(scu__pyramid=p).count() for p in pyramids}
    scus = [p.n for p in pyramids]
    print(
        f"{len(pyramids)} pyramids ({'synthetic' if synthetic else args.data}): {min(scus)}-{max(scus)} SCUs, "
        f"{sum(p.peers for p in pyramids)} peer annotations against them ({PeerAnnotation.objects.count()} in all)",
        flush=True,
    )
    machine = b.machine_line(
        "gunicorn (pyramid_app/gunicorn_conf.py)",
        "on a Celery worker (Redis)" if redis_url else "in-process background thread after the commit (no REDIS_URL)",
    )
    b.close_db_connections()

    log_dir = Path(tempfile.mkdtemp(prefix="pyramid-bench-logs-"))
    worker = b.celery_worker(child_env, log_dir, redis_url) if redis_url else nullcontext()
    try:
        with worker, b.server("gunicorn", child_env, log_dir) as base:
            start_line = threading.Barrier(len(pyramids) + 1)
            clients = [
                Client(base, token, p.pk, seed=i, start=start_line, args=args)
                for i, (token, p) in enumerate(zip(tokens, pyramids, strict=True))
            ]
            for client in clients:
                client.start()
            start_line.wait()
            began = time.perf_counter()
            for client in clients:
                client.join(timeout=args.duration + 600)
            wall = time.perf_counter() - began
        crashes = [(c.pyramid_id, c.crash) for c in clients if c.crash]
        if crashes:
            sys.exit(f"client of pyramid {crashes[0][0]} failed: {crashes[0][1]!r}")

        print(machine)
        print(
            f"{len(clients)} clients, one pyramid each, {wall:.1f} s measured, {sum(c.rounds for c in clients)} rounds"
        )
        total = 0
        print(f"{'operation':<20} {'count':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for operation in OPERATIONS:
            times = [t for c in clients for t in c.times[operation]]
            total += len(times)
            if times:
                print(
                    f"{operation:<20} {len(times):>6} {percentile(times, 50) * 1000:>8.0f} "
                    f"{percentile(times, 95) * 1000:>8.0f} "
                    f"{percentile(times, 99) * 1000:>8.0f} {max(times) * 1000:>8.0f}"
                )
        errors = defaultdict(int)
        for c in clients:
            for key, count in c.errors.items():
                errors[key] += count
        print(
            f"throughput: {total / wall:.1f} requests/s ({total} successful requests)"
            + (f"; errors: {dict(errors)}" if errors else "; no errors")
        )
        if any(status >= 500 for _, status in errors):
            print(f"server log (last lines):\n{b._tail(log_dir / 'server.log', 40)}")
        after = {p.pk: Contributor.objects.filter(scu__pyramid=p).count() for p in pyramids}
        if after != contributors_before:
            print(
                "warning: contributor counts changed: "
                f"{[(pk, contributors_before[pk], after[pk]) for pk in after if after[pk] != contributors_before[pk]]}"
            )
    finally:
        b.cleanup(args.keep_db, log_dir)


if __name__ == "__main__":
    main()
