"""Coordinator dashboards: progress and assignments, agreement, scores, meta-evaluation.

Every page is for the coordinators of its dataset (and superusers): an anonymous user is sent to
the login page, a user who coordinates nothing gets 403, a dataset the user does not coordinate is
a 404 (``access.rules.coordinated_datasets`` decides, in one place). The figures come from the stored dashboard snapshot
(``annotation.dashboards.snapshots``), computed in the background; the page polls
``status.json`` and swaps in the new figures when a new snapshot lands. Charts are drawn in the
browser by Chart.js (served by the app, ``frontend/vendor.py``) from the rows of ``charts``.
"""

from __future__ import annotations

import io
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as format_date
from django.views.decorators.http import require_POST

from annotation.access.rules import coordinated_datasets, is_coordinator  # who may see and run a dataset's dashboards
from annotation.adjudication import reannotation
from annotation.adjudication.models import Adjudication
from annotation.adjudication.pyramids import adjudicated_pyramid_topics
from annotation.adjudication.services import adjudicated_version
from annotation.api import downloads
from annotation.api.choices import choose
from annotation.corpus.models import Assignment, PeerSummary, Topic
from annotation.corpus.natural_order import natural_key as _natural
from annotation.corpus.wording import count_noun
from annotation.dashboards.figures import METAEVAL_KEYS, SYSTEM_KEYS
from annotation.dashboards.judgments import (
    JudgmentImportError,
    parse_duc_table,
    parse_judgments_csv,
    read_duc_header,
    save_judgments,
)
from annotation.dashboards.models import Judgment
from annotation.dashboards.snapshots import RETRY_AFTER_SECONDS, schedule, snapshot_for
from annotation.dashboards.statistics import TABLES as STATISTICS_TABLES
from annotation.dashboards.statistics import download_rows as statistics_rows
from annotation.jobs.queue import scoring_delayed
from annotation.peers.assignments import progress
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import (
    AGREEMENT_KEYS,
    SCORE_KEYS,
    counted,
    not_counted,
    progress_counting,
    score_annotations,
    shared_groups,
    write_rows,
)
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids import automatic_peer_scores, construction
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.agreement import alpha_dice, peer_matrix
from scoring.correlation import NOISE, above_noise
from scoring.model import Convention

from . import charts
from .forms import AssignmentFilter, AssignmentForm, JudgmentUploadForm, StatusForm, judgment_max_bytes

CONVENTIONS = [c.value for c in Convention]
SCORES = ("original", "modified", "modified_jk")
METAEVAL_SCORES = ("modified", "modified_jk")


# --- who may see what ---------------------------------------------------------------------------


def coordinator_view(view):
    @login_required
    @wraps(view)
    def wrapped(request, *args, dataset_id=None, **kwargs):
        if not is_coordinator(request.user):  # 403 for an annotator, 404 below for a coordinator of other datasets
            raise PermissionDenied("The dashboards are for coordinators.")
        if dataset_id is None:
            return view(request, *args, **kwargs)
        dataset = coordinated_datasets(request.user).filter(pk=dataset_id).first()
        if dataset is None:
            raise Http404("No such dataset among those you coordinate.")
        try:
            return view(request, dataset, *args, **kwargs)
        except FiguresComputing:
            return _computing(request, dataset, view.__name__)

    return wrapped


class FiguresComputing(Exception):
    """The dataset has no stored snapshot yet: its first one is scheduled (``snapshot_for``)."""


def _stored(dataset):
    """``snapshot_for``, never computed here: with none stored yet the view stops and answers
    ``_computing`` (a page that reloads itself, or 503 for a download)."""
    snapshot, current = snapshot_for(dataset)
    if snapshot is None:
        raise FiguresComputing()
    return snapshot, current


DOWNLOADS = {"agreement_export", "scores_export", "chart_export", "statistics_export", "metaeval_export"}
COMPUTING = (
    "The figures of this dataset are being computed for the first time (a few seconds on a large "
    "dataset); try again in a moment."
)


