"""The exact lexicographic matching (``scoring.matching``) against every matching of small cases."""

import itertools

from hypothesis import given
from hypothesis import strategies as st

from scoring.matching import combine, max_weight_matching

from tests.scoring._strategies import hsettings


def matchings(edges):
    """Every one-to-one set of the given (row, column) pairs."""
    edges = sorted(edges)
    for k in range(len(edges) + 1):
        for chosen in itertools.combinations(edges, k):
            if len({i for i, _ in chosen}) == len({j for _, j in chosen}) == k:
                yield chosen


graphs = st.dictionaries(
    st.tuples(st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)),
    max_size=8,
)


@hsettings(200)
@given(graphs)
def test_the_matching_is_the_lexicographic_best(criteria):
    criteria = {pair: values for pair, values in criteria.items() if values[0] > 0}  # pairs worth matching
    got = max_weight_matching(combine(criteria, 4))
    assert len({i for i, _ in got}) == len({j for _, j in got}) == len(got) and set(got) <= set(criteria)

    def totals(chosen):
        return tuple(sum(criteria[p][k] for p in chosen) for k in range(3))

    assert totals(got) == max(totals(m) for m in matchings(criteria))


def test_ties_follow_the_numbering_given_and_nothing_else():
    # two equal matchings: {(0, 0), (1, 1)} and {(0, 1), (1, 0)}; the same weights give the same one
    weights = {(0, 0): 5, (1, 1): 5, (0, 1): 5, (1, 0): 5}
    first = max_weight_matching(weights)
    assert first in ([(0, 0), (1, 1)], [(0, 1), (1, 0)])
    assert max_weight_matching(dict(reversed(list(weights.items())))) == first
    # a later criterion breaks the tie
    criteria = {(0, 0): (5, 0), (1, 1): (5, 0), (0, 1): (5, 1), (1, 0): (5, 1)}
    assert max_weight_matching(combine(criteria, 2)) == [(0, 1), (1, 0)]


def test_large_integers_stay_exact():
    # weights beyond float precision: a float solver would see 2**60 + 1 and 2**60 as equal
    big = 2**60
    assert max_weight_matching({(0, 0): big, (0, 1): big + 1}) == [(0, 1)]
