"""Lightweight-pyramid pages, mounted at /lightweight/ (namespace ``lightweight``).

Coordinator pages (login; a run is visible and changeable under the one access rule,
``annotation.access.rules``: someone else's run is a 404): the list of runs, one run's page
(settings, statement writing, filtering, sampling with the short-reference report and the top-up,
tasks, crowd links, uploads, progress, costs, scores and the comparison with expert scores).

Crowd pages (no login: a crowd link's token is the credential, and it opens one task at a time):
the worker gives an id once (kept in the session for that link), writes statements or judges
peers, every field required, and gets a completion code. A refused submission shows the page
again with everything typed or chosen still there. Rate limited per client address.
Thin views over the ``annotation.lightweight`` services.
"""

import io

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from annotation.access import rules
from annotation.api import downloads
from annotation.corpus.models import ReferenceSummary
from annotation.corpus.wording import count_noun
from annotation.formats.errors import LightweightFormatError
from annotation.formats.lightweight_csv import read_code_pairs
from annotation.jobs import framework_internals
from annotation.lightweight import codes, dashboard, importing, platforms, privacy, scores
from annotation.lightweight import work as lightweight_work
from annotation.lightweight.crowd_requests import CrowdThrottle, crowd_client
from annotation.lightweight.models import (
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteStatement,
    LiteTask,
    LiteWriting,
)
from annotation.lightweight.platforms import Platform
from annotation.lightweight.runs import touch
from annotation.peers.results import write_rows
from annotation.pyramids.models import Pyramid

from ..dashboards import charts
from .forms import CodeCheckForm, ConfirmForm, RunCreateForm, RunSettingsForm, UploadForm, WorkerForm, WritingForm

SAMPLE_REPORT = "lightweight-sample-report"
CODE_REPORT = "lightweight-code-report"
SUBMISSIONS_SHOWN = 200  # per table on the run page; the export has them all
JUDGING_ANSWERS = ("present", "absent")  # the values the judging page posts
# The browser's worker keys (``lightweight_work.worker_key``), "run:worker" -> key, signed. A cookie
# of its own rather than the session: MTurk frames the pages on its own site, where a SameSite=Lax
# session cookie is not sent (this one is SameSite=None over HTTPS). Browsers blocking third-party
# cookies keep none there: the pages carry the key too, and keep it in the site's storage (``_work``).
KEY_COOKIE = "crowd_keys"
RESUME = "resume"  # posted by a page with the key the browser stored (crowd.js): shown as a page load
KEYS_KEPT = 8
KEY_COOKIE_SECONDS = 30 * 24 * 3600


def _run(request, pk, write=False) -> LightweightPyramid:
    run = get_object_or_404(rules.visible(request.user, LightweightPyramid.objects.select_related("dataset")), pk=pk)
    if write and not rules.can_change(request.user, run):
        raise PermissionDenied("Only the dataset's coordinators may change this.")
    return run


@login_required
def runs(request):
    datasets = rules.coordinated_datasets(request.user)
    form = RunCreateForm(request.POST or None, datasets=datasets)
    if request.method == "POST" and form.is_valid():
        run = form.save(commit=False)  # the form offers only the datasets this user coordinates
        run.created_by = request.user
        run.save()
        return redirect("lightweight:run", pk=run.pk)
    visible = rules.visible(request.user, LightweightPyramid.objects.select_related("dataset")).order_by(
        "dataset__name", "name"
    )
    return render(request, "lightweight/runs.html", {"runs": visible, "form": form, "can_create": datasets.exists()})


