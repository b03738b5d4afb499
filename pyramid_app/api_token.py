"""The API token for scripts (``/api/auth/token/``), beside the login pages: both answer a locked-out
account or address as django-axes decides (``lockout``), and both count password guesses."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import NotAuthenticated, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from annotation.api.throttling import CountingThrottle
from pyramid_app.lockout import lockout_response


class TokenThrottle(ScopedRateThrottle, CountingThrottle):
    """Slows password guessing; counts atomically, and (per process) while Redis is unreachable."""


class TokenView(APIView):
    """Your API token for scripts (``Authorization: Token <key>``).

    POST returns your token, creating it on first use; authenticate with your session or token,
    or send ``username`` and ``password``. DELETE revokes it (the next POST makes a new one).
    """

    permission_classes = [AllowAny]
    throttle_classes = [TokenThrottle]
    throttle_scope = "token"

    @extend_schema(request=AuthTokenSerializer, responses={200: dict, 201: dict})
    def post(self, request):
        user = request.user
        if not user.is_authenticated:
            credentials = AuthTokenSerializer(data=request.data, context={"request": request})
            if not credentials.is_valid():
                if getattr(request, "axes_locked_out", False):  # set by django-axes during authenticate()
                    return lockout_response(request)
                raise ValidationError(credentials.errors)
            user = credentials.validated_data["user"]
        token, created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key}, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request):
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
