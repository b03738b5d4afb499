"""Content Security Policy: every page is served with the policy and nothing on it violates it.

The policy (``CONTENT_SECURITY_POLICY`` in settings, django-csp) allows code and styles only from
this site: no inline ``<script>``, ``style=`` attribute, ``on*=`` handler or ``javascript:`` URL, and
no remote code. ``pages()`` lists every page; a new page is added there (``test_every_page_is_listed``
fails until it is). Each page is loaded in Chromium, which reports every violation it blocks.
"""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.corpus.models import Assignment, PeerSummary
from annotation.lightweight.models import CrowdLink, LightweightPyramid
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.construction import recompute_topics as recompute_construction
from annotation.pyramids.models import Pyramid

from tests import accessibility
from tests.dashboards.helpers import build_toy
from tests.pyramids.construction_world import build as build_construction

REPO = Path(__file__).resolve().parents[2]

# Named URLs that are not pages (downloads, JSON, POST-only actions, redirects), with the reason.
NOT_PAGES = {
    "frontend:open-assignment": "POST-only, redirects to an editor",
    "frontend:finish-assignment": "POST-only, redirects home",
    "frontend:carry-over": "POST-only, redirects to the annotator page",
    "frontend:healthz": "JSON",
    "frontend:favicon": "a redirect to the icon (a static file)",
    "setup:landing": "a redirect to the dataset list (dashboards:list, checked)",
    "dashboards:assignment_create": "POST-only form target",
    "dashboards:assignment_update": "POST-only form target",
    "dashboards:assignment_delete": "POST-only form target",
    "dashboards:status": "JSON",
    "dashboards:agreement_export": "download",
    "dashboards:scores_export": "download",
    "dashboards:metaeval_export": "download",
    "dashboards:statistics_export": "download",
    "dashboards:chart_export": "download",
    "dashboards:construction_export": "download",
    "lightweight:chart_csv": "download",
    "lightweight:action": "POST-only, redirects to the run page",
    "setup:summary_remove": "POST-only, redirects to the topic page",
    "setup:building": "POST-only, redirects to the dataset's set-up page",
    "logout": "POST-only, redirects to the login page",
}


def pages(world) -> list[tuple[str, str, str | None]]:
    """Every HTML page: (URL name, path, a selector that shows the page's own script has run)."""
    d, pyramid, annotation = world["dataset"].pk, world["pyramid"].pk, world["annotation"].pk
    topic, reference, free_peer = world["topic"].pk, world["reference"].pk, world["free_peer"].pk
    return [
        ("login", reverse("login"), None),
        ("frontend:home", reverse("frontend:home"), None),
        ("frontend:builder", reverse("frontend:builder", args=[pyramid]), ".editor.ready"),
        ("frontend:annotator", reverse("frontend:annotator", args=[annotation]), ".editor.ready"),
        (
            "frontend:annotator-peer",
            reverse("frontend:annotator-peer", args=[world["assignment"].pk, free_peer]),
            ".editor.ready",
        ),  # untouched peer
        ("frontend:pyramid-scus", reverse("frontend:pyramid-scus", args=[pyramid]), None),
        ("dashboards:list", reverse("dashboards:list"), None),
        ("dashboards:overview", reverse("dashboards:overview", args=[d]), None),
        ("dashboards:agreement", reverse("dashboards:agreement", args=[d]), None),
        ("dashboards:agreement_topic", reverse("dashboards:agreement_topic", args=[d, "T1"]), None),
        ("dashboards:agreement_peer", reverse("dashboards:agreement_peer", args=[d, "T1", "1"]), None),
        ("dashboards:adjudicate", reverse("dashboards:adjudicate", args=[d, "T1", "1", pyramid]), None),
        (
            "dashboards:construction_topic",
            reverse("dashboards:construction_topic", args=[world["construction"].pk, "T"]),
            None,
        ),
        (
            "dashboards:adjudicate_pyramids",
            reverse(
                "dashboards:adjudicate_pyramids", args=[world["construction"].pk, "T", *world["construction_pair"]]
            ),
            None,
        ),
        ("dashboards:scores", reverse("dashboards:scores", args=[d]), None),
        ("dashboards:metaeval", reverse("dashboards:metaeval", args=[d]), None),
        ("dashboards:significance", reverse("dashboards:significance", args=[d]), None),
        ("lightweight:runs", reverse("lightweight:runs"), None),
        ("lightweight:run", reverse("lightweight:run", args=[world["run"].pk]), None),
        ("lightweight:settings", reverse("lightweight:settings", args=[world["run"].pk]), None),
        ("lightweight:crowd", reverse("lightweight:crowd", args=[world["crowd"]]), None),
        ("setup:dataset_new", reverse("setup:dataset_new"), None),
        ("setup:dataset", reverse("setup:dataset", args=[d]), None),
        ("setup:topics_add", reverse("setup:topics_add", args=[d]), None),
        ("setup:topics_zip", reverse("setup:topics_zip", args=[d]), None),
        ("setup:topic", reverse("setup:topic", args=[d, topic]), None),
        ("setup:summary", reverse("setup:summary", args=[d, topic, "reference", reference]), None),  # fixed: read-only
        ("setup:summary", reverse("setup:summary", args=[d, topic, "peer", free_peer]), None),  # editable: forms
        ("setup:topic_delete", reverse("setup:topic_delete", args=[d, topic]), None),
        ("setup:ducview", reverse("setup:ducview", args=[d]), None),
        ("setup:pyramid_set", reverse("setup:pyramid_set", args=[d]), None),
        ("setup:people", reverse("setup:people", args=[d]), None),
        ("setup:exports", reverse("setup:exports", args=[d]), None),
        ("invitation", world["invitation"], None),
        ("admin:index", reverse("admin:index"), None),
        ("admin:login", reverse("admin:login"), None),
        ("admin:changelist", reverse("admin:annotation_pyramid_changelist"), None),
        ("admin:change", reverse("admin:annotation_pyramid_change", args=[pyramid]), None),
        ("api:docs", reverse("api:docs"), ".swagger-ui .info"),
        ("api:api-root", reverse("api:api-root"), None),
        ("api:list", reverse("api:pyramid-list"), None),
        ("api:detail", reverse("api:pyramid-detail", args=[pyramid]), None),
        ("not found", "/no-such-page/", None),
    ]


