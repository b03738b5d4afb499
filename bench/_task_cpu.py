"""A Celery worker that notes the CPU time of every task it runs (bench/request_cpu.py; not a test).

Run as ``python bench/_task_cpu.py -A pyramid_app worker ...`` (the arguments of the ``celery``
command) with ``BENCH_TASK_CPU_LOG`` naming a file: after each task, the pool process that ran it
appends one line, ``<unix time> <pid> <task name> <CPU s> <wall s> <state> <arguments as JSON>``, the CPU being the
user + system time its process accrued from the task's start to its end (``time.process_time``:
a prefork pool process runs one task at a time, so that is the task's own, the lock's heartbeat
thread included). Lines are short single ``write`` calls on a file opened for appending, so the
two pool processes never interleave them. What the worker's processes spend outside tasks
(Celery's own: the consumer, countdowns, heartbeats, remote control) is the rest of the worker's
CPU, found by the bench as the difference.

With ``BENCH_TASK_PROFILE_DIR`` set as well, each task runs under cProfile (timed by the process's CPU
clock, so waiting for the database counts nothing), one profile per task
name and process, written to ``<dir>/<task name>.<pid>.prof`` after each run (pstats can merge
them); the CPU times are then inflated by the profiler and are not the figures to report.

The handlers are connected here, in the main process, before Celery forks its pool: the pool
processes inherit them.
"""

import cProfile
import json
import os
import sys
import time

LOG = os.environ.get("BENCH_TASK_CPU_LOG")
PROFILE_DIR = os.environ.get("BENCH_TASK_PROFILE_DIR")
_started: dict[str, tuple[float, float]] = {}
_profiles: dict[str, cProfile.Profile] = {}


def _start(task_id=None, task=None, **kwargs):
    if PROFILE_DIR:
        _profiles.setdefault(task.name, cProfile.Profile(time.process_time)).enable()  # CPU, not waiting
    _started[task_id] = (time.process_time(), time.perf_counter())


def _end(task_id=None, task=None, state=None, args=None, **kwargs):
    cpu, wall = _started.pop(task_id, (time.process_time(), time.perf_counter()))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if PROFILE_DIR:
        profile = _profiles[task.name]
        profile.disable()
        profile.dump_stats(os.path.join(PROFILE_DIR, f"{task.name}.{os.getpid()}.prof"))
    line = (
        f"{time.time():.3f} {os.getpid()} {task.name} {cpu:.6f} {wall:.6f} {state} "
        f"{json.dumps(args, separators=(',', ':'))}\n".encode()
    )
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read(path: str, since: int = 0) -> tuple[list[tuple[str, float, float, str]], int]:
    """The lines appended to ``path`` from byte ``since`` on, as (task name, CPU s, wall s, state),
    and the offset to read from next time."""
    try:
        with open(path, "rb") as log:
            log.seek(since)
            data = log.read()
    except FileNotFoundError:
        return [], since
    complete = data[: data.rfind(b"\n") + 1]
    rows = []
    for line in complete.decode().splitlines():
        _, _, name, cpu, wall, state = line.split()[:6]
        rows.append((name, float(cpu), float(wall), state))
    return rows, since + len(complete)


if __name__ == "__main__":
    from celery.__main__ import main
    from celery.signals import task_postrun, task_prerun

    task_prerun.connect(_start, weak=False)
    task_postrun.connect(_end, weak=False)
    sys.argv = ["celery", *sys.argv[1:]]
    sys.exit(main())
