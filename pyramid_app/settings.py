"""Django settings, read from environment variables only (see docs/configuration.md).

Two shapes:
- nothing set: SQLite in the project folder and the Celery tasks run in-process, on a background
  thread after the commit (``annotation/jobs/runner.py``), so a bare checkout works with nothing
  else installed;
- ``DATABASE_URL`` and ``REDIS_URL`` set: PostgreSQL, Redis as broker and cache, and Celery
  workers (with beat's periodic sweep) do the work (the production shape, the one CI tests).
"""

import ipaddress
import os
import tempfile
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from .env import get_bool, get_int, get_list, get_str

BASE_DIR = Path(__file__).resolve().parent.parent

# Production is the default: development mode (debug pages, the built-in secret key, static files
# served from the app folders) is asked for explicitly with DEBUG=1 (`make run`, the test suite).
DEBUG = get_bool("DEBUG", False)

DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
SECRET_KEY = get_str("SECRET_KEY", DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEV_SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: the built-in development key may only be used with DEBUG=1. "
        "Set SECRET_KEY to a long random string (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(50))'`)."
    )

ALLOWED_HOSTS = get_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = get_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "pyramid_app.devserver",  # its runserver, before staticfiles' (see COLLECTED_STATIC)
    "django.contrib.staticfiles",
    "csp",
    "axes",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "frontend",
]

