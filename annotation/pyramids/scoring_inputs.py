"""Read pyramids from the database as the pure input of ``scoring`` (``scoring.model.Pyramid``), in
a fixed number of queries however many pyramids (recomputation, exports and dashboards read
hundreds at once; ``peers.scoring_inputs`` reads the annotations scored against them). The models'
default orderings are cleared (``order_by()``): they join other tables only to sort rows that are
grouped here anyway.
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import F

from annotation.pyramids.models import SCU, ContributorPart, Pyramid
from scoring.model import SCU as ScoringSCU
from scoring.model import Contributor as ScoringContributor
from scoring.model import Pyramid as ScoringPyramid


def load_pyramids(pyramid_ids: Iterable[int]) -> dict[int, ScoringPyramid]:
    """pyramid id -> scoring pyramid (reference external ids; contributors by the references their
    parts lie in). Three queries: the references, the SCUs with their contributors, and the parts
    lying outside their contributor's reference (legacy data only)."""
    ids = list(set(pyramid_ids))
    references = defaultdict(list)
    for pyramid_id, external_id in Pyramid.references.through.objects.filter(pyramid_id__in=ids).values_list(
        "pyramid_id", "referencesummary__external_id"
    ):
        references[pyramid_id].append(external_id)
    scus: dict[int, dict[int, list]] = defaultdict(dict)  # pyramid -> uid -> [(reference, contributor id)]
    contributor_refs: dict[int, set[str]] = {}
    for pyramid_id, uid, contributor_id, ref in (
        SCU.objects.filter(pyramid_id__in=ids)
        .order_by()
        .values_list("pyramid_id", "uid", "contributors__id", "contributors__reference__external_id")
    ):
        contributors = scus[pyramid_id].setdefault(uid, [])
        if contributor_id is not None:
            contributors.append((ref, contributor_id))
            contributor_refs[contributor_id] = {ref}
    for contributor_id, ref in (
        ContributorPart.objects.filter(contributor__scu__pyramid_id__in=ids)
        .exclude(reference_id=F("contributor__reference_id"))
        .order_by()
        .values_list("contributor_id", "reference__external_id")
    ):
        contributor_refs[contributor_id].add(ref)
    # Contributors are values (the references they lie in): one object per set of references, not
    # one per contributor row (building and checking thousands of equal ones was most of the time).
    contributors_in: dict[frozenset[str], ScoringContributor] = {}

    def contributor(refs: set[str]) -> ScoringContributor:
        key = frozenset(refs)
        found = contributors_in.get(key)
        if found is None:
            found = contributors_in[key] = ScoringContributor(key)
        return found

    return {
        pyramid_id: ScoringPyramid(
            references=tuple(sorted(references[pyramid_id])),
            scus=tuple(
                # contributors in the models' order (reference, then id), as every other reader sees them
                ScoringSCU(uid, tuple(contributor(contributor_refs[c]) for _, c in sorted(contributors)))
                for uid, contributors in sorted(scus[pyramid_id].items())
            ),
        )
        for pyramid_id in ids
    }
