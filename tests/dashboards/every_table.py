"""Every table the app offers about a dataset's peer annotations, as text: what a copy of a dataset
must give back equal, whether it went through the dataset archive (``test_archive_round_trip``) or
a backup and restore of the whole database (``tests/transfer/test_backup.py``)."""

import csv
import json
import re
from io import StringIO

from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.dashboards.snapshots import snapshot_for
from annotation.dashboards.statistics import TABLES as STATISTICS_TABLES

CONVENTIONS = ("nist", "sacrerouge")


def csv_exports(dataset) -> dict[str, list[dict]]:
    """Every CSV download about a dataset's peer annotations: URL name -> the query of each table."""
    agreed = [row["topic"] for row in snapshot_for(dataset)[0].data["conventions"]["nist"]["agreement"]]
    chart_queries = [{"chart": chart} for chart in ("systems", "tiers", "stability")] + [
        {"chart": "agreement", "topic": t} for t in agreed
    ]
    return {
        "dashboards:scores_export": [
            {"convention": c, "references": r, "table": t}
            for c in CONVENTIONS
            for r in (0, 1)
            for t in ("topics", "systems")
        ],
        "dashboards:agreement_export": [{"convention": c} for c in CONVENTIONS],
        "dashboards:statistics_export": [{"convention": c, "table": t} for c in CONVENTIONS for t in STATISTICS_TABLES],
        "dashboards:metaeval_export": [
            {"convention": c, "score": s} for c in CONVENTIONS for s in ("auto", "modified", "modified_jk")
        ],
        "dashboards:chart_export": [
            q | {"convention": c, "references": r} for q in chart_queries for c in CONVENTIONS for r in (0, 1)
        ],
        "dashboards:construction_export": [
            {"convention": c, "table": t} for c in CONVENTIONS for t in ("pairs", "scus")
        ],
        "api:dataset-scores": [
            {"format": "csv", "convention": c, "include_unfinished": u} for c in CONVENTIONS for u in ("false", "true")
        ],
        "api:dataset-agreement": [
            {"format": "csv", "convention": c, "include_unfinished": u} for c in CONVENTIONS for u in ("false", "true")
        ],
        "api:dataset-statistics": [
            {"format": "csv", "convention": c, "table": t} for c in CONVENTIONS for t in STATISTICS_TABLES
        ],
    }


EXPORTS = {
    "dashboards:scores_export",
    "dashboards:agreement_export",
    "dashboards:statistics_export",
    "dashboards:metaeval_export",
    "dashboards:construction_export",
    "dashboards:chart_export",
    "api:dataset-scores",
    "api:dataset-agreement",
    "api:dataset-statistics",
}
NOT_ABOUT_PEER_ANNOTATIONS = ("lightweight:", "api:lightweight-")  # crowd (lightweight) pyramids: no peer annotation


def tables(dataset, coordinator) -> dict[str, str]:
    """Every table, the dataset's name blanked out."""
    dashboards, api = Client(), APIClient()
    dashboards.force_login(coordinator)
    api.force_authenticate(coordinator)
    out = {}
    exports = csv_exports(dataset)
    assert exports.keys() == EXPORTS
    for name, queries in exports.items():
        for query in queries:
            if name == "dashboards:chart_export":
                url = reverse(name, args=[dataset.pk, query["chart"]])
            elif name.startswith("dashboards:"):
                url = reverse(name, args=[dataset.pk, "csv"])
            else:
                url = reverse(name, args=[dataset.pk])
            client = dashboards if name.startswith("dashboards:") else api
            out[f"{name} {query}"] = _text(client.get(url, {k: v for k, v in query.items() if k != "chart"}))
    for command in ("export_scores", "export_agreement"):
        for convention in CONVENTIONS:
            for unfinished in (False, True):
                stdout = StringIO()
                call_command(
                    command,
                    dataset=dataset.name,
                    format="csv",
                    convention=convention,
                    include_unfinished=unfinished,
                    stdout=stdout,
                )
                out[f"{command} {convention} {unfinished}"] = stdout.getvalue()
    context = dashboards.get(reverse("dashboards:overview", args=[dataset.pk])).context
    keys = ("pyramids", "pyramids_done", "peers", "peers_annotated", "peers_done", "annotations", "annotators")
    out["progress"] = json.dumps(
        [[row["topic"].external_id] + [row[k] for k in keys] for row in context["rows"]]
        + [{k: v for k, v in context["totals"].items() if not k.startswith("assignments")}]
    )
    return {key: value.replace(dataset.name, "<dataset>") for key, value in out.items()}


def _text(response) -> str:
    """The CSV without its database ids (the tiers chart's ``pyramid`` column, the compared pyramids'
    ``pyramid_a``, ``pyramid_b``, and the "#id " their names ``name_a``, ``name_b`` start with) and
    without when a stored comparison was computed (``computed_at``: a copy computes its own)."""
    assert response.status_code == 200, response.content[:300]
    rows = list(csv.reader(StringIO(response.content.decode())))
    kept = (
        [i for i, column in enumerate(rows[0]) if column not in ("pyramid", "pyramid_a", "pyramid_b", "computed_at")]
        if rows
        else []
    )
    named = {i for i, column in enumerate(rows[0]) if column in ("name_a", "name_b")} if rows else set()
    return "\n".join(
        ",".join(re.sub(r"^#\d+ ", "#id ", row[i]) if i in named else row[i] for i in kept) for row in rows
    )
