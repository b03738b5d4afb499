"""Prepared pyramids (weights and jackknife pyramids, per convention) kept per process between
recomputations, so that an annotation edit rescores its peer without reading or preparing the
pyramid again.

An entry is keyed by what identifies one state of a pyramid: its id, its creation time (a test
database that rolls back or is flushed hands the same id out again, never at the same microsecond)
and its ``revision``, which every change to its SCUs, contributors or parts bumps in the same
transaction (``annotation.peers.score_events``). Its reference ids are part of the key too: they count in
n and name the jackknife's left-out references, and while adding, removing or renaming one through
the models bumps the revision (score_events), a bulk ``update()`` of references sends no signal. The caller reads the
revision before the data, so an entry is
never older than its key says (it may be newer, as a fresh read would be).
"""

from datetime import datetime

from annotation.jobs.kept import Kept
from annotation.pyramids.models import Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.model import Convention
from scoring.scores import PreparedPyramid, prepare

SIZE = 64  # pyramids kept per process (a D0603-sized one takes ~100 KiB)

_kept = Kept(SIZE)  # (id, created_at, revision, reference ids) -> convention -> prepared pyramid


def _references(pyramid_ids) -> dict[int, tuple[str, ...]]:
    refs: dict[int, list[str]] = {pk: [] for pk in pyramid_ids}
    for pyramid_id, external_id in Pyramid.references.through.objects.filter(pyramid_id__in=refs).values_list(
        "pyramid_id", "referencesummary__external_id"
    ):
        refs[pyramid_id].append(external_id)
    return {pk: tuple(sorted(ids)) for pk, ids in refs.items()}


def prepared_pyramids(states: dict[int, tuple[datetime, int]]) -> dict[int, dict[Convention, PreparedPyramid]]:
    """pyramid id -> convention -> prepared pyramid, for pyramids in the given states (id ->
    (created_at, revision), read before this call); reads and prepares only those not kept."""
    references = _references(states)
    keys = {pk: (pk, created, revision, references[pk]) for pk, (created, revision) in states.items()}
    found = {pk: kept for pk, key in keys.items() if (kept := _kept.get(key)) is not None}
    missing = [pk for pk in keys if pk not in found]
    if missing:
        for pk, pyramid in load_pyramids(missing).items():
            found[pk] = {c: prepare(pyramid, c) for c in Convention}
            if pyramid.references != keys[pk][3]:
                continue  # the references changed since they were read: used once, not kept
            _kept.put(keys[pk], found[pk])
    return found


def clear() -> None:
    _kept.clear()