def _computing(request, dataset, view_name: str) -> HttpResponse:
    """While a dataset's first snapshot is computed: downloads answer 503 with Retry-After (never a
    partial file); pages render the page's frame saying so, and ``live.js`` reloads them when the
    snapshot lands."""
    if view_name in DOWNLOADS:
        response = HttpResponse(COMPUTING + "\n", status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    active = next((name for name, _ in TABS if view_name.startswith(name)), "overview")
    return render(
        request,
        "dashboards/computing.html",
        _frame(dataset, active, None, False, computing=True, page_label=dict(TABS)[active]),
    )


# --- shared page parts ----------------------------------------------------------------------


def _as_of(moment) -> str:
    return format_date(timezone.localtime(moment), "Y-m-d H:i:s T")


TABS = [
    ("overview", "Overview"),
    ("agreement", "Agreement"),
    ("scores", "Scores"),
    ("significance", "Significance"),
    ("metaeval", "Meta-evaluation"),
]


SCORE_PAGES = (
    "scores",
    "significance",
    "metaeval",
)  # pages whose figures rest on scores: they say when some are adjudicated


def _frame(dataset, active: str, snapshot=None, current=True, **extra) -> dict:
    context = {
        "dataset": dataset,
        "active": active,
        "tabs": [
            {"url": reverse(f"dashboards:{name}", args=[dataset.pk]), "label": label, "active": name == active}
            for name, label in TABS
        ],
        "snapshot": snapshot,
        "current": current,
        "delayed": None if current else scoring_delayed(),
    }
    if active in SCORE_PAGES:
        context["adjudicated_peers"] = Adjudication.objects.filter(annotation__peer__topic__dataset=dataset).count()
        context["adjudicated_pyramids"] = adjudicated_pyramid_topics(dataset)
    if snapshot is not None:
        context |= {"computed_at_iso": snapshot.computed_at.isoformat(), "as_of": _as_of(snapshot.computed_at)}
    return context | extra


def _shared_now(dataset, topic=None) -> str:
    """How many peers two or more annotators have annotated now (live, not the stored figures), as
    text ("" for none): an empty agreement section says "none yet" only when this is "" too, and
    otherwise that their figures are on the way (the snapshot predates them)."""
    topics = dataset.topics.all() if topic is None else dataset.topics.filter(external_id=topic)
    n = len(shared_groups(topics))
    return count_noun(n, "peer") if n else ""


def _convention(request) -> str:
    return choose(request.GET, "convention", CONVENTIONS, "nist")


def _query(request, **changes) -> str:
    """The current query string with some parameters changed (None removes one)."""
    params = {k: v for k, v in request.GET.items()}
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return "?" + urlencode(params) if params else "?"


def _links(request, param: str, options, current: str) -> list[dict]:
    """A segmented control: one link per option, the other parameters kept."""
    return [
        {"label": label, "url": _query(request, **{param: value}), "on": value == current} for value, label in options
    ]


def _convention_links(request, convention: str) -> list[dict]:
    return _links(request, "convention", [(c, c) for c in CONVENTIONS], convention)


def _sorted(rows: list[dict], sort: str, allowed: tuple[str, ...], default: str) -> tuple[list[dict], str]:
    """Rows sorted by ``sort`` (a key, "-" for descending); missing values always last."""
    key = sort.lstrip("-")
    if key not in allowed:
        sort, key = default, default.lstrip("-")
    descending = sort.startswith("-")

    def order(row):
        v = row.get(key)
        if isinstance(v, str):
            return (0, _natural(v))
        return (0, (v,)) if v is not None else (1, ())

    present = [r for r in rows if r.get(key) is not None]
    missing = [r for r in rows if r.get(key) is None]
    return sorted(present, key=order, reverse=descending) + missing, sort


def _headers(request, param: str, columns: list[tuple[str, str]], current: str, **changes) -> list[dict]:
    """Sortable column headers: clicking sorts descending for numbers first, then toggles
    (``changes``: other parameters changed too, e.g. ``tpage=None``: a new order starts on page 1)."""
    out = []
    for key, label in columns:
        active = current.lstrip("-") == key
        descending = current.startswith("-")
        target = (key if descending else f"-{key}") if active else (key if key in TEXT_COLUMNS else f"-{key}")
        out.append(
            {
                "key": key,
                "label": label,
                "url": _query(request, **{param: target}, **changes),
                "active": active,
                "direction": ("descending" if descending else "ascending") if active else "",
            }
        )
    return out


TEXT_COLUMNS = {"system", "kind", "topic", "summary", "annotator"}
TOPIC_PAGE_SIZE = 50  # rows of the scores page's per-topic table per page (the downloads hold them all)


def _page(request, param: str, rows: list, size: int, anchor: str = "") -> dict:
    """One page of ``rows`` (``?param=n``, 1-based; out of range or not a number: the nearest page)
    and the links to the others: previous/next and page numbers (the first, the last and two either
    side of the current one; ``None`` marks a gap). The other parameters are kept."""
    pages = max(1, -(-len(rows) // size))
    raw = request.GET.get(param, "1")
    number = min(max(int(raw), 1), pages) if raw.isdigit() else 1
    suffix = f"#{anchor}" if anchor else ""

    def url(n):
        return _query(request, **{param: None if n == 1 else str(n)}) + suffix

    shown = sorted({1, pages} | {n for n in range(number - 2, number + 3) if 1 <= n <= pages})
    links = []
    for n in shown:
        if links and links[-1] is not None and n - links[-1]["number"] > 1:
            links.append(None)
        links.append({"number": n, "url": url(n), "current": n == number})
    start = (number - 1) * size
    return {
        "rows": rows[start : start + size],
        "number": number,
        "pages": pages,
        "total": len(rows),
        "first": start + 1 if rows else 0,
        "last": min(start + size, len(rows)),
        "previous": url(number - 1) if number > 1 else None,
        "next": url(number + 1) if number < pages else None,
        "links": links,
    }


def _download(dataset, table: str, rows, keys, fmt: str, *, convention: str, qualifiers=(), **settings) -> HttpResponse:
    """A table as a file named and stamped by ``api.downloads`` (``settings``: what else,
    besides the convention, produced its numbers)."""
    rows, keys = downloads.with_provenance(rows, keys, downloads.provenance(convention=convention, **settings))
    stream = io.StringIO()
    write_rows(stream, rows, keys, fmt)
    content_type = "application/json" if fmt == "json" else "text/csv; charset=utf-8"
    response = HttpResponse(stream.getvalue(), content_type=content_type)
    response["Content-Disposition"] = downloads.content_disposition(
        downloads.download_name(dataset, table, fmt, convention=convention, qualifiers=qualifiers)
    )
    return response


def _summaries(references: bool) -> str:
    return "with-references" if references else "peers-only"


# --- dataset list and overview --------------------------------------------------------------


@coordinator_view
def dataset_list(request):
    datasets = (
        coordinated_datasets(request.user)
        .annotate(
            n_topics=Count("topics", distinct=True),
            n_annotations=Count("topics__pyramids__annotations", distinct=True),
            n_assignments=Count("topics__assignments", distinct=True),
        )
        .order_by("name")
    )
    return render(request, "dashboards/list.html", {"datasets": datasets})


def _annotator_names(dataset) -> list[str]:
    return sorted(set(Assignment.objects.filter(topic__dataset=dataset).values_list("annotator__username", flat=True)))


def _overview_context(request, dataset, form=None, status_errors=None) -> dict:
    filters = AssignmentFilter(request.GET or None, annotators=_annotator_names(dataset))
    wanted = filters.values()
    topics = list(dataset.topics.order_by("external_id"))
    assignments = list(
        Assignment.objects.filter(topic__dataset=dataset)
        .select_related("annotator", "topic")
        .order_by("task", "annotator__username")
    )
    pyramids = {
        row["topic"]: row
        for row in Pyramid.objects.filter(topic__dataset=dataset)
        .values("topic")
        .annotate(n=Count("id"), done=Count("id", filter=Q(status=Pyramid.Status.DONE)))
    }
    peers = dict(
        PeerSummary.objects.filter(topic__dataset=dataset)
        .values("topic")
        .annotate(n=Count("id"))
        .values_list("topic", "n")
    )
    annotated = {
        row["peer__topic"]: row
        for row in PeerAnnotation.objects.filter(peer__topic__dataset=dataset)
        .values("peer__topic")
        .annotate(
            peers=Count("peer", distinct=True),
            done=Count("peer", distinct=True, filter=progress_counting()),
            annotations=Count("id"),
            annotators=Count("annotator", distinct=True, filter=progress_counting()),
        )
    }  # as the scores count
    again = reannotation.by_topic(dataset)  # annotator -> peers no longer scored since adjudication
    by_cell: dict[tuple, list] = {}
    for a in assignments:
        by_cell.setdefault((a.topic_id, a.task), []).append(a)
    status_errors = status_errors or {}

    def matches(a):
        return (
            (not wanted["task"] or a.task == wanted["task"])
            and (not wanted["annotator"] or a.annotator.username == wanted["annotator"])
            and (not wanted["status"] or wanted["status"] == "unassigned" or a.status == wanted["status"])
        )

    filtering = any(wanted.values())
    rows = []
    for topic in topics:
        cells, keep = [], not filtering
        for task, label in Assignment.Task.choices:
            items = []
            for a in by_cell.get((topic.pk, task), []):
                if wanted["status"] != "unassigned" and matches(a):
                    p = progress(a)
                    items.append(
                        {
                            "assignment": a,
                            "progress": p,
                            "percent": round(100 * p.done / p.total) if p.total else 0,
                            "errors": status_errors.get(a.pk),
                        }
                    )
            unassigned = not by_cell.get((topic.pk, task))
            if items or (
                wanted["status"] == "unassigned" and unassigned and (not wanted["task"] or wanted["task"] == task)
            ):
                keep = True
            cells.append(
                {
                    "task": task,
                    "label": label,
                    "items": items,
                    "unassigned": unassigned,
                    "hidden": len(by_cell.get((topic.pk, task), [])) - len(items),
                }
            )
        if not keep:
            continue
        p, ann = pyramids.get(topic.pk, {}), annotated.get(topic.pk, {})
        rows.append(
            {
                "topic": topic,
                "cells": cells,
                "pyramids": p.get("n", 0),
                "pyramids_done": p.get("done", 0),
                "peers": peers.get(topic.pk, 0),
                "peers_annotated": ann.get("peers", 0),
                "peers_done": ann.get("done", 0),
                "annotations": ann.get("annotations", 0),
                "annotators": ann.get("annotators", 0),
                "reannotate": sorted(again.get(topic.pk, {}).items()),
            }
        )
    totals = {
        "topics": len(topics),
        "pyramids_done": sum(1 for t in topics if pyramids.get(t.pk, {}).get("done")),
        "peers": sum(peers.values()),
        "peers_done": sum(r.get("done", 0) for r in annotated.values()),
        "double": sum(1 for r in annotated.values() if r["annotators"] >= 2),
        "assignments": len(assignments),
        "assignments_done": sum(a.status == Assignment.Status.DONE for a in assignments),
        "reannotate": sum(len(peers) for who in again.values() for peers in who.values()),
        "reannotate_topics": sum(1 for t in topics if again.get(t.pk)),
    }
    return _frame(
        dataset,
        "overview",
        rows=rows,
        totals=totals,
        filters=filters,
        filtering=filtering,
        form=form or AssignmentForm(dataset=dataset),
        statuses=Assignment.Status.choices,
        filter_query=request.GET.urlencode(),
    )


@coordinator_view
def overview(request, dataset):
    return render(request, "dashboards/overview.html", _overview_context(request, dataset))


def _back_to_overview(request, dataset):
    """Back to the overview with the filters the form was posted from (only the known ones)."""
    from django.http import QueryDict

    kept = QueryDict(request.POST.get("filters", ""))
    params = {k: kept[k] for k in ("task", "status", "annotator") if kept.get(k)}
    url = reverse("dashboards:overview", args=[dataset.pk])
    return redirect(url + ("?" + urlencode(params) if params else ""))


@require_POST
@coordinator_view
def assignment_create(request, dataset):
    form = AssignmentForm(request.POST, dataset=dataset)
    if form.is_valid():
        a = form.save(created_by=request.user)
        if a is not None:
            messages.success(
                request, f"Assigned {a.annotator.username} to {a.get_task_display().lower()} on {a.topic.external_id}."
            )
            return _back_to_overview(request, dataset)
    return render(request, "dashboards/overview.html", _overview_context(request, dataset, form=form), status=400)


def _assignment(dataset, assignment_id) -> Assignment:
    return get_object_or_404(
        Assignment.objects.select_related("annotator", "topic"), pk=assignment_id, topic__dataset=dataset
    )


@require_POST
@coordinator_view
def assignment_update(request, dataset, assignment_id):
    a = _assignment(dataset, assignment_id)
    form = StatusForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "dashboards/overview.html",
            _overview_context(request, dataset, status_errors={a.pk: form.errors["status"]}),
            status=400,
        )
    a.status = form.cleaned_data["status"]
    a.save(update_fields=["status"])
    said = (
        f"{a.annotator.username} — {a.get_task_display().lower()} on {a.topic.external_id}: "
        f"{a.get_status_display().lower()}."
    )
    kept = reannotation.kept_open(a) if form.cleaned_data["status"] == Assignment.Status.DONE else None
    if kept:
        messages.warning(request, f"{said} {kept}")
    else:
        messages.success(request, said)
    return _back_to_overview(request, dataset)


@require_POST
@coordinator_view
def assignment_delete(request, dataset, assignment_id):
    a = _assignment(dataset, assignment_id)
    a.delete()
    messages.success(
        request,
        f"Removed {a.annotator.username}'s assignment to {a.get_task_display().lower()} on "
        f"{a.topic.external_id} (work already done is kept).",
    )
    return _back_to_overview(request, dataset)


# --- status of the stored figures -----------------------------------------------------------


@coordinator_view
def status(request, dataset):
    snapshot, current = snapshot_for(dataset)
    if snapshot is None:  # the first snapshot is being computed
        return JsonResponse({"computed_at": None, "current": False, "as_of": None, "computing": True})
    return JsonResponse(
        {"computed_at": snapshot.computed_at.isoformat(), "current": current, "as_of": _as_of(snapshot.computed_at)}
    )


# --- agreement ------------------------------------------------------------------------------


def _matrix(pairs: list[dict]) -> dict:
    names = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs})
    cell = {(p["a"], p["b"]): p for p in pairs} | {(p["b"], p["a"]): p for p in pairs}
    return {
        "names": names,
        "rows": [{"name": a, "cells": [{"self": a == b, "pair": cell.get((a, b))} for b in names]} for a in names],
    }


