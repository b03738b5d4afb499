"""What a process keeps in memory between requests and tasks, keyed by what identifies one state of
the data (an id with its revision or creation time), so that an entry is never stale by design:
a newer state has another key. Bounded, least recently used out first, shared by the threads of a
gunicorn worker (hence the lock). The prepared pyramids of scoring, the SCUs of full/ documents and
the dashboards' decoded snapshots keep theirs here."""

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class Kept:
    """At most ``size`` entries; :meth:`get` marks an entry used, :meth:`put` drops the least
    recently used ones beyond the size."""

    def __init__(self, size: int):
        self.size = size
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        """Whether ``key`` is kept, without marking it used."""
        with self._lock:
            return key in self._entries
