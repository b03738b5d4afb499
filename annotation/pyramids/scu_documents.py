"""A pyramid's SCUs in the shape of the ``full`` documents, read as plain rows.

The editors' first read of a 1,000-SCU pyramid took 0.7 s of server time on an idle machine (3-5 s
under load) through model instances: every contributor part brought its reference's whole text
along (``select_related``) to cut its label from. Here one flat statement reads ids, offsets,
comments and each part's own piece of text (cut by the database: no whole text travels), a row per
part, the SCUs joined with their contributors and parts: the ``full`` read and the delta answering
every pyramid write each ran four statements for this. The shape is exactly ``FullSCUSerializer``'s
(the schema names that serializer).

``pyramid_scus`` keeps them per process for the state of the pyramid a request read (its id,
creation time and ``revision``, as ``peers.prepared_pyramids`` keys a prepared pyramid): every
reader of an unchanged pyramid (the builders' and annotators' ``full/`` reads, the read-ahead of
the next peer) then costs neither this statement (most of the database's time of a ``full/`` read)
nor its assembly.
"""

from django.db import connection
from django.db.models import F
from django.db.models.functions import Substr

from annotation.jobs.kept import Kept
from annotation.pyramids.models import SCU, Pyramid

SIZE = 64  # pyramids kept per process (a 120-SCU one takes ~0.3 MiB as dicts: at most ~20 MiB a process)

_kept = Kept(SIZE)  # (id, created_at, revision) -> the SCUs' documents


def pyramid_scus(pyramid: Pyramid) -> list[dict]:
    """``scu_documents`` of the pyramid in the state its row was read in, kept per process (shared
    between requests: never modify the list or its dicts).

    Every change to what they show bumps the revision in the change's own transaction: SCUs,
    contributors and parts saved or deleted (``peers.score_events``' signals; an editing action,
    undo/redo and merges included, bumps once), imports (``touch_pyramid``), a reference renamed or
    its text edited (``_on_reference_saved``: labels are cut from it, contributors ordered by its
    name). The creation time tells apart two pyramids given the same id (a flushed database).

    Only what committed transactions wrote is kept: the rows are read outside a transaction
    (autocommit, every request's reads); inside one they may be this transaction's own writes at a
    revision a rollback would hand out again. The row's revision is read before these rows, so a
    kept entry is never older than its key (it may be newer, as a fresh read would be)."""
    key = (pyramid.pk, pyramid.created_at, pyramid.revision)
    documents = _kept.get(key)
    if documents is None:
        documents = scu_documents(pyramid.pk)
        if not connection.in_atomic_block:
            _kept.put(key, documents)
    return documents


def clear() -> None:
    _kept.clear()


def scu_documents(pyramid_id: int, uids=None) -> list[dict]:
    """The SCUs of the pyramid (only those of ``uids`` when given) in uid order, each with its
    weight and its contributors (by reference name, then id) with their parts (by reference, then
    start) and DUCView labels."""
    scus = SCU.objects.filter(pyramid_id=pyramid_id)
    if uids is not None:
        scus = scus.filter(uid__in=uids)
    part = "contributors__parts__"
    rows = (
        scus.annotate(
            piece=Substr(f"{part}reference__text", F(f"{part}start") + 1, F(f"{part}end") - F(f"{part}start"))
        )
        .order_by(
            "uid", "contributors__reference__external_id", "contributors__id", f"{part}reference_id", f"{part}start"
        )
        .values_list(
            "id",
            "uid",
            "label",
            "comment",
            "proposed",
            "contributors__id",
            "contributors__reference_id",
            "contributors__comment",
            "contributors__legacy_issue",
            "contributors__review_note",
            "contributors__proposed",
            f"{part}id",
            f"{part}reference_id",
            f"{part}start",
            f"{part}end",
            "piece",
        )
    )
    documents, contributors, pieces = [], {}, {}
    for (
        sid,
        uid,
        label,
        comment,
        proposed,
        cid,
        reference,
        c_comment,
        legacy_issue,
        review_note,
        c_proposed,
        pid,
        p_reference,
        start,
        end,
        piece,
    ) in rows:
        if not documents or documents[-1]["id"] != sid:
            documents.append(
                {
                    "id": sid,
                    "uid": uid,
                    "label": label,
                    "comment": comment,
                    "proposed": proposed,
                    "weight": 0,
                    "contributors": [],
                }
            )
        if cid is None:
            continue
        contributor = contributors.get(cid)
        if contributor is None:
            contributor = contributors[cid] = {
                "id": cid,
                "reference": reference,
                "label": "",
                "comment": c_comment,
                "legacy_issue": legacy_issue,
                "review_note": review_note,
                "proposed": c_proposed,
                "parts": [],
            }
            documents[-1]["contributors"].append(contributor)
            documents[-1]["weight"] += 1
            pieces[cid] = []
        if pid is not None:
            contributor["parts"].append({"id": pid, "reference": p_reference, "start": start, "end": end})
            pieces[cid].append((p_reference != reference, start, piece))
    for cid, contributor in contributors.items():
        contributor["label"] = "...".join(
            piece for _, _, piece in sorted(pieces[cid], key=lambda p: p[:2])
        )  # as Contributor.label
    return documents