def _topic_agreement(payload: dict, convention: str, topic: str):
    figures = payload["conventions"][convention]
    row = next((r for r in figures["agreement"] if r["topic"] == topic), None)
    if row is None:
        return None, None
    return row, figures["agreement_details"][topic]


def _comparison(row, detail) -> dict:
    a, b = detail["compared"]
    points = [
        {"peer": p["peer"], "x": p["modified"][a], "y": p["modified"][b], "flagged": p["flagged"], "diff": p["diff"]}
        for p in detail["peers"]
        if p["modified"].get(a) is not None and p["modified"].get(b) is not None
    ]
    return {"a": a, "b": b, "points": points}


@coordinator_view
def agreement(request, dataset):
    snapshot, current = _stored(dataset)
    convention = _convention(request)
    figures = snapshot.data["conventions"][convention]
    rows = [{"row": r, "detail": figures["agreement_details"][r["topic"]]} for r in figures["agreement"]]
    shared_now = _shared_now(dataset) if not rows or not snapshot.data["pairs"] else ""
    return render(
        request,
        "dashboards/agreement.html",
        _frame(
            dataset,
            "agreement",
            snapshot,
            current,
            convention=convention,
            convention_links=_convention_links(request, convention),
            rows=rows,
            matrix=_matrix(snapshot.data["pairs"]),
            noise=NOISE,
            query=request.GET.urlencode(),
            shared_now=shared_now,
            construction=construction.dataset_section(dataset, Convention(convention)),
            adjudicated_peers=Adjudication.objects.filter(annotation__peer__topic__dataset=dataset).count(),
            topics_with_adjudicated_pyramid=adjudicated_pyramid_topics(dataset),
        ),
    )


