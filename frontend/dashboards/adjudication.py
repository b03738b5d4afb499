"""The adjudication pages: one doubly annotated peer (``annotation/adjudication/services.py``), and
two pyramids of a topic (``annotation/adjudication/pyramids.py``).

Coordinator-only, and blind for everyone else: anyone who does not coordinate the dataset
(annotators included, unlike the dashboards' 403) gets the same 404 as for a peer that does not
exist, since the pages show annotators' work side by side. The POST is a plain form (CSRF
checked by the middleware) and redirects back to the page (post/redirect/get).
"""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.access.rules import coordinated_datasets
from annotation.adjudication import pyramid_merge, pyramids, services
from annotation.corpus.models import PeerSummary, Topic
from annotation.peers.models import PeerAnnotation
from annotation.peers.results import score_annotations
from annotation.pyramids.construction import pyramid_name
from annotation.pyramids.models import Pyramid
from scoring.model import Convention

from .views import _frame


def coordinator_only(view):
    """Logged in (else the login page), and a coordinator of this very dataset (else 404)."""

    @login_required
    @wraps(view)
    def wrapped(request, dataset_id, *args, **kwargs):
        dataset = coordinated_datasets(request.user).filter(pk=dataset_id).first()
        if dataset is None:
            raise Http404("No such peer among the datasets you coordinate.")
        return view(request, dataset, *args, **kwargs)

    return wrapped


def _cells(item: services.Item, text: str) -> list[list[dict]]:
    """Per source, the evidence of each of its matches: its text (parts joined by an ellipsis) and
    where it lies (the same words at two places are different evidence)."""
    return [
        [
            {"quote": " … ".join(text[s:e] for s, e in spans), "at": ", ".join(f"{s}–{e}" for s, e in spans)}
            for spans in matches
        ]
        for matches in item.matches
    ]


@coordinator_only
def adjudicate(request, dataset, topic, peer, pyramid_id):
    topic_obj = get_object_or_404(Topic, dataset=dataset, external_id=topic)
    peer_obj = get_object_or_404(PeerSummary, topic=topic_obj, external_id=peer)
    pyramid = get_object_or_404(Pyramid, topic=topic_obj, pk=pyramid_id)
    here = reverse("dashboards:adjudicate", args=[dataset.pk, topic, peer, pyramid.pk])
    try:
        comparison = services.compare(peer_obj, pyramid)
    except services.NotShared:
        raise Http404("Fewer than two annotators finished this peer: nothing to adjudicate.") from None
    posted = {}
    if request.method == "POST":
        posted = {item.key: request.POST.get(f"decision-{item.key}", "") for item in comparison.disagreements}
        try:
            services.adjudicate(peer_obj, pyramid, request.user, posted, request.POST.get("token", ""))
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, "Adjudicated version saved: scores of this peer now rest on it.")
            return redirect(here)
        comparison = services.compare(peer_obj, pyramid)  # as it is now (an annotator may have changed it)
    version = services.adjudicated_version(peer_obj, pyramid)
    previous = version.adjudication.decisions if version else {}
    scored = score_annotations(
        PeerAnnotation.objects.filter(pk__in=[s.pk for s in comparison.sources] + ([version.pk] if version else [])),
        Convention.NIST,
    )
    choices = comparison.choices()
    rows = [
        {
            "item": item,
            "cells": _cells(item, peer_obj.text),
            "counts": [len(m) for m in item.matches],
            "selected": posted.get(item.key) or previous.get(item.key, ""),
        }
        for item in comparison.items
    ]
    for row in rows:
        if row["selected"] not in choices:
            row["selected"] = ""
    return render(
        request,
        "dashboards/adjudicate.html",
        _frame(
            dataset,
            "agreement",
            topic=topic,
            peer=peer_obj,
            pyramid=pyramid,
            comparison=comparison,
            disagreements=[r for r in rows if r["item"].disagreement],
            agreed=[r for r in rows if not r["item"].disagreement],
            sources=[{"source": s, "score": scored[s.pk]} for s in comparison.sources],
            version=version,
            version_score=scored[version.pk] if version else None,
            action=here,
            changed=version.adjudication.changed_sources(comparison) if version else [],
        ),
    )


