"""Third-party browser code served by the app itself (no CDN), straight from the Python packages
that ship it, so its version is the one pinned in pyproject.toml.

``PlotlyFinder`` is a static-files finder: ``{% static 'vendor/plotly.min.js' %}`` is the plotly.js
bundle inside the ``plotly`` package (``plotly/package_data/plotly.min.js``); ``runserver`` serves it
and ``collectstatic`` copies it like any other static file (WhiteNoise then serves it).
"""
from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


class PlotlyFinder(BaseFinder):
    prefix = "vendor"
    name = "plotly.min.js"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(PLOTLY_JS.parent))
        self.storage.prefix = self.prefix

    def check(self, **kwargs):
        if not PLOTLY_JS.is_file():
            return [Error(f"plotly.js is missing from the plotly package ({PLOTLY_JS})", id="frontend.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        if path == f"{self.prefix}/{self.name}" and PLOTLY_JS.is_file():
            return [str(PLOTLY_JS)] if find_all else str(PLOTLY_JS)
        return []

    def list(self, ignore_patterns):
        if PLOTLY_JS.is_file():
            yield self.name, self.storage
