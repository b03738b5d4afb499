"""Third-party browser code served by the app itself (no CDN), straight from the npm packages that
ship it, so its version is the one pinned in package.json and package-lock.json (installed into
``node_modules/`` by ``make vendor``: ``npm ci``; the Dockerfile does the same in a build stage).

``VendorFinder`` is a static-files finder: ``{% static 'vendor/chart.umd.min.js' %}`` is Chart.js's
browser bundle inside ``node_modules/chart.js/dist/``; ``runserver`` serves it and
``collectstatic`` copies it like any other static file (WhiteNoise then serves it). Its source map
comes along: the bundle names it, and the hashed-names storage rewrites that reference.

Chart.js, not plotly.js: the charts need scatter, line, band and bar traces with error bars, which
plotly.js draws too, but even its partial "basic" bundle is 1.2 MB (395 KB compressed) to parse on
every first visit; Chart.js is 210 KB (71 KB compressed).
"""

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PREFIX = "vendor"
# The files inside node_modules, each served as vendor/<its file name>.
FILES = ("chart.js/dist/chart.umd.min.js", "chart.js/dist/chart.umd.min.js.map")


def vendor_files() -> dict[str, Path]:
    """Served name (``vendor/...``) -> the file inside ``node_modules``."""
    root = Path(settings.BASE_DIR) / "node_modules"
    return {f"{PREFIX}/{Path(inside).name}": root / inside for inside in FILES}


class VendorFinder(BaseFinder):
    def check(self, **kwargs):
        missing = [str(path) for path in vendor_files().values() if not path.is_file()]
        if missing:
            return [
                Error(
                    f"browser libraries are not installed ({', '.join(missing)} missing)",
                    hint="run `make vendor` (npm ci) in the project folder",
                    id="frontend.E001",
                )
            ]
        return []

    def find(self, path, find_all=False, **kwargs):
        found = vendor_files().get(path)
        if found is None or not found.is_file():
            return []
        return [str(found)] if find_all else str(found)

    def list(self, ignore_patterns):
        for path in vendor_files().values():
            if path.is_file():
                storage = FileSystemStorage(location=str(path.parent))
                storage.prefix = PREFIX
                yield path.name, storage
