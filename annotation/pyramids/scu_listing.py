"""A pyramid's SCUs listed by tier (weight, then label): the read-only pyramid page, the printable
list and its plain-text download (DUCView's "print SCU labels"). One reading for all three, through
``scu_documents`` (the editors' own reading of a pyramid's SCUs), so the weights are those the
editors show."""

from dataclasses import dataclass
from itertools import groupby

from annotation.pyramids.models import Pyramid
from annotation.pyramids.scu_documents import scu_documents


@dataclass(frozen=True)
class ListedContributor:
    reference: str  # the reference's external id
    text: str  # DUCView's contributor label (its parts joined with "...")
    comment: str


@dataclass(frozen=True)
class ListedSCU:
    uid: int
    weight: int
    label: str
    comment: str
    contributors: tuple[ListedContributor, ...]


@dataclass(frozen=True)
class Tier:
    weight: int
    scus: tuple[ListedSCU, ...]


def tiers(pyramid: Pyramid) -> list[Tier]:
    """The SCUs of ``pyramid`` grouped by weight, heaviest tier first, by label (then uid) within one."""
    names = dict(pyramid.topic.referencesummarys.values_list("id", "external_id"))
    scus = [
        ListedSCU(
            d["uid"],
            d["weight"],
            d["label"],
            d["comment"],
            tuple(
                ListedContributor(names.get(c["reference"], "?"), c["label"], c["comment"]) for c in d["contributors"]
            ),
        )
        for d in scu_documents(pyramid.pk)
    ]
    scus.sort(key=lambda s: (-s.weight, s.label.casefold(), s.uid))
    return [Tier(weight, tuple(group)) for weight, group in groupby(scus, key=lambda s: s.weight)]


def as_text(pyramid: Pyramid, listed: list[Tier] | None = None, app_version: str = "") -> str:
    """The list as plain text, one SCU a line: "weight<TAB>uid<TAB>label", under a heading per tier
    (the first line names the pyramid, its dataset and, given, the app version that wrote it)."""
    listed = tiers(pyramid) if listed is None else listed
    written = f" (written by pyramid {app_version})" if app_version else ""
    lines = [
        f"Pyramid {pyramid.pk} of topic {pyramid.topic.external_id}, dataset {pyramid.topic.dataset.name}: "
        f"{sum(len(t.scus) for t in listed)} SCUs{written}",
        "",
    ]
    for tier in listed:
        lines.append(f"Weight {tier.weight} ({len(tier.scus)} SCU{'' if len(tier.scus) == 1 else 's'})")
        lines.extend(f"{scu.weight}\t{scu.uid}\t{' '.join(scu.label.split())}" for scu in tier.scus)
        lines.append("")
    return "\n".join(lines)
