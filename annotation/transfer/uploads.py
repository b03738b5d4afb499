"""Import uploaded DUCView files and zip archives of them, with every size bounded.

Used by ``POST /api/datasets/{id}/import/`` and the set-up page *Import DUCView*, with an optional
annotator table (``read_annotator_table``: who annotated the peers whose file names do not say it). Everything that
is uploaded is checked before
anything is imported, so a refused upload (a zip bomb, a path escaping the archive, a file over
the size limit, a file that is neither .pyr, .pan nor .zip) writes nothing. Then each DUCView file
is imported whole or not at all by ``ducview_import.import_all`` (pyramids first, scores
recomputed once at the end), exactly as ``import_ducview`` does: a file rejected there (malformed,
hostile XML, not a NIST name, inconsistent with what is stored) writes nothing and is listed in
the report.

Limits (``Limits.from_settings``):
- each DUCView file, uploaded or inside a zip: ``settings.IMPORT_MAX_BYTES`` (decompressed size,
  counted while reading: the sizes a zip declares are not trusted);
- all files decompressed from one request: ``IMPORT_MAX_ARCHIVE_BYTES`` (settings, default 64 MiB;
  DUC 2006 is 28 MB) and ``IMPORT_MAX_ARCHIVE_MEMBERS`` entries per zip (default 5,000);
- the request itself is bounded by the view (``DATA_UPLOAD_MAX_MEMORY_SIZE``).
Zip members must be relative paths without ``..``; encrypted members and nested archives are
refused; other files in a zip (e.g. the ``scores.csv`` of a dataset archive, macOS ``__MACOSX/``
entries) are ignored and listed. A zip with a ``manifest.json`` at its root is a dataset archive
(``dataset_archive``): its manifest (bounded as a DUCView file) says each annotation's and
pyramid's status, annotator or creator, and times, which the import restores; a manifest that cannot be read refuses
the upload.
The names it gives are attributed as ``identities`` says: to imported identities, unless the
importing coordinator maps them to accounts.
"""

import posixpath
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import PurePosixPath

from annotation import formats
from annotation.api.upload_bounds import ARCHIVE_EXTENSIONS, Limits, UploadRejected, safe_member_name
from annotation.corpus.models import Dataset
from annotation.transfer import archive as dataset_archive
from annotation.transfer import identities
from annotation.transfer.archive import Archived
from annotation.transfer.ducview_import import EXTENSIONS, ImportReport, import_all


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _suffix(name: str) -> str:
    return PurePosixPath(name.lower()).suffix


class _Budget:
    def __init__(self, limits: Limits):
        self.limits = limits
        self.used = 0

    def take(self, size: int, what: str) -> None:
        if size > self.limits.file_bytes:
            raise UploadRejected(f"{what}: larger than the {_mib(self.limits.file_bytes)} a DUCView file may have")
        self.used += size
        if self.used > self.limits.total_bytes:
            raise UploadRejected(f"{what}: the upload decompresses to more than {_mib(self.limits.total_bytes)}")


def _read_archive(upload, name: str, budget: _Budget, files: list, ignored: list, archived: dict) -> None:
    limits = budget.limits
    try:
        with zipfile.ZipFile(upload) as archive:
            members = archive.infolist()
            if len(members) > limits.archive_members:
                raise UploadRejected(f"{name}: more than {limits.archive_members} entries")
            wanted, extras = [], {}  # extras: the dataset archive's manifest (and scores.csv) by name
            for info in members:
                path = safe_member_name(info.filename)
                if info.is_dir():
                    continue
                base = posixpath.basename(path)
                if path.startswith("__MACOSX/") or base.startswith("._"):
                    ignored.append(f"{name}/{path}: macOS metadata")
                elif _suffix(path) in ARCHIVE_EXTENSIONS:
                    raise UploadRejected(f"{name}/{path}: archives inside archives are not opened")
                elif _suffix(path) not in EXTENSIONS and path not in (dataset_archive.MANIFEST, dataset_archive.SCORES):
                    ignored.append(f"{name}/{path}: not a .pyr or .pan file")
                elif info.flag_bits & 0x1:
                    raise UploadRejected(f"{name}/{path}: encrypted archive members are not supported")
                elif info.file_size > limits.file_bytes:  # declared size: refuse early, but never trust it
                    budget.take(info.file_size, f"{name}/{path}")
                else:
                    wanted.append((info, path))
                if path == dataset_archive.SCORES:  # not imported (read for an old manifest)
                    ignored.append(f"{name}/{path}: not a .pyr or .pan file")
            for info, path in wanted:
                with archive.open(info) as member:
                    data = member.read(limits.file_bytes + 1)
                budget.take(len(data), f"{name}/{path}")
                if _suffix(path) in EXTENSIONS:
                    files.append((path, data))
                else:
                    extras[path] = data
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError) as error:
        raise UploadRejected(f"{name}: not a valid zip archive ({error})") from None
    if dataset_archive.MANIFEST not in extras:
        return
    try:
        records = dataset_archive.read_manifest(extras[dataset_archive.MANIFEST], extras.get(dataset_archive.SCORES))
    except dataset_archive.ManifestError as error:
        raise UploadRejected(f"{name}: {error}") from None
    twice = sorted(archived.keys() & records.keys())
    if twice:
        raise UploadRejected(
            f"{name}: another dataset archive of this upload describes {twice[0]!r} too: upload them one at a time"
        )
    archived.update(records)