def _named_urls(resolver=None, namespace="") -> set[str]:
    """Every named URL of the site's own pages (the admin's and the API's are sampled in pages())."""
    names = set()
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            if entry.namespace not in ("admin", "api"):
                names |= _named_urls(entry, f"{entry.namespace}:" if entry.namespace else namespace)
        elif isinstance(entry, URLPattern) and entry.name:
            names.add(namespace + entry.name)
    return names


def test_every_page_is_listed(db):
    listed = {name for name, _path, _ready in pages(_fake_world())}
    missing = _named_urls() - listed - set(NOT_PAGES)
    assert not missing, f"pages not checked for CSP: add them to pages() in {__file__}: {sorted(missing)}"


class _Pk:
    pk = 1


def _fake_world():
    return {
        "dataset": _Pk,
        "pyramid": _Pk,
        "annotation": _Pk,
        "run": _Pk,
        "crowd": "x",
        "invitation": "/accounts/invite/x/y/",
        "topic": _Pk,
        "reference": _Pk,
        "free_peer": _Pk,
        "construction": _Pk,
        "construction_pair": (1, 2),
        "assignment": _Pk,
    }


# --- A static guard for templates no test renders --------------------------------------------
INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I), "inline <script>"),
    (re.compile(r"\sstyle\s*=", re.I), "style= attribute"),
    (re.compile(r"<style\b", re.I), "<style> element"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "on*= handler"),
    (re.compile(r"javascript:", re.I), "javascript: URL"),
]


COMMENT = re.compile(r"{% comment %}.*?{% endcomment %}|{#.*?#}|<!--.*?-->", re.S)


def test_templates_and_scripts_have_nothing_inline():
    found = []
    for path in sorted((REPO / "frontend").rglob("*")):
        if path.suffix not in (".html", ".js"):
            continue
        text = path.read_text()
        if path.suffix == ".html":  # comments are not markup (line numbers kept)
            text = COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
        patterns = (
            INLINE
            if path.suffix == ".html"
            else [
                (re.compile(r"setAttribute\(\s*['\"](style|on[a-z]+)['\"]"), "inline style/handler set from script"),
                (
                    re.compile(r"[{,]\s*['\"]?(style|on[a-z]+)['\"]?\s*:\s*[`'\"]"),
                    "style/handler attribute passed to el()",
                ),
                (
                    re.compile(r"(innerHTML|insertAdjacentHTML|outerHTML)[^;\n]*(style=|\son[a-z]+=)"),
                    "markup with inline style/handler",
                ),
                (re.compile(r"\beval\(|new Function\("), "eval"),
            ]
        )
        for pattern, what in patterns:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(REPO)}:{line}: {what}")
    assert not found, (
        "CSP forbids these (use static files, classes, data- attributes, addEventListener):\n" + "\n".join(found)
    )


