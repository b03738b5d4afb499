"""Hypothesis strategies shared by the scoring tests: small random pyramids and annotations."""

from hypothesis import settings
from hypothesis import strategies as st

from scoring.model import SCU, Contributor, PeerAnnotation, Pyramid

REF_POOL = tuple("ABCDEF")


@st.composite
def pyramids(draw, min_refs=1, max_refs=5, max_scus=12, legacy=False):
    """Pyramids with 1..5 references and non-contiguous uids.

    With ``legacy=True`` some SCUs break the DUCView rules the way DUC data does: a contributor in
    two references, or two contributors from the same reference.
    """
    n = draw(st.integers(min_refs, max_refs))
    refs = REF_POOL[:n]
    uids = draw(st.lists(st.integers(1, 500), max_size=max_scus, unique=True))
    scus = []
    for uid in uids:
        members = draw(st.sets(st.sampled_from(refs), min_size=1))
        contribs = [Contributor.of(r) for r in sorted(members)]
        if legacy and draw(st.booleans()):
            kind = draw(st.sampled_from(["cross", "dup"]))
            if kind == "cross" and n >= 2:
                pair = draw(st.lists(st.sampled_from(refs), min_size=2, max_size=2, unique=True))
                contribs.append(Contributor.of(*pair))
            else:
                contribs.append(Contributor.of(draw(st.sampled_from(refs))))
        scus.append(SCU(uid, tuple(contribs)))
    return Pyramid(refs, tuple(scus))


@st.composite
def annotations(draw, pyramid, max_count=3, max_non_matching=3):
    uids = [s.uid for s in pyramid.scus]
    chosen = draw(st.lists(st.sampled_from(uids), unique=True)) if uids else []
    matches = {u: draw(st.integers(1, max_count)) for u in chosen}
    return PeerAnnotation(matches, draw(st.integers(0, max_non_matching)))


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
