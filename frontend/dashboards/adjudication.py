"""The adjudication page of one doubly annotated peer (``annotation/adjudication/services.py``).

Coordinator-only, and blind for everyone else: anyone who does not coordinate the dataset
(annotators included, unlike the dashboards' 403) gets the same 404 as for a peer that does not
exist, since the page shows every annotator's work side by side. The POST is a plain form (CSRF
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

from annotation.adjudication import services
from annotation.models import Dataset, PeerAnnotation, PeerSummary, Pyramid, Topic
from annotation.peers.results import score_annotations
from scoring.model import Convention

from .views import _frame, coordinates


def coordinator_only(view):
    """Logged in (else the login page), and a coordinator of this very dataset (else 404)."""
    @login_required
    @wraps(view)
    def wrapped(request, dataset_id, *args, **kwargs):
        dataset = Dataset.objects.filter(pk=dataset_id).first()
        if dataset is None or not coordinates(request.user, dataset):
            raise Http404("No such peer among the datasets you coordinate.")
        return view(request, dataset, *args, **kwargs)

    return wrapped


def _cells(item: services.Item, text: str) -> list[list[dict]]:
    """Per source, the evidence of each of its matches: its text (parts joined by an ellipsis) and
    where it lies (the same words at two places are different evidence)."""
    return [[{"quote": " … ".join(text[s:e] for s, e in spans), "at": ", ".join(f"{s}–{e}" for s, e in spans)} for spans in matches]
            for matches in item.matches]


@coordinator_only
def adjudicate(request, dataset, topic, peer, pyramid_id):
    topic_obj = get_object_or_404(Topic, dataset=dataset, external_id=topic)
    peer_obj = get_object_or_404(PeerSummary, topic=topic_obj, external_id=peer)
    pyramid = get_object_or_404(Pyramid, topic=topic_obj, pk=pyramid_id)
    here = reverse("dashboards:adjudicate", args=[dataset.pk, topic, peer, pyramid.pk])
    try:
        comparison = services.compare(peer_obj, pyramid)
    except services.NotShared:
        raise Http404("Fewer than two annotators finished this peer: nothing to adjudicate.")
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
    scored = score_annotations(PeerAnnotation.objects.filter(pk__in=[s.pk for s in comparison.sources] + ([version.pk] if version else [])),
                               Convention.NIST)
    choices = comparison.choices()
    rows = [{"item": item, "cells": _cells(item, peer_obj.text), "counts": [len(m) for m in item.matches],
             "selected": posted.get(item.key) or previous.get(item.key, "")} for item in comparison.items]
    for row in rows:
        if row["selected"] not in choices:
            row["selected"] = ""
    return render(request, "dashboards/adjudicate.html", _frame(
        dataset, "agreement", topic=topic, peer=peer_obj, pyramid=pyramid, comparison=comparison,
        disagreements=[r for r in rows if r["item"].disagreement], agreed=[r for r in rows if not r["item"].disagreement],
        sources=[{"source": s, "score": scored[s.pk]} for s in comparison.sources],
        version=version, version_score=scored[version.pk] if version else None, action=here,
        changed=version.adjudication.changed_sources(comparison) if version else []))