@login_required
def run_page(request, pk):
    run = _run(request, pk)
    settings_form = RunSettingsForm(instance=run)
    data = dashboard.dashboard(run)
    comparison = data["comparison"]
    links = list(run.links.order_by("-active", "kind", "batch", "created_at"))  # open ones first
    for link in links:
        link.url = request.build_absolute_uri(reverse("lightweight:crowd", args=[link.token]))
    sample_report = request.session.pop(SAMPLE_REPORT, None)
    return render(
        request,
        "lightweight/run.html",
        {
            "run": run,
            "settings_form": settings_form,
            "upload_form": UploadForm(),
            "data": data,
            "links": links,
            "sample_report": sample_report,
            "sample_short": any(r["short"] for r in sample_report or ()),
            "lite_chart": charts.lite_rows(comparison["systems"]) if comparison else None,
            "lite_csv": reverse("lightweight:chart_csv", args=[run.pk]),
            "dropped": LiteStatement.objects.filter(pyramid=run, kept=False).select_related("topic")[:200],
            **_workers_context(request, run),
        },
    )


def _workers_context(request, run) -> dict:
    """The run page's workers part: submissions with their codes (verified ones apart from the
    others), the last code check's report, the forms."""
    return {
        "verified": codes.submissions(run, True, SUBMISSIONS_SHOWN),
        "verified_count": codes.count_submissions(run, True),
        "unverified": codes.submissions(run, False, SUBMISSIONS_SHOWN),
        "unverified_count": codes.count_submissions(run, False),
        "code_report": request.session.pop(CODE_REPORT, None),
        "code_form": CodeCheckForm(),
        "submissions_csv": f"/api/lightweight/{run.pk}/submissions/?format=csv",
    }


