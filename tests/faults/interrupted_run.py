"""Run by ``test_interrupted.py`` in a pytest of its own, then interrupted: a small stack (our own
PostgreSQL and redis-server, and a shell whose children sleep, for an app process with children of
its own) started by a module fixture, as the fault and scale suites start theirs, and a test that
waits until it is signalled. Not collected by the suite (its name does not start with ``test_``)."""

import os
import signal
import time
from pathlib import Path

import pytest

from tests.faults.harness import Process, Stack, running

# Ctrl+C reaches this run as it reaches one in a terminal, whatever started the suite: a shell without
# job control (a script's `cmd &`, `nohup ... &`) starts its background commands with SIGINT ignored,
# every process below inherits that, and Python then leaves it ignored (the SIGINT case hung in its
# sleep, the signal never seen).
signal.signal(signal.SIGINT, signal.default_int_handler)


class SmallStack(Stack):
    def __init__(self):
        super().__init__()
        self.web = Process(["sh", "-c", "sleep 600 & sleep 600 & wait"], self.env, self.root / "web.log")

    def services(self):
        return [self.web]

    def prepare(self):
        """An empty cluster of its own (what is asserted is its processes, not its data)."""
        self.postgres.create()
        self.postgres.start()

    def wait_ready(self):
        pass


@pytest.fixture(scope="module")
def stack():
    with running(SmallStack()) as stack:
        yield stack


def test_waits_until_interrupted(stack):
    Path(os.environ["READY_FILE"]).write_text(stack.root.as_posix())
    time.sleep(600)
