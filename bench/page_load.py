"""Benchmark: page loads in headless Debian Chromium, as a person waits for them (prints numbers; not a test).

A fresh database (SQLite in a temporary folder, or DATABASE_URL: PostgreSQL is flushed first) with
../shared/data/duc2006 imported and its dashboard snapshot computed (as a worker does after an
import); the app served by a real server subprocess with the static files collected, compressed and
content-hashed as in production (COLLECTED_STATIC=1, as `make run`). A superuser opens each page:

- first visit: a new browser context (an empty HTTP cache, the login's session cookie only), from
  navigation start until the page is ready: every chart in or near the viewport drawn and painted
  (the next animation frame after the chart script marked it; a chart far below the fold is drawn as
  it is scrolled near, charts.js), the annotator's editor ready, the load event everywhere;
- warm: the same page again --repeat times in that context (its cache warm), the same clock;
- the JavaScript the first visit transferred: bytes on the wire (compressed) and decoded, from the
  browser's Resource Timing entries of every script, module and worker;
- the server's CPU per warm visit: user + system CPU seconds of the server's processes (the master
  and its workers, /proc) over the warm visits, divided by them (a warm visit requests the page
  alone: its scripts and styles come from the browser's cache). Unlike the times above it hardly
  moves with what else the machine runs.

    python bench/page_load.py [--repeat 20] [--server gunicorn|runserver] [--screenshots DIR]
"""

import argparse
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (bench/ is put on sys.path first)

# Ready: loaded, every chart drawn (or said empty, or left for when it is scrolled near) and the
# annotator's editor ready; then the next frame is painted. Returns milliseconds since navigation start (the
# document's time origin).
READY = """() => document.readyState === 'complete'
  && [...document.querySelectorAll('[data-chart]')].every((c) => c.dataset.drawn !== undefined ||
    c.classList.contains('empty') || c.dataset.deferred !== undefined)
  && [...document.querySelectorAll('.editor')].every((e) => e.classList.contains('ready'))"""
# [ready and painted, the server's answer complete (responseEnd), DOMContentLoaded], ms since navigation start.
PAINTED = """() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  resolve([performance.now(), nav.responseEnd, nav.domContentLoadedEventEnd]);
})))"""
SCRIPTS = """() => performance.getEntriesByType('resource')
  .filter((e) => /\\.m?js(\\?|$)/.test(new URL(e.name).pathname))
  .map((e) => [new URL(e.name).pathname, e.encodedBodySize, e.decodedBodySize, e.transferSize])"""


def visit(page, url: str) -> list[float]:
    """[ready and painted, the page's HTML received, DOMContentLoaded]: ms since navigation start."""
    page.goto(url)
    page.wait_for_function(READY, polling="raf")
    return page.evaluate(PAINTED)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="warm visits of each page (default: %(default)s)")
    parser.add_argument("--screenshots", help="a folder for a full-page screenshot of each page")
    b.add_common_arguments(parser)
    args = parser.parse_args()
    b.check_prerequisites(args)
    os.environ["COLLECTED_STATIC"] = "1"  # the server (a child) and collectstatic below: as production
    child_env = b.setup_django(args.keep_db)
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.corpus.models import Assignment, Dataset, Topic
    from annotation.dashboards import snapshots
    from annotation.peers import assignments

    b.fresh_database_with_duc2006(args.data)
    call_command("collectstatic", interactive=False, verbosity=0)
    dataset = Dataset.objects.get(name="bench-duc2006")
    user = get_user_model().objects.create_superuser("bench-pages", "bench@example.org", b.PASSWORD)
    topic = Topic.objects.get(dataset=dataset, external_id="D0631")
    assignment = Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.ANNOTATE_PEERS)
    annotation = assignments.annotation_for(assignment, None)  # the peer the home page's Start button opens
    # As a worker does after an import: the pages read current stored figures (computed after the
    # peer was opened, so that no page schedules a recomputation in the server while it is measured).
    snapshots.recompute_dataset(dataset.pk)
    machine = b.machine_line(args.server, "in-process")
    b.close_db_connections()

    d = f"/datasets/{dataset.pk}"
    pages = {
        "scores (systems + 21 tier charts)": f"{d}/scores/?references=1",
        "significance (2 stability charts)": f"{d}/significance/",
        "agreement D0631 (scatter)": f"{d}/agreement/D0631/",
        "dataset overview": f"{d}/",
        "annotator (a peer of D0631)": f"/annotations/{annotation.pk}/",
        "setup: datasets": "/setup/",
        "setup: the dataset": f"/setup/{dataset.pk}/",
    }
    screenshots = Path(args.screenshots) if args.screenshots else None
    if screenshots:
        screenshots.mkdir(parents=True, exist_ok=True)
    log_dir = b.make_log_dir()
    errors: list[str] = []
    rows = []
    server_pids: list[int] = []
    with b.server(args.server, child_env, log_dir, server_pids) as base, b.chromium(args.chromium) as browser:
        context, page = b.new_page(browser, errors)
        b.login(page, base, user.username)
        state = context.storage_state()
        context.close()
        for name, path in pages.items():
            context = browser.new_context(viewport={"width": 1400, "height": 900}, storage_state=state)
            page = context.new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.set_default_timeout(30_000)
            first = visit(page, base + path)
            scripts = page.evaluate(SCRIPTS)
            if screenshots:
                shot = re.sub(r"\W+", "-", path).strip("-")
                page.screenshot(path=str(screenshots / f"{shot}.png"), full_page=True)
            server = b.process_tree(server_pids[0])
            before = sum(b.cpu_seconds(server).values())
            warm = [visit(page, base + path) for _ in range(args.repeat)]
            server_cpu = (sum(b.cpu_seconds(server).values()) - before) / args.repeat * 1000
            rows.append((name, path, first, warm, scripts, server_cpu))
            context.close()
            if errors:
                sys.exit(f"JavaScript error on {path}: {errors[0]}")
    b.cleanup(args.keep_db, log_dir)

    print()
    print(
        f"{'page':36} {'first visit':>12} {'warm p95':>9} {'warm median':>12} {'(HTML in':>9} {'DOM ready)':>10} "
        f"{'JS on the wire':>15} {'JS decoded':>11} {'server CPU':>11}"
    )
    for name, _, first, warm, scripts, server_cpu in rows:
        wire = sum(s[1] for s in scripts) / 1024
        decoded = sum(s[2] for s in scripts) / 1024
        ready = [w[0] for w in warm]
        print(
            f"{name:36} {first[0]:9.0f} ms {b.percentile(ready, 95):6.0f} ms {b.median(ready):9.0f} ms "
            f"{b.median([w[1] for w in warm]):6.0f} ms {b.median([w[2] for w in warm]):7.0f} ms "
            f"{wire:12.0f} KB {decoded:8.0f} KB {server_cpu:8.1f} ms"
        )
    print(
        f"first visit: an empty cache, navigation start until ready and painted; warm: {args.repeat} "
        "visits with the cache warm"
    )
    print(
        "(HTML in: the server's answer received; DOM ready: DOMContentLoaded, deferred scripts run; "
        "medians of the warm visits)"
    )
    print(
        "JS: every script, module and worker the first visit fetched (Resource Timing encodedBodySize / "
        "decodedBodySize)"
    )
    print("server CPU: the server's processes' user + system CPU per warm visit (/proc)")
    print(machine)


if __name__ == "__main__":
    main()
