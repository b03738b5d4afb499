"""Set-up pages: thin views over the corpus and transfer services (datasets, topic_setup, topic_editing, uploads).

Who: every page needs a login; a dataset's pages are for whoever may change the dataset under the
one access rule (``annotation.access.rules``): a dataset you may not see is a 404, one you see
but may not change (an annotator's) a 403. Creating a dataset is for coordinators
(``permissions.may_create_dataset``).

Uploads are bounded before anything is read: a request larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE``
is refused from its Content-Length (``bounded_upload``); CSRF is still checked, after that.
"""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetConfirmView
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from annotation.access import rules
from annotation.corpus import datasets, topic_editing, topic_setup
from annotation.corpus import people as accounts
from annotation.corpus.models import Assignment, Dataset, Topic
from annotation.corpus.wording import count_noun
from annotation.formats.summary_texts import PatternError
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid
from annotation.transfer import pyramid_sets
from annotation.transfer import uploads as upload_import
from annotation.transfer.ducview_import import file_kind

from .forms import (
    AccountForm,
    BuildingForm,
    DatasetForm,
    ExistingUserForm,
    PyramidSetForm,
    SummaryAddForm,
    SummaryTextForm,
    TopicDeleteForm,
    TopicRenameForm,
    TopicTextsForm,
    TopicZipForm,
)


def dataset_view(view):
    """Login, then the dataset through the access rule: 404 if not visible, 403 if not changeable."""

    @login_required
    @wraps(view)
    def wrapped(request, dataset_id, *args, **kwargs):
        dataset = get_object_or_404(rules.visible(request.user, Dataset.objects.all()), pk=dataset_id)
        if not rules.can_change(request.user, dataset):
            raise PermissionDenied("Only the dataset's coordinators may set it up.")
        return view(request, dataset, *args, **kwargs)

    return wrapped


def max_request_bytes() -> int:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def bounded_upload(view):
    """Refuse a request body over the limit from its Content-Length, before anything reads it
    (CsrfViewMiddleware would parse and spool it): csrf_exempt outside, csrf_protect inside, as
    Django's documentation does for per-request upload handling."""
    protected = csrf_protect(view)

    @csrf_exempt
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if request.method == "POST" and length > max_request_bytes():
            return render(
                request,
                "setup/too_large.html",
                {"size": filesizeformat(length), "limit": filesizeformat(max_request_bytes())},
                status=413,
            )
        return protected(request, *args, **kwargs)

    return wrapped


def _tabs(dataset, active: str) -> list[dict]:
    pages = [
        ("setup:dataset", "Topics"),
        ("setup:topics_add", "Add topics"),
        ("setup:topics_zip", "Add topics from a zip"),
        ("setup:ducview", "Import DUCView"),
        ("setup:pyramid_set", "Import a pyramid set"),
        ("setup:people", "People"),
        ("setup:exports", "Export"),
    ]
    return [
        {"url": reverse(name, args=[dataset.pk]), "label": label, "active": name == active} for name, label in pages
    ]


def _frame(dataset, active: str, **extra) -> dict:
    return {"dataset": dataset, "tabs": _tabs(dataset, active), "active": active} | extra


@login_required
def landing(request):
    """``/setup/``: the datasets one sets up are listed, each with its set-up link and "New dataset",
    on the dataset list (one list of a coordinator's datasets, not a second copy here)."""
    if not rules.is_coordinator(request.user):
        raise PermissionDenied("The set-up pages are for coordinators; ask one to add you to a dataset.")
    return redirect("dashboards:list")


@login_required
def dataset_create(request):
    if not rules.may_create_dataset(request.user):
        raise PermissionDenied("Only coordinators start datasets; ask one to add you.")
    form = DatasetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        dataset = datasets.create_dataset(request.user, form.cleaned_data["name"], form.cleaned_data["description"])
        messages.success(request, f"Dataset “{dataset.name}” created: you coordinate it. Add its topics next.")
        return redirect("setup:dataset", dataset.pk)
    return render(request, "setup/dataset_new.html", {"form": form}, status=400 if form.errors else 200)


@dataset_view
def dataset(request, dataset):
    topics = dataset.topics.annotate(
        n_references=Count("referencesummarys", distinct=True),
        n_peers=Count("peersummarys", distinct=True),
        n_pyramids=Count("pyramids", distinct=True),
    ).order_by("external_id")
    building = BuildingForm(initial={"assisted_building": dataset.assisted_building})
    return render(request, "setup/dataset.html", _frame(dataset, "setup:dataset", topics=topics, building=building))


