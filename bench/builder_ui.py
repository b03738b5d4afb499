"""Benchmark: the pyramid builder in headless Debian Chromium against a real server (prints numbers; not a test).

A fresh database (SQLite in a temporary folder, or DATABASE_URL: PostgreSQL is flushed first) with
../shared/data/duc2006 imported; the imported pyramid of the topic with the most SCUs becomes the
bench user's own (build_pyramid assignment, status in_progress) and is opened at
/pyramids/<id>/build/. Measured:
- time to interactive: navigation start to `.editor.ready` set with the SCU list rendered
  (performance.now() in the page, recorded by a MutationObserver), over --loads page loads;
- new SCU by keyboard: a short phrase of a reference selected programmatically (successive 2-word
  windows), "n", Enter to keep the prefilled label; from the key press to the new SCU shown in the
  list and saved (save status "saved", no data-busy on .editor), over --actions actions.

Without REDIS_URL the server recomputes the scores of the peer annotations against the pyramid in
the save request (eager tasks); with REDIS_URL a Celery worker subprocess does (db flushed first).

    python bench/builder_ui.py [--actions 50] [--loads 5] [--server gunicorn|runserver] [--data ../shared/data/duc2006]
"""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402

READY_OBSERVER = """(() => {
  const observer = new MutationObserver(() => {
    if (window.__tti !== undefined) return;
    if (document.querySelector('.editor.ready') && document.querySelector('.scu-list .scu')) { window.__tti = performance.now(); observer.disconnect(); }
  });
  observer.observe(document, {subtree: true, attributes: true, attributeFilter: ['class']});
  window.addEventListener('keydown', (event) => {
    if (event.key === 'n' && !(event.target instanceof HTMLInputElement)) window.__t0 = performance.now();
    if (event.key === 'Enter' && event.target.classList?.contains('label-edit')) window.__t1 = performance.now();
  }, true);
})();"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=50, help="new SCUs to create (default: %(default)s)")
    parser.add_argument("--loads", type=int, default=5, help="page loads for time to interactive (default: %(default)s)")
    b.add_common_arguments(parser)
    args = parser.parse_args()
    if args.actions < 1 or args.loads < 1:
        sys.exit("--actions and --loads must be at least 1")
    b.check_prerequisites(args)
    redis_url = os.environ.get("REDIS_URL", "")
    child_env = b.setup_django(args.keep_db)

    from django.db.models import Count

    from annotation.models import SCU, Assignment, Pyramid

    b.fresh_database_with_duc2006(args.data)
    pyramid = Pyramid.objects.annotate(n=Count("scus")).order_by("-n", "id").first()
    if pyramid is None or pyramid.n == 0:
        sys.exit("the import produced no pyramid with SCUs")
    user = b.create_user("bench-builder")
    Assignment.objects.create(topic=pyramid.topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
    Pyramid.objects.filter(pk=pyramid.pk).update(creator=user, status=Pyramid.Status.IN_PROGRESS)
    initial_scus = pyramid.n
    against = pyramid.annotations.count()
    print(f"pyramid {pyramid.pk} of topic {pyramid.topic.external_id}: {initial_scus} SCUs, "
          f"{pyramid.references.count()} references, {against} peer annotations against it", flush=True)
    machine = b.machine_line(args.server, "on a Celery worker (Redis)" if redis_url else "eager, in the save request (no REDIS_URL)")
    b.close_db_connections()

    log_dir = b.make_log_dir()
    errors: list[str] = []
    tti, nav, full_fetch = [], [], []
    label_ms, total_ms, enter_ms, phrases, post_ms, get_ms = [], [], [], [], [], []
    with _maybe_worker(redis_url, child_env, log_dir), b.server(args.server, child_env, log_dir) as base, b.chromium(args.chromium) as browser:
        context, page = b.new_page(browser, errors)
        context.add_init_script(READY_OBSERVER)
        b.login(page, base, user.username)
        url = f"{base}/pyramids/{pyramid.pk}/build/"

        for _ in range(args.loads):
            page.goto(url, wait_until="commit")
            tti.append(page.wait_for_function("() => window.__tti", polling="raf", timeout=60_000).json_value())
            timing = page.evaluate("""() => {
                const n = performance.getEntriesByType('navigation')[0];
                const full = performance.getEntriesByType('resource').find((r) => r.name.includes('/full/'));
                return {doc: n.responseEnd, dcl: n.domContentLoadedEventEnd, full: full ? full.responseEnd - full.startTime : null,
                        bytes: full ? full.decodedBodySize : null, scus: document.querySelectorAll('.scu-list .scu').length};
            }""")
            if timing["scus"] != initial_scus:
                sys.exit(f"the builder shows {timing['scus']} SCUs, the pyramid has {initial_scus}")
            nav.append(timing)
            full_fetch.append(timing["full"])
        b.wait_saved(page)

        windows = []
        for ref in page.evaluate("() => [...document.querySelectorAll('.ref-text')].map((t) => t.dataset.ref)"):
            selector = f'.ref-text[data-ref="{ref}"]'
            # Not across a line break: the label editor (an <input>) drops the newline, so Enter would relabel (a second save).
            windows += [(selector, start, end, phrase) for start, end, phrase in b.word_windows(page, selector, 2)
                        if "\n" not in phrase and "\r" not in phrase]
        if len(windows) < args.actions:
            sys.exit(f"only {len(windows)} two-word windows in the references: use --actions {len(windows)} or fewer")

        scus = initial_scus
        deadline = time.monotonic() + 150
        for selector, start, end, phrase in windows[:args.actions]:
            page.evaluate("() => performance.clearResourceTimings()")
            b.select_range(page, selector, start, end)
            page.wait_for_function("() => document.querySelector('.ref-text .seg.pending') && !document.querySelector('[data-action=new-scu]').disabled")
            page.keyboard.press("n")
            label_ms.append(page.wait_for_function(
                "() => document.activeElement?.classList.contains('label-edit') && performance.now() - window.__t0", polling="raf").json_value())
            page.keyboard.press("Enter")
            scus += 1
            done = page.wait_for_function(
                f"""(expected) => {{
                    if (!(window.__t1 > window.__t0)) return false;
                    if (document.querySelectorAll('.scu-list .scu').length !== expected || document.querySelector('.label-edit')) return false;
                    if (!({b.SAVED_JS})) return false;
                    return [performance.now() - window.__t0, performance.now() - window.__t1];
                }}""", arg=scus, polling="raf").json_value()
            requests = page.evaluate("""() => {
                const entries = performance.getEntriesByType('resource').filter((r) => r.startTime >= window.__t0);
                const sum = (suffix) => entries.filter((r) => r.name.endsWith(suffix)).reduce((a, r) => a + r.responseEnd - r.startTime, 0);
                return [sum('/api/scus/'), sum('/full/')];
            }""")
            post_ms.append(requests[0])
            get_ms.append(requests[1])
            total_ms.append(done[0])
            enter_ms.append(done[1])
            phrases.append(phrase)
            if errors:
                sys.exit(f"JavaScript error in the page: {errors[0]}")
            if not page.is_hidden(".banner"):
                sys.exit(f"the builder shows an error: {page.text_content('.banner')}")
            if time.monotonic() > deadline:
                print(f"stopping after {len(total_ms)} actions: the run would exceed ~3 minutes")
                break
        context.close()

    created = list(SCU.objects.filter(pyramid=pyramid).order_by("uid").values_list("label", flat=True))[initial_scus:]
    if len(created) != len(total_ms) or created != phrases:
        different = [(c, p) for c, p in zip(created, phrases) if c != p][:3]
        sys.exit(f"saved SCUs do not match the actions: {len(created)} created for {len(total_ms)} actions; "
                 f"saved label vs selected phrase: {different}")
    if errors:
        sys.exit(f"JavaScript error in the page: {errors[0]}")

    print()
    print(f"builder /pyramids/{pyramid.pk}/build/ ({pyramid.topic.external_id}, {initial_scus} SCUs; "
          f"document {nav[0]['bytes'] / 1024:.0f} KiB of JSON)")
    print(f"  time to interactive, first load (cold cache): {tti[0]:.0f} ms "
          f"(HTML received {nav[0]['doc']:.0f} ms, DOMContentLoaded {nav[0]['dcl']:.0f} ms, GET full/ {nav[0]['full']:.0f} ms)")
    if len(tti) > 1:
        rest = tti[1:]
        print(f"  time to interactive, next {len(rest)} loads: median {b.median(rest):.0f} ms (min {min(rest):.0f}, max {max(rest):.0f}); "
              f"GET full/ median {b.median([f for f in full_fetch[1:] if f is not None]):.0f} ms")
    print(f"  new SCU (\"n\", Enter) until shown in the list and saved, {len(total_ms)} actions: {b.summary(total_ms)}")
    print(f"    of which \"n\" until the label editor is shown (POST scus/ + GET full/ + render): {b.summary(label_ms)}")
    print(f"      POST /api/scus/ (the save, {'scores recomputed by the worker' if redis_url else 'incl. eager recomputation of the scores'}): {b.summary(post_ms)}")
    print(f"      GET /api/pyramids/{pyramid.pk}/full/ (the page reloads the document): {b.summary(get_ms)}")
    print(f"    and Enter until the list shows it saved: {b.summary(enter_ms)}")
    print(f"  SCUs at the end: {initial_scus + len(created)} (all {len(created)} saved with the prefilled labels)")
    print(machine)


def _maybe_worker(redis_url, child_env, log_dir):
    import contextlib

    if not redis_url:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def run():
        import redis

        redis.Redis.from_url(redis_url).flushdb()
        with b.celery_worker(child_env, log_dir, redis_url) as control:
            b.wait_worker_idle(control)
            yield

    return run()


if __name__ == "__main__":
    main()
