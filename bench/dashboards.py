"""Benchmark: the coordinator dashboards on DUC 2006 + 2007 (prints numbers; not a test).

Imports ../shared/data/duc2006 and duc2007-main into a fresh SQLite file (or DATABASE_URL), then
times, with the Django test client and a logged-in superuser:
- the first dashboard computation of each dataset (at the end of the import, eager tasks);
- rendering the agreement and scores pages (from the stored snapshot);
- an annotation change until the dashboard shows the new figure: without REDIS_URL the tasks run
  eagerly right after the commit, so the save itself includes the recomputation (scores, agreement,
  dashboard); the page is then rendered and checked for the new value.

    python bench/dashboards.py [--data ../shared/data] [--repeat 5]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def timed(func, repeat=1):
    times = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return result, times


def fmt(times):
    return (
        f"{statistics.median(times) * 1000:.0f} ms (median of {len(times)}, min {min(times) * 1000:.0f}, max "
        f"{max(times) * 1000:.0f})"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = Path(args.data)
    sets = {"duc2006": data / "duc2006", "duc2007": data / "duc2007-main"}
    missing = [str(p) for p in sets.values() if not p.is_dir()]
    if missing:
        sys.exit(f"no data at {', '.join(missing)}")
    tmp = tempfile.mkdtemp()
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("DEBUG", "1")  # development mode: the built-in secret key
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from annotation.corpus.models import Dataset
    from annotation.dashboards import snapshots
    from annotation.dashboards.judgments import import_duc_table
    from annotation.dashboards.models import DatasetDashboard
    from annotation.peers.editing import add_match
    from annotation.peers.models import PeerAnnotation
    from annotation.pyramids.models import SCU
    from annotation.transfer.ducview_import import import_paths

    setup_test_environment()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    eager = settings.CELERY_TASK_ALWAYS_EAGER
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"database {connection.vendor}, tasks {'eager (no REDIS_URL)' if eager else 'on a worker'}"
    )

    for name, path in sets.items():
        start = time.perf_counter()
        import_paths([str(path)], name)
        print(f"import + score + first dashboard of {name}: {time.perf_counter() - start:.2f} s")
    import_duc_table("duc2006", sets["duc2006"] / "scoring" / "2006_modified_scores.txt")
    import_duc_table("duc2007", sets["duc2007"] / "scoring" / "2007_modified_scores.txt")
    for name in sets:
        dataset = Dataset.objects.get(name=name)
        DatasetDashboard.objects.filter(dataset=dataset).delete()
        _, t = timed(lambda dataset=dataset: snapshots.recompute_dataset(dataset.pk))
        size = len(DatasetDashboard.objects.get(dataset=dataset).payload)
        print(
            f"{name}: full dashboard computation (no reuse, with judgments): {t[0]:.2f} s, snapshot "
            f"{size / 1024:.0f} KiB"
        )
        _, t = timed(lambda dataset=dataset: snapshots.recompute_dataset(dataset.pk), args.repeat)
        print(f"{name}: recomputation with every topic unchanged: {fmt(t)}")

    user = get_user_model().objects.create_superuser("bench", "bench@example.org", None)
    client = Client()
    client.force_login(user)
    for name in sets:
        dataset = Dataset.objects.get(name=name)
        for page, query in [
            ("agreement", ""),
            ("scores", ""),
            ("scores", "?references=1&convention=sacrerouge"),
            ("metaeval", ""),
        ]:
            url = reverse(f"dashboards:{page}", args=[dataset.pk]) + query
            response, t = timed(lambda url=url: client.get(url), args.repeat)
            assert response.status_code == 200, (url, response.status_code)
            print(f"{name}: GET {page}{query}: {fmt(t)}, {len(response.content) / 1024:.0f} KiB")

    # An annotation change until the dashboard shows the new figure.
    dataset = Dataset.objects.get(name="duc2006")
    url = reverse("dashboards:scores", args=[dataset.pk]) + "?topic=D0631"
    annotations = iter(
        PeerAnnotation.objects.filter(peer__topic__dataset=dataset, peer__topic__external_id="D0631").order_by("id")
    )

    def change():
        """Match one more SCU in the next annotation of D0631; returns (annotation, new modified score)."""
        annotation = next(annotations)
        found = set(annotation.matches.exclude(scu=None).values_list("scu_id", flat=True))
        scu = SCU.objects.filter(pyramid=annotation.pyramid).exclude(pk__in=found).order_by("-id").first()
        add_match(annotation, scu, [(0, 1)])  # autocommit: recomputation runs after the commit
        return annotation

    def shown(annotation) -> bool:
        stored = DatasetDashboard.objects.get(dataset=dataset)
        row = next(
            r
            for r in stored.data["conventions"]["nist"]["per_topic"]
            if r["kind"] == "peer"
            and r["topic"] == "D0631"
            and r["summary"] == annotation.peer.external_id
            and r["annotator"] == annotation.annotator.username
        )
        page = client.get(url).content.decode()
        return snapshots.is_current(stored) and f"{row['modified']:.4f}" in page

    # 1. The whole chain as it runs without a broker: the save recomputes scores, agreement, dashboard.
    start = time.perf_counter()
    annotation = change()
    saved = time.perf_counter()
    assert shown(annotation), "the dashboard does not show the new figure"
    done = time.perf_counter()
    print(
        f"annotation change -> dashboard shows it ({'eager tasks' if eager else 'worker'}): save incl. recomputation "
        f"{(saved - start) * 1000:.0f} ms + page {(done - saved) * 1000:.0f} ms = {(done - start) * 1000:.0f} ms"
    )
    # 2. The dashboard step alone (the other recomputations done first, dashboard scheduling held back).
    real_schedule = snapshots.schedule
    snapshots.schedule = lambda ids: None
    try:
        annotation = change()
    finally:
        snapshots.schedule = real_schedule
    _, t = timed(lambda: snapshots.recompute_dataset(dataset.pk))
    start = time.perf_counter()
    assert shown(annotation)
    print(
        f"duc2006: dashboard recomputation after a change in one topic: {t[0] * 1000:.0f} ms; "
        f"then the page with the new figure: {(time.perf_counter() - start) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
