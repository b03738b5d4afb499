"""Pyramid construction agreement on the dashboards: a topic's drill-down and the downloads.

The figures are those stored per topic by the background job (``annotation.pyramids.construction``),
not the dataset snapshot: the agreement page's section and these views read them as stored and say
when they are being recomputed. Coordinators of the dataset only (``views.coordinator_view``):
the pages compare annotators' pyramids, which annotators never see of each other.
"""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404, render

from annotation.adjudication.pyramids import adjudicated_pyramid
from annotation.api.choices import choose
from annotation.corpus.models import Topic
from annotation.pyramids import construction
from annotation.pyramids.models import PyramidAgreement
from scoring.correlation import NOISE
from scoring.model import Convention

from .views import _convention, _convention_links, _download, _frame, coordinator_view


def _pair(agreement: PyramidAgreement, request) -> dict:
    """The pair asked for (``?pair=A-B``, pyramid ids), else the first one; 404 for an unknown pair."""
    wanted = request.GET.get("pair", "")
    if not wanted:
        return agreement.values["pairs"][0]
    a, _, b = wanted.partition("-")
    pair = construction.find_pair(agreement, int(a), int(b)) if a.isdigit() and b.isdigit() else None
    if pair is None:
        raise Http404("No such pair of pyramids in this topic.")
    return pair


@coordinator_view
def topic(request, dataset, topic):
    topic_obj = get_object_or_404(Topic, dataset=dataset, external_id=topic)
    convention = _convention(request)
    agreement = PyramidAgreement.objects.filter(topic=topic_obj).select_related("topic__dataset").first()
    if agreement is None or not agreement.values["pairs"]:
        if topic_obj.pyramids.filter(pyramid_adjudication__isnull=True).count() < 2:
            raise Http404("This topic has fewer than two pyramids: nothing to compare.")
        return render(
            request,
            "dashboards/construction_topic.html",
            _frame(
                dataset,
                "agreement",
                topic=topic,
                convention=convention,
                pending=agreement is None,
                reason=agreement.values["reason"] if agreement else None,
            ),
        )
    pair = _pair(agreement, request)
    rows = construction.pair_rows([agreement], Convention(convention))
    scus = construction.scu_rows(agreement, pair)
    counts = {kind: sum(r["kind"] == kind for r in scus) for kind in construction.SCU_KINDS}
    statuses = {pk: label for pk, label in ((p.pk, p.get_status_display().lower()) for p in topic_obj.pyramids.all())}
    selected = next(r for r in rows if (r["pyramid_a"], r["pyramid_b"]) == (pair["a"], pair["b"]))
    return render(
        request,
        "dashboards/construction_topic.html",
        _frame(
            dataset,
            "agreement",
            topic=topic,
            convention=convention,
            convention_links=_convention_links(request, convention),
            rows=rows,
            pair=selected,
            scus=[r for r in scus if r["kind"] != "identical"],
            counts=counts,
            is_current=agreement.is_current,
            left_out=agreement.values["left_out"],
            noise=NOISE,
            status_a=statuses.get(pair["a"], "deleted"),
            status_b=statuses.get(pair["b"], "deleted"),
            adjudicated=adjudicated_pyramid(topic_obj),
        ),
    )


@coordinator_view
def export(request, dataset, fmt):
    """``table=pairs`` (default): the figures of every compared pair; ``table=scus``: their SCU
    alignment, SCU by SCU. ``topic`` keeps one topic."""
    convention = _convention(request)
    table = choose(request.GET, "table", construction.TABLES, "pairs")
    topic = request.GET.get("topic", "")
    agreements = construction.stored(dataset.topics.filter(external_id=topic) if topic else dataset.topics.all())
    rows, keys = construction.table_rows(agreements, table, Convention(convention))
    return _download(
        dataset,
        f"pyramid-agreement-{table}",
        rows,
        keys,
        fmt,
        convention=convention,
        qualifiers=[topic],
        topic=topic or None,
        threshold=construction.THRESHOLD,
    )
