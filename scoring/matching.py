"""One-to-one matchings that maximize several criteria in turn, exactly.

Construction agreement (``scoring.pyramid_agreement``) aligns contributors and SCUs of two
pyramids by a maximum-weight one-to-one matching. Real pyramids hold many equally good matchings
(the same characters in two SCUs; an SCU sharing one contributor with each of two SCUs), and a
solver picks one of them by the order it is given the rows in: a figure would then depend on how a
file or a database numbers things. So the criteria are lexicographic (the first criterion decides;
each next one only breaks the ties left by those before), every criterion is an integer computed
from content, and the arithmetic is exact (Python integers: floating-point sums of equal totals
may differ in their last bit, which is a tie broken by order again). What ties remain after the
last criterion are broken by the row and column order the caller gives, which the caller makes a
function of content too.

The matching is solved per connected component of the graph of positive-weight pairs (pairs of
weight 0 are never matched), each by the Hungarian method (shortest augmenting paths,
O(n^2 m) for a component of n rows and m columns): real alignments are made of many small
components, so this stays fast where one dense problem would not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

Pair = tuple[int, int]


def combine(criteria: Mapping[Pair, Sequence[int]], size: int) -> dict[Pair, int]:
    """One integer weight per pair whose totals order matchings of at most ``size`` pairs as the
    criteria do, first to last: each criterion's scale exceeds the largest total the criteria after
    it can reach. Criteria are integers >= 0, the same number for every pair."""
    if not criteria:
        return {}
    levels = len(next(iter(criteria.values())))
    highest = [max(values[k] for values in criteria.values()) for k in range(levels)]
    scales = [1] * levels
    for k in range(levels - 2, -1, -1):
        scales[k] = 1 + size * sum(highest[j] * scales[j] for j in range(k + 1, levels))
    return {pair: sum(v * s for v, s in zip(values, scales, strict=True)) for pair, values in criteria.items()}


def max_weight_matching(weights: Mapping[Pair, int]) -> list[Pair]:
    """The (row, column) pairs of a one-to-one matching with the largest total weight, among pairs
    of positive integer weight; sorted. Ties between matchings of equal total are broken by the
    row and column numbers (the same weights give the same matching)."""
    edges = {pair: w for pair, w in weights.items() if w > 0}
    out: list[Pair] = []
    for rows, cols in _components(edges):
        out += _hungarian(rows, cols, edges)
    return sorted(out)


def _components(edges: Mapping[Pair, int]) -> list[tuple[list[int], list[int]]]:
    """Connected components of the bipartite graph of ``edges``: (rows, columns), each sorted."""
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        ri, rj = find(("r", i)), find(("c", j))
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[tuple[str, int], tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for node in list(parent):
        kind, k = node
        groups[find(node)][0 if kind == "r" else 1].append(k)
    return sorted((sorted(r), sorted(c)) for r, c in groups.values())


def _hungarian(rows: list[int], cols: list[int], edges: Mapping[Pair, int]) -> list[Pair]:
    """Maximum-weight matching of one component (absent pairs weigh 0, i.e. stay unmatched)."""
    transpose = len(rows) > len(cols)
    if transpose:
        rows, cols = cols, rows
    n, m = len(rows), len(cols)
    cost = [[0] * (m + 1)] + [[0] + [-edges.get((c, r) if transpose else (r, c), 0) for c in cols] for r in rows]
    u, v, p, way = [0] * (n + 1), [0] * (m + 1), [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [None] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], None, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = cost[i0][j] - u[i0] - v[j]
                    if minv[j] is None or cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if delta is None or minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    out = []
    for j in range(1, m + 1):
        if p[j] and cost[p[j]][j] < 0:
            r, c = rows[p[j] - 1], cols[j - 1]
            out.append((c, r) if transpose else (r, c))
    return out