@coordinator_view
def agreement_topic(request, dataset, topic):
    snapshot, current = _stored(dataset)
    convention = _convention(request)
    row, detail = _topic_agreement(snapshot.data, convention, topic)
    if row is None:
        shared_now = _shared_now(dataset, topic)
        if not shared_now:
            raise Http404("No peer of this topic was annotated by two annotators.")
        return render(
            request,
            "dashboards/agreement_topic.html",
            _frame(
                dataset,
                "agreement",
                snapshot,
                current,
                convention=convention,
                convention_links=_convention_links(request, convention),
                topic=topic,
                shared_now=shared_now,
            ),
        )
    comparison = _comparison(row, detail)
    peers = [
        p | {"a_score": p["modified"].get(comparison["a"]), "b_score": p["modified"].get(comparison["b"])}
        for p in sorted(detail["peers"], key=lambda p: _natural(p["peer"]))
    ]
    return render(
        request,
        "dashboards/agreement_topic.html",
        _frame(
            dataset,
            "agreement",
            snapshot,
            current,
            convention=convention,
            convention_links=_convention_links(request, convention),
            topic=topic,
            row=row,
            detail=detail,
            peers=peers,
            comparison=comparison,
            noise=NOISE,
            agreement_chart=charts.agreement_rows(comparison),
            agreement_csv=_chart_url(dataset, "agreement", {"convention": convention, "topic": topic}),
        ),
    )


