"""The development server (`make run`) serving static files as production does: see
``management/commands/runserver.py``. An app of its own, listed before ``django.contrib.staticfiles``
so that its ``runserver`` is the one Django runs."""
