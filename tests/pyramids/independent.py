"""Pyramid construction agreement recomputed from the stored parts with plain sets, for the tests
that check the stored figures (a definition written out once, not the code under test)."""

import itertools

from annotation.pyramids.models import ContributorPart


def contributor_characters(topic) -> dict[int, set]:
    """Each contributor of the topic's pyramids as the set of ``(reference, offset)`` it covers."""
    chars = {}
    for contributor_id, ref, start, end in ContributorPart.objects.filter(
        contributor__scu__pyramid__topic=topic
    ).values_list("contributor_id", "reference__external_id", "start", "end"):
        chars.setdefault(contributor_id, set()).update((ref, k) for k in range(start, end))
    return chars


def same_scu_pairs(aligned, chars: dict[int, set], scu_of: dict) -> tuple[list[bool], list[bool]]:
    """Over the pairs of aligned contributors from different references (two of one reference can
    never share an SCU), whether each pair is in one SCU in pyramid A and in pyramid B."""
    refs = {c: {r for r, _ in chars[c]} for a, b, _ in aligned for c in (a, b)}
    same_a, same_b = [], []
    for (a1, b1, _), (a2, b2, _) in itertools.combinations(aligned, 2):
        if (refs[a1] | refs[b1]) & (refs[a2] | refs[b2]):
            continue
        same_a.append(scu_of[a1] == scu_of[a2])
        same_b.append(scu_of[b1] == scu_of[b2])
    return same_a, same_b
