"""How static files are stored and named once collected (production, and `make run`: settings'
``COLLECTED_STATIC``): WhiteNoise's storage, content-hashed names with gzip copies beside them,
which WhiteNoise serves compressed and, being hashed, cacheable for a year (``immutable``)."""
from whitenoise.storage import CompressedManifestStaticFilesStorage


class CollectedStaticStorage(CompressedManifestStaticFilesStorage):
    # Imports between our modules (`import ... from "./session.js";`) are rewritten to the hashed
    # names as well: every script a page loads is then cached for good, and a page never mixes a
    # module of one release with a module of the next.
    support_js_module_import_aggregation = True

    def url(self, name, force=False):
        """The hashed name with DEBUG on too (`make run`): Django's manifest storage links the
        plain names when DEBUG is on, which browsers could only cache for a minute."""
        return super().url(name, force=True)
