"""`make run` serves static files as production does (pyramid_app/devserver, pyramid_app/staticfiles):
collected under content-hashed names with gzip copies, linked by those names with DEBUG on too,
module imports between our scripts rewritten to them; collected again on a restart only when a
source changed, and then only what changed compressed again."""

import gzip
import io
import os
import time

from django.contrib.staticfiles.storage import staticfiles_storage

from pyramid_app.devserver.management.commands.runserver import collect_if_changed

STORAGE = {"BACKEND": "pyramid_app.staticfiles.CollectedStaticStorage"}


def test_collects_again_only_what_changed(tmp_path, settings):
    sources = tmp_path / "sources"
    scripts = sources / "frontend" / "js"  # where our own modules live: their imports are rewritten
    scripts.mkdir(parents=True)
    (scripts / "probe_lib.js").write_text("export const answer = 42;\n" + "// padding\n" * 300)
    (scripts / "probe_main.js").write_text('import { answer } from "./probe_lib.js";\nconsole.log(answer);\n')
    (scripts / "probe_other.js").write_text("export const other = 1;\n" + "// padding\n" * 300)
    settings.STATICFILES_DIRS = [sources]
    settings.STATICFILES_FINDERS = ["django.contrib.staticfiles.finders.FileSystemFinder"]  # these files only: fast
    settings.STATIC_ROOT = tmp_path / "collected"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": STORAGE}
    root = settings.STATIC_ROOT

    out = io.StringIO()
    collect_if_changed(out)
    assert "collected" in out.getvalue()
    lib = staticfiles_storage.url("frontend/js/probe_lib.js")  # DEBUG is on in the tests: hashed all the same
    assert lib.startswith("/static/frontend/js/probe_lib.") and lib != "/static/frontend/js/probe_lib.js"
    main = staticfiles_storage.stored_name("frontend/js/probe_main.js")
    assert f'from "./{lib.rsplit("/", 1)[1]}";' in (root / main).read_text()
    stored_lib = root / staticfiles_storage.stored_name("frontend/js/probe_lib.js")
    assert gzip.decompress((root / f"{stored_lib}.gz").read_bytes()) == stored_lib.read_bytes()
    other = root / staticfiles_storage.stored_name("frontend/js/probe_other.js")
    untouched = {
        path: path.stat().st_mtime_ns for path in (root / f"{other}.gz", root / "frontend" / "js" / "probe_other.js.gz")
    }
    manifest = (root / "staticfiles.json").stat().st_mtime_ns

    # A restart with nothing changed (a Python edit) collects nothing.
    out = io.StringIO()
    collect_if_changed(out)
    assert out.getvalue() == "" and (root / "staticfiles.json").stat().st_mtime_ns == manifest

    # An edited script: a new hashed name, imported by the new name, compressed; nothing else recompressed.
    (scripts / "probe_lib.js").write_text("export const answer = 43;\n" + "// padding\n" * 300)
    later = time.time() + 2  # collectstatic compares whole seconds: an edit comes seconds after a collection
    os.utime(scripts / "probe_lib.js", (later, later))
    out = io.StringIO()
    collect_if_changed(out)
    assert "collected" in out.getvalue()
    new_lib = staticfiles_storage.url("frontend/js/probe_lib.js")
    assert new_lib != lib
    assert (
        f'from "./{new_lib.rsplit("/", 1)[1]}";'
        in (root / staticfiles_storage.stored_name("frontend/js/probe_main.js")).read_text()
    )
    stored_lib = root / staticfiles_storage.stored_name("frontend/js/probe_lib.js")
    assert gzip.decompress((root / f"{stored_lib}.gz").read_bytes()).startswith(b"export const answer = 43;")
    assert gzip.decompress((root / "frontend" / "js" / "probe_lib.js.gz").read_bytes()).startswith(
        b"export const answer = 43;"
    )
    assert {path: path.stat().st_mtime_ns for path in untouched} == untouched
