"""Reading the client's If-Match: which revision of the document it last saw."""
from rest_framework.exceptions import APIException


class PreconditionRequired(APIException):
    status_code = 428
    default_detail = 'Send If-Match: "<revision>" with the revision you last read (the ETag of the document).'
    default_code = "precondition_required"


def expected_revision(request) -> int | None:
    """The revision named by If-Match; 428 when absent or unreadable.

    ``If-Match: *`` (HTTP: "any current version") is an explicit opt-out for scripts that do not
    track versions: the write then applies to whatever the document is now.
    """
    raw = request.headers.get("If-Match", "").strip()
    if raw == "*":
        return None
    if raw.startswith("W/"):
        raw = raw[2:]
    try:
        return int(raw.strip('"'))
    except ValueError:
        raise PreconditionRequired() from None
