"""Renderers for file downloads chosen with ``?format=`` (DRF's format parameter).

The view builds the file itself (the content depends on the format, not only its encoding); these
renderers let DRF's content negotiation accept the format names and pass the text through. Error
responses are switched to JSON by the views (``FormatNegotiationMixin``).
"""

from rest_framework import renderers
from rest_framework.renderers import BaseRenderer


class FileRenderer(BaseRenderer):
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


class CSVRenderer(FileRenderer):
    media_type = "text/csv"
    format = "csv"


class DUCViewRenderer(FileRenderer):
    media_type = "application/xml"
    format = "ducview"


class SacreRougeRenderer(FileRenderer):
    """SacreROUGE's JSON lines (``annotation.transfer.sacrerouge_export``): one object a line."""

    media_type = "application/jsonl"
    format = "sacrerouge"


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's browsable API from a CSP-clean template (``frontend/templates/api/browsable.html``)."""

    template = "api/browsable.html"