@dataset_view
@require_POST
def building(request, dataset):
    """Turn the builder's proposals on or off for the dataset (``Dataset.assisted_building``)."""
    form = BuildingForm(request.POST)
    form.is_valid()  # one optional checkbox: always valid
    assisted = form.cleaned_data["assisted_building"]
    if assisted != dataset.assisted_building:
        datasets.set_assisted_building(dataset, assisted)
    messages.success(
        request,
        "The pyramid builder proposes contributors and SCUs in this dataset."
        if assisted
        else "Pyramids of this dataset are built unassisted: the builder proposes nothing.",
    )
    return redirect("setup:dataset", dataset.pk)


# --- one topic: its page, its summaries, its deletion (rules: corpus.topic_editing) -----------


def _topic(dataset, topic_id: int) -> Topic:
    """The dataset's topic, or 404: a topic of another dataset is never shown to exist."""
    return get_object_or_404(Topic, pk=topic_id, dataset=dataset)


def _topic_page(request, dataset, topic, rename_form=None, add_form=None, status=200):
    context = _frame(
        dataset,
        "setup:dataset",
        topic=topic,
        references=topic_editing.summary_rows(topic, "reference"),
        peers=topic_editing.summary_rows(topic, "peer"),
        rename_form=rename_form
        or TopicRenameForm(initial={"external_id": topic.external_id, "title": topic.title}, prefix="topic"),
        add_form=add_form or SummaryAddForm(prefix="add"),
    )
    return render(request, "setup/topic.html", context, status=status)


@dataset_view
def topic(request, dataset, topic_id):
    """A topic's references and peers with what rests on each; renaming it; adding a summary."""
    topic = _topic(dataset, topic_id)
    if request.method != "POST":
        return _topic_page(request, dataset, topic)
    which = request.POST.get("form")
    if which == "rename":
        form = TopicRenameForm(request.POST, prefix="topic")
        if form.is_valid():
            old = topic.external_id
            try:
                renamed = topic_editing.rename_topic(
                    topic, form.cleaned_data["external_id"], form.cleaned_data["title"]
                )
            except topic_editing.EditRefused as error:
                form.add_error(error.field, str(error))
            else:
                messages.success(
                    request,
                    f"Topic {old} renamed {topic.external_id}." if renamed else f"Topic {topic.external_id} saved.",
                )
                return redirect("setup:topic", dataset.pk, topic.pk)
        return _topic_page(request, dataset, topic, rename_form=form, status=400)
    if which == "add":
        form = SummaryAddForm(request.POST, prefix="add")
        if form.is_valid():
            data = form.cleaned_data
            try:
                added = topic_editing.add_summary(topic, data["kind"], data["external_id"], data["text"])
            except topic_editing.EditRefused as error:
                form.add_error(error.field, str(error))
            else:
                messages.success(
                    request, f"{data['kind'].capitalize()} {added.external_id} added to topic {topic.external_id}."
                )
                return redirect("setup:topic", dataset.pk, topic.pk)
        return _topic_page(request, dataset, topic, add_form=form, status=400)
    return _topic_page(request, dataset, topic, status=400)


def _summary_or_404(dataset, topic_id: int, kind: str, summary_id: int):
    topic = _topic(dataset, topic_id)
    row = topic_editing.summary_row(topic, kind, summary_id)
    if row is None:
        raise Http404(f"Topic {topic.external_id} has no such {kind}.")
    return topic, row


@dataset_view
def summary(request, dataset, topic_id, kind, summary_id):
    """One reference or peer: its text, editable while nothing rests on it, read-only with the
    reasons otherwise; removal from here too."""
    topic, row = _summary_or_404(dataset, topic_id, kind, summary_id)
    form, refused, status = SummaryTextForm(initial={"text": row.summary.text}), None, 200
    if request.method == "POST":
        form = SummaryTextForm(request.POST)
        if form.is_valid():
            try:
                changed = topic_editing.edit_text(topic, kind, summary_id, form.cleaned_data["text"])
            except topic_editing.EditRefused as error:
                if error.field:
                    form.add_error(error.field, str(error))
                else:
                    refused = str(error)
            else:
                what = f"{kind.capitalize()} {row.summary.external_id}"
                messages.success(request, f"{what}: text saved." if changed else f"{what}: the text is unchanged.")
                return redirect("setup:topic", dataset.pk, topic.pk)
        topic, row = _summary_or_404(dataset, topic_id, kind, summary_id)
        status = 409 if refused else 400
    return render(
        request,
        "setup/summary.html",
        _frame(dataset, "setup:dataset", topic=topic, row=row, kind=kind, form=form, refused=refused),
        status=status,
    )


