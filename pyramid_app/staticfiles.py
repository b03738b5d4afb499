"""How static files are stored and named once collected (production, and `make run`: settings'
``COLLECTED_STATIC``): WhiteNoise's storage, content-hashed names with gzip copies beside them,
which WhiteNoise serves compressed and, being hashed, cacheable for a year (``immutable``)."""

import os
from pathlib import Path

from django.apps import apps
from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage


def own_static_folders() -> list[Path]:
    """The ``static`` folders of the project's own apps (not of installed packages)."""
    base = Path(settings.BASE_DIR).resolve()
    folders = [Path(config.path) / "static" for config in apps.get_app_configs()]
    return [f for f in folders if f.is_dir() and f.resolve().is_relative_to(base)]


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    def __init__(self, *args, **kwargs):
        # Imports between our modules (`import ... from "./session.js";`) rewritten to the hashed
        # names too: every script a page loads is then cached for good, and a page never mixes a
        # module of one release with one of the next. Only in our own scripts: Django's import
        # patterns take seconds on the third-party bundles (Swagger UI, ReDoc), which import nothing.
        _, rewrites = self._js_module_import_aggregation_patterns
        self.patterns = self.patterns + tuple(
            (f"{top.name}/*.js", rewrites)
            for folder in own_static_folders()
            for top in folder.iterdir()
            if top.is_dir()
        )
        super().__init__(*args, **kwargs)

    def url(self, name, force=False):
        """The hashed name with DEBUG on too (`make run`): Django's manifest storage links the
        plain names when DEBUG is on, which browsers could only cache for a minute."""
        return super().url(name, force=True)

    def compress_files(self, paths):
        """Only the files whose gzip copy is missing or older: a collection after one edited
        script (each `make run` restart after a static edit) compresses that script, not the 5 MB
        of third-party bundles again (seconds on a small machine)."""
        hashed = set(self.hashed_files.values())
        yield from super().compress_files([path for path in paths if not self._compressed_copy_current(path, hashed)])

    def _compressed_copy_current(self, path, hashed) -> bool:
        try:
            copy = os.stat(self.path(path) + ".gz")
        except FileNotFoundError:
            return False
        # A hashed name holds the same content for good; a plain name's copy carries the time of
        # the file it was made from (WhiteNoise sets it, to the microsecond).
        return path in hashed or copy.st_mtime >= os.stat(self.path(path)).st_mtime - 1e-3
