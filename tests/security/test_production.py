"""Production is the default: DEBUG off unless asked for, HTTPS-only headers and cookies, a clean
`check --deploy`, a health check that fails when pages cannot be served, and debug/error pages
that never show a credential."""

import json
import os
import secrets
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from django.test import RequestFactory, override_settings
from django.views.debug import technical_500_response

REPO = Path(__file__).resolve().parents[2]
SERVICE_VARIABLES = {
    "DEBUG",
    "SECRET_KEY",
    "DATABASE_URL",
    "REDIS_URL",
    "ALLOWED_HOSTS",
    "SECURE_COOKIES",
    "SECURE_SSL_REDIRECT",
    "HSTS_SECONDS",
    "TRUSTED_PROXY_COUNT",
    "COLLECTED_STATIC",
    "STATIC_ROOT",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
}  # set by the browser tests; never in a deployment


def run_python(env: dict, code: str, tmp_path) -> subprocess.CompletedProcess:
    """Python in a fresh interpreter with exactly this configuration (settings are read at import)."""
    base = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
    env = {"DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3", "DJANGO_SETTINGS_MODULE": "pyramid_app.settings", **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**base, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def production(**extra) -> dict:
    return {"SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "testserver,example.org", **extra}


def test_debug_is_off_unless_asked_for(tmp_path):
    shown = run_python(production(), "import pyramid_app.settings as s; print(s.DEBUG)", tmp_path)
    assert shown.stdout.strip() == "False", shown.stderr
    refused = run_python({}, "import pyramid_app.settings", tmp_path)  # nothing set: production refuses the dev key
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr


def test_development_mode_is_asked_for_explicitly():
    makefile = (REPO / "Makefile").read_text()
    for target in ("runserver", "load_demo", "migrate --noinput"):
        assert any(target in line and "$(DEV)" in line for line in makefile.splitlines()), target
    assert "DEV := DEBUG=1" in makefile
    assert 'env = ["DEBUG=1"]' in (REPO / "pyproject.toml").read_text()


def test_production_headers_and_https(tmp_path):
    code = """
        import django, json
        django.setup()
        from django.test import Client
        c = Client()
        plain = c.get("/accounts/login/")
        health = c.get("/healthz")
        secure = c.get("/healthz", secure=True)
        from django.conf import settings as s
        print(json.dumps({"plain": [plain.status_code, plain.get("Location")], "health": health.status_code,
                          "hsts": secure.get("Strict-Transport-Security"), "csp": secure.get("Content-Security-Policy"),
                          "frame": secure.get("X-Frame-Options"), "nosniff": secure.get("X-Content-Type-Options"),
                          "cookies": [s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE]}))
    """
    result = run_python(production(), code, tmp_path)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["plain"] == [301, "https://testserver/accounts/login/"]  # plain HTTP is redirected
    assert seen["health"] in (200, 503)  # the health check is probed over HTTP
    assert seen["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "script-src 'self'" in seen["csp"] and "unsafe-inline" not in seen["csp"]
    assert seen["frame"] == "DENY" and seen["nosniff"] == "nosniff" and seen["cookies"] == [True, True]


def test_check_deploy_is_clean(tmp_path):
    result = run_python(
        production(),
        "import sys; from django.core.management import execute_from_command_line; "
        "execute_from_command_line(['manage.py', 'check', '--deploy', '--fail-level', 'WARNING'])",
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_healthz_fails_when_static_files_are_not_collected(tmp_path):
    """The README's steps without collectstatic: every page would answer 500, so /healthz says 503."""
    code = """
        import django
        django.setup()
        from django.test import Client
        r = Client().get("/healthz")
        print(r.status_code, r.json()["status"], "collectstatic" in r.json().get("reason", ""))
    """
    # An empty folder: the project's staticfiles/ holds what `make run` collected.
    result = run_python(production(STATIC_ROOT=str(tmp_path / "static")), code, tmp_path)
    assert result.stdout.split() == ["503", "error", "True"], result.stderr


def test_healthz_ok_when_pages_can_be_served(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_compose_defaults_to_secure_cookies():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    for name in ("web", "worker"):
        value = compose["services"][name]["environment"].get("SECURE_COOKIES", "1")
        assert value.endswith(("-1}", "1")) and not value.endswith("-0}"), value


# --- Credentials never shown on the debug page ---------------------------------------------
PASSWORD = "hunter2-db-secret"


def test_debug_page_never_shows_credentials():
    """The attack: DEBUG on, any 500 shows settings, the environment and frame variables."""
    database_url = f"postgres://pyramid:{PASSWORD}@db:5432/pyramid"
    redis_url = f"redis://:{PASSWORD}@redis:6379/0"
    request = RequestFactory().get("/boom", DATABASE_URL=database_url, REDIS_URL=redis_url)
    with override_settings(
        DEBUG=True,
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": redis_url}},
    ):
        try:
            connection_string = database_url  # a local variable in the failing frame
            raise RuntimeError("boom")
        except RuntimeError:
            page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "boom" in page and "DATABASE_URL" in page  # the page is the real debug page...
    assert PASSWORD not in page  # ...without the password anywhere
    assert "postgres://pyramid:********@db:5432/pyramid" in page
    assert connection_string


@pytest.mark.parametrize(
    "text, masked",
    [
        ("postgres://u:p%40ss@db:5432/x", "postgres://u:********@db:5432/x"),
        ("redis://:secret@r:6379/0", "redis://:********@r:6379/0"),
        ("amqp://guest@host//", "amqp://guest@host//"),
        ("http://example.org:8000/path", "http://example.org:8000/path"),
        ("see sqlite:////tmp/db.sqlite3", "see sqlite:////tmp/db.sqlite3"),
    ],
)
def test_url_passwords_masked(text, masked):
    from pyramid_app.error_reports import mask_url_passwords

    assert mask_url_passwords(text) == masked
