"""Lightweight-pyramid pages, mounted at /lightweight/ (namespace ``lightweight``).

Coordinator pages (login; a run is visible and changeable under the one access rule,
``annotation.api.permissions``: someone else's run is a 404): the list of runs, one run's page
(settings, statement writing, filtering, sampling with the short-reference report and the top-up,
tasks, crowd links, uploads, progress, costs, scores and the comparison with expert scores).

Crowd pages (no login: a crowd link's token is the credential, and it opens one task at a time):
the worker gives an id once (kept in the session for that link), writes statements or judges
peers, every field required, and gets a completion code. A refused submission shows the page
again with everything typed or chosen still there. Rate limited per client address.
Thin views over ``annotation.services.lightweight_*``.
"""
import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.api import permissions
from annotation.api.lightweight import CrowdThrottle, crowd_client
from annotation.models import (
    CrowdLink, Dataset, LightweightPyramid, LiteAssignment, LiteStatement, LiteTask, LiteWriting, Pyramid, ReferenceSummary,
)
from annotation.services import lightweight_dashboard, lightweight_import, lightweight_work
from annotation.services.lightweight_runs import touch
from annotation.services.results import write_rows

from ..dashboards import charts
from .forms import RunCreateForm, RunSettingsForm, UploadForm, WorkerForm, WritingForm

SAMPLE_REPORT = "lightweight-sample-report"
JUDGING_ANSWERS = ("present", "absent")   # the values the judging page posts


def _coordinated_datasets(user):
    datasets = permissions.visible(user, Dataset.objects.all())
    return datasets if user.is_superuser else datasets.filter(coordinators=user)


def _run(request, pk, write=False) -> LightweightPyramid:
    run = get_object_or_404(permissions.visible(request.user, LightweightPyramid.objects.select_related("dataset")), pk=pk)
    if write and not permissions.can_change(request.user, run):
        raise PermissionDenied("Only the dataset's coordinators may change this.")
    return run


@login_required
def runs(request):
    datasets = _coordinated_datasets(request.user)
    form = RunCreateForm(request.POST or None, datasets=datasets)
    if request.method == "POST" and form.is_valid():
        run = form.save(commit=False)   # the form offers only the datasets this user coordinates
        run.created_by = request.user
        run.save()
        return redirect("lightweight:run", pk=run.pk)
    visible = permissions.visible(request.user, LightweightPyramid.objects.select_related("dataset")).order_by("dataset__name", "name")
    return render(request, "lightweight/runs.html", {"runs": visible, "form": form, "can_create": datasets.exists()})


@login_required
def run_page(request, pk):
    run = _run(request, pk)
    settings_form = RunSettingsForm(instance=run)
    data = lightweight_dashboard.dashboard(run)
    comparison = data["comparison"]
    links = list(run.links.order_by("-active", "kind", "batch", "created_at"))  # open ones first
    for link in links:
        link.url = request.build_absolute_uri(reverse("lightweight:crowd", args=[link.token]))
    return render(request, "lightweight/run.html", {
        "run": run, "settings_form": settings_form, "upload_form": UploadForm(), "data": data,
        "links": links, "sample_report": request.session.pop(SAMPLE_REPORT, None),
        "lite_chart": charts.lite_rows(comparison["systems"]) if comparison else None,
        "lite_csv": reverse("lightweight:chart_csv", args=[run.pk]),
        "dropped": LiteStatement.objects.filter(pyramid=run, kept=False).select_related("topic")[:200],
    })


