"""What a locked-out login sees (django-axes ``AXES_LOCKOUT_CALLABLE``).

Pages (``/accounts/login/``, ``/admin/login/``) get a page saying how long to wait; the API's token
endpoint gets JSON. Both answer 429 Too Many Requests with ``Retry-After``.
"""

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render


def minutes_locked() -> int:
    return max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))


def message() -> str:
    minutes = minutes_locked()
    return (
        f"Too many failed logins for this account or address: try again in {minutes} "
        f"minute{'s' if minutes != 1 else ''}."
    )


def lockout_response(request, original_response=None, credentials=None):
    retry_after = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message()}, status=429)
    else:
        context = {"failure_limit": settings.AXES_FAILURE_LIMIT, "minutes": minutes_locked()}
        response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = retry_after
    return response
