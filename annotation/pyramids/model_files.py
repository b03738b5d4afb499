"""A trained model in a file of the server's own (the suggestions' and the proposals'): written
atomically, so a request never reads half a file, and read again only when the file changes, so a
request pays no unpickling. The file is written by a training command, never uploaded by a user."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)


class ModelFile:
    def __init__(self, setting: str, accepts: Callable[[object], bool], unreadable: str):
        self.setting = setting  # the setting naming the file
        self.accepts = accepts  # a model of this code's class and format (an older one: None, the rules serve)
        self.unreadable = unreadable  # the warning when the file cannot be read ("%s": the path)
        self._loaded: dict[tuple[str, float], object | None] = {}

    def path(self) -> Path:
        from django.conf import settings

        return Path(getattr(settings, self.setting))

    def save(self, model, path: Path | None = None) -> Path:
        import joblib

        path = path or self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        os.close(fd)
        joblib.dump(model, tmp)
        os.replace(tmp, path)
        self._loaded.clear()
        return path

    def load(self, path: Path | None = None):
        """The model, or None: no file, an unreadable one, or one of an older format."""
        path = path or self.path()
        try:
            stamp = path.stat().st_mtime
        except OSError:
            return None
        key = (str(path), stamp)
        if key not in self._loaded:
            import joblib  # only to read a file: a server without a trained model never imports it

            self._loaded.clear()
            try:
                model = joblib.load(path)
            except Exception:  # a file of another version of the code or of scikit-learn: the rules serve
                logger.warning(self.unreadable, path, exc_info=True)
                model = None
            self._loaded[key] = model if self.accepts(model) else None
        return self._loaded[key]
