"""The API's POSTs honour an ``Idempotency-Key`` header (``api.idempotency_keys``), and the
OpenAPI schema says so."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import APIException

from annotation.api import idempotency_keys


class IdempotentPostMixin:
    """POSTs (creates and editing actions) sent with an ``Idempotency-Key`` are answered once."""

    def dispatch(self, request, *args, **kwargs):
        if request.method != "POST" or idempotency_keys.HEADER not in request.headers:
            return super().dispatch(request, *args, **kwargs)
        # Read (and kept) now: authenticating may parse a form body, after which it could not be hashed.
        request.body  # noqa: B018  (reading it keeps it: the attribute reads and caches the body)
        user = self._user_of(request, *args, **kwargs)
        if user is None:  # answered as without the header (401, 403)
            return super().dispatch(request, *args, **kwargs)
        dispatch = super().dispatch
        return idempotency_keys.respond(request, user, lambda: dispatch(request, *args, **kwargs))

    def _user_of(self, request, *args, **kwargs):
        try:
            authenticated = self.initialize_request(request, *args, **kwargs)
            user = authenticated.user
        except APIException:
            return None
        if not user.is_authenticated:
            return None
        self._authenticated = (request, authenticated)  # the request's dispatch goes on with it
        return user

    def initialize_request(self, request, *args, **kwargs):
        """The request as ``_user_of`` authenticated it, if it did (a token is looked up, a session's
        CSRF checked, once a request), else DRF's."""
        kept = getattr(self, "_authenticated", None)
        if kept is not None and kept[0] is request:
            return kept[1]
        return super().initialize_request(request, *args, **kwargs)


class IdempotentSchema(AutoSchema):
    """drf-spectacular's schema, with the ``Idempotency-Key`` header on the POSTs that take it."""

    def get_override_parameters(self):
        parameters = super().get_override_parameters()
        if self.method == "POST" and isinstance(self.view, IdempotentPostMixin):
            parameters = [
                *parameters,
                OpenApiParameter(
                    idempotency_keys.HEADER,
                    str,
                    OpenApiParameter.HEADER,
                    required=False,
                    description="One key per logical action (a UUID), sent again with every retry of it: a retry gets "
                    "the "
                    "first answer (with `Idempotent-Replayed: true`) instead of doing the action twice. The "
                    "same key with another body answers 422; while the first request with the key runs, a "
                    "second one waits for it (409 after 10 s). Answers are kept for `IDEMPOTENCY_KEY_SECONDS`.",
                ),
            ]
        return parameters
