"""Benchmark: a synthetic TAC-size dataset (46 topics, 4 references, 300-SCU pyramids, 60 peers each,
10 of them annotated a second time for agreement), written as DUCView files, then imported, every
score stored (both conventions, jackknife) and the agreement computed. Prints numbers; not a test.

Uses DATABASE_URL if set (flushed first), else a fresh SQLite file. Without REDIS_URL the scores
are computed by the in-process background runner, as ``make run`` does.

    python bench/tac_size.py [--topics 46] [--scus 300] [--peers 60] [--second 10]
"""

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from _django import fresh_database  # noqa: E402  (bench/ is on sys.path as the script's folder)

WORDS = (
    "harbour council ferry bridge fishermen museum divers weather engineers mayor shop railway visitors lighthouse "
    "choir utility pier warning festival warehouse path barrier lights timetable market tunnel seawall "
    "boat island dunes "
    "announced postponed repaired celebrated inspected funded reopened measured questioned doubled rebuilt welcomed"
).split()


def sentence(rng: random.Random, tag: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 9))).capitalize() + f" {tag}."


def write_topic(folder: Path, topic: str, args, rng: random.Random) -> int:
    """One pyramid and its peer annotations as DUCView files; returns the number of files."""
    from annotation.formats.model import (
        SCU,
        Contributor,
        Part,
        PeerAnnotationFile,
        PeerMatch,
        PeerPart,
        Pyramid,
        Reference,
    )
    from annotation.formats.writer import write_peer_annotation, write_pyramid

    refs = "ABCD"
    sentences = {r: [] for r in refs}  # reference -> sentences, each one contributor
    scus = []
    for uid in range(1, args.scus + 1):
        contributors = []
        for ref in rng.sample(refs, rng.choice((1, 1, 2, 2, 3, 4))):
            sentences[ref].append((uid, sentence(rng, uid)))
        scus.append((uid, contributors))
    references, spans = [], {}
    for ref in refs:
        text, offset = [], 0
        for uid, s in sentences[ref]:
            spans.setdefault(uid, []).append((ref, offset, offset + len(s)))
            text.append(s)
            offset += len(s) + 1
        references.append(Reference(ref, f"{topic}.M.100.A.{ref}", " ".join(text)))
    pyramid = Pyramid(
        references,
        [
            SCU(uid, f"SCU {uid}", "", [Contributor("", "", [Part(ref, start, end)]) for ref, start, end in spans[uid]])
            for uid in range(1, args.scus + 1)
        ],
        None,
    )
    (folder / f"{topic}.pyr").write_bytes(write_pyramid(pyramid))
    files = 1
    for peer in range(1, args.peers + 1):
        units = [(uid, sentence(rng, uid)) for uid in rng.sample(range(1, args.scus + 1), rng.randint(6, 16))]
        units += [(0, sentence(rng, 0)) for _ in range(rng.randint(0, 3))]
        rng.shuffle(units)
        text, offsets, offset = [], [], 0
        for _, s in units:
            offsets.append((offset, offset + len(s)))
            text.append(s)
            offset += len(s) + 1
        for annotator in ("101", "102") if peer <= args.second else ("101",):
            # The second annotator reads the same text and disagrees on about one unit in six.
            uids = [
                u if annotator == "101" or rng.random() > 1 / 6 else rng.choice([0, rng.randint(1, args.scus)])
                for u, _ in units
            ]
            matches = [
                PeerMatch(u, s, "", [PeerPart(*span)]) for u, (_, s), span in zip(uids, units, offsets, strict=True)
            ]
            pan = PeerAnnotationFile(
                pyramid, " ".join(text), [m for m in matches if m.scu_uid], [m for m in matches if not m.scu_uid], None
            )
            (folder / f"{annotator}.{topic}.M.100.A.{peer}.pan").write_bytes(write_peer_annotation(pan))
            files += 1
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=46)
    parser.add_argument("--scus", type=int, default=300)
    parser.add_argument("--peers", type=int, default=60)
    parser.add_argument("--second", type=int, default=10, help="peers per topic annotated by a second annotator")
    args = parser.parse_args()
    tmp = fresh_database()
    from django.db import connection

    from annotation.corpus.models import Topic
    from annotation.jobs.queue import runner
    from annotation.peers.models import AnnotationScore, PeerAnnotation
    from annotation.peers.recompute import stale_work
    from annotation.peers.results import agreement_rows
    from annotation.transfer.ducview_import import import_paths
    from scoring.model import Convention

    rng = random.Random(2026)
    data = tmp / "tac"
    data.mkdir()
    files = sum(write_topic(data, f"D{1000 + t}", args, rng) for t in range(args.topics))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {connection.vendor}, "
        f"{'Celery workers' if os.environ.get('REDIS_URL') else 'in-process background runner'}"
    )
    print(
        f"data: {args.topics} topics x ({args.scus} SCUs, {args.peers} peers, {args.second} annotated "
        f"twice): {files} DUCView files"
    )

    start = time.perf_counter()
    report = import_paths([data], "tac-size")
    imported = time.perf_counter() - start
    runner.wait(None)
    while stale_work() != ([], []):  # with workers: wait for them
        time.sleep(0.5)
    scored = time.perf_counter() - start
    rows = {c: agreement_rows(Topic.objects.all(), c) for c in Convention}
    total = time.perf_counter() - start
    print(
        f"import: {imported:.1f} s ({report.annotations_created} peer annotations); all scores stored: {scored:.1f} s "
        f"({AnnotationScore.objects.count()} rows for {PeerAnnotation.objects.count()} annotations); "
        f"+ agreement of {len(rows[Convention.NIST])} topics, both conventions: {total:.1f} s in all"
    )


if __name__ == "__main__":
    main()
