"""The bounds of an upload, for every concept that reads uploaded files (DUCView imports in
``transfer.uploads``, topic texts in ``corpus.topic_setup``): sizes counted while reading (the sizes
a zip declares are not trusted), entries per zip, and member paths that stay inside the archive.
Shared plumbing, below the concepts that use it.
"""

import posixpath
import re
from dataclasses import dataclass

from django.conf import settings

ARCHIVE_EXTENSIONS = (".zip",)
_DRIVE = re.compile(r"^[A-Za-z]:")


class UploadRejected(Exception):
    """The upload as a whole is refused; the message says why (nothing was imported)."""


@dataclass(frozen=True)
class Limits:
    file_bytes: int
    total_bytes: int
    archive_members: int

    @classmethod
    def from_settings(cls) -> "Limits":
        return cls(
            file_bytes=settings.IMPORT_MAX_BYTES,
            total_bytes=getattr(settings, "IMPORT_MAX_ARCHIVE_BYTES", 64 * 1024 * 1024),
            archive_members=getattr(settings, "IMPORT_MAX_ARCHIVE_MEMBERS", 5000),
        )


def safe_member_name(name: str) -> str:
    """The member's path if it stays inside the archive; UploadRejected otherwise."""
    path = name.replace("\\", "/")
    if "\x00" in path or path.startswith("/") or _DRIVE.match(path):
        raise UploadRejected(f"{name!r}: absolute paths are not allowed in an archive")
    if ".." in path.split("/"):
        raise UploadRejected(f"{name!r}: '..' is not allowed in an archive's paths")
    return posixpath.normpath(path)