@login_required
def chart_csv(request, pk):
    """The rows of the lightweight-against-expert chart (one per system) as CSV."""
    run = _run(request, pk)
    comparison = dashboard.dashboard(run)["comparison"]
    stream = io.StringIO()
    write_rows(
        stream,
        *downloads.with_provenance(
            charts.lite_rows(comparison["systems"]) if comparison else [],
            charts.LITE_KEYS,
            downloads.provenance(**vars(scores.settings_of(run))),
        ),
        "csv",
    )
    response = HttpResponse(stream.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = downloads.content_disposition(
        downloads.download_name(run.dataset, f"lightweight-{run.name}-systems-chart", "csv")
    )
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
    data = dashboard.dashboard(run)
    return render(
        request,
        "lightweight/run.html",
        {
            "run": run,
            "settings_form": form,
            "upload_form": UploadForm(),
            "data": data,
            "links": [],
            "lite_chart": None,
            "dropped": [],
            **_workers_context(request, run),
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
def run_action(request, pk, action):
    """The protocol's steps, each a POST button on the run page (the run's coordinators only: anyone
    else gets 404 or 403 whatever the method, before a GET is sent back to the run page)."""
    run = _run(request, pk, write=True)
    if request.method != "POST":
        return redirect("lightweight:run", pk=pk)
    if action == "filter":
        counts = lightweight_work.apply_filters(run)
        dropped = sum(n for reason, n in counts.items() if reason != "kept")
        messages.success(request, f"Filters applied: {counts.get('kept', 0)} kept, {dropped} dropped.")
    elif action in ("sample", "top-up"):
        reports = lightweight_work.sample(run, top_up_short=action == "top-up")
        request.session[SAMPLE_REPORT] = [r.__dict__ for r in reports]
        sampled = sum(sum(r.batches) for r in reports)
        messages.success(
            request, f"Sampled {count_noun(sampled, 'statement')} over {count_noun(len(reports), 'topic')}."
        )
    elif action == "from-expert":
        pyramids = Pyramid.objects.filter(topic__dataset=run.dataset, status=Pyramid.Status.DONE)
        created = lightweight_work.statements_from_expert(run, pyramids)
        messages.success(
            request, f"{created} statement{'s' if created != 1 else ''} taken from the expert pyramids' SCUs."
        )
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
        messages.success(
            request,
            "Link reopened: workers can use it again."
            if link.active
            else "Link closed: workers who open it are told it is closed; what they submitted is kept.",
        )
    elif action == "upload":
        form = UploadForm(request.POST, request.FILES)
        if not form.is_valid():
            messages.error(request, "Choose a file to import.")
        else:
            upload = form.cleaned_data["file"]
            if upload.size > importing.MAX_FILE_BYTES:
                messages.error(request, "The file is too large.")
            else:
                try:
                    report = importing.import_text(run, upload.read().decode("utf-8"), upload.name)
                except UnicodeDecodeError:
                    messages.error(request, f"{upload.name} is not UTF-8 text: nothing was imported.")
                else:
                    if report.error:
                        messages.error(request, f"{upload.name}: {report.error}. Nothing was imported.")
                    else:
                        messages.success(request, report.line())
    elif action == "check-codes":
        _check_codes(request, run)
    elif action in ("pseudonymise", "delete-workers"):
        if not ConfirmForm(request.POST).is_valid():
            messages.error(request, "Nothing was changed: tick the box to confirm.")
        elif action == "pseudonymise":
            count = privacy.pseudonymise(run)
            messages.success(
                request,
                f"Worker ids pseudonymised: {count} submission{'s' if count != 1 else ''} changed; the "
                "scores stay the same.",
            )
        else:
            count = privacy.delete_worker_ids(run)
            messages.success(
                request,
                f"Worker ids deleted from {count} submission{'s' if count != 1 else ''}; the scores are "
                "being recomputed.",
            )
    else:
        return HttpResponse("Unknown step.", status=404)
    return redirect("lightweight:run", pk=run.pk)


def _check_codes(request, run) -> None:
    """Check the platform's (worker, code) pairs; the report is shown once on the run page."""
    form = CodeCheckForm(request.POST, request.FILES)
    try:
        if not form.is_valid():
            raise ValidationError(" ".join(e for errors in form.errors.values() for e in errors))
        pairs = read_code_pairs(form.text())
    except (ValidationError, LightweightFormatError) as error:
        messages.error(
            request,
            f"Nothing was checked: {' '.join(error.messages) if isinstance(error, ValidationError) else error}.",
        )
        return
    report = codes.check(run, pairs)
    request.session[CODE_REPORT] = report.as_dict()
    messages.success(
        request,
        f"{report.pairs} pair{'s' if report.pairs != 1 else ''} checked: {report.verified} submission"
        f"{'s' if report.verified != 1 else ''} newly verified, {report.unmatched_count} matching nothing.",
    )


# --- crowd ---------------------------------------------------------------------------------------


def _throttled(request) -> HttpResponse | None:
    throttle = CrowdThrottle()
    if throttle.allow_request(request, None):
        return None
    response = render(
        request,
        "lightweight/crowd_message.html",
        {
            "title": "Please slow down",
            "message": "Too many requests from your connection. Please wait a minute and reload.",
        },
        status=429,
    )
    response["Retry-After"] = str(int(throttle.wait() or 60))
    return response


def _session_key(link: CrowdLink) -> str:
    return f"crowd-worker-{link.pk}"


@csrf_exempt  # checked in the view, except on MTurk's framed pages (see below)
def crowd(request, token):
    """A crowd link: the worker id from the platform's URL parameters (MTurk, Prolific) or asked
    once (kept in the session for that link), then one piece of work at a time.

    MTurk shows the page in a frame on its own site, where the browser sends this site's cookies
    neither for the session nor for the CSRF check: the worker is named by the URL on every
    request, and those requests skip the CSRF check, which would protect nothing there (anyone
    can post what the URL names). Every other submission is CSRF-checked as usual."""
    refused = _throttled(request)
    if refused:
        return refused
    link = lightweight_work.link_of(token)
    if link is None:
        raise Http404("No such crowd link.")
    if not link.active:  # closed by the coordinators: say so (410), rather than a bare "not found"
        return render(
            request,
            "lightweight/crowd_message.html",
            {
                "title": "This link is closed",
                "message": "The work behind this link has ended. Thank you for your interest.",
            },
            status=410,
        )
    try:
        visit = platforms.visit_of(request.GET)
    except lightweight_work.WorkError as error:
        return render(
            request,
            "lightweight/crowd_message.html",
            {"title": "This link cannot be used", "message": str(error)},
            status=400,
        )
    mturk = visit is not None and visit.platform == Platform.MTURK
    if request.method == "POST" and not mturk:
        rejected = CsrfViewMiddleware(lambda r: None).process_view(request, None, (), {})
        if rejected is not None:
            return rejected
    if visit is not None:
        response = _platform_visit(request, link, visit)
        if mturk:  # shown in MTurk's frame, and nowhere else's
            response.xframe_options_exempt = True
            framework_internals.replace_csp(response, {"frame-ancestors": list(platforms.MTURK_SITES)})
        return response
    worker = request.session.get(_session_key(link))
    if worker is None or "change" in request.GET:
        form = (
            WorkerForm(request.POST or None)
            if request.method == "POST" and "worker" in request.POST
            else WorkerForm(initial={"worker": worker or request.GET.get("worker", "")})
        )
        if request.method == "POST" and form.is_valid():
            try:
                request.session[_session_key(link)] = lightweight_work.clean_worker_id(form.cleaned_data["worker"])
                # This page without its query (``?change``); not ``redirect()``, which first tries
                # the path as a view's name to reverse (5 ms of a profiled request).
                return HttpResponseRedirect(request.path)
            except lightweight_work.WorkError as error:
                form.add_error("worker", str(error))
        return render(request, "lightweight/crowd_worker.html", {"form": form, "link": link})
    return _work(request, link, worker)


def _kept_keys(request) -> dict:
    try:
        keys = signing.loads(request.COOKIES.get(KEY_COOKIE, ""), salt=KEY_COOKIE)
    except signing.BadSignature:
        return {}
    return keys if isinstance(keys, dict) else {}


def _work(request, link, worker, visit=None):
    """The worker's piece of work, with its key: on a page load the key the browser presents for
    this worker (its cookie) is checked, or issued when the worker id is new to the run, or a decoy
    when the id has another key (``lightweight_work.worker_key``: the page then looks as a new
    worker's, and tells every worker new to this browser to continue in the one it started in); a
    submission carries it (form or cookie) to the service, which refuses it without.

    Where the browser keeps no cookie (MTurk's frame with third-party cookies blocked), the page
    keeps the key in the site's storage (crowd.js, per top-level site: kept from one HIT to the
    next): a page whose key was just issued (``key_fresh``) is posted again with the stored key
    (``RESUME``), which is answered as a page load presenting it. The post is CSRF-checked as
    every other, except in MTurk's frame (``crowd``)."""
    kept = _kept_keys(request)
    name = f"{link.pyramid_id}:{worker}"
    presented = request.POST.get("key") or kept.get(name, "")
    resumed = RESUME in request.POST
    submitting = request.method == "POST" and not resumed
    key, decoy = (presented, False) if submitting else lightweight_work.worker_key(link.pyramid_id, worker, presented)
    page = {"link": link, "worker": worker, "visit": visit, "key": key, "key_fresh": key != presented and not resumed}
    work = _writing if link.kind == CrowdLink.Kind.WRITING else _judging
    response = work(request, page, crowd_client(request, key, decoy), submitting)
    if kept.get(name) != key and key:
        kept.pop(name, None)
        keys = {**dict(list(kept.items())[-(KEYS_KEPT - 1) :]), name: key}
        secure = settings.SESSION_COOKIE_SECURE or request.is_secure()
        response.set_cookie(
            KEY_COOKIE,
            signing.dumps(keys, salt=KEY_COOKIE),
            max_age=KEY_COOKIE_SECONDS,
            httponly=True,
            path="/lightweight/crowd/",
            secure=secure,
            samesite="None" if secure else "Lax",
        )
    return response


def _platform_visit(request, link, visit):
    """A worker sent by MTurk or Prolific: its id comes from the URL. MTurk's preview shows the
    work without taking a hold or accepting answers; an MTurk assignment already handed in shows
    its end again (one assignment, one piece of work)."""
    if visit.preview:
        return _preview(request, link)
    done = platforms.submitted(link, visit)
    if done is not None:
        return _done(request, link, visit.worker, done.completion_code, visit)
    return _work(request, link, visit.worker, visit)


def _preview(request, link):
    work = platforms.preview_work(link)
    status = 400 if request.method == "POST" else 200
    error = "This is a preview: accept the HIT on MTurk to start." if request.method == "POST" else None
    if work is None:
        return render(
            request,
            "lightweight/crowd_message.html",
            {"title": "Nothing to preview", "message": "There is no work behind this link yet."},
            status=status,
        )
    if link.kind == CrowdLink.Kind.WRITING:
        return render(
            request,
            "lightweight/crowd_write.html",
            {
                "link": link,
                "reference": work,
                "form": WritingForm(count=link.pyramid.statements_per_writer),
                "preview": True,
                "error": error,
            },
            status=status,
        )
    return render(
        request,
        "lightweight/crowd_judge.html",
        {"link": link, "task": work, "judgments": _judgments(work, preview=True), "preview": True, "error": error},
        status=status,
    )


def _judgments(task, chosen=None, missing=frozenset(), preview=False) -> list[dict]:
    """The judging page's statements, each with its radio buttons' extra attributes (`` checked``,
    `` disabled``) written here: the template's per-statement conditions were a third of the
    page's rendering. Strings: no number formatting."""
    chosen, off = chosen or {}, " disabled" if preview else ""
    return [
        {
            "name": f"a{s.pk}",
            "text": s.text,
            "number": str(n),
            "missing": s.pk in missing,
            "present": (" checked" if chosen.get(s.pk) == "present" else "") + off,
            "absent": (" checked" if chosen.get(s.pk) == "absent" else "") + off,
        }
        for n, s in enumerate(lightweight_work.task_statements(task), start=1)
    ]


def _pk(value) -> int:
    """A posted id, 0 (matches nothing) when it is not a small number."""
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) < 10 else 0


def _done(request, link, worker, code, visit=None):
    """The completion code, and the platform's way of handing the work in."""
    ending = platforms.ending(visit, code, link.pyramid.prolific_code)
    response = render(
        request,
        "lightweight/crowd_done.html",
        {
            "link": link,
            "worker": worker,
            "code": code,
            "ending": ending,
            "visit": visit,
            "query": visit.query() if visit else "",
        },
    )
    if ending and "mturk" in ending:  # the form posts to MTurk's site
        framework_internals.update_csp(response, {"form-action": [ending["origin"]]})
    return response


def _finished_ending(link, worker, visit) -> dict | None:
    """The platform's ending for a worker told there is nothing (more) for it: a Prolific worker
    who did some work here (and came back with "Do another task first") still gets its completion
    link. ``worker``: as ``CrowdClient.record_of`` gives it."""
    if visit is None or visit.platform != Platform.PROLIFIC:
        return None
    run = link.pyramid
    if not (
        LiteAssignment.objects.filter(task__pyramid=run, worker_id=worker).exists()
        or LiteWriting.objects.filter(pyramid=run, worker_id=worker).exists()
    ):
        return None
    return platforms.ending(visit, "", run.prolific_code)


def _writing(request, page, client, submitting):
    link, worker, visit = page["link"], page["worker"], page["visit"]
    run = link.pyramid
    if submitting:
        reference = get_object_or_404(
            ReferenceSummary, pk=_pk(request.POST.get("reference")), topic__dataset=run.dataset
        )
        form = WritingForm(request.POST, count=run.statements_per_writer)
        if form.is_valid():
            try:
                writing = lightweight_work.submit_writing(
                    run, reference, worker, form.texts(), client, record=visit.record() if visit else None
                )
                return _done(request, link, worker, writing.completion_code, visit)
            except lightweight_work.WorkError as error:
                form.add_error(None, str(error))
        status = 400
    else:
        reference = lightweight_work.next_reference(run, worker, client)
        if reference is None:
            return render(
                request,
                "lightweight/crowd_message.html",
                {
                    **page,
                    "title": "Thank you",
                    "message": "There is no more statement writing for you here.",
                    "ending": _finished_ending(link, client.record_of(worker), visit),
                },
            )
        form = WritingForm(count=run.statements_per_writer)
        status = 200
    # Not with a refused submission, whose key was not checked here (as on the judging page).
    done = None if submitting else LiteWriting.objects.filter(pyramid=run, worker_id=client.record_of(worker)).count()
    return render(
        request,
        "lightweight/crowd_write.html",
        {**page, "reference": reference, "form": form, "done": done},
        status=status,
    )


def _no_task(request, page, client):
    """No task for this worker: none left, or every one it could judge held by other workers now
    (one may come back when a hold expires, so the worker is asked to return, not thanked off).
    A Prolific worker who did some work gets its completion link either way."""
    link, worker, visit = page["link"], page["worker"], page["visit"]
    wait = lightweight_work.seconds_until_free(link, worker, client)
    ending = _finished_ending(link, client.record_of(worker), visit)
    if wait is None:
        return render(
            request,
            "lightweight/crowd_message.html",
            {
                **page,
                "title": "Thank you",
                "ending": ending,
                "message": (
                    "There is no task left for you here: please return this HIT on MTurk."
                    if visit and visit.platform == Platform.MTURK
                    else "There are no more tasks for you here."
                ),
            },
        )
    response = render(
        request,
        "lightweight/crowd_message.html",
        {**page, "title": "Please come back soon", "message": lightweight_work.ALL_RESERVED, "ending": ending},
    )
    response["Retry-After"] = str(wait)
    return response


def _judging(request, page, client, submitting):
    """The judging page and its submission. The statements are rendered by the template directly,
    not through a form of 16 radio fields: the page is what a crowd loads hundreds of times a
    minute, and form rendering was most of its CPU. A submission needs only the task's statement
    ids (no statement or summary text) unless it is refused and the page is shown again."""
    link, worker, visit = page["link"], page["worker"], page["visit"]
    run = link.pyramid
    chosen, missing, error = {}, set(), None
    if submitting:
        # Submitted by the task's id: the service reads the task as it locks it. Only a refused
        # submission reads it here, to show the page again with the answers given.
        answers = {name[1:]: value for name, value in request.POST.items() if name[:1] == "a" and name[1:].isdigit()}
        try:
            assignment = lightweight_work.submit_judgments(
                link, _pk(request.POST.get("task")), worker, answers, client, record=visit.record() if visit else None
            )
            return _done(request, link, worker, assignment.completion_code, visit)
        except lightweight_work.UnknownTask:
            raise Http404("No such task in this evaluation.") from None
        except lightweight_work.WorkError as refused:
            error = str(refused)
        task = get_object_or_404(
            LiteTask.objects.only("id", "pyramid_id", "batch", "peer_id", "statement_ids"),
            pk=_pk(request.POST.get("task")),
            pyramid=run,
        )
        chosen = {pk: request.POST.get(f"a{pk}") for pk in task.statement_ids}
        missing = {pk for pk, value in chosen.items() if value not in JUDGING_ANSWERS}
        if missing:
            error = "Please answer every statement: your other answers are kept."
        status = 400
    else:
        try:
            task = lightweight_work.next_task(link, worker, client)
        except lightweight_work.HoldLimit as limit:
            response = render(
                request,
                "lightweight/crowd_message.html",
                {**page, "title": "Please come back soon", "message": str(limit)},
                status=429,
            )
            response["Retry-After"] = str(limit.retry_after)
            return response
        if task is None:
            return _no_task(request, page, client)
        status = 200
    judgments = _judgments(task, chosen, missing)
    # Read with the task when it was chosen for showing (``next_task``); not shown again with a
    # refused submission, whose key was not checked here (a decoy's would be the worker's count).
    done = getattr(task, "worker_done", None)
    return render(
        request,
        "lightweight/crowd_judge.html",
        {**page, "task": task, "judgments": judgments, "error": error, "done": done},
        status=status,
    )