def peer_drilldown(topic: Topic, peer: PeerSummary, pyramid: Pyramid, convention: Convention) -> dict:
    """SCU by SCU, what each annotator found in one peer (counts), computed from the data."""
    annotations = list(
        counted(PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid, annotator__isnull=False))
        .select_related("annotator")
        .order_by("annotator__username")
    )
    scoring_pyramid = load_pyramids([pyramid.pk])[pyramid.pk]
    inputs = load_annotations(a.pk for a in annotations)
    names = [a.annotator.username for a in annotations]
    weights = {s.uid: scoring_pyramid.weight(s, convention) for s in scoring_pyramid.scus}
    labels = dict(SCU.objects.filter(pyramid=pyramid).values_list("uid", "label"))
    counts = {a.annotator.username: dict(inputs[a.pk].matches) for a in annotations}
    matrix = peer_matrix([s.uid for s in scoring_pyramid.scus], counts)
    alpha = alpha_dice(matrix) if len(names) >= 2 else None
    scus = []
    for uid in sorted(weights, key=lambda u: (-weights[u], u)):
        found = [counts[n].get(uid, 0) for n in names]
        if any(found):
            scus.append(
                {
                    "uid": uid,
                    "weight": weights[uid],
                    "label": labels.get(uid, ""),
                    "counts": found,
                    "disagree": len(set(found)) > 1,
                }
            )
    scores = score_annotations(annotations, convention)
    per_annotator = [
        {"name": a.annotator.username, "score": scores[a.pk], "non_matching": inputs[a.pk].non_matching}
        for a in annotations
    ]
    return {
        "names": names,
        "scus": scus,
        "alpha": alpha,
        "annotators": per_annotator,
        "units": len(weights),
        "nobody": len(weights) - len(scus),
        "disagreements": sum(s["disagree"] for s in scus),
    }


@coordinator_view
def agreement_peer(request, dataset, topic, peer):
    topic_obj = get_object_or_404(Topic, dataset=dataset, external_id=topic)
    peer_obj = get_object_or_404(PeerSummary, topic=topic_obj, external_id=peer)
    pyramids = Pyramid.objects.filter(annotations__peer=peer_obj).distinct().order_by("id")
    wanted = request.GET.get("pyramid")
    pyramid = pyramids.filter(pk=wanted).first() if wanted and wanted.isdigit() else pyramids.first()
    if pyramid is None:
        raise Http404("Nobody annotated this peer.")
    snapshot, current = _stored(dataset)
    convention = _convention(request)
    drill = peer_drilldown(topic_obj, peer_obj, pyramid, Convention(convention))
    row, detail = _topic_agreement(snapshot.data, convention, topic)
    context = {
        "topic": topic,
        "peer": peer_obj,
        "pyramid": pyramid,
        "pyramids": list(pyramids),
        "drill": drill,
        "adjudicated": adjudicated_version(peer_obj, pyramid),
        "convention": convention,
        "convention_links": _convention_links(request, convention),
        "noise": NOISE,
        "row": row,
        "detail": detail,
    }
    if row is not None:
        label = next((p["peer"] for p in detail["peers"] if p["summary"] == peer and p["pyramid"] == pyramid.pk), peer)
        comparison = _comparison(row, detail)
        context |= {
            "comparison": comparison,
            "agreement_chart": charts.agreement_rows(comparison, highlight=label),
            "agreement_csv": _chart_url(dataset, "agreement", {"convention": convention, "topic": topic}),
            "this": next((p for p in detail["peers"] if p["peer"] == label), None),
        }
    names = drill["names"]
    if len(names) >= 2:
        a, b = (context["comparison"]["a"], context["comparison"]["b"]) if row is not None else names[:2]
        values = {x["name"]: x["score"].modified for x in drill["annotators"]}
        if values.get(a) is not None and values.get(b) is not None:
            diff = abs(values[a] - values[b])
            context["peer_diff"] = {"a": a, "b": b, "value": diff, "flagged": above_noise(diff)}
    return render(request, "dashboards/agreement_peer.html", _frame(dataset, "agreement", snapshot, current, **context))


@coordinator_view
def agreement_export(request, dataset, fmt):
    snapshot, _ = _stored(dataset)
    convention = _convention(request)
    rows = snapshot.data["conventions"][convention]["agreement"]
    return _download(dataset, "agreement", rows, AGREEMENT_KEYS, fmt, convention=convention, include_unfinished=False)


# --- scores ---------------------------------------------------------------------------------

TOPIC_COLUMNS = [
    ("topic", "Topic"),
    ("summary", "Summary"),
    ("kind", "Kind"),
    ("annotator", "Annotator"),
    ("version", "Version"),
    ("modified", "Modified"),
    ("modified_jk", "Modified (jk)"),
    ("original", "Original"),
    ("matched_scus", "SCUs"),
    ("repetitions", "Rep."),
    ("non_matching", "Non-match."),
    ("observed_weight", "Weight"),
]
SYSTEM_COLUMNS = [
    ("system", "System"),
    ("kind", "Kind"),
    ("topics", "Topics"),
    ("original", "Original"),
    ("modified", "Modified"),
    ("modified_jk", "Modified (jk)"),
]