@login_required
def chart_csv(request, pk):
    """The rows of the lightweight-against-expert chart (one per system) as CSV."""
    run = _run(request, pk)
    comparison = lightweight_dashboard.dashboard(run)["comparison"]
    stream = io.StringIO()
    write_rows(stream, charts.lite_rows(comparison["systems"]) if comparison else [], charts.LITE_KEYS, "csv")
    response = HttpResponse(stream.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="lightweight-{run.pk}-systems-chart.csv"'
    return response


@login_required
def run_settings(request, pk):
    run = _run(request, pk, write=True)
    form = RunSettingsForm(request.POST or None, instance=run)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            form.save()
            touch(run)
        messages.success(request, "Settings saved; the scores are being recomputed.")
        return redirect("lightweight:run", pk=run.pk)
    data = lightweight_dashboard.dashboard(run)
    return render(request, "lightweight/run.html", {
        "run": run, "settings_form": form, "upload_form": UploadForm(), "data": data, "links": [],
        "lite_chart": None, "dropped": []}, status=400 if request.method == "POST" else 200)


@login_required
def run_action(request, pk, action):
    """The protocol's steps, each a POST button on the run page."""
    if request.method != "POST":
        return redirect("lightweight:run", pk=pk)
    run = _run(request, pk, write=True)
    if action == "filter":
        counts = lightweight_work.apply_filters(run)
        dropped = sum(n for reason, n in counts.items() if reason != "kept")
        messages.success(request, f"Filters applied: {counts.get('kept', 0)} kept, {dropped} dropped.")
    elif action in ("sample", "top-up"):
        reports = lightweight_work.sample(run, top_up_short=action == "top-up")
        request.session[SAMPLE_REPORT] = [r.__dict__ for r in reports]
        messages.success(request, f"Sampled {sum(sum(r.batches) for r in reports)} statements over {len(reports)} topics.")
    elif action == "from-expert":
        pyramids = Pyramid.objects.filter(topic__dataset=run.dataset, status=Pyramid.Status.DONE)
        created = lightweight_work.statements_from_expert(run, pyramids)
        messages.success(request, f"{created} statement{'s' if created != 1 else ''} taken from the expert pyramids' SCUs.")
    elif action == "tasks":
        created = lightweight_work.create_tasks(run)
        messages.success(request, f"{created} judging task{'s' if created != 1 else ''} created.")
    elif action in ("writing-link", "judging-link-1", "judging-link-2", "judging-link"):
        kind = CrowdLink.Kind.WRITING if action == "writing-link" else CrowdLink.Kind.JUDGING
        batch = int(action[-1]) if action[-1] in "12" else None
        CrowdLink.objects.create(pyramid=run, kind=kind, batch=batch)
        messages.success(request, "Link created: share it with your workers.")
    elif action in ("close-link", "reopen-link"):
        link = get_object_or_404(CrowdLink, pyramid=run, pk=_pk(request.POST.get("link")))
        link.active = action == "reopen-link"
        link.save(update_fields=["active"])
        messages.success(request, "Link reopened: workers can use it again." if link.active else
                         "Link closed: workers who open it are told it is closed; what they submitted is kept.")
    elif action == "upload":
        form = UploadForm(request.POST, request.FILES)
        if not form.is_valid():
            messages.error(request, "Choose a file to import.")
        else:
            upload = form.cleaned_data["file"]
            if upload.size > lightweight_import.MAX_FILE_BYTES:
                messages.error(request, "The file is too large.")
            else:
                try:
                    report = lightweight_import.import_text(run, upload.read().decode("utf-8"), upload.name)
                except UnicodeDecodeError:
                    messages.error(request, f"{upload.name} is not UTF-8 text: nothing was imported.")
                else:
                    if report.error:
                        messages.error(request, f"{upload.name}: {report.error}. Nothing was imported.")
                    else:
                        messages.success(request, report.line())
    else:
        return HttpResponse("Unknown step.", status=404)
    return redirect("lightweight:run", pk=run.pk)


# --- crowd ---------------------------------------------------------------------------------------

def _throttled(request) -> HttpResponse | None:
    throttle = CrowdThrottle()
    if throttle.allow_request(request, None):
        return None
    response = render(request, "lightweight/crowd_message.html", {
        "title": "Please slow down", "message": "Too many requests from your connection. Please wait a minute and reload."}, status=429)
    response["Retry-After"] = str(int(throttle.wait() or 60))
    return response


def _session_key(link: CrowdLink) -> str:
    return f"crowd-worker-{link.pk}"


def crowd(request, token):
    """A crowd link: ask the worker id once, then hand out one piece of work at a time."""
    refused = _throttled(request)
    if refused:
        return refused
    link = get_object_or_404(CrowdLink.objects.select_related("pyramid"), token=token)
    if not link.active:  # closed by the coordinators: say so (410), rather than a bare "not found"
        return render(request, "lightweight/crowd_message.html", {
            "title": "This link is closed", "message": "The work behind this link has ended. Thank you for your interest."}, status=410)
    worker = request.session.get(_session_key(link))
    if worker is None or "change" in request.GET:
        form = WorkerForm(request.POST or None) if request.method == "POST" and "worker" in request.POST else WorkerForm(
            initial={"worker": worker or request.GET.get("worker", "")})
        if request.method == "POST" and form.is_valid():
            try:
                request.session[_session_key(link)] = lightweight_work.clean_worker_id(form.cleaned_data["worker"])
                return redirect("lightweight:crowd", token=token)
            except lightweight_work.WorkError as error:
                form.add_error("worker", str(error))
        return render(request, "lightweight/crowd_worker.html", {"form": form, "link": link})
    if link.kind == CrowdLink.Kind.WRITING:
        return _writing(request, link, worker)
    return _judging(request, link, worker)


def _pk(value) -> int:
    """A posted id, 0 (matches nothing) when it is not a small number."""
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 10 else 0


def _done(request, link, worker, code):
    return render(request, "lightweight/crowd_done.html", {"link": link, "worker": worker, "code": code})


def _writing(request, link, worker):
    run, client = link.pyramid, crowd_client(request)
    if request.method == "POST":
        reference = get_object_or_404(ReferenceSummary, pk=_pk(request.POST.get("reference")), topic__dataset=run.dataset)
        form = WritingForm(request.POST, count=run.statements_per_writer)
        if form.is_valid():
            try:
                writing = lightweight_work.submit_writing(run, reference, worker, form.texts(), client)
                return _done(request, link, worker, writing.completion_code)
            except lightweight_work.WorkError as error:
                form.add_error(None, str(error))
        status = 400
    else:
        reference = lightweight_work.next_reference(run, worker, client)
        if reference is None:
            return render(request, "lightweight/crowd_message.html", {
                "title": "Thank you", "message": "There is no more statement writing for you here."})
        form = WritingForm(count=run.statements_per_writer)
        status = 200
    done = LiteWriting.objects.filter(pyramid=run, worker_id=worker).count()
    return render(request, "lightweight/crowd_write.html",
                  {"link": link, "worker": worker, "reference": reference, "form": form, "done": done}, status=status)


def _no_task(request, link, worker, client):
    """No task for this worker: none left, or every one it could judge held by other workers now
    (one may come back when a hold expires, so the worker is asked to return, not thanked off)."""
    wait = lightweight_work.seconds_until_free(link, worker, client)
    if wait is None:
        return render(request, "lightweight/crowd_message.html", {
            "title": "Thank you", "message": "There are no more tasks for you here."})
    response = render(request, "lightweight/crowd_message.html", {
        "title": "Please come back soon", "message": lightweight_work.ALL_RESERVED})
    response["Retry-After"] = str(wait)
    return response


def _judging(request, link, worker):
    """The judging page and its submission. The statements are rendered by the template directly,
    not through a form of 16 radio fields: the page is what a crowd loads hundreds of times a
    minute, and form rendering was most of its CPU. A submission needs only the task's statement
    ids (no statement or summary text) unless it is refused and the page is shown again."""
    run, client = link.pyramid, crowd_client(request)
    chosen, missing, error = {}, set(), None
    if request.method == "POST":
        task = get_object_or_404(LiteTask.objects.only("id", "pyramid_id", "batch", "peer_id", "statement_ids"),
                                 pk=_pk(request.POST.get("task")), pyramid=run)
        chosen = {pk: request.POST.get(f"a{pk}") for pk in task.statement_ids}
        missing = {pk for pk, value in chosen.items() if value not in JUDGING_ANSWERS}
        try:
            if not missing:
                assignment = lightweight_work.submit_judgments(link, task, worker, chosen, client)
                return _done(request, link, worker, assignment.completion_code)
            error = "Please answer every statement: your other answers are kept."
        except lightweight_work.WorkError as refused:
            error = str(refused)
        status = 400
    else:
        try:
            task = lightweight_work.next_task(link, worker, client)
        except lightweight_work.HoldLimit as limit:
            response = render(request, "lightweight/crowd_message.html", {"title": "Please come back soon", "message": str(limit)},
                              status=429)
            response["Retry-After"] = str(limit.retry_after)
            return response
        if task is None:
            return _no_task(request, link, worker, client)
        status = 200
    judgments = [{"name": f"a{s.pk}", "text": s.text, "number": str(n), "chosen": chosen.get(s.pk), "missing": s.pk in missing}
                 for n, s in enumerate(lightweight_work.task_statements(task), start=1)]   # strings: no number formatting
    done = LiteAssignment.objects.filter(task__pyramid=run, worker_id=worker).count()
    return render(request, "lightweight/crowd_judge.html", {
        "link": link, "worker": worker, "task": task, "judgments": judgments, "error": error, "done": done}, status=status)
