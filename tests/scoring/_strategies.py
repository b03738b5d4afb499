"""Hypothesis strategies shared by the scoring tests: small random pyramids and annotations."""

from functools import cache, lru_cache

from hypothesis import settings
from hypothesis import strategies as st

from scoring.model import SCU, Contributor, PeerAnnotation, Pyramid

REF_POOL = tuple("ABCDEF")


# Each strategy made once and drawn from many times: hypothesis validates and caches a strategy built
# inside a composite at every draw, which was most of a property's CPU (a set of references built for
# each SCU of each example). The same strategies, so the same examples.
@lru_cache(maxsize=4096)  # keyed by an annotation's uids too
def _sampled(values: tuple):
    return st.sampled_from(values)


@cache
def _members(refs: tuple):
    return st.sets(_sampled(refs), min_size=1)


@cache
def _pair(refs: tuple):
    return st.lists(_sampled(refs), min_size=2, max_size=2, unique=True)


@cache
def _integers(low: int, high: int):
    return st.integers(low, high)


_LEGACY_KIND = st.sampled_from(["cross", "dup"])


@st.composite
def pyramids(draw, min_refs=1, max_refs=5, max_scus=12, legacy=False):
    """Pyramids with 1..5 references and non-contiguous uids.

    With ``legacy=True`` some SCUs break the DUCView rules the way DUC data does: a contributor in
    two references, or two contributors from the same reference.
    """
    n = draw(_integers(min_refs, max_refs))
    refs = REF_POOL[:n]
    uids = draw(st.lists(_integers(1, 500), max_size=max_scus, unique=True))
    scus = []
    for uid in uids:
        members = draw(_members(refs))
        contribs = [Contributor.of(r) for r in sorted(members)]
        if legacy and draw(st.booleans()):
            kind = draw(_LEGACY_KIND)
            if kind == "cross" and n >= 2:
                contribs.append(Contributor.of(*draw(_pair(refs))))
            else:
                contribs.append(Contributor.of(draw(_sampled(refs))))
        scus.append(SCU(uid, tuple(contribs)))
    return Pyramid(refs, tuple(scus))


@st.composite
def annotations(draw, pyramid, max_count=3, max_non_matching=3):
    uids = [s.uid for s in pyramid.scus]
    chosen = draw(st.lists(_sampled(tuple(uids)), unique=True)) if uids else []
    matches = {u: draw(_integers(1, max_count)) for u in chosen}
    return PeerAnnotation(matches, draw(_integers(0, max_non_matching)))


@st.composite
def pyramid_and_annotation(draw, **kwargs):
    p = draw(pyramids(**kwargs))
    return p, draw(annotations(p))


def restrict(annotation, pyramid):
    """The annotation without matches of SCUs absent from ``pyramid``."""
    uids = {s.uid for s in pyramid.scus}
    return PeerAnnotation({u: c for u, c in annotation.matches.items() if u in uids}, annotation.non_matching)


def hsettings(max_examples=200):
    """No example database (it would write .hypothesis/ into the repo), no flaky deadlines."""
    return settings(max_examples=max_examples, deadline=None, database=None)