def _score_view(request, snapshot) -> dict:
    convention = _convention(request)
    references = request.GET.get("references", "0") == "1"
    figures = snapshot.data["conventions"][convention]
    per_topic = [r for r in figures["per_topic"] if references or r["kind"] == "peer"]
    per_system = [r for r in figures["per_system"] if references or r["kind"] == "peer"]
    return {
        "convention": convention,
        "references": references,
        "compared": "modified_jk" if references else "modified",
        "per_topic": per_topic,
        "per_system": per_system,
        "tiers": figures["tiers"],
    }


@coordinator_view
def scores(request, dataset):
    snapshot, current = _stored(dataset)
    view = _score_view(request, snapshot)
    compared = view["compared"]
    per_system, system_sort = _sorted(
        view["per_system"], request.GET.get("sort", ""), tuple(k for k, _ in SYSTEM_COLUMNS), f"-{compared}"
    )
    topic_filter = request.GET.get("topic", "")
    topic_rows = [r for r in view["per_topic"] if not topic_filter or r["topic"] == topic_filter]
    topic_rows, topic_sort = _sorted(
        topic_rows, request.GET.get("tsort", ""), tuple(k for k, _ in TOPIC_COLUMNS), "topic"
    )
    topic_page = _page(request, "tpage", topic_rows, TOPIC_PAGE_SIZE, anchor="per-topic")
    topics = sorted({r["topic"] for r in view["per_topic"]})
    links = {
        f"{table}_{fmt}": reverse("dashboards:scores_export", args=[dataset.pk, fmt])
        + "?"
        + urlencode({"convention": view["convention"], "references": int(view["references"]), "table": table})
        for table in ("topics", "systems")
        for fmt in ("csv", "json")
    }
    stats = _view_statistics(snapshot, view["convention"], view["references"])
    chart_params = {"convention": view["convention"], "references": int(view["references"])}
    chart_data = {
        "systems": charts.system_rows(view["per_system"], stats, compared),
        "tiers": charts.tier_rows(view["tiers"]),
    }
    chart_csv = {name: _chart_url(dataset, name, chart_params) for name in chart_data}
    view = {k: v for k, v in view.items() if k != "per_system"}
    intervals = {s["system"]: s for s in stats["systems"]}
    per_system = [
        r | {"interval": intervals.get(r["system"]) if r["kind"] in KINDS[stats["name"]] else None} for r in per_system
    ]
    unfinished = not_counted(PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset))
    unfinished["csv"] = (
        reverse("api:dataset-scores", args=[dataset.pk])
        + "?"
        + urlencode({"format": "csv", "convention": view["convention"], "include_unfinished": "true"})
    )
    return render(
        request,
        "dashboards/scores.html",
        _frame(
            dataset,
            "scores",
            snapshot,
            current,
            **view,
            unfinished=unfinished,
            convention_links=_convention_links(request, view["convention"]),
            per_system=per_system,
            topic_rows=topic_page["rows"],
            topic_page=topic_page,
            topic_page_size=TOPIC_PAGE_SIZE,
            system_headers=_headers(request, "sort", SYSTEM_COLUMNS, system_sort),
            topic_headers=_headers(request, "tsort", TOPIC_COLUMNS, topic_sort, tpage=None),
            chart_data=chart_data,
            chart_csv=chart_csv,
            pyramids=len(view["tiers"]),
            topics=topics,
            pyramids_now=0 if view["tiers"] else Pyramid.objects.filter(topic__dataset=dataset).count(),
            topic_filter=topic_filter,
            stats=stats,
            statistics_downloads=_statistics_downloads(dataset, view["convention"]),
            downloads=links,
            reference_links=_links(
                request,
                "references",
                [("0", "peers only"), ("1", "peers + references")],
                "1" if view["references"] else "0",
            ),
        ),
    )


@coordinator_view
def scores_export(request, dataset, fmt):
    snapshot, _ = _stored(dataset)
    view = _score_view(request, snapshot)
    table = choose(request.GET, "table", ("topics", "systems"), "topics")
    summaries = {
        "qualifiers": [_summaries(view["references"])],
        "references": view["references"],
        "include_unfinished": False,
    }
    adjudicated = adjudicated_pyramid_topics(dataset)
    if adjudicated:  # the topics whose scores rest on their adjudicated pyramid (the rows say so too)
        summaries["adjudicated_pyramid_topics"] = adjudicated
    if table == "systems":
        return _download(
            dataset, "systems", view["per_system"], SYSTEM_KEYS, fmt, convention=view["convention"], **summaries
        )
    return _download(dataset, "scores", view["per_topic"], SCORE_KEYS, fmt, convention=view["convention"], **summaries)


# --- significance ---------------------------------------------------------------------------

KINDS = {"peers": ("peer",), "peers+references": ("peer", "reference")}


def _view_statistics(snapshot, convention: str, references: bool) -> dict:
    """The stored statistics of one view (peers on modified, or peers + references on modified_jk)."""
    stats = snapshot.data["conventions"][convention]["statistics"]
    name = "peers+references" if references else "peers"
    return stats["views"][name] | {
        "name": name,
        "settings": stats["settings"],
        "percent": round(100 * stats["settings"]["confidence"]),
    }


def _statistics_downloads(dataset, convention: str) -> dict:
    return {
        table: _export_url("dashboards:statistics_export", dataset, "csv", {"convention": convention, "table": table})
        for table in STATISTICS_TABLES
    }


def _export_url(name: str, dataset, fmt: str, params: dict) -> str:
    return reverse(name, args=[dataset.pk, fmt]) + "?" + urlencode(params)


