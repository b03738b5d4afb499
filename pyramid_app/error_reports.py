"""What debug pages and error reports may show: never a credential.

Django already hides settings whose *name* looks secret (``SECRET_KEY``, ``PASSWORD``, ...), but a
password inside a URL (``DATABASE_URL=postgres://user:password@host/db``, ``REDIS_URL``, the Celery
broker, the cache ``LOCATION``, the same variables in the request's environment under runserver,
a local variable in a traceback) sits under a harmless name. This filter masks the password part of
every URL it sees, wherever it sees it.
"""

import re

from django.views.debug import SafeExceptionReporterFilter

# scheme://user:password@host  or  scheme://:password@host (redis)
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.\-]*://[^\s:/@'\"]*:)(?P<password>[^\s@/'\"]+)(?P<tail>@)", re.IGNORECASE
)
MASK = "********"


def mask_url_passwords(text: str) -> str:
    """``postgres://u:secret@db/x`` -> ``postgres://u:********@db/x``; other text unchanged."""
    return _URL_PASSWORD.sub(lambda m: m["head"] + MASK + m["tail"], text)


class CredentialFilter(SafeExceptionReporterFilter):
    """Django's filter, plus URL passwords masked in settings, request environment and frame variables."""

    def cleanse_setting(self, key, value):
        cleansed = super().cleanse_setting(key, value)
        return mask_url_passwords(str(cleansed)) if isinstance(cleansed, str) else cleansed  # str(): lazy strings too

    def get_traceback_frame_variables(self, request, tb_frame):
        out = []
        for name, value in super().get_traceback_frame_variables(request, tb_frame):
            try:
                shown = repr(value)
            except Exception:  # the debug page copes with unprintable values itself
                out.append((name, value))
                continue
            masked = mask_url_passwords(shown)
            out.append((name, masked if masked != shown else value))
        return out
