"""Benchmark: our DUCView import + score export against SacreROUGE reading and scoring the same files.

Side by side, each as whole processes (start-up included), wall clock and CPU time (user + sys,
the robust figure on a shared machine):

* ours: ``manage.py import_ducview DATA --dataset bench`` then ``manage.py export_scores --dataset
  bench --format json`` on a fresh database (SQLite in a temporary folder unless DATABASE_URL is
  set; without REDIS_URL the scores are computed in-process during the import);
* SacreROUGE 0.2.5: one process that reads every pyramid and peer annotation as its DUC 2006
  setup script does (``Pyramid.from_xml`` with that script's header regex, ``PyramidAnnotation
  .from_xml`` per .pan) and scores each annotation with ``PyramidScore``.

SacreROUGE is not a dependency: install it in a throw-away venv outside the repository and pass
its interpreter::

    python3 -m venv /tmp/sr-venv
    /tmp/sr-venv/bin/pip install --no-deps sacrerouge==0.2.5
    /tmp/sr-venv/bin/pip install jsons lxml nltk numpy 'overrides<4' requests scipy pytest \\
        'googledrivedownloader==0.4' 'sacrebleu==2.0.0' 'repro==0.1.1'
    python bench/import_vs_sacrerouge.py --sacrerouge-python /tmp/sr-venv/bin/python [--rounds 3]

Prints each side's best of ``--rounds`` and the ratio ours / SacreROUGE (goal: <= 0.8), in wall
clock and in CPU time, with the load average.
"""

import argparse
import os
import platform
import resource
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent

SACREROUGE_SCRIPT = r"""
import sys
from pathlib import Path
from sacrerouge.data import Pyramid, PyramidAnnotation
from sacrerouge.metrics import PyramidScore

data = Path(sys.argv[1])
regex = '[-]*\n(\\s*)D[0-9]*\\.M\\.250\\.[A-Z]\\.[A-Z]\n[-]*\n'  # its DUC 2006 setup script's
pyramids = {}
for path in sorted((data / "allpyramids").glob("*.pyr")):
    instance_id = path.name.split(".")[0].lower()
    pyramids[instance_id] = Pyramid.from_xml(instance_id, path.read_text(), default_document_regex=regex)
annotations, their_pyramids = [], []
for path in sorted((data / "allpans").glob("*.pan")):
    parts = path.name.split(".")
    instance_id, summarizer_id = parts[1].lower(), parts[5]
    annotation = PyramidAnnotation.from_xml(instance_id, summarizer_id, "peer", path.read_text(), pyramids[instance_id])
    if annotation:
        annotations.append(annotation)
        their_pyramids.append(pyramids[instance_id])
scores = PyramidScore().score_all(annotations, their_pyramids)
print(len(scores), sum(s["modified_pyramid_score"] for s in scores) / len(scores))
"""


class Timed(NamedTuple):
    wall: float
    cpu: float  # user + sys of the process: what a shared machine's load inflates least


def timed(cmd, env=None) -> tuple[Timed, str]:
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return Timed(seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), done.stdout


def ours(data: Path) -> tuple[Timed, Timed]:
    tmp = tempfile.mkdtemp()
    # Production settings (a throw-away key); no REDIS_URL, so every score is computed in these processes.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "pyramid_app.settings", "LOG_LEVEL": "WARNING"}
    env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    env.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    env.pop("REDIS_URL", None)
    py = sys.executable
    name = f"bench-{os.getpid()}-{time.time_ns()}"
    subprocess.run([py, "manage.py", "migrate", "-v0"], env=env, check=True, cwd=REPO)
    imported, _ = timed([py, "manage.py", "import_ducview", str(data), "--dataset", name], env)
    exported, out = timed([py, "manage.py", "export_scores", "--dataset", name, "--format", "json"], env)
    assert out.count('"kind": "peer"') == 462 or out.count('"peer"') >= 462, "export_scores did not give 462 peer rows"
    return imported, exported


def sacrerouge(python: str, data: Path) -> Timed:
    seconds, out = timed([python, "-c", SACREROUGE_SCRIPT, str(data)])
    assert out.split()[-2] == "462", out
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", default=str(Path(os.environ.get("SHARED_DATA") or REPO.parent / "shared" / "data") / "duc2006")
    )
    parser.add_argument("--sacrerouge-python", default=os.environ.get("SACREROUGE_PYTHON", "/tmp/sr-venv/bin/python"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = Path(args.data)
    if not data.is_dir():
        sys.exit(f"no data at {data}")
    if not Path(args.sacrerouge_python).exists():
        sys.exit(f"no SacreROUGE interpreter at {args.sacrerouge_python}: see this file's docstring")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {'DATABASE_URL' if 'DATABASE_URL' in os.environ else 'SQLite (temporary)'}, no "
        "REDIS_URL (scores in-process)"
    )
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    runs = []
    for _ in range(args.rounds):
        imported, exported = ours(data)
        runs.append((imported, exported, sacrerouge(args.sacrerouge_python, data)))
    for what in ("wall", "cpu"):
        imported, exported, _ = min(runs, key=lambda run: getattr(run[0], what) + getattr(run[1], what))
        imported, exported = getattr(imported, what), getattr(exported, what)
        theirs = min(getattr(run[2], what) for run in runs)
        print(
            f"{what} (best of {args.rounds}): ours import_ducview {imported:.2f} s + export_scores {exported:.2f} s "
            f"= {imported + exported:.2f} s; SacreROUGE 0.2.5 read + score {theirs:.2f} s; "
            f"ratio {(imported + exported) / theirs:.2f} (goal <= 0.8)"
        )
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
