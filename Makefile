# Two commands on a fresh machine with Python 3.11 and npm: `make run` and `make test` (see README).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Production is the default (DEBUG off); the local commands ask for development mode explicitly.
DEV := DEBUG=1

.PHONY: run test test-fast lint install install-test vendor migrate demo worker beat bench bench-api bench-import bench-pages fuzz clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $@

# The test extras alone, not `pip install -e '.[test]'`: that reinstalls the project itself, rewriting the
# editable finder module in site-packages that every Django process has imported, and the autoreloader
# of a `make run` serving meanwhile restarts the server on it.
$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]))' > $(VENV)/test-requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/test-requirements.txt
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

# The browser libraries the app serves (package.json, pinned by package-lock.json; frontend/vendor.py).
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
vendor: node_modules/.package-lock.json

migrate: install vendor
	$(DEV) $(PY) manage.py migrate --noinput

demo: migrate
	$(DEV) $(PY) manage.py load_demo

## Set up (venv, dependencies, SQLite database, demo data and users) and serve on http://127.0.0.1:8000 (another port: make run PORT=8001)
# Static files collected, compressed and content-hashed as in production (COLLECTED_STATIC=1: see
# pyramid_app/devserver); the server still restarts on any change, static files included.
run: demo
	$(DEV) COLLECTED_STATIC=1 $(PY) manage.py runserver $(HOST):$(PORT)

## The whole test suite, in TEST_WORKERS processes (pytest-xdist, each its own databases and ports); services that are not configured are skipped (CI configures all of them)
# One process a core, two more for the fault and scale files, which mostly wait on production's
# timings while the others run (tests/schedule.py hands them to the last two workers), and one more to
# keep the cores busy while a browser or the database answers (CI on 2 cores: 915 s with 5, 975 s with 4).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 3 )))
test: install-test vendor
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## The edit loop: the last failures first, stops at the first failure, without the fault and scale suites (minutes of production timings; `make test` runs them)
test-fast: install-test vendor
	$(PY) -m pytest -q -x --ff --durations=5 --ignore=tests/faults --ignore=tests/scale $(PYTEST_ARGS)

## The linters: ruff (Python: lint, then formatting) and ESLint (the app's JavaScript); CI runs it before `make test`
lint: install-test vendor
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	node_modules/.bin/eslint .

## Celery workers (needs REDIS_URL): scores, and dashboards on their own queue; start as many as you like
# (as docker-compose.yml runs them, which says why: no heartbeat, gossip or mingle; scores in one process)
QUIET_WORKER_OPTIONS = --without-heartbeat --without-gossip --without-mingle
SCORES_WORKER_OPTIONS = --pool solo $(QUIET_WORKER_OPTIONS)
worker: install
	trap 'kill 0' INT TERM EXIT; \
	$(VENV)/bin/celery -A pyramid_app worker -Q celery -n scores@%h $(SCORES_WORKER_OPTIONS) --loglevel=info & \
	$(VENV)/bin/celery -A pyramid_app worker -Q dashboards -n dashboards@%h $(QUIET_WORKER_OPTIONS) --loglevel=info & \
	wait

## Celery beat, the periodic sweep of stale results (needs REDIS_URL): exactly one per deployment
beat: install
	$(VENV)/bin/celery -A pyramid_app beat --schedule $(VENV)/celerybeat-schedule --loglevel=info

## Benchmarks (print numbers; not tests)
bench: install-test vendor
	$(DEV) $(PY) bench/import_and_score.py

## Page loads in Chromium: first visit (empty cache) until the charts are painted, warm p95, JavaScript per page
bench-pages: install-test vendor
	$(PY) bench/page_load.py

## import_ducview + export_scores against SacreROUGE 0.2.5 on DUC 2006 (SACREROUGE_PYTHON: a throw-away venv, see the script)
bench-import: install-test
	$(PY) bench/import_vs_sacrerouge.py

## DUCView importer fuzzing, long: many more examples than CI, fresh randomness (FUZZ_EXAMPLES=...)
fuzz: install-test
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-2000} $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

## REST API under load: 20 concurrent clients against gunicorn (prints latency percentiles)
bench-api: install-test
	$(DEV) $(PY) bench/api_load.py

clean:
	rm -rf $(VENV) node_modules db.sqlite3 staticfiles .pytest_cache test-artifacts