def significance_matrix(systems: list[dict], pairs: list[dict]) -> list[dict]:
    """One row per system (best first): per other system "better", "worse" or "same" at the
    Holm-adjusted level, with the pair's figures for the cell's tooltip."""
    by_pair = {}
    for p in pairs:
        by_pair[(p["a"], p["b"])] = (p, 1)
        by_pair[(p["b"], p["a"])] = (p, -1)
    names = [s["system"] for s in systems]
    rows = []
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append({"self": True})
                continue
            pair, sign = by_pair[(a, b)]
            verdict = (
                "untested"
                if pair["p_value"] is None
                else "same"
                if not pair["significant"]
                else ("better" if pair["better"] == a else "worse")
            )
            cells.append(
                {
                    "other": b,
                    "verdict": verdict,
                    "pair": pair,
                    "difference": None if pair["difference"] is None else sign * pair["difference"],
                }
            )
        rows.append({"system": a, "cells": cells})
    return rows


def few_topics(pairs: list[dict], alpha: float) -> dict:
    """Why pairs sharing few topics are seldom told apart: over n topics a sign-flip p-value is at
    least 2/2^n, and Holm's first (strictest) threshold is alpha / tested pairs. ``needed``: the
    fewest shared topics that can pass it; ``pairs``: tested pairs sharing fewer."""
    tested = [p for p in pairs if p["p_value"] is not None]
    threshold = alpha / max(len(tested), 1)
    needed = 1
    while 2 / 2**needed >= threshold:
        needed += 1
    return {
        "tested": len(tested),
        "threshold": threshold,
        "needed": needed,
        "pairs": sum(p["n"] < needed for p in tested),
    }


def _curve(points: list[dict]) -> list[dict]:
    return [p for p in points if p["mean"] is not None]


@coordinator_view
def significance(request, dataset):
    snapshot, current = _stored(dataset)
    convention = _convention(request)
    references = request.GET.get("references", "0") == "1"
    stats = _view_statistics(snapshot, convention, references)
    n = len(stats["systems"])
    significant = sum(p["significant"] for p in stats["pairs"])
    scu_tests = stats.get("scu_tests", [])
    return render(
        request,
        "dashboards/significance.html",
        _frame(
            dataset,
            "significance",
            snapshot,
            current,
            convention=convention,
            convention_links=_convention_links(request, convention),
            references=references,
            reference_links=_links(
                request, "references", [("0", "peers only"), ("1", "peers + references")], "1" if references else "0"
            ),
            stats=stats,
            matrix=significance_matrix(stats["systems"], stats["pairs"]),
            pairs_total=n * (n - 1) // 2,
            significant=significant,
            few=few_topics(stats["pairs"], stats["settings"]["alpha"]),
            scu_tests=scu_tests,
            scu_significant=sum(t["significant"] for t in scu_tests),
            stability=({"references": _curve(stats["reference_stability"])} if "reference_stability" in stats else {})
            | {"topics": _curve(stats["topic_stability"])},
            downloads=_statistics_downloads(dataset, convention),
            stability_charts={
                curve: [r for r in charts.stability_rows(stats) if r["curve"] == curve]
                for curve in ("references", "topics")
            },
            stability_csv=_chart_url(dataset, "stability", {"convention": convention, "references": int(references)}),
        ),
    )


def _chart_url(dataset, chart: str, params: dict) -> str:
    return reverse("dashboards:chart_export", args=[dataset.pk, chart]) + "?" + urlencode(params)


@coordinator_view
def chart_export(request, dataset, chart):
    """The rows behind one chart as CSV (the same rows the page hands to the chart)."""
    snapshot, _ = _stored(dataset)
    convention = _convention(request)
    references = request.GET.get("references", "0") == "1"
    if chart == "systems":
        view = _score_view(request, snapshot)
        rows = charts.system_rows(
            view["per_system"], _view_statistics(snapshot, convention, references), view["compared"]
        )
    elif chart == "tiers":
        rows = charts.tier_rows(snapshot.data["conventions"][convention]["tiers"])
    elif chart == "stability":
        rows = charts.stability_rows(_view_statistics(snapshot, convention, references))
    elif chart == "agreement":
        row, detail = _topic_agreement(snapshot.data, convention, request.GET.get("topic", ""))
        if row is None:
            raise Http404("No peer of this topic was annotated by two annotators.")
        rows = charts.agreement_rows(_comparison(row, detail))
    else:
        raise Http404("No such chart.")
    settings = (
        {
            "qualifiers": [_summaries(references)],
            "references": references,
            "seed": snapshot.data["conventions"][convention]["statistics"]["settings"]["seed"],
        }
        if chart in ("systems", "stability")
        else {}
    )
    if chart == "agreement":
        settings = {"qualifiers": [request.GET.get("topic", "")], "topic": request.GET.get("topic", "")}
    return _download(dataset, f"{chart}-chart", rows, charts.KEYS[chart], "csv", convention=convention, **settings)


@coordinator_view
def statistics_export(request, dataset, fmt):
    snapshot, _ = _stored(dataset)
    convention = _convention(request)
    table = choose(request.GET, "table", STATISTICS_TABLES, "systems")
    figures = snapshot.data["conventions"][convention]
    rows, keys = statistics_rows(figures, table)
    return _download(
        dataset,
        f"statistics-{table}",
        rows,
        keys,
        fmt,
        convention=convention,
        seed=figures["statistics"]["settings"]["seed"],
        adjudicated_pyramid_topics=adjudicated_pyramid_topics(dataset) or None,
    )


# --- meta-evaluation ------------------------------------------------------------------------


