"""Ranking suggestions: a confidence for each candidate, learnt from expert annotations.

The model (scikit-learn gradient-boosted trees over ``suggestion_features.FEATURES``) is trained by
``manage.py train_suggestions`` from DUCView .pan files the user has and from the study's own
finished annotations, and kept at ``settings.SUGGESTIONS_MODEL`` (outside the repository: a model
derived from DUC data may not be shipped). Without a model the hand-set rules of DUCView-style
autoannotate give the confidence, so a fresh installation still suggests.

A training example is one candidate of one peer; its label says whether it is right (it names an
SCU the expert matched and covers at least half of the expert's span: ``suggestion_features.is_right``).
Each peer is seen twice while training: as its annotator's first peer of the topic (pyramid alone)
and after the annotator's earlier peers (their own matches only: the blind rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from annotation.pyramids.model_files import ModelFile
from annotation.pyramids.suggestion_features import Candidate, ScuText, Seen, candidates, is_right
from annotation.pyramids.suggestions import MIN_WORDS

FORMAT = 3  # bump when FEATURES change: an older model file is then ignored
RULES_THRESHOLD = 0.6  # the hand-set rules: a contributor's share of content words, as DUCView-style autoannotate


@dataclass
class PeerCase:
    """One peer to suggest for, as the features need it (built from the database or from DUCView files)."""

    text: str
    scus: Sequence[ScuText]
    weights: dict[str, float]
    earlier: Sequence[tuple[int, list[str], str]] = ()  # the annotator's OWN earlier matches
    expert: Sequence[tuple[int, Sequence[tuple[int, int]]]] = field(default_factory=list)  # for training / measuring
    seen: Seen = ()  # the annotator's OWN finished earlier peers: (text, matches as (SCU id, spans))


@dataclass
class Model:
    classifier: object
    threshold: float
    trained_on: str  # what it was trained from, for the record
    format: int = FORMAT
    # Which files and topics trained it (a bench refuses a model that saw what it reports on). A
    # model saved before they were recorded has neither (``seen``: None).
    sources: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()

    def seen(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """(files, topics) that trained it, or None when it does not record them."""
        sources, topics = getattr(self, "sources", ()), getattr(self, "topics", ())
        return (tuple(sources), tuple(topics)) if sources or topics else None

    def confidences(self, found: Sequence[Candidate]) -> list[float]:
        if not found:
            return []
        with one_thread():
            return [float(p) for p in self.classifier.predict_proba([c.vector() for c in found])[:, 1]]


def case_candidates(case: PeerCase) -> list[Candidate]:
    """The candidates of a peer with everything its case holds (``suggestion_features.candidates``)."""
    return candidates(case.text, case.scus, case.weights, case.earlier, case.seen)


def rules_confidence(c: Candidate) -> float:
    """Today's hand-set rules: the earlier match's very words, or most content words of one contributor."""
    f = c.features
    if f["earlier_exact"]:
        return 0.9
    if f["contributor_hits"] >= MIN_WORDS and f["contributor_share"] >= RULES_THRESHOLD:
        return round(0.5 + 0.4 * f["contributor_share"], 3)
    return 0.0


def ranked(case: PeerCase, model: Model | None) -> list[tuple[Candidate, float]]:
    """The suggestions for a peer, best first: with a model, every candidate whose confidence reaches
    its threshold (an SCU may be suggested in two clauses: experts match repetitions too); with the
    rules, as DUCView-style autoannotate, each SCU's best clause when the rules give it any confidence."""
    found = case_candidates(case)
    if model:
        chosen = [(c, p) for c, p in zip(found, model.confidences(found), strict=True) if p >= model.threshold]
    else:
        best: dict[int, tuple[Candidate, float]] = {}
        for c in found:
            p = rules_confidence(c)
            if p > 0 and (c.scu not in best or p > best[c.scu][1]):
                best[c.scu] = (c, p)
        chosen = list(best.values())
    return sorted(chosen, key=lambda cp: (-cp[1], cp[0].span[0], cp[0].scu))


