"""Benchmark: the pyramid builder in headless Debian Chromium against a real server (prints numbers; not a test).

A fresh database (SQLite in a temporary folder, or DATABASE_URL: PostgreSQL is flushed first) with
either ../shared/data/duc2006 imported (the imported pyramid of the topic with the most SCUs, D0603,
becomes the bench user's own), or with --synthetic N a generated pyramid of N SCUs over 8
references (weights 1-8, one 4-word contributor per reference and SCU). It is opened at
/pyramids/<id>/build/ (build_pyramid assignment, status in_progress). Measured:
- time to interactive: navigation start to `.editor.ready` set with the SCU list rendered
  (performance.now() in the page, recorded by a MutationObserver), over --loads page loads;
- new SCU by keyboard: a short phrase of a reference selected programmatically (successive 2-word
  windows), then "n": from the key event (its timeStamp) to the frame showing the new SCU in the
  list, selected with its label editor (a message posted from the requestAnimationFrame after the
  change, i.e. after that frame),
  and to the save status turning "saved" (the server confirmed it); Enter then keeps the prefilled
  label (nothing more to save), over --actions actions.

Without REDIS_URL the server recomputes the scores of the peer annotations against the pyramid in
the save request (eager tasks) unless the server hands them to its own background worker; with
REDIS_URL a Celery worker subprocess does (db flushed first).

    python bench/builder_ui.py [--actions 50] [--loads 5] [--synthetic 1000] [--server gunicorn|runserver]
        [--data ../shared/data/duc2006]
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _browser as b  # noqa: E402  (bench/ is put on sys.path first)

READY_OBSERVER = """(() => {
  const observer = new MutationObserver(() => {
    if (window.__tti !== undefined) return;
    if (document.querySelector('.editor.ready') && document.querySelector('.scu-list .scu')) {
      window.__tti = performance.now(); observer.disconnect(); }
  });
  observer.observe(document, {subtree: true, attributes: true, attributeFilter: ['class']});
  const isN = (event) => event.key === 'n' && !(event.target instanceof HTMLInputElement);
  // Capture phase on window: before the page's handler. The key event's timeStamp is when it happened.
  window.addEventListener('keydown', (event) => {
    if (!isN(event)) return;
    window.__t0 = event.timeStamp; window.__painted = null; window.__paintedScus = null; window.__saved = null;
  }, true);
  // Bubble phase on window: after the page's handler (on document) applied the change.
  window.addEventListener('keydown', (event) => {
    if (!isN(event)) return;
    window.__handled = performance.now() - window.__t0;
    requestAnimationFrame(() => {
      // The list is windowed: the SCUs it holds, provided the new one (selected, its label being edited) is placed.
      const scus = document.querySelector('.scu-list .scu.selected .label-edit') ?
        Number(document.querySelector('.scu-list').dataset.scus) : -1;
      const channel = new MessageChannel(); // runs after the frame this rAF belongs to
      channel.port1.onmessage = () => { window.__painted = performance.now() - window.__t0;
        window.__paintedScus = scus; };
      channel.port2.postMessage(0);
    });
  });
  document.addEventListener('DOMContentLoaded', () => {
    const status = document.querySelector('.save-status');
    if (!status) return;
    new MutationObserver(() => {
      if (window.__t0 !== undefined && window.__saved === null && window.__painted !== undefined &&
        status.dataset.status === 'saved')
        window.__saved = performance.now() - window.__t0;
    }).observe(status, {attributes: true, attributeFilter: ['data-status']});
  });
})();"""


def synthetic_pyramid(user, n_scus: int, n_references: int = 8, seed: int = 7):
    """A pyramid of ``n_scus`` SCUs over ``n_references`` generated references, written in bulk."""
    from annotation.corpus.models import Dataset, ReferenceSummary, Topic
    from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

    rng = random.Random(seed)
    vocabulary = [
        w
        for w in (
            "dam flood valley river engineer concrete storm rain night town mayor report council "
            "water bridge road school farm crop loss relief aid army rescue family house power "
            "line repair budget study warning alarm level rise fall crack wall gate pump"
        ).split()
    ]
    dataset = Dataset.objects.create(name=f"synthetic-{n_scus}")
    topic = Topic.objects.create(dataset=dataset, external_id=f"S{n_scus}", title=f"Synthetic pyramid of {n_scus} SCUs")
    references, sentences = [], []
    for r in range(n_references):
        offsets, text = [], ""
        for _ in range(n_scus):
            words = [rng.choice(vocabulary) for _ in range(7)]
            start = len(text)
            text += " ".join(words).capitalize() + ". "
            offsets.append((start, start + len(" ".join(words[:4]))))
        references.append(
            ReferenceSummary.objects.create(topic=topic, external_id=chr(ord("A") + r), text=text.strip())
        )
        sentences.append(offsets)
    pyramid = Pyramid.objects.create(topic=topic, creator=user, status=Pyramid.Status.IN_PROGRESS, last_uid=n_scus)
    pyramid.references.set(references)
    scus = SCU.objects.bulk_create(
        SCU(pyramid=pyramid, uid=i + 1, label=f"Synthetic content unit {i + 1}") for i in range(n_scus)
    )
    plan = []
    for i, scu in enumerate(scus):
        weight = 1 + int((n_references - 1) * rng.random() ** 2.5)
        for r in rng.sample(range(n_references), weight):
            plan.append((scu, references[r], sentences[r][i]))
    contributors = Contributor.objects.bulk_create(Contributor(scu=scu, reference=ref) for scu, ref, _ in plan)
    ContributorPart.objects.bulk_create(
        ContributorPart(contributor=c, reference=ref, start=s, end=e)
        for c, (_, ref, (s, e)) in zip(contributors, plan, strict=True)
    )
    return pyramid


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=50, help="new SCUs to create (default: %(default)s)")
    parser.add_argument(
        "--loads", type=int, default=5, help="page loads for time to interactive (default: %(default)s)"
    )
    parser.add_argument(
        "--synthetic",
        type=int,
        default=0,
        metavar="N",
        help="a generated pyramid of N SCUs and 8 references instead of DUC 2006",
    )
    b.add_common_arguments(parser)
    args = parser.parse_args()
    if args.actions < 1 or args.loads < 1 or args.synthetic < 0:
        sys.exit("--actions and --loads must be at least 1, --synthetic at least 0")
    if args.synthetic:
        args.data = str(b.REPO)  # no data needed
    b.check_prerequisites(args)
    redis_url = os.environ.get("REDIS_URL", "")
    child_env = b.setup_django(args.keep_db)

    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from annotation.corpus.models import Assignment
    from annotation.pyramids.models import SCU, Pyramid

    user = None
    if args.synthetic:
        if connection.vendor == "postgresql":
            call_command("flush", interactive=False, verbosity=0)
        call_command("migrate", verbosity=0)
        user = b.create_user("bench-builder")
        start = time.perf_counter()
        pyramid = synthetic_pyramid(user, args.synthetic)
        print(f"generated a pyramid of {args.synthetic} SCUs in {time.perf_counter() - start:.1f} s", flush=True)
    else:
        b.fresh_database_with_duc2006(args.data)
    pyramid = Pyramid.objects.annotate(n=Count("scus")).order_by("-n", "id").first()
    if pyramid is None or pyramid.n == 0:
        sys.exit("the import produced no pyramid with SCUs")
    user = user or b.create_user("bench-builder")
    Assignment.objects.create(topic=pyramid.topic, annotator=user, task=Assignment.Task.BUILD_PYRAMID)
    Pyramid.objects.filter(pk=pyramid.pk).update(creator=user, status=Pyramid.Status.IN_PROGRESS)
    initial_scus = pyramid.n
    against = pyramid.annotations.count()
    print(
        f"pyramid {pyramid.pk} of topic {pyramid.topic.external_id}: {initial_scus} SCUs, "
        f"{pyramid.references.count()} references, {against} peer annotations against it",
        flush=True,
    )
    machine = b.machine_line(
        args.server, "on a Celery worker (Redis)" if redis_url else "no REDIS_URL (the server's own arrangement)"
    )
    b.close_db_connections()

    log_dir = b.make_log_dir()
    errors: list[str] = []
    tti, nav, full_fetch = [], [], []
    painted_ms, handled_ms, saved_ms, phrases, post_ms = [], [], [], [], []
    with (
        _maybe_worker(redis_url, child_env, log_dir),
        b.server(args.server, child_env, log_dir) as base,
        b.chromium(args.chromium) as browser,
    ):
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
                return {doc: n.responseEnd, dcl: n.domContentLoadedEventEnd, full: full ?
                  full.responseEnd - full.startTime : null,
                        bytes: full ? full.decodedBodySize : null,
                          scus: Number(document.querySelector('.scu-list').dataset.scus)};
            }""")
            if timing["scus"] != initial_scus:
                sys.exit(f"the builder shows {timing['scus']} SCUs, the pyramid has {initial_scus}")
            nav.append(timing)
            full_fetch.append(timing["full"])
        b.wait_saved(page)

        windows = []
        for ref in page.evaluate("() => [...document.querySelectorAll('.ref-text')].map((t) => t.dataset.ref)"):
            selector = f'.ref-text[data-ref="{ref}"]'
            # Not across a line break: the label editor (an <input>) drops the newline, so Enter would relabel (a
            # second save).
            windows += [
                (selector, start, end, phrase)
                for start, end, phrase in b.word_windows(page, selector, 2)
                if "\n" not in phrase and "\r" not in phrase
            ]
        if len(windows) < args.actions:
            sys.exit(f"only {len(windows)} two-word windows in the references: use --actions {len(windows)} or fewer")

        scus = initial_scus
        deadline = time.monotonic() + 150
        for selector, start, end, phrase in windows[: args.actions]:
            page.evaluate("() => performance.clearResourceTimings()")
            b.select_range(page, selector, start, end)
            page.wait_for_function(
                "() => document.querySelector('.ref-text .seg.pending') && "
                "!document.querySelector('[data-action=new-scu]').disabled"
            )
            page.keyboard.press("n")
            scus += 1
            painted, shown, saved, handled = page.wait_for_function(
                "() => window.__painted !== null && window.__saved !== null && [window.__painted, "
                "window.__paintedScus, window.__saved, window.__handled]",
                polling="raf",
            ).json_value()
            if shown != scus:
                sys.exit(f"the frame after the key press showed {shown} SCUs, not {scus}")
            page.wait_for_function("() => document.activeElement?.classList.contains('label-edit')")
            page.keyboard.press("Enter")
            b.wait_saved(page)
            post_ms.append(
                page.evaluate("""() => performance.getEntriesByType('resource')
                .filter((r) => r.name.endsWith('/api/scus/'))
                .reduce((a, r) => a + r.responseEnd - r.startTime, 0)""")
            )
            painted_ms.append(painted)
            handled_ms.append(handled)
            saved_ms.append(saved)
            phrases.append(phrase)
            if errors:
                sys.exit(f"JavaScript error in the page: {errors[0]}")
            if not page.is_hidden(".banner"):
                sys.exit(f"the builder shows an error: {page.text_content('.banner')}")
            if time.monotonic() > deadline:
                print(f"stopping after {len(painted_ms)} actions: the run would exceed ~3 minutes")
                break
        context.close()

    created = list(SCU.objects.filter(pyramid=pyramid).order_by("uid").values_list("label", flat=True))[initial_scus:]
    if len(created) != len(painted_ms) or created != phrases:
        different = [(c, p) for c, p in zip(created, phrases, strict=True) if c != p][:3]
        sys.exit(
            f"saved SCUs do not match the actions: {len(created)} created for {len(painted_ms)} actions; "
            f"saved label vs selected phrase: {different}"
        )
    if errors:
        sys.exit(f"JavaScript error in the page: {errors[0]}")

    print()
    print(
        f"builder /pyramids/{pyramid.pk}/build/ ({pyramid.topic.external_id}, {initial_scus} SCUs, "
        f"{pyramid.references.count()} references; "
        f"document {nav[0]['bytes'] / 1024:.0f} KiB of JSON)"
    )
    print(
        f"  time to interactive, first load (cold cache): {tti[0]:.0f} ms "
        f"(HTML received {nav[0]['doc']:.0f} ms, DOMContentLoaded {nav[0]['dcl']:.0f} ms, GET full/ "
        f"{nav[0]['full']:.0f} ms)"
    )
    if len(tti) > 1:
        rest = tti[1:]
        print(
            f"  time to interactive, next {len(rest)} loads: median {b.median(rest):.0f} ms (min "
            f"{min(rest):.0f}, max {max(rest):.0f}); "
            f"GET full/ median {b.median([f for f in full_fetch[1:] if f is not None]):.0f} ms"
        )
    print(f'  new SCU, key press "n" -> the frame showing it, {len(painted_ms)} actions: {b.summary(painted_ms)}')
    print(f"    of which the event until the page's handler applied and repainted it (script): {b.summary(handled_ms)}")
    print(f'  new SCU, key press "n" -> "saved" shown (the server confirmed it): {b.summary(saved_ms)}')
    print(
        "    of which POST /api/scus/ (the save, "
        f"{'scores recomputed by the worker' if redis_url else 'as the server arranges scoring without REDIS_URL'}): "
        f"{b.summary(post_ms)}"
    )
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