def _metaeval_rows(snapshot, convention: str, score: str) -> list[dict]:
    """Peers only with ``modified``, peers + references with ``modified_jk`` (SacreROUGE's footing
    for references), unless one score is asked for."""
    tables = snapshot.data["conventions"][convention]["metaeval"]
    if score in tables:
        return tables[score]
    return [r for r in tables["modified"] if r["summarizers"] == "peers"] + [
        r for r in tables["modified_jk"] if r["summarizers"] == "peers+references"
    ]


def _with_intervals(rows: list[dict], found: list[dict]) -> list[dict]:
    """Each row with its correlations' bootstrap intervals where they were computed (the rows shown
    by default: peers on modified, peers + references on modified_jk)."""
    by_key = {(f["metric"], f["summarizers"], f["score"]): f["levels"] for f in found}
    out = []
    for r in rows:
        levels = by_key.get((r["metric"], r["summarizers"], r["score"]))
        out.append(r | {"intervals": levels[r["level"]] if levels else None})
    return out


def _metaeval_groups(rows: list[dict]) -> list[dict]:
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(r["metric"], []).append(r)
    order = {
        ("peers", "summary"): 0,
        ("peers", "system"): 1,
        ("peers+references", "summary"): 2,
        ("peers+references", "system"): 3,
    }
    return [
        {"metric": m, "rows": sorted(rs, key=lambda r: order[(r["summarizers"], r["level"])])}
        for m, rs in sorted(groups.items())
    ]


@coordinator_view
def metaeval(request, dataset):
    form, errors, status_code = JudgmentUploadForm(), None, 200
    if request.method == "POST":
        form = JudgmentUploadForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            if data["format"] == "csv":
                parsed = parse_judgments_csv(data["text"])
            else:
                parsed = parse_duc_table(
                    data["text"], read_duc_header(data["header_text"]), linguistic=data["linguistic"]
                )
            try:
                result = save_judgments(dataset, parsed, source=data["file"].name[:500])
            except JudgmentImportError as error:
                errors = error.errors
            else:
                transaction.on_commit(lambda: schedule([dataset.pk]))
                parts = [f"{result.created} new", f"{result.updated} updated", f"{result.unchanged} unchanged"]
                if result.duplicates:
                    parts.append(f"{count_noun(result.duplicates, 'repeated row')} accepted once")
                if result.empty:
                    parts.append(f"{count_noun(result.empty, 'empty cell')} (no judgment)")
                if result.skipped_rows:
                    parts.append(result.skipped_text)
                messages.success(
                    request,
                    f"Imported {', '.join(result.metrics) or 'nothing'} from {result.source}: {', '.join(parts)}.",
                )
                if result.left_rows:
                    messages.warning(request, f"{result.left_text}.")
                query = request.GET.urlencode()
                return redirect(reverse("dashboards:metaeval", args=[dataset.pk]) + (f"?{query}" if query else ""))
        status_code = 400
    snapshot, current = _stored(dataset)
    convention = _convention(request)
    score = request.GET.get("score", "auto")
    rows = _with_intervals(
        _metaeval_rows(snapshot, convention, score), snapshot.data["conventions"][convention]["metaeval_intervals"]
    )
    sources = list(
        Judgment.objects.filter(topic__dataset=dataset)
        .values("metric")
        .annotate(n=Count("id"), topics=Count("topic", distinct=True), sources=Count("source", distinct=True))
        .order_by("metric")
    )
    links = {
        fmt: reverse("dashboards:metaeval_export", args=[dataset.pk, fmt])
        + "?"
        + urlencode({"convention": convention, "score": score})
        for fmt in ("csv", "json")
    }
    automatic = automatic_peer_scores.dataset_correlation(
        dataset, snapshot.data["conventions"][convention]["per_topic"], convention
    )
    return render(
        request,
        "dashboards/metaeval.html",
        _frame(
            dataset,
            "metaeval",
            snapshot,
            current,
            convention=convention,
            convention_links=_convention_links(request, convention),
            score=score,
            automatic=automatic,
            groups=_metaeval_groups(rows),
            form=form,
            settings=snapshot.data["conventions"][convention]["statistics"]["settings"],
            interval_download=_export_url(
                "dashboards:statistics_export", dataset, "csv", {"convention": convention, "table": "metaeval"}
            ),
            errors=errors,
            shown_errors=(errors or [])[:200],
            metrics=sources,
            judgments_now=count_noun(sum(m["n"] for m in sources), "judgment"),
            max_bytes=judgment_max_bytes(),
            downloads=links,
            max_judgments=f"{django_settings.METAEVAL_MAX_JUDGMENTS:,}",
            max_metrics=django_settings.METAEVAL_MAX_METRICS,
            score_links=_links(
                request,
                "score",
                [
                    ("auto", "SacreROUGE (modified; modified_jk with references)"),
                    ("modified", "modified"),
                    ("modified_jk", "modified_jk"),
                ],
                score,
            ),
        ),
        status=status_code,
    )


@coordinator_view
def metaeval_export(request, dataset, fmt):
    snapshot, _ = _stored(dataset)
    convention = _convention(request)
    score = request.GET.get("score", "auto") if request.GET.get("score") in METAEVAL_SCORES else "auto"
    rows = [{k: v for k, v in r.items() if k != "skipped"} for r in _metaeval_rows(snapshot, convention, score)]
    return _download(
        dataset, "metaeval", rows, METAEVAL_KEYS, fmt, convention=convention, qualifiers=[score], score=score
    )