# --- two pyramids of a topic ------------------------------------------------------------------


def _quotes(contributors: tuple | None, texts: dict[str, str]) -> list[dict]:
    """One reference's contribution on one side: each contributor's words (parts joined by an
    ellipsis) and where they lie; [] when that side has none from the reference."""
    return [
        {
            "quote": " … ".join(texts.get(ref, "")[s:e] for ref, s, e in parts),
            "at": ", ".join(f"{s}–{e}" for _, s, e in parts),
        }
        for parts in contributors or ()
    ]


def _side(item, side: str, texts: dict[str, str]) -> dict | None:
    state = item.state_a if side == "a" else item.state_b
    if state is None:
        return None
    rows = []
    for r in item.references:
        mine = r.a if side == "a" else r.b
        if mine:
            rows.append(
                {
                    "reference": r.reference,
                    "quotes": _quotes(mine, texts),
                    "differs": item.kind == pyramid_merge.MATCHED and not r.same,
                    "kind": r.kind,
                }
            )
    return {
        "uid": item.uid_a if side == "a" else item.uid_b,
        "label": state["label"],
        "weight": len(state["contributors"]),
        "references": rows,
    }


@coordinator_only
def adjudicate_pyramids(request, dataset, topic, a, b):
    """Two pyramids of a topic side by side where they differ; the decisions make (or remake) the
    topic's adjudicated pyramid (``annotation/adjudication/pyramids.py``)."""
    topic_obj = get_object_or_404(Topic, dataset=dataset, external_id=topic)
    pyramid_a = get_object_or_404(Pyramid, topic=topic_obj, pk=a)
    pyramid_b = get_object_or_404(Pyramid, topic=topic_obj, pk=b)
    here = reverse("dashboards:adjudicate_pyramids", args=[dataset.pk, topic, a, b])
    try:
        comparison = pyramids.compare(pyramid_a, pyramid_b)
    except pyramids.NotComparable as error:
        raise Http404(str(error)) from error
    existing = pyramids.adjudicated_pyramid(topic_obj)
    record = existing.pyramid_adjudication if existing else None
    same_pair = record is not None and set(record.sources.values_list("pk", flat=True)) == {a, b}
    posted = {}
    if request.method == "POST":
        posted = {item.key: request.POST.get(f"decision-{item.key}", "") for item in comparison.disagreements}
        try:
            saved = pyramids.adjudicate(pyramid_a, pyramid_b, request.user, posted, request.POST.get("token", ""))
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, f"Adjudicated pyramid #{saved.pk} saved: scores of {topic} now rest on it.")
            return redirect(here)
        comparison = pyramids.compare(Pyramid.objects.get(pk=a), Pyramid.objects.get(pk=b))  # as they are now
    previous = record.decisions if same_pair else {}
    texts = dict(pyramid_a.references.values_list("external_id", "text"))
    rows = []
    for item in comparison.items:
        selected = posted.get(item.key) or previous.get(item.key, "")
        rows.append(
            {
                "item": item,
                "a": _side(item, "a", texts),
                "b": _side(item, "b", texts),
                "choices": [{"value": c, "text": pyramid_merge.CHOICE_TEXT[c]} for c in item.choices],
                "selected": selected if selected in item.choices else "",
            }
        )
    names = comparison.names
    return render(
        request,
        "dashboards/adjudicate_pyramids.html",
        _frame(
            dataset,
            "agreement",
            topic=topic,
            comparison=comparison,
            name_a=names[0],
            name_b=names[1],
            action=here,
            disagreements=[r for r in rows if not r["item"].agreed],
            agreed=[r for r in rows if r["item"].agreed],
            adjudicated=existing,
            record=record,
            same_pair=same_pair,
            record_sources=[pyramid_name(p) for p in record.sources.all()] if record else [],
            changed=same_pair and bool(record.changed_sources()),
            peers_against=PeerAnnotation.objects.filter(pyramid=existing, annotator__isnull=False).count()
            if existing
            else 0,
        ),
    )
