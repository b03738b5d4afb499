"""Benchmark: the peer annotator in headless Debian Chromium, scores by a real Celery worker (prints numbers; not a
test).

Needs REDIS_URL (a Redis database this bench may flush, e.g. redis://127.0.0.1:6379/9). A fresh
database (SQLite in a temporary folder, or DATABASE_URL: PostgreSQL is flushed first) with
../shared/data/duc2006 imported (scores computed during the import, so the worker starts idle);
the server and a `celery -A pyramid_app worker` run as subprocesses with REDIS_URL, as in
production. The bench user gets an annotate_peers assignment on the topic whose pyramid has the
most SCUs and opens a peer with the home page's Start button. Then, --matches times: a 2-word
phrase of the peer selected programmatically (successive windows), a click on an SCU not matched
yet; measured from the click (1) until the match and the provisional score computed in the page are
painted (the SCU's found mark and a changed `.score-grid`, checked on every animation frame), (2)
until the page says everything is saved, (3) until the score panel shows the stored score of that
revision (`.score-state` without `updating`).

    REDIS_URL=redis://127.0.0.1:6379/9 python bench/annotator_ui.py [--matches 50] [--server gunicorn|runserver]
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (bench/ is put on sys.path first)

CLICK_TIMER = """window.addEventListener('click', (event) => {
  if (event.target.closest?.('.scu-list .scu')) window.__t0 = performance.now();
}, true);"""

GRID = (
    "() => Object.fromEntries([...document.querySelectorAll('.score-grid dd')].map((dd) => [dd.dataset.name, "
    "dd.textContent]))"
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=50, help="matches to make (default: %(default)s)")
    b.add_common_arguments(parser)
    args = parser.parse_args()
    if args.matches < 1:
        sys.exit("--matches must be at least 1")
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        sys.exit(
            "REDIS_URL is not set: this bench needs Redis and runs a real Celery worker on it. Set it to a database "
            "this bench may flush, e.g. REDIS_URL=redis://127.0.0.1:6379/9 python bench/annotator_ui.py"
        )
    import redis

    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        sys.exit(f"Redis at {redis_url} does not answer: {error}")
    b.check_prerequisites(args)
    child_env = b.setup_django(args.keep_db)

    from django.conf import settings
    from django.db.models import Count

    from annotation.corpus.models import Assignment
    from annotation.peers.models import AnnotationScore, PeerAnnotation
    from annotation.pyramids.models import Pyramid

    b.fresh_database_with_duc2006(args.data)
    pyramid = Pyramid.objects.annotate(n=Count("scus")).order_by("-n", "id").first()
    topic = pyramid.topic
    if pyramid.n < args.matches:
        sys.exit(
            f"the largest pyramid ({topic.external_id}) has {pyramid.n} SCUs: each match goes to another "
            f"SCU, use --matches {pyramid.n} or fewer"
        )
    user = b.create_user("bench-annotator")
    Assignment.objects.create(topic=topic, annotator=user, task=Assignment.Task.ANNOTATE_PEERS)
    print(
        f"topic {topic.external_id}: pyramid {pyramid.pk} ({pyramid.n} SCUs, status {pyramid.status}), "
        f"{topic.peersummarys.count()} peers",
        flush=True,
    )
    machine = b.machine_line(args.server, "on a Celery worker subprocess (--concurrency=2, Redis)")
    b.close_db_connections()

    redis.Redis.from_url(redis_url).flushdb()
    log_dir = b.make_log_dir()
    errors: list[str] = []
    score_ms, save_ms, paint_ms, shown = [], [], [], []
    with (
        b.celery_worker(child_env, log_dir, redis_url) as control,
        b.server(args.server, child_env, log_dir) as base,
        b.chromium(args.chromium) as browser,
    ):
        idle = b.wait_worker_idle(control)
        context, page = b.new_page(browser, errors)
        context.add_init_script(CLICK_TIMER)
        b.login(page, base, user.username)
        page.click("button:has-text('Start')")
        page.wait_for_url("**/annotations/*/")
        b.wait_saved(page)
        windows = b.word_windows(page, ".peer-text", 2)
        scus = page.evaluate("() => [...document.querySelectorAll('.scu-list .scu')].map((s) => Number(s.dataset.id))")
        if len(windows) < args.matches:
            sys.exit(f"the peer has only {len(windows)} two-word phrases: use --matches {len(windows)} or fewer")

        deadline = time.monotonic() + 150
        for (start, end, _), scu in zip(windows[: args.matches], scus, strict=False):
            b.select_range(page, ".peer-text", start, end)
            page.wait_for_function("() => document.querySelector('.peer-text .seg.pending')")
            before = page.evaluate(GRID)
            page.evaluate(
                "() => { window.__saved = undefined; window.__painted = undefined; window.__t0 = undefined; }"
            )
            page.click(f'.scu-list .scu[data-id="{scu}"]')
            result = page.wait_for_function(
                f"""([scu, before]) => {{
                    if (window.__t0 === undefined) return false;
                    const now = performance.now();
                    const found = document.querySelector(`.scu[data-id="${{scu}}"] .found`);
                    if (window.__painted === undefined && found &&
                      ({GRID})()['Matched SCUs'] !== before['Matched SCUs'])
                        window.__painted = now - window.__t0;
                    if (window.__saved === undefined && found && ({b.SAVED_JS}))
                        window.__saved = now - window.__t0;
                    if (window.__saved === undefined) return false;
                    const state = document.querySelector('.score-state');
                    if (!state || state.classList.contains('updating')) return false;
                    const grid = ({GRID})();
                    if (grid['Modified score'] === before['Modified score'] &&
                      grid['Observed weight (D)'] === before['Observed weight (D)']) return false;
                    return [window.__saved, now - window.__t0, grid, window.__painted];
                }}""",
                arg=[scu, before],
                polling="raf",
                timeout=60_000,
            ).json_value()
            save_ms.append(result[0])
            paint_ms.append(result[3])
            score_ms.append(result[1])
            shown.append(result[2])
            if errors:
                sys.exit(f"JavaScript error in the page: {errors[0]}")
            if not page.is_hidden(".banner"):
                sys.exit(f"the annotator shows an error: {page.text_content('.banner')}")
            if time.monotonic() > deadline:
                print(f"stopping after {len(score_ms)} matches: the run would exceed ~3 minutes")
                break
        context.close()

    annotation = PeerAnnotation.objects.get(annotator=user)
    stored = AnnotationScore.objects.get(annotation=annotation, convention="nist")
    if annotation.matches.count() != len(score_ms):
        sys.exit(f"{annotation.matches.count()} matches saved for {len(score_ms)} clicks")
    if not stored.is_current or f"{stored.values['modified']:.4f}" != shown[-1]["Modified score"]:
        sys.exit(f"the panel's last score {shown[-1]} is not the stored one {stored.values}")
    if errors:
        sys.exit(f"JavaScript error in the page: {errors[0]}")

    print()
    print(
        f"annotator /annotations/{annotation.pk}/ (topic {topic.external_id}, peer {annotation.peer.external_id}, "
        f"pyramid of {pyramid.n} SCUs); the worker was idle {idle:.1f} s after it answered a ping"
    )
    print(
        f"  click on an SCU until the match and the provisional score are painted, {len(paint_ms)} "
        f"matches: {b.summary(paint_ms)}"
    )
    print(f"  click until the match is saved (POST matches/, the answer's matches applied): {b.summary(save_ms)}")
    print(f"  click until the stored score of that revision is shown: {b.summary(score_ms)}")
    print(
        f"    the rest: the task's countdown (SCORE_DEBOUNCE_SECONDS={settings.SCORE_DEBOUNCE_SECONDS:g}), the worker "
        "recomputing, and the page reading score/ (60 ms after the save, then 1.5 times less often each "
        "time, at most every 3 s) while the score is stale"
    )
    last = shown[-1]
    print(
        f"  final score shown (= stored): modified {last['Modified score']}, observed weight "
        f"{last['Observed weight (D)']}, "
        f"matched SCUs {last['Matched SCUs']}"
    )
    print(machine)


if __name__ == "__main__":
    main()
