"""``manage.py runserver`` serving static files the way production does when ``COLLECTED_STATIC``
is on (``make run`` sets it): collected into ``STATIC_ROOT`` under content-hashed names with gzip
copies, served by WhiteNoise (compressed, cached for a year), instead of Django's development
handler (uncompressed files under their plain names, revalidated on every page). A page then loads
on `make run` as it loads in production, and what a developer measures there holds for production.

The development flow stays: each (re)start collects again when a static source changed (a
fingerprint of the sources' names, sizes and times, so a restart after a Python edit costs no
collection), and the project's own static folders are watched, so saving a script or a stylesheet
restarts the server as saving a module does. Without ``COLLECTED_STATIC`` (the test suite) this is
Django's staticfiles ``runserver`` unchanged.
"""

import hashlib
import time
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.management.commands.runserver import Command as StaticfilesRunserver
from django.core.management import call_command
from django.utils.autoreload import autoreload_started

from pyramid_app.staticfiles import own_static_folders

FINGERPRINT = ".sources-fingerprint"


def sources_fingerprint() -> str:
    """A digest of every static source file's served name, size and modification time, and of the
    storage that collects them."""
    digest = hashlib.sha256(settings.STORAGES["staticfiles"]["BACKEND"].encode())
    for finder in finders.get_finders():
        for path, storage in finder.list(apps.get_app_config("staticfiles").ignore_patterns):  # collectstatic's
            stat = Path(storage.path(path)).stat()
            digest.update(
                f"{getattr(storage, 'prefix', None) or ''}/{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
            )
    return digest.hexdigest()


def collect_if_changed(stdout) -> None:
    root = Path(settings.STATIC_ROOT)
    stamp = root / FINGERPRINT
    current = sources_fingerprint()
    if (root / "staticfiles.json").is_file() and stamp.is_file() and stamp.read_text() == current:
        return
    start = time.perf_counter()
    call_command("collectstatic", interactive=False, verbosity=0)
    stamp.write_text(current)
    stdout.write(f"Static files collected, hashed and compressed into {root} in {time.perf_counter() - start:.1f} s")


def watch_static(sender, **kwargs):
    for folder in own_static_folders():
        sender.watch_dir(folder, "**/*")


class Command(StaticfilesRunserver):
    def handle(self, *args, **options):
        if settings.COLLECTED_STATIC:
            autoreload_started.connect(watch_static)
        super().handle(*args, **options)

    def inner_run(self, *args, **options):
        if settings.COLLECTED_STATIC:
            collect_if_changed(self.stdout)
            options["use_static_handler"] = False  # WhiteNoise (a middleware) serves them
        super().inner_run(*args, **options)
