# Two commands on a fresh machine with Python 3.11: `make run` and `make test` (see README).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install install-test migrate demo worker bench bench-api clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

## Set up (venv, dependencies, SQLite database, demo data and users) and serve on http://127.0.0.1:8000
run: demo
	$(PY) manage.py runserver $(HOST):$(PORT)

## The whole test suite; services that are not configured are skipped (CI configures all of them)
test: install-test
	$(PY) -m pytest

## A Celery worker (needs REDIS_URL)
worker: install
	$(VENV)/bin/celery -A pyramid_app worker --loglevel=info

## Benchmarks (print numbers; not tests)
bench: install-test
	$(PY) bench/import_and_score.py

## REST API under load: 20 concurrent clients against gunicorn (prints latency percentiles)
bench-api: install-test
	$(PY) bench/api_load.py

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache test-artifacts
