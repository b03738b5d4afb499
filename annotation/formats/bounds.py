"""Time bounds on the work a DUCView file can make us do with patterns it controls.

Two kinds of pattern come from the file: its ``startDocumentRegEx`` (a regex written by whoever
made the file) and the search patterns built from labels that do not match their text (see
:mod:`annotation.formats.relocate`). Either can backtrack catastrophically (an 832-byte ``.pyr``
took a web worker for a minute). Both run on the ``regex`` package, whose matching takes a
``timeout``, and the time they take is charged to one :class:`WorkBudget` per file: when it is
spent the file is refused as hostile, with the reason, instead of holding a worker. Real DUC
files spend a few milliseconds of it (21 ms for the costliest of DUC 2006 and 2007).

The budget counts the CPU time of the reading thread, not the wall clock: on a busy machine the
same work takes many times longer in wall time (a CI run at load 10 saw a real DUC 2007 file pass
0.5 s), and a real file must not be refused as hostile because others were running. ``regex``'s
own timeout is wall-clock, so each attempt is given the CPU time left as its wall-clock timeout
(wall time is never shorter than the CPU time it holds, so no attempt can use more CPU than is
left); an attempt that times out having used less (the thread waited for a core) is charged what
it used and run again with what is left, until it finishes or the budget is spent. A hostile
pattern is so stopped after the budget's CPU time, whatever the load (issue 24: a slack of 3 x
the budget in wall time let an idle machine spend 3 x the budget).

An import may give its files budgets drawn from one import-wide budget
(:meth:`WorkBudget.for_file`), so a zip of many hostile files is refused in bounded time too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from annotation.formats.errors import DucViewError

__all__ = ["DEFAULT_FILE_SECONDS", "HostileInput", "WorkBudget"]

DEFAULT_FILE_SECONDS = 0.5

T = TypeVar("T")


class HostileInput(DucViewError):
    """The file makes the reader do more work than any real DUCView file needs."""


class WorkBudget:
    """CPU seconds of untrusted pattern matching allowed (for one file, or for a whole import)."""

    def __init__(self, seconds: float = DEFAULT_FILE_SECONDS, *, parent: WorkBudget | None = None):
        self.seconds = seconds
        self.used = 0.0
        self.parent = parent

    def for_file(self, seconds: float = DEFAULT_FILE_SECONDS) -> WorkBudget:
        """A budget for one file of this import: ``seconds``, charged to this budget too."""
        return WorkBudget(seconds, parent=self)

    def remaining(self) -> float:
        own = self.seconds - self.used
        return min(own, self.parent.remaining()) if self.parent is not None else own

    def _charge(self, seconds: float) -> None:
        self.used += seconds
        if self.parent is not None:
            self.parent._charge(seconds)

    def call(self, what: str, work: Callable[[float], T]) -> T:
        """``work(timeout)`` run within the CPU time left: ``work`` does untrusted matching and
        raises ``TimeoutError`` past ``timeout`` wall-clock seconds (``regex``'s ``timeout=``); it is
        run again while it timed out only because the thread waited (it should keep what it found,
        to resume). Past the budget: :class:`HostileInput` naming ``what``."""
        while True:
            left = self.remaining()
            if left <= 0:
                raise self._exhausted(what)
            start = time.thread_time()
            try:
                result = work(left)
            except TimeoutError:
                continue  # charged below; what is left (if anything) is tried again
            finally:
                self._charge(time.thread_time() - start)
            if self.remaining() < 0:  # finished, but past the CPU allowed (work without a timeout)
                raise self._exhausted(what)
            return result

    def _exhausted(self, what: str) -> HostileInput:
        if self.parent is not None and self.parent.remaining() <= 0 < self.seconds - self.used:
            return HostileInput(
                f"{what}: this import's time for file-supplied patterns "
                f"({self.parent.seconds:g} s in all) is spent; file refused"
            )
        return HostileInput(
            f"{what} takes more than {self.seconds:g} s of CPU (catastrophic backtracking?); refused as hostile"
        )