@dataset_view
@require_POST
def summary_remove(request, dataset, topic_id, kind, summary_id):
    """Remove a reference or peer nothing rests on (POST only), back to the topic with a message."""
    topic, row = _summary_or_404(dataset, topic_id, kind, summary_id)
    try:
        topic_editing.remove_summary(topic, kind, summary_id)
    except topic_editing.EditRefused as error:
        messages.error(request, f"Nothing was removed. {error}")
        return redirect("setup:summary", dataset.pk, topic.pk, kind, summary_id)
    messages.success(request, f"{kind.capitalize()} {row.summary.external_id} removed from topic {topic.external_id}.")
    return redirect("setup:topic", dataset.pk, topic.pk)


def _listed(items: list[dict]) -> str:
    words = [f"{item['count']} {item['label']}" for item in items]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@dataset_view
def topic_delete(request, dataset, topic_id):
    """GET: what deleting the topic removes, counted. POST: the delete, once the coordinator typed
    the topic id, and only if the counts are still those shown."""
    topic = _topic(dataset, topic_id)
    contents, changed, status = topic_editing.contents(topic), None, 200
    form = TopicDeleteForm()
    if request.method == "POST":
        form = TopicDeleteForm(request.POST)
        if form.is_valid():
            try:
                deleted = topic_editing.delete_topic(topic, form.cleaned_data["confirm"], form.cleaned_data["shown"])
            except topic_editing.ChangedMeanwhile as error:
                contents, changed = error.contents, str(error)
            except topic_editing.EditRefused as error:
                form.add_error(error.field, str(error))
            else:
                kept = [item for item in deleted.main if item["count"]]
                messages.success(
                    request,
                    f"Topic {topic.external_id} deleted"
                    + (f", with {_listed(kept)}." if kept else " (it held nothing)."),
                )
                return redirect("setup:dataset", dataset.pk)
        status = 409 if changed else 400
    return render(
        request,
        "setup/topic_delete.html",
        _frame(dataset, "setup:dataset", topic=topic, contents=contents, form=form, changed=changed),
        status=status,
    )


def _is_fragment(request) -> bool:
    """The page's script asks for the preview alone (the form and its files stay in the page)."""
    return request.headers.get("X-Preview") == "fragment"


def _saved(request, dataset, plan):
    """Write the plan and go to the topics with what was added; None if it was refused (the
    plan then lists why)."""
    try:
        applied = topic_setup.apply(dataset, plan)
    except topic_setup.PlanRejected:
        return None
    parts = [
        f"{count_noun(applied.topics, 'topic')}",
        f"{count_noun(applied.references, 'reference summary', 'reference summaries')}",
        f"{count_noun(applied.peers, 'peer summary', 'peer summaries')}",
    ]
    note = f" ({count_noun(applied.present, 'summary was', 'summaries were')} already there)" if applied.present else ""
    messages.success(request, f"Added {', '.join(parts)}{note}.")
    return redirect("setup:dataset", dataset.pk)


def _topics_form(request, dataset, form_class, make_plan, name: str):
    """GET: the empty form. POST: the preview (the whole page, or only the preview for the page's
    script), or, with action=save and a plan without problems, the plan written."""
    template, active = f"setup/{name}.html", f"setup:{name}"
    if request.method != "POST":
        return render(request, template, _frame(dataset, active, form=form_class(), plan=None))
    form = form_class(request.POST, request.FILES)
    plan = make_plan(form) if form.is_valid() else None
    if plan is not None and request.POST.get("action") == "save" and plan.ok:
        saved = _saved(request, dataset, plan)
        if saved is not None:
            return saved
    status = 400 if form.errors or (plan is not None and not plan.ok) else 200
    context = _frame(dataset, active, form=form, plan=plan)
    return render(request, "setup/_preview.html" if _is_fragment(request) else template, context, status=status)


@bounded_upload
@dataset_view
def topics_add(request, dataset):
    """One topic from pasted or uploaded texts, previewed before it is saved."""

    def make_plan(form):
        data = form.cleaned_data
        try:
            texts = {
                kind: topic_setup.read_text_upload(data[f"{field}_file"])
                if data.get(f"{field}_file")
                else data.get(f"{field}_text", "")
                for kind, field in (("reference", "references"), ("peer", "peers"))
            }
        except PatternError as error:
            form.add_error(None, str(error))
            return None
        return topic_setup.plan_topic(dataset, data["topic"], data["title"], texts, data["header_pattern"])

    return _topics_form(request, dataset, TopicTextsForm, make_plan, "topics_add")


