"""A pyramid as the audit history records it (``annotation.history.changes``): the states of its
SCUs, by uid (stable), and applying states back for undo and redo. Registered with the history
here, the package that owns pyramids; the history itself is a layer below and knows no SCU.
"""

from collections.abc import Iterable

from django.core.exceptions import ValidationError

from annotation.history import changes
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid


def scu_states(pyramid: Pyramid, uids: Iterable[int]) -> dict[str, dict | None]:
    """uid -> {label, comment, contributors: [{reference, comment, legacy_issue, parts}]} or None.

    ``"proposed": true`` is added to an SCU or a contributor made by accepting a proposal (and only
    then: the states recorded before provenance was kept still compare equal, so their undo works),
    so undo and redo bring the provenance back with it.

    Keys are strings (JSON objects have string keys). Contributors are identified by their
    reference and listed in a stable order, so equal states compare equal. One statement (the SCUs
    joined with their contributors and parts, a row per part): every editing action reads the
    states twice, before and after, and three statements each were 6 of an API write's 34.
    """
    uids = set(uids)
    states: dict[str, dict | None] = {str(uid): None for uid in uids}
    contributors: dict[int, dict] = {}
    rows = (
        SCU.objects.filter(pyramid=pyramid, uid__in=uids)
        .order_by(
            "uid",
            "contributors__reference__external_id",
            "contributors__id",
            "contributors__parts__reference__external_id",
            "contributors__parts__start",
            "contributors__parts__end",
        )
        .values_list(
            "uid",
            "label",
            "comment",
            "proposed",
            "contributors__id",
            "contributors__reference__external_id",
            "contributors__comment",
            "contributors__legacy_issue",
            "contributors__proposed",
            "contributors__parts__reference__external_id",
            "contributors__parts__start",
            "contributors__parts__end",
        )
    )
    for (
        uid,
        label,
        comment,
        proposed,
        contributor_id,
        reference,
        contributor_comment,
        legacy_issue,
        contributor_proposed,
        part_reference,
        start,
        end,
    ) in rows:
        state = states[str(uid)]
        if state is None:
            state = states[str(uid)] = {"label": label, "comment": comment, "contributors": []}
            if proposed:
                state["proposed"] = True
        if contributor_id is None:
            continue
        contributor = contributors.get(contributor_id)
        if contributor is None:
            contributor = contributors[contributor_id] = {
                "reference": reference,
                "comment": contributor_comment,
                "legacy_issue": legacy_issue,
                "parts": [],
            }
            if contributor_proposed:
                contributor["proposed"] = True
            state["contributors"].append(contributor)
        if start is not None:
            contributor["parts"].append([part_reference, start, end])
    return states


def apply_scu_states(pyramid: Pyramid, states: dict[str, dict | None]) -> None:
    """Make the SCUs named in ``states`` exactly as described (None: the SCU does not exist)."""
    references = {r.external_id: r for r in pyramid.references.all()}
    for key, state in states.items():
        uid = int(key)
        scu = SCU.objects.filter(pyramid=pyramid, uid=uid).first()
        if state is None:
            if scu is not None:
                ensure_unmatched([scu])
                scu.delete()
            continue
        proposed = state.get("proposed", False)
        if scu is None:
            scu = SCU.objects.create(
                pyramid=pyramid, uid=uid, label=state["label"], comment=state["comment"], proposed=proposed
            )
        elif (scu.label, scu.comment, scu.proposed) != (state["label"], state["comment"], proposed):
            scu.label, scu.comment, scu.proposed = state["label"], state["comment"], proposed
            scu.save(update_fields=["label", "comment", "proposed"])
        scu.contributors.all().delete()
        for c in state["contributors"]:
            contributor = Contributor.objects.create(
                scu=scu,
                reference=references[c["reference"]],
                comment=c["comment"],
                legacy_issue=c["legacy_issue"],
                proposed=c.get("proposed", False),
            )
            for ref, start, end in c["parts"]:
                ContributorPart.objects.create(contributor=contributor, reference=references[ref], start=start, end=end)


def ensure_unmatched(scus: Iterable[SCU]) -> None:
    """Refuse to remove SCUs that peer annotations are matched against (their matches would go too).
    The matches are read through their relation's name (``PeerMatch.scu``'s ``peer_matches``):
    peer annotations are a layer above pyramids, which imports nothing of theirs."""
    for scu in scus:
        count = scu.peer_matches.values("annotation").distinct().count()
        if count:
            raise ValidationError(
                {"scu": f"SCU {scu.uid} is matched in {count} peer annotation(s); remove those matches first."}
            )


def _touched(change) -> list[int]:
    return [int(uid) for uid in change.after.keys() | change.before.keys()]


changes.register("pyramid", changes.DocumentKind(Pyramid, scu_states, apply_scu_states, _touched))
