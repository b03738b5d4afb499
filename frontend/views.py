"""Pages. Every page requires a login and checks the object against the API's access rule;
the health check is the only public URL. The editors load and save through the API."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation.access.rules import can_change, coordinated_datasets, may_create_dataset, visible
from annotation.adjudication import reannotation
from annotation.api import downloads
from annotation.api.choices import UnknownChoice
from annotation.corpus.models import Assignment
from annotation.jobs import health
from annotation.peers import assignments
from annotation.peers.models import PeerAnnotation
from annotation.pyramids import assistance, scu_listing
from annotation.pyramids.models import Pyramid


@login_required
def home(request):
    """The user's start page: their assignments with progress, the peers to annotate again against
    an adjudicated pyramid (each with *Carry over matches*), and the datasets they coordinate."""
    rows = [
        (a, assignments.progress(a), reannotation.for_assignment(a))
        for a in Assignment.objects.filter(annotator=request.user).select_related("topic__dataset")
    ]
    datasets = coordinated_datasets(request.user)
    return render(
        request,
        "frontend/home.html",
        {"assignments": rows, "datasets": datasets, "may_create_dataset": may_create_dataset(request.user)},
    )


def _own_assignment(request, pk) -> Assignment:
    return get_object_or_404(Assignment.objects.select_related("topic"), pk=pk, annotator=request.user)


@login_required
@require_POST
def open_assignment(request, pk):
    """Continue an assignment: the annotator's pyramid, or the next peer to annotate (its page; no
    annotation is created until the annotator acts in it)."""
    assignment = _own_assignment(request, pk)
    try:
        if assignment.task == Assignment.Task.BUILD_PYRAMID:
            return redirect("frontend:builder", pk=assignments.pyramid_for_building(assignment).pk)
        peer = None
        if request.POST.get("peer"):
            peer = get_object_or_404(assignment.topic.peersummarys, pk=request.POST["peer"])
        annotation, peer = assignments.existing_annotation(assignment, peer)
        if annotation is not None:
            return redirect("frontend:annotator", pk=annotation.pk)
        return redirect("frontend:annotator-peer", pk=assignment.pk, peer=peer.pk)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("frontend:home")


@login_required
@require_POST
def finish_assignment(request, pk):
    assignment = _own_assignment(request, pk)
    assignments.mark_done(assignment)
    work = f"{assignment.get_task_display()} of {assignment.topic.external_id}"
    kept = reannotation.kept_open(assignment)
    if kept:
        messages.warning(request, f"{work} is not done yet. {kept}")
    else:
        messages.success(request, f"{work} marked as done.")
    return redirect("frontend:home")


def _document(request, model, pk):
    obj = visible(request.user, model.objects.filter(pk=pk)).first()
    if obj is None:
        raise Http404("No such document, or not yours to see.")
    return obj


@login_required
def builder(request, pk):
    pyramid = _document(request, Pyramid, pk)
    if not can_change(request.user, pyramid):
        # Say why (a finished pyramid is fixed while peers are annotated against it), not a bare 403.
        annotations = (
            pyramid.annotations.filter(annotator=request.user).select_related("peer").order_by("peer__external_id")
        )
        tiers = scu_listing.tiers(pyramid)
        context = {
            "pyramid": pyramid,
            "annotations": annotations,
            "tiers": tiers,
            "scu_count": sum(len(t.scus) for t in tiers),
            "reference_count": pyramid.references.count(),
        }
        return render(request, "frontend/builder_readonly.html", context, status=403)
    return render(request, "frontend/builder.html", {"pyramid": pyramid, "assisted": assistance.is_assisted(pyramid)})


@login_required
def pyramid_scus(request, pk):
    """The pyramid's SCUs by tier with weight and label, to print (DUCView's SCU list), or with
    ``?download=txt`` as a plain-text file; whoever may see the pyramid may list it."""
    pyramid = _document(request, Pyramid, pk)
    tiers = scu_listing.tiers(pyramid)
    if request.GET.get("download") == "txt":
        text = scu_listing.as_text(pyramid, tiers, app_version=downloads.app_version())
        response = HttpResponse(text, content_type="text/plain; charset=utf-8")
        # Named as every download is (dataset, table, date): ``duc2006-D0631-pyramid-12-scus-2026-11-26.txt``.
        name = downloads.download_name(
            pyramid.topic.dataset, f"{pyramid.topic.external_id}-pyramid-{pyramid.pk}-scus", "txt"
        )
        response["Content-Disposition"] = downloads.content_disposition(name)
        return response
    return render(
        request,
        "frontend/pyramid_scus.html",
        {"pyramid": pyramid, "tiers": tiers, "scu_count": sum(len(t.scus) for t in tiers)},
    )


def _reannotation(user, peer, assignment=None) -> dict | None:
    """What the annotator page says when ``user`` is to annotate ``peer`` again against its topic's
    adjudicated pyramid: their assignment and the earlier annotation (``reannotation``)."""
    assignment = (
        assignment
        or Assignment.objects.filter(
            topic_id=peer.topic_id, annotator=user, task=Assignment.Task.ANNOTATE_PEERS
        ).first()
    )
    pending = [r for r in reannotation.for_assignment(assignment) if r.peer_id == peer.pk] if assignment else []
    return {"assignment": assignment, "source": pending[0].source} if pending else None


@login_required
def annotator(request, pk):
    annotation = _document(request, PeerAnnotation, pk)
    again = _reannotation(request.user, annotation.peer) if annotation.annotator_id == request.user.pk else None
    return render(
        request,
        "frontend/annotator.html",
        {"annotation": annotation, "can_edit": can_change(request.user, annotation), "reannotate": again},
    )


@login_required
@require_POST
def carry_over(request, pk, peer):
    """Copy the annotator's earlier matches of a peer whose SCU is in the adjudicated pyramid into
    their annotation against it (``reannotation.carry_over``), then open that annotation."""
    assignment = _own_assignment(request, pk)
    peer = get_object_or_404(assignment.topic.peersummarys, pk=peer)
    try:
        result = reannotation.carry_over(assignment, peer, request.user).value
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("frontend:home")
    messages.success(request, f"Peer {peer.external_id}: {reannotation.carried_text(result)}")
    return redirect("frontend:annotator", pk=result.annotation.pk)


@login_required
def annotator_peer(request, pk, peer):
    """A peer of the annotator's own assignment not acted on yet: the annotator page, built without
    a row (the client's first action creates the annotation through the API's
    ``assignments/<pk>/peers/<peer>/annotation/``). Once the annotation exists this URL leads to it.
    Only the assignment's annotator may open it (404 for anyone else, as for any document not theirs)."""
    assignment = _own_assignment(request, pk)
    if assignment.task != Assignment.Task.ANNOTATE_PEERS:
        raise Http404("This assignment is not a peer annotation.")
    peer = get_object_or_404(assignment.topic.peersummarys, pk=peer)
    try:
        annotation, peer = assignments.existing_annotation(assignment, peer)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("frontend:home")
    if annotation is not None:
        return redirect("frontend:annotator", pk=annotation.pk)
    return render(
        request,
        "frontend/annotator.html",
        {
            "annotation": assignments.unsaved_annotation(assignment, peer),
            "assignment": assignment,
            "can_edit": True,
            "reannotate": _reannotation(request.user, peer, assignment),
        },
    )