MIDDLEWARE = [
    # First: a proxy's headers count only from a proxy TRUSTED_PROXIES names (annotation/api/client_address.py).
    "annotation.api.client_address.forwarded_headers_from_named_proxies",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes requires: turns a lockout signalled during authentication into a 429.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "pyramid_app.urls"
WSGI_APPLICATION = "pyramid_app.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASE_URL = get_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")
# Health checks: a persistent connection the server dropped (restart, pg_terminate_backend) is
# replaced at the start of the next request instead of failing it.
DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=get_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True)
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite serialises writers; wait instead of failing with "database is locked", and take the
    # write lock at BEGIN so a reader turning writer cannot deadlock with another writer.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # Write-ahead log: readers never wait for the writer, and a commit appends to the log instead
    # of rewriting pages behind a rollback journal; with synchronous=NORMAL it is not synced on
    # every commit (only at checkpoints), which took 10-20 ms of each write. A crash of the server
    # process loses nothing; a power loss may lose the last commits, never the database's consistency.
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    # Tests on SQLite use a file like the one above (WAL, the busy timeout), not Django's default
    # in-memory database with a shared cache: there table locks fail at once ("database table is
    # locked") instead of waiting, and the background runner's thread writes beside the test's.
    # One file per test process (Django creates it and deletes it afterwards).
    DATABASES["default"]["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"pyramid-test-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, Celery and the cache ------------------------------------------------------------
REDIS_URL = get_str("REDIS_URL", "")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT = "pyramid_app.broker:Transport"  # kombu's, surviving a Redis outage (see there)
    CELERY_TASK_ALWAYS_EAGER = False
    # When Redis is unreachable a request must not wait for it: short timeouts, no retry, and a
    # per-process circuit breaker (annotation/jobs/redis_breaker.py; imported only here: redis-py
    # and its asyncio client are a tenth of a second of every command's start-up without Redis).
    from annotation.jobs import redis_breaker

    CACHES = {"default": redis_breaker.cache_settings(REDIS_URL)}
else:
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_TASK_ALWAYS_EAGER = True
    CELERY_TASK_EAGER_PROPAGATES = True
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The dashboard pages' rendered figures, per stored snapshot ({% cache ... using="fragments" %}):
# in each process's memory, never in Redis, so a page renders when Redis is down (the cache tag
# raises on an unreachable cache). At most 100 fragments (~50-150 KB each on DUC 2006) a process.
CACHES["fragments"] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "dashboard-fragments",
    "OPTIONS": {"MAX_ENTRIES": 100},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
# Results are stored in the database by the tasks themselves: no result backend (publishing a
# task with one waited ~19 s per save for an unreachable Redis).
CELERY_TASK_IGNORE_RESULT = True
# Tasks are published by a background thread (annotation/jobs/runner.py), never by a request; still
# fail fast when Redis is unreachable, the sweep publishes the stale work again later.
CELERY_BROKER_CONNECTION_TIMEOUT = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "socket_connect_timeout": 1,
    "socket_timeout": 10,
    # A task taken by a worker that was killed goes back to the queue after this many seconds
    # (kombu's default is an hour). A task running longer is delivered again meanwhile; that copy
    # is skipped (annotation/jobs/task_lock.py), so this can stay short: it bounds the recovery from a
    # killed worker (tests/faults).
    "visibility_timeout": get_int("CELERY_VISIBILITY_TIMEOUT", 20),
    "unacked_restore_interval": 5,
    "unacked_restore_throttle": 1,
}
# How long a running task's lock outlives its last renewal (its heartbeat renews it every third of
# this): shorter than the visibility timeout, so the copy delivered again after a worker was
# killed finds the lock expired and runs.
TASK_LOCK_SECONDS = get_int("TASK_LOCK_SECONDS", 12)
# A worker keeps its database connection between tasks, as a web process does between requests
# (CONN_MAX_AGE and its health check, applied before each task: pyramid_app/celery.py). Celery's
# default closed it before and after every task, so each task opened a new PostgreSQL connection
# (a backend forked, the session set up), several per editor's write (bench/request_cpu.py); now
# Celery closes it every 2 x this many tasks only.
CELERY_DB_REUSE_MAX = 1000
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Dashboards and statistics (minutes of CPU on a large dataset) have a queue of their own, consumed
# by workers of their own (`-Q dashboards`; Makefile, docker-compose.yml, tests/faults), so a score
# (milliseconds) never waits behind them. A worker started without -Q consumes both.
CELERY_TASK_DEFAULT_QUEUE = "celery"
DASHBOARD_QUEUE = "dashboards"
CELERY_TASK_QUEUES = {CELERY_TASK_DEFAULT_QUEUE: {}, DASHBOARD_QUEUE: {}}
CELERY_TASK_ROUTES = {
    "annotation.recompute_dashboards": {"queue": DASHBOARD_QUEUE},
    "annotation.recompute_construction": {"queue": DASHBOARD_QUEUE},  # seconds for several pyramids
    "annotation.compute_automatic_scores": {"queue": DASHBOARD_QUEUE},  # a fraction of a second per peer
    "annotation.recompute_stale_dashboards": {"queue": DASHBOARD_QUEUE},
}
# The periodic sweep: beat runs as a process of its own (`celery -A pyramid_app beat`, one per
# deployment), never inside a worker, so adding workers never adds a second beat, and a worker
# that dies does not take the sweep with it. Nothing stays stale forever, whatever was lost
# (Redis down, a worker killed).
CELERY_BEAT_SCHEDULE = {
    "recompute-stale": {"task": "annotation.recompute_stale", "schedule": float(get_int("SWEEP_SECONDS", 15))},
    "recompute-stale-dashboards": {
        "task": "annotation.recompute_stale_dashboards",
        "schedule": float(get_int("SWEEP_SECONDS", 15)) * 2,
    },
    "recompute-stale-lightweight": {
        "task": "annotation.recompute_stale_lightweight",
        "schedule": float(get_int("SWEEP_SECONDS", 15)) * 2,
    },
    "forget-expired-idempotency-keys": {"task": "annotation.forget_expired_idempotency_keys", "schedule": 3600.0},
}

# --- Auth -----------------------------------------------------------------------------------
# How many reverse proxies in front of the app append to X-Forwarded-For (and set
# X-Forwarded-Proto). 0: the client address is the connection's (REMOTE_ADDR) and forwarded
# headers are ignored, so a client cannot choose the address that throttles and lockouts count.
TRUSTED_PROXY_COUNT = get_int("TRUSTED_PROXY_COUNT", 0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured(f"TRUSTED_PROXY_COUNT={TRUSTED_PROXY_COUNT} must be 0 or more")
# The proxies' own addresses (or networks): X-Forwarded-For is believed only on a request whose
# connection comes from one of them (annotation/api/client_address.py); a node reached directly
# counts the connection's address whatever the header says.
TRUSTED_PROXIES = get_list("TRUSTED_PROXIES", [])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_proxy!r} is not an address or network") from None
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Password guessing: django-axes counts failed logins on the login pages, the admin's and the API
# token endpoint (every path through ``authenticate(request=...)``) and locks out a username
# (from any address) and an address (for any username) after LOGIN_FAILURE_LIMIT failures, for
# LOGIN_LOCKOUT_MINUTES after the last one. The address comes from ``client_address`` (never a
# client-chosen X-Forwarded-For unless TRUSTED_PROXY_COUNT says a proxy sets it).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = get_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=get_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "annotation.api.client_address.client_address"
AXES_LOCKOUT_CALLABLE = "pyramid_app.lockout.lockout_response"
AXES_VERBOSE = False
if AXES_FAILURE_LIMIT < 1:
    raise ImproperlyConfigured(f"LOGIN_FAILURE_LIMIT={AXES_FAILURE_LIMIT} must be 1 or more")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