def examples(cases: Iterable[PeerCase]) -> tuple[list[list[float]], list[int], list[tuple[int, int]]]:
    """Feature rows and right/wrong labels of every candidate, with (case index, SCU) for each row."""
    X, y, where = [], [], []
    for k, case in enumerate(cases):
        for c in case_candidates(case):
            X.append(c.vector())
            y.append(int(is_right(c.scu, [c.span], case.expert)))
            where.append((k, c.scu))
    return X, y, where


def one_thread():
    """One OpenMP thread for scikit-learn's trees: on a busy machine (web workers, a test suite) the
    threads' waiting costs far more than they save on data this small. threadpoolctl limits only the
    libraries loaded when it is entered, so the trees are imported first: entered before that import,
    the limit missed them and a fit took 20 times longer on a loaded machine (123 s instead of 5.4 s)."""
    import sklearn.ensemble  # noqa: F401  (loads the OpenMP runtime the limit must see)
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def _classifier():
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=200, learning_rate=0.08, max_leaf_nodes=31, l2_regularization=1.0, random_state=0
    )


def _threshold(probabilities: Sequence[float], y: Sequence[int], expert_total: int) -> float:
    """The threshold of the best F1 on held-out predictions (precision and recall as the benchmark
    counts them: right suggestions among those shown, expert matches found)."""
    pairs = sorted(zip(probabilities, y, strict=True), reverse=True)
    right, best, at = 0, -1.0, 0.5
    for n, (p, label) in enumerate(pairs, 1):
        right += label
        if n < len(pairs) and pairs[n][0] == p:
            continue
        precision, recall = right / n, right / max(expert_total, 1)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if f1 > best:
            best, at = f1, p
    return at


def fit(cases: Sequence[PeerCase], topics: Sequence[str], trained_on: str, sources: Sequence[str] = ()) -> Model:
    """Train on the cases (``topics``: each case's topic, so the threshold is chosen on topics held out;
    ``sources``: the files they came from, both kept in the model for the record)."""
    from sklearn.model_selection import GroupKFold, cross_val_predict

    X, y, where = examples(cases)
    if len(set(y)) < 2:
        raise ValueError("the annotations give no right and wrong candidates to learn from")
    groups = [topics[k] for k, _ in where]
    folds = min(5, len(set(groups)))
    with one_thread():
        if folds >= 2:
            held_out = cross_val_predict(
                _classifier(), X, y, groups=groups, cv=GroupKFold(folds), method="predict_proba"
            )[:, 1]
            threshold = _threshold(held_out, y, sum(len(c.expert) for c in cases))
        else:
            threshold = 0.5
        classifier = _classifier().fit(X, y)
    return Model(classifier, float(threshold), trained_on, sources=tuple(sources), topics=tuple(sorted(set(topics))))


def fit_each_peer_twice(
    cases: Sequence[PeerCase], topics: Sequence[str], trained_on: str, sources: Sequence[str] = ()
) -> Model:
    """Train as ``train_suggestions`` does: each peer with its annotator's earlier peers, and again as
    the annotator's first of the topic (the pyramid alone)."""
    alone = [PeerCase(c.text, c.scus, c.weights, (), c.expert) for c in cases if c.earlier]
    return fit(
        [*cases, *alone],
        [*topics, *(t for t, c in zip(topics, cases, strict=True) if c.earlier)],
        trained_on,
        sources,
    )


def saw(model: Model, folder: Path, topics: Iterable[str]) -> str | None:
    """Why ``model`` may not be measured on the release in ``folder`` with these ``topics`` (None: it
    may): it does not record what trained it, or a file of that folder or one of those topics
    trained it. ``topics``: the release's topic ids (DUC's ``D0601``), as the model records them."""
    seen = model.seen()
    if seen is None:
        return "it does not record which files trained it (saved before they were recorded): train it again"
    sources, trained_topics = seen
    inside = [s for s in sources if Path(s).resolve().is_relative_to(Path(folder).resolve())]
    if inside:
        return f"{len(inside)} of the files that trained it are in {folder} (e.g. {inside[0]})"
    shared = sorted(set(trained_topics) & set(topics))
    if shared:
        return f"it was trained on {len(shared)} of the topics reported on ({', '.join(shared[:5])})"
    return None