@bounded_upload
@dataset_view
def topics_zip(request, dataset):
    """Many topics from a zip of text files named by patterns, previewed before they are saved."""

    def make_plan(form):
        data = form.cleaned_data
        return topic_setup.plan_zip(dataset, data["archive"], data["reference_names"], data["peer_names"])

    return _topics_form(request, dataset, TopicZipForm, make_plan, "topics_zip")


@bounded_upload
@dataset_view
def ducview(request, dataset):
    """Upload DUCView files or zips of them; the import report is shown (the API's import, the
    same service: ``upload_import``)."""
    context = _frame(
        dataset, "setup:ducview", limit=filesizeformat(max_request_bytes()), report=None, refused=None, ignored=[]
    )
    status = 200
    if request.method == "POST":
        uploads = request.FILES.getlist("files")
        if not uploads:
            context["refused"], status = "Choose one or more .pyr or .pan files, or .zip archives of them.", 400
        else:
            try:
                annotators = upload_import.read_annotator_table(request.FILES.get("annotators"))
                users = upload_import.read_user_map(request.POST.get("users"))
                files, ignored, archived = upload_import.collect_files(uploads)
                report = upload_import.import_files(
                    files, dataset, annotators=annotators, archived=archived, users=users
                )
            except upload_import.UploadRejected as error:
                context["refused"], status = f"{error}. Nothing was imported.", 400
            else:
                context |= {"report": report, "ignored": ignored, "names": ", ".join(u.name for u in uploads)}
    template = "setup/_import_report.html" if _is_fragment(request) else "setup/ducview.html"
    return render(request, template, context, status=status)


@bounded_upload
@dataset_view
def pyramid_set(request, dataset):
    """Several pyramids of the same texts (one per annotator, each file with its own copy of them)
    uploaded as one set into one topic, so their construction agreement is computed: the service
    of ``import_pyramid_set``, the whole set or nothing."""
    form = PyramidSetForm(request.POST or None)
    context = _frame(
        dataset,
        "setup:pyramid_set",
        form=form,
        limit=filesizeformat(max_request_bytes()),
        report=None,
        refused=None,
        ignored=[],
        agreement=None,
    )
    status = 200
    if request.method == "POST":
        try:
            files, topic = _pyramid_set_files(request, form), form.cleaned_data["topic"]
        except upload_import.UploadRejected as error:
            context["refused"], status = f"{error}. Nothing was imported.", 400
        else:
            report = pyramid_sets.import_pyramid_files(files, dataset, topic, whole=True)
            context |= {"report": report, "names": ", ".join(u.name for u in request.FILES.getlist("files"))}
            if report.rejected:
                context["refused"], status = " ".join(report.rejected) + " Nothing of the set was imported.", 400
            else:
                context["agreement"] = reverse("dashboards:construction_topic", args=[dataset.pk, topic])
    return render(request, "setup/pyramid_set.html", context, status=status)


def _pyramid_set_files(request, form) -> list[tuple[str, bytes]]:
    """The set's pyramids, by name (the first gives the texts); UploadRejected says what is wrong."""
    if not form.is_valid():
        raise upload_import.UploadRejected(
            "Name the topic the set goes into" + "".join(f" ({error})" for error in form.errors.get("topic", []))
        )
    uploads = request.FILES.getlist("files")
    if not uploads:
        raise upload_import.UploadRejected("Choose the .pyr files of the set, or a .zip of them")
    files, _, archived = upload_import.collect_files(uploads)
    if archived:
        raise upload_import.UploadRejected("This is a dataset archive: import it on Import DUCView")
    others = [name for name, data in files if file_kind(name, data) != "pyr"]
    if others:
        raise upload_import.UploadRejected(
            f"{others[0]}: a set holds pyramids (.pyr) only; import peer annotations on Import DUCView"
        )
    if len(files) < 2:
        raise upload_import.UploadRejected(
            "A set is two or more pyramids of the same texts; one pyramid is imported on Import DUCView"
        )
    return sorted(files)


