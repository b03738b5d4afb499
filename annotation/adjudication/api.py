"""The adjudication's REST view: carrying an annotator's matches of a peer over to the topic's
adjudicated pyramid, an action of the assignment resource (added where the router is assembled,
``pyramid_app/api_urls.py``, from ``adjudication.urls.extends``)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.adjudication import reannotation
from annotation.api.serializers import django_errors_as_drf
from annotation.peers.api import AssignmentPeerWork
from annotation.peers.serializers import PeerAnnotationSerializer


class AssignmentCarryOver(AssignmentPeerWork):
    """``peers/{peer}/carry-over/`` of an annotator's own assignment (the peer looked up as the
    other peer actions look it up)."""

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(
                description=(
                    "{annotation, carried, present, left, message}: the annotation against the adjudicated pyramid, "
                    "the matches copied, those it held already and those left for you"
                )
            )
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"peers/(?P<peer>[0-9]+)/carry-over",
        serializer_class=PeerAnnotationSerializer,
    )
    def peer_carry_over(self, request, pk=None, peer=None):
        """Carry your matches of a peer over to the topic's adjudicated pyramid: your earlier finished
        annotation (against your pyramid, no longer scored) gives each match whose SCU maps to an
        adjudicated SCU to your annotation against the adjudicated pyramid (created if need be, left
        in progress: check it and mark it done). One recorded action, undone as any other; 400 when
        the peer has nothing to carry over."""
        assignment, peer = self._own_peer(peer)
        with django_errors_as_drf():
            result = reannotation.carry_over(assignment, peer, request.user).value
        return Response(
            {
                "annotation": self.get_serializer(result.annotation).data,
                "carried": result.carried,
                "present": result.present,
                "left": result.left,
                "message": reannotation.carried_text(result),
            }
        )