_file = ModelFile(
    "SUGGESTIONS_MODEL",
    lambda model: isinstance(model, Model) and model.format == FORMAT,
    "suggestions model %s could not be read; hand-set rules rank until train_suggestions runs",
)


def model_path() -> Path:
    return _file.path()


def save(model: Model, path: Path | None = None) -> Path:
    """Write the model (``model_files``: atomically; a suggestion request never reads half a file)."""
    return _file.save(model, path)


def load(path: Path | None = None) -> Model | None:
    """The trained model, or None (no file, or one of an older feature format): the rules serve."""
    return _file.load(path)


def ducview_cases(files: Iterable[Path], earlier: bool = True) -> list[tuple[str, str, str, PeerCase]]:
    """(topic, annotator, peer, case) for each DUCView .pan file, its expert matches as ``expert``.

    Files are grouped by (annotator, topic) from their NIST names (a file whose name is no NIST name
    is its own group); within a group the peers are taken in natural order and, with ``earlier``,
    each sees the matches of the group's peers before it: the same annotator's, never another's.
    The topic's word weights come from its references and all its peers' texts (texts, not annotations)."""
    from annotation.corpus.natural_order import natural_key
    from annotation.formats.ducview import parse_peer_annotation
    from annotation.formats.errors import DucViewError
    from annotation.formats.nist_names import parse_nist_filename
    from annotation.pyramids.suggestion_features import contributor_context, word_weights

    groups: dict[tuple[str, str], list[tuple[str, object]]] = {}
    for path in files:
        try:
            name = parse_nist_filename(path.name)
            annotator, topic, peer = name.annotator or "", name.topic, name.peer_key or path.stem
        except DucViewError:
            annotator, topic, peer = path.stem, path.stem, path.stem
        pan, _ = parse_peer_annotation(path.read_bytes())
        groups.setdefault((annotator, topic), []).append((peer, pan))
    topic_texts: dict[str, set[str]] = {}
    for (_, topic), items in groups.items():
        texts = topic_texts.setdefault(topic, set())
        for _, pan in items:
            texts.add(pan.text)
            texts.update(r.text for r in pan.pyramid.references)
    weights = {topic: word_weights(sorted(texts)) for topic, texts in topic_texts.items()}
    out = []
    for (annotator, topic), items in sorted(groups.items()):
        items.sort(key=lambda item: natural_key(item[0]))
        for k, (peer, pan) in enumerate(items):
            refs = {r.id: r.text for r in pan.pyramid.references}
            scus = [
                ScuText(
                    scu.uid,
                    scu.label,
                    [
                        " ".join(refs[p.reference][p.start : p.end] for p in c.parts)
                        for c in scu.contributors
                        if c.parts
                    ],
                    [
                        contributor_context((refs[p.reference], p.start, p.end) for p in c.parts)
                        for c in scu.contributors
                        if c.parts
                    ],
                )
                for scu in pan.pyramid.scus
            ]
            seen = (
                [
                    (m.scu_uid, [items[j][1].text[p.start : p.end] for p in m.parts], items[j][0])
                    for j in range(k)
                    for m in items[j][1].matches
                    if m.parts
                ]
                if earlier
                else []
            )
            read = (
                [
                    (items[j][1].text, [(m.scu_uid, [(p.start, p.end) for p in m.parts]) for m in items[j][1].matches])
                    for j in range(k)
                ]
                if earlier
                else []
            )
            expert = [(m.scu_uid, [(p.start, p.end) for p in m.parts]) for m in pan.matches if m.parts]
            out.append((topic, annotator, peer, PeerCase(pan.text, scus, weights[topic], seen, expert, read)))
    return out
