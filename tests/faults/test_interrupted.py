"""A test run interrupted midway (Ctrl+C's SIGINT, a timeout's SIGTERM) leaves no process of the
stacks it started running, and a run killed outright (SIGKILL) has its stacks swept by the next
(``tests/faults/cleanup.py``). Each case runs ``interrupted_run.py`` in a pytest of its own."""

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO, require
from tests.faults import cleanup
from tests.faults.harness import missing_binaries, wait_for

RUN = REPO / "tests" / "faults" / "interrupted_run.py"


def start_run(tmp_path):
    ready = tmp_path / "ready"
    env = {**os.environ, "READY_FILE": str(ready)}
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", str(RUN), "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(lambda: ready.exists() or run.poll() is not None, 120, "the small stack started")
    except TimeoutError:
        run.kill()
        raise
    assert run.poll() is None, run.stdout.read().decode(errors="replace")
    root = ready.read_text()
    return run, cleanup.RECORDS / os.path.basename(root), root


def running_processes(record) -> dict[str, str]:
    """The stack's processes now (pid and start time: the same process later), with their command lines;
    they must include our PostgreSQL, redis-server and the shell's sleeping children."""
    found = {cleanup.ident(pid): cleanup.command_line(pid) for pid in cleanup.processes(record)}
    commands = " ".join(found.values())
    assert "postgres" in commands and "redis-server" in commands and commands.count("sleep 600") >= 2, commands
    return found


def left(processes: dict[str, str]) -> dict[str, str]:
    return {ident: command for ident, command in processes.items() if cleanup.alive(ident)}


@pytest.fixture(autouse=True)
def binaries():
    reason = missing_binaries()
    require(reason is None, f"the small stack runs our own PostgreSQL and Redis: {reason}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_stops_every_process_of_its_stacks(tmp_path, sig):
    run, record, root = start_run(tmp_path)
    try:
        processes = running_processes(record)
        run.send_signal(sig)  # the pytest process only, as a timeout sends it (its stack runs in sessions of its own)
        try:
            output = run.communicate(timeout=90)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            # Where it hangs: pytest's faulthandler prints every thread's stack on SIGABRT.
            run.send_signal(signal.SIGABRT)
            output = run.communicate(timeout=30)[0].decode(errors="replace")
            pytest.fail(f"the run had not ended 90 s after {sig.name}; its output:\n{output[-8000:]}")
    finally:
        run.kill()
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output
    assert left(processes) == {}, output
    assert not os.path.exists(root) and not record.exists(), output


def test_the_stacks_of_a_killed_run_are_swept_by_the_next(tmp_path):
    run, record, root = start_run(tmp_path)
    processes = running_processes(record)
    try:
        run.send_signal(signal.SIGKILL)  # nothing of the run can clean up
        run.wait(30)
        assert left(processes) == processes, "a killed run's stack keeps running until swept"
        cleanup.sweep()
        wait_for(lambda: not left(processes), 10, "the swept processes gone")
        assert not os.path.exists(root) and not record.exists()
    finally:
        run.kill()
        for ident in left(processes):
            os.kill(int(ident.split(":")[0]), signal.SIGKILL)