@dataset_view
def exports(request, dataset):
    """Every file the API exports for this dataset, as links to the API (the same access rule)."""
    pyramids = (
        rules.visible(request.user, Pyramid.objects.filter(topic__dataset=dataset))
        .select_related("topic", "creator")
        .annotate(n_annotations=Count("annotations"))
        .order_by("topic__external_id", "pk")
    )
    annotations = {}
    for a in (
        rules.visible(request.user, PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset))
        .select_related("peer", "annotator")
        .order_by("peer__external_id")
    ):
        annotations.setdefault(a.pyramid_id, []).append(a)
    rows = [
        {"pyramid": p, "annotations": sorted(annotations.get(p.pk, []), key=lambda a: _natural(a.peer.external_id))}
        for p in pyramids
    ]
    return render(
        request, "setup/exports.html", _frame(dataset, "setup:exports", pyramids=rows, conventions=CONVENTIONS)
    )


CONVENTIONS = [{"value": "nist", "label": "NIST"}, {"value": "sacrerouge", "label": "SacreROUGE"}]


def _natural(text: str) -> tuple:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def _assigned_text(user, assigned, task: str) -> str:
    label = Assignment.Task(task).label.lower()
    text = ""
    if assigned.created:
        topics = ", ".join(a.topic.external_id for a in assigned.created)
        text = f" Assigned to {label} on {count_noun(len(assigned.created), 'topic')}: {topics}."
    if assigned.existing:
        text += f" Already assigned on {', '.join(t.external_id for t in assigned.existing)}."
    return text


@dataset_view
def people(request, dataset):
    """Annotators of the dataset: new accounts (initial password or invitation link), existing
    users added, assignments to many topics at once, new links for invitations not yet used."""
    account_form = AccountForm(dataset=dataset, prefix="new")
    existing_form = ExistingUserForm(dataset=dataset, prefix="existing")
    invitation, status = None, 200
    if request.method == "POST":
        which = request.POST.get("form")
        if which == "new":
            account_form = AccountForm(request.POST, dataset=dataset, prefix="new")
            if account_form.is_valid():
                data = account_form.cleaned_data
                try:
                    user = accounts.create_annotator(
                        data["username"],
                        name=data["name"],
                        email=data["email"],
                        password=data["password"] if data["access"] == "password" else None,
                    )
                except accounts.AccountError as error:
                    account_form.add_error(error.field, str(error))
                else:
                    assigned = accounts.assign(user, account_form.chosen_topics(), data["task"], request.user)
                    text = f"Account {user.username} created.{_assigned_text(user, assigned, data['task'])}"
                    if data["access"] == "password":
                        messages.success(request, text + " Give them their username and the initial password.")
                        return redirect("setup:people", dataset.pk)
                    # The link is a secret: shown once in this answer, never stored in a message.
                    messages.success(request, text)
                    invitation = {"user": user, "url": request.build_absolute_uri(accounts.invitation_path(user))}
                    account_form = AccountForm(dataset=dataset, prefix="new")
            if invitation is None:
                status = 400
        elif which == "existing":
            existing_form = ExistingUserForm(request.POST, dataset=dataset, prefix="existing")
            if existing_form.is_valid():
                user, task = existing_form.user, existing_form.cleaned_data["task"]
                assigned = accounts.assign(user, existing_form.chosen_topics(), task, request.user)
                messages.success(request, f"{user.username} added.{_assigned_text(user, assigned, task)}")
                return redirect("setup:people", dataset.pk)
            status = 400
        elif which == "link":
            rows = {str(row["user"].pk): row["user"] for row in accounts.people_of(dataset)}
            user = rows.get(request.POST.get("user", ""))
            if user is None or not accounts.is_pending_invitation(user):
                messages.error(
                    request, "No invitation to renew: that person has joined already, or is not in this dataset."
                )
                return redirect("setup:people", dataset.pk)
            invitation = {
                "user": user,
                "url": request.build_absolute_uri(accounts.invitation_path(user)),
                "renewed": True,
            }
    return render(
        request,
        "setup/people.html",
        _frame(
            dataset,
            "setup:people",
            people=accounts.people_of(dataset),
            coordinators=dataset.coordinators.order_by("username"),
            account_form=account_form,
            existing_form=existing_form,
            invitation=invitation,
            has_topics=dataset.topics.exists(),
            link_hours=settings.PASSWORD_RESET_TIMEOUT // 3600,
        ),
        status=status,
    )


class Invitation(PasswordResetConfirmView):
    """An invited annotator chooses a password (Django's reset-token check), then is logged in."""

    template_name = "setup/invitation.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"  # django-axes is a second backend
    success_url = "/"

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(
            self.request, f"Welcome, {form.user.username}: your password is set. These are your assignments."
        )
        return response