REST_FRAMEWORK = {
    # Token first: an anonymous request is answered 401 with "WWW-Authenticate: Token".
    # Session requests (the browser) keep CSRF protection.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "annotation.api.idempotency.IdempotentSchema",
    # The browsable API from a template without inline styles (the Content Security Policy).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "annotation.api.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    # Id filters never look the id up (no existence oracle: annotation/api/filters.py).
    "DEFAULT_FILTER_BACKENDS": ["annotation.api.filters.FilterBackend"],
    # Password guessing through the token endpoint is slowed down (per client address or user).
    "DEFAULT_THROTTLE_RATES": {"token": get_str("TOKEN_RATE", "10/min")},
    # Throttles and lockouts count the same client address (annotation/api/client_address.py).
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    # An unknown ``table=``/``convention=`` is a 400 naming the choices, as on the pages.
    "EXCEPTION_HANDLER": "annotation.api.choices.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "pyramid API",
    "VERSION": "0.1.0",
    "ENUM_NAME_OVERRIDES": {
        "WorkStatusEnum": "annotation.pyramids.models.Pyramid.Status",  # same choices as PeerAnnotation.Status
        "AssignmentStatusEnum": "annotation.corpus.models.Assignment.Status",
    },
    # The interactive docs are served from this app's static files, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Uploads and imports ---------------------------------------------------------------------
IMPORT_MAX_BYTES = get_int("IMPORT_MAX_BYTES", 20 * 1024 * 1024)
# Time for patterns a DUCView file supplies (its header regex, searches for mislabelled parts):
# per file, and per import (request or command); past it the file is refused as hostile.
IMPORT_PATTERN_SECONDS_PER_FILE = float(get_str("IMPORT_PATTERN_SECONDS_PER_FILE", "0.5"))
IMPORT_PATTERN_SECONDS = float(get_str("IMPORT_PATTERN_SECONDS", "10"))
# Annotator identities (no login) one import may create from names in files (DUC 2006 has 21).
IMPORT_MAX_NEW_ANNOTATORS = get_int("IMPORT_MAX_NEW_ANNOTATORS", 30)
DATA_UPLOAD_MAX_MEMORY_SIZE = get_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
# Longest SCU label and SCU/contributor comment, on every path that writes one (API, imports):
# every reader of a pyramid loads them all (the longest DUC 2006/2007 label has 268 characters,
# the longest comment 97; a 2,000,000-character label made each reader's document 2.4 MB).
LABEL_MAX_LENGTH = get_int("LABEL_MAX_LENGTH", 2000)
COMMENT_MAX_LENGTH = get_int("COMMENT_MAX_LENGTH", 10000)
# How long the answer to a POST sent with an Idempotency-Key is kept for retries (seconds).
IDEMPOTENCY_KEY_SECONDS = get_int("IDEMPOTENCY_KEY_SECONDS", 24 * 3600)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE

# --- Internationalisation, static files ----------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
# Where collectstatic writes and WhiteNoise serves from: each node of a deployment may have its own.
STATIC_ROOT = Path(get_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "frontend.vendor.VendorFinder",  # static/vendor/chart.umd.min.js from node_modules (package.json)
]
# Static files as production serves them: collected into STATIC_ROOT under content-hashed names
# with gzip copies (pyramid_app/staticfiles.py), served by WhiteNoise compressed and cached for a
# year. Always without DEBUG; `make run` asks for it too (COLLECTED_STATIC=1: its runserver collects
# on each start, pyramid_app/devserver), so that pages load there as in production. Off, with DEBUG
# (the test suite): the app folders' files as they are, nothing to collect first.
COLLECTED_STATIC = not DEBUG or get_bool("COLLECTED_STATIC", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "pyramid_app.staticfiles.CollectedStaticStorage"
        if COLLECTED_STATIC
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
if COLLECTED_STATIC:
    # WhiteNoise serves what was collected (with DEBUG it would look in the app folders instead).
    WHITENOISE_USE_FINDERS = False
    WHITENOISE_AUTOREFRESH = False

# --- Production hardening ---------------------------------------------------------------------
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG:
    SESSION_COOKIE_SECURE = get_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_SSL_REDIRECT = get_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # health checks probe the app over plain HTTP from inside
    SECURE_HSTS_SECONDS = get_int("HSTS_SECONDS", 365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# --- Content Security Policy (django-csp) ------------------------------------------------------
# Pages load code and styles only from this site: no inline <script>, style= attribute, on*=
# handler or javascript: URL runs, so injected markup cannot execute (tests/security/test_csp.py
# loads every page in Chromium and fails on any violation).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Debug and error reports never show credentials (passwords inside DATABASE_URL, REDIS_URL, ...).
DEFAULT_EXCEPTION_REPORTER_FILTER = "pyramid_app.error_reports.CredentialFilter"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": get_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

# --- Scoring on save -------------------------------------------------------------------------
# Extra wait before a published recomputation runs (0: none; bursts coalesce anyway, see
# annotation/jobs/queue.py: dispatch).
SCORE_DEBOUNCE_SECONDS = float(get_str("SCORE_DEBOUNCE_SECONDS", "0"))
# The wait before the annotations against an edited pyramid are rescored (all of them: ~40 ms of
# worker CPU for 22 peers). A builder's edits within it coalesce into one rescoring instead of one
# per edit (bench/request_cpu.py); the scores shown lag the pyramid by about this much.
PYRAMID_SCORE_DELAY_SECONDS = float(get_str("PYRAMID_SCORE_DELAY_SECONDS", "2"))
# While a builder goes on editing, the least time between two such rescorings of a pyramid's
# annotations (and of its topic's agreement): the window grows from the delay above to this with
# the edit rate, so scores lag a busy builder by at most this much (well within the minute of the
# fault suite) and a pyramid saved every second costs one rescoring per this many seconds.
PYRAMID_SCORE_SPACING_SECONDS = float(get_str("PYRAMID_SCORE_SPACING_SECONDS", "10"))
# While annotators go on saving, the least time between two recomputations of a topic's agreement
# and of its construction agreement (each reads every annotation of the topic; an annotator's own
# score is still rescored at once). Each save of a match started both, about half the worker's CPU
# per save (bench/request_cpu.py); now the saves meanwhile coalesce into one run, the first after
# a quiet spell starting at once. Agreement is not shown to the annotator, and lags the saves by at
# most this much (well within the minute of the fault suite).
AGREEMENT_SPACING_SECONDS = float(get_str("AGREEMENT_SPACING_SECONDS", "10"))
# The same for a lightweight pyramid's scores. A crowd submits a steady stream (200 workers: several
# answers a second), and each recomputation reads the whole run: without a wait the worker would
# rescore after nearly every answer, taking more CPU than the judging pages themselves. While
# the task waits, every answer coalesces into it (jobs.queue.dispatch); a crowd's scores need no
# second-by-second freshness (bench/lightweight_crowd.py, docs/performance.md).
LIGHTWEIGHT_SCORE_DELAY_SECONDS = float(get_str("LIGHTWEIGHT_SCORE_DELAY_SECONDS", "2"))
# The wait before a published dashboard recomputation runs (a whole dataset's statistics: seconds
# of CPU on DUC 2006). Saves meanwhile publish nothing more, so a burst of edits costs one; without
# it every save started one, both worker processes were busy with dashboards, and an annotator's
# score (milliseconds of work) waited seconds behind them.
DASHBOARD_DEBOUNCE_SECONDS = float(get_str("DASHBOARD_DEBOUNCE_SECONDS", "5"))
# The least time between two starts of one dataset's dashboard recomputation (annotation/jobs/queue.py:
# a job's spacing). The debounce alone let 20 editors saving all the time start one every 5 s: half a
# second of CPU each for 20 small topics, most of the worker's CPU per write (bench/request_cpu.py).
# Kept well under the minute in which the fault suite wants every dashboard current.
DASHBOARD_INTERVAL_SECONDS = float(get_str("DASHBOARD_INTERVAL_SECONDS", "30"))
# A dashboard nobody has looked at for a couple of minutes waits, while its data keeps changing, for
# the data to stay unchanged this long (annotation/dashboards/snapshots.py): an annotator saving a
# match every few seconds paid a whole dataset's statistics (1.3 s of CPU for 20 small topics) every
# DASHBOARD_INTERVAL_SECONDS, 130 ms a save (issue 33, bench/human_pace.py). A dashboard being
# looked at is recomputed as before.
DASHBOARD_QUIET_SECONDS = float(get_str("DASHBOARD_QUIET_SECONDS", "15"))
# ... but never stays stale longer than this while the data keeps changing.
DASHBOARD_UNWATCHED_SECONDS = float(get_str("DASHBOARD_UNWATCHED_SECONDS", "600"))
# The meta-evaluation's cost (a dashboard recomputation, on the dashboards worker) grows with the
# judgments, their metrics and the bootstrap resamples of each correlation's interval: a 586 KB
# upload (30,000 rows) made every recomputation take 4-5 minutes. An upload that would pass the
# first two is refused with a message saying so (annotation/dashboards/judgments.py); DUC 2006 and
# 2007 with linguistic quality (6 metrics, ~11,000 judgments each) fit.
METAEVAL_MAX_JUDGMENTS = get_int("METAEVAL_MAX_JUDGMENTS", 20000)
METAEVAL_MAX_METRICS = get_int("METAEVAL_MAX_METRICS", 10)
METAEVAL_RESAMPLES = get_int("METAEVAL_RESAMPLES", 1000)
# How long a crowd worker shown a judging task holds one of its answer slots (MTurk's assignment
# duration), from the first showing (a reload does not renew it): workers arriving together are
# then handed different tasks instead of all answering the one that lacks a single answer. Long
# enough for a slow reader (a task takes a few minutes);
# short enough that a task left open in an abandoned tab goes back to the crowd soon. An answer
# sent after its hold expired (within as long again) is still stored (the work was done) while the
# task has fewer than judges_per_task + LIGHTWEIGHT_LATE_ANSWERS answers and holds: the overfill.
LIGHTWEIGHT_RESERVATION_SECONDS = get_int("LIGHTWEIGHT_RESERVATION_SECONDS", 900)
LIGHTWEIGHT_LATE_ANSWERS = get_int("LIGHTWEIGHT_LATE_ANSWERS", 1)
# Crowd pages and endpoints (lightweight pyramids), per client address: slows scripted floods.
CROWD_RATE = get_str("CROWD_RATE", "600/min")
# Judging slots held at once per browser session. Addresses are not capped (a lab of workers
# behind one NAT address must work): they share a link's slots fairly instead, an address over its
# share losing its newest hold to a worker from another address when none is free
# (annotation/lightweight/work.py).
CROWD_HOLDS_PER_SESSION = get_int("CROWD_HOLDS_PER_SESSION", 2)
# A worker id that has answered nothing in the run yet (a new worker, or one a script invented)
# holds its task this long (at most LIGHTWEIGHT_RESERVATION_SECONDS): unanswered holds free their
# slots soon, and a worker kept waiting is told to come back in minutes, not a quarter of an hour.
# Its answer is still taken late, as any late answer.
CROWD_FIRST_HOLD_SECONDS = get_int("CROWD_FIRST_HOLD_SECONDS", 300)
if LIGHTWEIGHT_LATE_ANSWERS < 0:
    raise ImproperlyConfigured(f"LIGHTWEIGHT_LATE_ANSWERS={LIGHTWEIGHT_LATE_ANSWERS} must be 0 or more")
if CROWD_HOLDS_PER_SESSION < 1 or CROWD_FIRST_HOLD_SECONDS < 1:
    raise ImproperlyConfigured("CROWD_HOLDS_PER_SESSION and CROWD_FIRST_HOLD_SECONDS must be 1 or more")
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}

# --- Ranked suggestions -------------------------------------------------------------------------
# Where `manage.py train_suggestions` keeps the model that ranks Autoannotate's suggestions
# (annotation/pyramids/suggestion_model.py). It is derived from the annotations it was trained on
# (DUC data may not be shipped), so it lives outside the repository; with no file, hand-set rules rank.
SUGGESTIONS_MODEL = get_str("SUGGESTIONS_MODEL", str(BASE_DIR / "var" / "suggestions-model.joblib"))
# Where `manage.py train_proposals` keeps the model of the pyramid builder's proposals
# (annotation/pyramids/proposals.py), outside the repository for the same reason; with no file, rules propose.
PROPOSALS_MODEL = get_str("PROPOSALS_MODEL", str(BASE_DIR / "var" / "proposals-model.joblib"))