def collect_files(
    uploads, limits: Limits | None = None
) -> tuple[list[tuple[str, bytes]], list[str], dict[str, Archived]]:
    """The DUCView files of ``uploads`` (objects with ``name``, ``size``, ``read()``), what was
    ignored, and what the manifests of dataset archives among them say of their files (by name).

    Raises UploadRejected, having imported nothing, if anything is over a limit or unsafe.
    """
    limits = limits or Limits.from_settings()
    budget = _Budget(limits)
    files: list[tuple[str, bytes]] = []
    ignored: list[str] = []
    archived: dict[str, Archived] = {}
    for upload in uploads:
        name = posixpath.basename((upload.name or "").replace("\\", "/")) or "(unnamed)"
        suffix = _suffix(name)
        if suffix in EXTENSIONS:
            if upload.size is not None and upload.size > limits.file_bytes:
                budget.take(upload.size, name)
            data = upload.read(limits.file_bytes + 1)
            budget.take(len(data), name)
            files.append((name, data))
        elif suffix in ARCHIVE_EXTENSIONS:
            _read_archive(upload, name, budget, files, ignored, archived)
        else:
            raise UploadRejected(f"{name}: only .pyr and .pan files, or .zip archives of them, can be imported")
    return files, ignored, archived


def read_annotator_table(upload) -> formats.AnnotatorTable | None:
    """The uploaded annotator table (None when none was sent); UploadRejected says what is wrong, where."""
    if upload is None:
        return None
    data = upload.read(formats.annotator_table.MAX_BYTES + 1)
    try:
        return formats.parse_annotator_table(
            data, posixpath.basename((upload.name or "").replace("\\", "/")) or "annotator table"
        )
    except formats.AnnotatorTableError as error:
        raise UploadRejected(str(error)) from None


def import_files(
    files: list[tuple[str, bytes]],
    dataset: Dataset,
    *,
    annotators: formats.AnnotatorTable | None = None,
    archived: dict[str, Archived] | None = None,
    users: Mapping[str, str] | None = None,
) -> ImportReport:
    """Import each file in its own transaction, pyramids first; scores are scheduled once at the end.
    ``annotators`` says who annotated the peers whose file names do not say it; ``archived``, what
    dataset archives say of their files (``collect_files``); ``users``, the accounts the importing
    coordinator attributes an archive's names to (``identities``: any other name's work goes to an
    imported identity). UploadRejected, having imported nothing, if ``users`` cannot be used."""
    notes: list[str] = []
    if users and not archived:
        raise UploadRejected("names are mapped to accounts only for a dataset archive (a .zip with its manifest.json)")
    if archived:
        try:
            archived, notes = identities.attribute(archived, users or {})
        except identities.NamesRejected as error:
            raise UploadRejected(str(error)) from None
    report = ImportReport()
    import_all(
        sorted(files, key=lambda item: (_suffix(item[0]) != ".pyr", item[0])),
        dataset,
        report,
        formats.NameOptions(annotators=annotators),
        archived=archived,
    )
    report.repairs[:0] = notes
    return report


def read_user_map(text: str | None) -> dict[str, str]:
    """The importing coordinator's ``ARCHIVE_NAME=USERNAME`` pairs (``identities.parse_user_map``)."""
    try:
        return identities.parse_user_map(text)
    except identities.NamesRejected as error:
        raise UploadRejected(str(error)) from None