# --- The pages in Chromium -------------------------------------------------------------------
COLLECT_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
    `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber} ${e.sample || ''}`));
"""


@pytest.fixture
def world(transactional_db):
    from pyramid_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, True  # dashboards computed now
    try:
        dataset = build_toy("CSP <b>set</b>")
        root = get_user_model().objects.create_superuser("root", "root@example.org", None)
        pyramid = Pyramid.objects.filter(topic__dataset=dataset, topic__external_id="T1").get()
        assignment = Assignment.objects.create(topic=pyramid.topic, annotator=root, task="annotate_peers")
        annotation = PeerAnnotation.objects.create(
            peer=pyramid.topic.peersummarys.get(external_id="2"), pyramid=pyramid, annotator=root
        )
        invited = get_user_model().objects.create_user("invited")
        invitation = reverse(
            "invitation",
            args=[urlsafe_base64_encode(force_bytes(invited.pk)), default_token_generator.make_token(invited)],
        )
        run = LightweightPyramid.objects.create(dataset=dataset, name="Crowd <i>run</i>")
        crowd = CrowdLink.objects.create(pyramid=run, kind=CrowdLink.Kind.WRITING).token
        free_peer = PeerSummary.objects.create(
            topic=pyramid.topic, external_id="9", text="Nothing rests <on> this peer yet."
        )
        construction_set = build_construction("CSP <b>pyramids</b>")  # two pyramids of one topic, compared
        recompute_construction(list(construction_set.topics.values_list("id", flat=True)))
        pair = sorted(construction_set.topics.get().pyramids.values_list("id", flat=True))
        yield {
            "construction": construction_set,
            "construction_pair": pair,
            "dataset": dataset,
            "pyramid": pyramid,
            "annotation": annotation,
            "user": root,
            "invitation": invitation,
            "run": run,
            "crowd": crowd,
            "topic": pyramid.topic,
            "reference": pyramid.references.order_by("external_id").first(),
            "free_peer": free_peer,
            "assignment": assignment,
        }
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved


ANONYMOUS = {"login", "admin:login", "invitation", "lightweight:crowd"}


@pytest.mark.browser
def test_no_page_violates_the_policy(chromium, live_server, world):
    client = Client()
    client.force_login(world["user"])
    host = urlsplit(live_server.url).netloc
    remote, problems, console = [], [], []
    tabs = {}
    for who in ("anonymous", "user"):
        context = chromium.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(COLLECT_VIOLATIONS)
        context.on(
            "request",
            lambda request: (
                remote.append(request.url)
                if urlsplit(request.url).scheme in ("http", "https") and urlsplit(request.url).netloc != host
                else None
            ),
        )
        if who == "user":
            context.add_cookies(
                [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
            )
        tab = context.new_page()
        tab.on(
            "console",
            lambda message: console.append(message.text) if "Content Security Policy" in message.text else None,
        )
        tabs[who] = tab
    try:
        for name, path, ready in pages(world):
            tab = tabs["anonymous" if name in ANONYMOUS else "user"]
            response = tab.goto(live_server.url + path)
            policy = response.headers.get("content-security-policy", "")
            if "script-src 'self'" not in policy or "style-src 'self'" not in policy or "unsafe-inline" in policy:
                problems.append(f"{name} ({path}): policy header {policy!r}")
            tab.wait_for_load_state("load")
            if ready:
                tab.wait_for_selector(ready, timeout=10_000)
            tab.wait_for_timeout(150)
            accessibility.check(tab)
            violations = tab.evaluate("window.__csp") or console  # the console only when the event missed it
            problems += [f"{name} ({path}): {violation}" for violation in violations]
            console.clear()
    finally:
        for tab in tabs.values():
            tab.context.close()
    assert not remote, f"pages loaded remote resources: {remote}"
    assert not problems, "CSP violations:\n" + "\n".join(problems)