def healthz(request):
    """Health for docker-compose and load balancers: the database answers and the pages can be
    served (in production the static files must have been collected: without the manifest every
    page answers 500, so the check says 503 with the reason instead of a misleading 200) and the
    database takes writes (probed every few seconds at most: ``jobs.health``)."""
    health.check_reads()
    try:
        staticfiles_storage.url("frontend/base.css")
    except ValueError as error:
        return JsonResponse(
            {"status": "error", "reason": f"static files are not collected (run `manage.py collectstatic`): {error}"},
            status=503,
        )
    failure = health.write_failure()
    if failure is not None:
        return JsonResponse({"status": "error", "reason": failure}, status=503)
    return JsonResponse({"status": "ok"})


def favicon(request):
    """``/favicon.ico``, which browsers ask for on every page that names no icon (the API's pages,
    files opened directly): the icon the pages name, from the static files (public, like them)."""
    return HttpResponseRedirect(staticfiles_storage.url("frontend/favicon.svg"))


def bad_request(request, exception):
    """400 in the app's layout. The reason is shown only when it is written for the user (an unknown
    choice names the choices); other 400s (a suspicious host, say) keep theirs out of the page, as
    Django's own handler does."""
    reason = str(exception) if isinstance(exception, UnknownChoice) else "The request could not be understood."
    return render(request, "400.html", {"reason": reason}, status=400)
