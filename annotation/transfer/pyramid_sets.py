"""Import several pyramids of the same references, built from separate copies of the texts, into one topic.

``import_ducview`` stores a topic's references once, by id and text, and refuses a file whose copy
of a reference differs: independent DUCView pyramids of the same summaries rarely agree on either
(the PyrEval MATTER files name the references ``1``, ``TCstudent1`` or ``1.txt`` and differ in
spaces, line breaks and apostrophes). Here reference i of every file is taken as reference i of the
first file (``pyramids.agreement_inputs.onto_first``: same count, texts at least 90% alike, every
part moved onto the first file's text), and each pyramid so re-expressed goes through the ordinary
import (``ducview_import.import_all``: the same checks, report, de-duplication and scheduling), so
the topic's pyramids share its ``ReferenceSummary`` rows and can be compared
(``pyramids.construction``). Every file goes into the topic named, whatever its name or content
say. Re-importing the same files adds nothing, and two annotators' identical pyramids stay two,
even when their files have one name in two folders (``alice/D0601.pyr``, ``bob/D0601.pyr``: each
file is named by its path under the set's folder, the origin ``formats.same_again`` compares).

Used by ``manage.py import_pyramid_set`` (files on disk: a rejected file is reported, the others
go in) and the set-up page *Import a pyramid set* (an upload: the whole set or nothing).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation import formats
from annotation.corpus.models import Dataset
from annotation.pyramids.agreement_inputs import onto_first
from annotation.transfer.ducview_import import ImportReport, find_files, import_all, import_budget


def import_pyramid_set(paths, dataset_name: str, topic: str) -> ImportReport:
    """Import the .pyr files under ``paths`` into ``topic`` of ``dataset_name`` (created if
    needed), on the references of the first file (in path order), each named by its path under
    the files' common folder (``import_pyramid_files``)."""
    files = [p for p in find_files(paths) if p.suffix.lower() == ".pyr"]  # every file goes to ``topic``
    if not files:
        return ImportReport()
    root = Path(os.path.commonpath([p.parent for p in files]))
    dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
    return import_pyramid_files([(p.relative_to(root).as_posix(), p.read_bytes()) for p in files], dataset, topic)


def import_pyramid_files(
    files: list[tuple[str, bytes]], dataset: Dataset, topic: str, *, whole: bool = False
) -> ImportReport:
    """Import the (name, bytes) .pyr files into ``topic`` of ``dataset``, on the references of the
    first file (in the given order). A file that cannot be read, or whose references are not the
    first file's, is rejected (in the report) and the others go in; with ``whole`` (the set-up
    page, where a set is one upload), such a file rejects the whole set and nothing is written.
    SCUs left with no contributor once moved (none in practice) are left out, and said so."""
    report = ImportReport()
    budget = import_budget()
    parsed = []
    for name, data in files:
        try:
            pyramid, _ = formats.parse_pyramid(
                data,
                max_bytes=settings.IMPORT_MAX_BYTES,
                budget=budget.for_file(settings.IMPORT_PATTERN_SECONDS_PER_FILE),
            )
        except formats.DucViewError as error:
            report.files += 1
            report.rejected.append(f"{name}: {error}")
            continue
        parsed.append((name, pyramid))
    moved = []
    for name, pyramid in parsed:
        try:
            pyramid = onto_first([parsed[0], (name, pyramid)])[1]
        except ValueError as error:  # its message names the file
            report.files += 1
            report.rejected.append(str(error))
            continue
        empty = [scu.uid for scu in pyramid.scus if not scu.contributors]
        if empty:
            report.repairs.append(
                f"{name}: SCU(s) {empty} left out: none of their parts lies in the first file's texts"
            )
            pyramid = dataclasses.replace(pyramid, scus=[scu for scu in pyramid.scus if scu.contributors])
        moved.append((name, formats.write_pyramid(pyramid)))
    options = formats.NameOptions(topic=topic, topic_always=True)
    if not whole:
        import_all(moved, dataset, report, options)
        return report
    if report.rejected:
        return report
    before = report.checkpoint()
    try:
        with transaction.atomic():
            import_all(moved, dataset, report, options)
            if report.rejected:
                raise _SetRefused
    except _SetRefused:
        rejected = list(report.rejected)
        report.restore(before)
        report.rejected += rejected
    return report


class _SetRefused(Exception):
    """A file of a set uploaded as one was rejected: nothing of the set is written."""
