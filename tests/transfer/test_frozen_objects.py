"""The collector's freeze around an import (``ducview_import.older_objects_frozen``): on while any
import of the process runs, off after the last, and left alone in a process frozen for good."""

import gc

import pytest

from annotation.transfer import ducview_import
from annotation.transfer.ducview_import import freeze_for_process, older_objects_frozen


@pytest.fixture
def unfrozen(monkeypatch):
    """A process with nothing frozen (an earlier test of this worker may have run ``import_ducview``)."""
    was_frozen = gc.get_freeze_count() > 0
    gc.unfreeze()
    monkeypatch.setattr(ducview_import, "_freezes", 0)
    yield
    gc.unfreeze()
    if was_frozen:
        gc.freeze()


def test_two_imports_at_once_share_one_freeze_ended_by_the_last(unfrozen):
    first, second = older_objects_frozen(), older_objects_frozen()
    first.__enter__()
    assert gc.get_freeze_count() > 0
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_freeze_count() > 0, "the first import to end unfroze while the other ran"
    second.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0


def test_an_import_that_fails_still_unfreezes(unfrozen):
    with pytest.raises(RuntimeError), older_objects_frozen():
        raise RuntimeError("a file refused")
    assert gc.get_freeze_count() == 0


def test_a_process_frozen_for_good_stays_frozen_and_is_never_counted(unfrozen, monkeypatch):
    """``gc.get_freeze_count`` walks every frozen object (tens of milliseconds in a test worker that
    froze once, paid by every later import): the freeze's state is kept, not counted."""
    freeze_for_process()
    frozen = gc.get_freeze_count()
    counted = []
    with monkeypatch.context() as patch:
        patch.setattr(gc, "get_freeze_count", lambda: counted.append(1) or frozen)
        with older_objects_frozen(), older_objects_frozen():
            pass
    assert counted == []
    assert gc.get_freeze_count() > 0, "the imports unfroze what the process froze for good"
