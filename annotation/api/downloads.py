"""Moved to ``annotation.api.downloads`` (the shared REST plumbing, below every concept that names a
download): kept only for the modules that still import it from here, ``annotation/api/views.py``
and the pages in ``frontend/`` (being moved by the slices of issue 32); delete once they import it
from its home."""
from annotation.api.downloads import (  # noqa: F401
    PROVENANCE_KEYS, app_version, content_disposition, download_name, provenance, with_provenance)
