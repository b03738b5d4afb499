"""The assisted builder's proposals (issue 30, section 2): pure functions over the reference texts and
the pyramid so far (no database), shared by the builder's views, the training command and the bench.

- ``contributor_proposals``: the expert has made an SCU from a contributor; in each other reference
  that has no contributor in it yet, the span most likely to say the same, ranked.
- ``scu_proposals``: for text no contributor covers yet, spans of two or more references that say the
  same, grouped into new SCUs with a label drafted from them.

**Candidates** are the spans an expert's contributor usually is (``units``): a sentence's clauses
(cut at commas, semicolons, brackets, dashes, and before a conjunction or relative pronoun), runs of
up to three consecutive clauses, and whole sentences. A candidate is described by **features**
(``FEATURES``): how much of the SCU's wording it holds and how much of its own wording the SCU
accounts for, the words weighted by the topic's own word weights (idf over the references'
sentences, ``suggestion_features.word_weights``: a word every sentence uses tells little) and
compared as lemmas (``suggestion_features.tokens``); adjacent word pairs; names and numbers; its
length against the SCU's contributors; its place in its reference against theirs; how much of it
other SCUs already hold and how well it fits the best of them; and how it ranks among the other
candidates of its reference. A **model** (``ProposalModel``, trained by ``manage.py train_proposals``
from expert pyramids: ``proposal_training``) turns the features into a confidence; without one, the
rules (the weighted Dice of the candidate's and the SCU's words) rank, with a hand-set threshold.

**The blind rule.** A model records the references it learnt from (``topic_fingerprint``); it is
never used for references it saw (the functions then fall back to the rules), so nobody building a
pyramid is assisted by another annotator's pyramid of the same topic, and a bench cannot be
measured on what trained it.

Results are a function of the texts and the pyramid's content: references are taken in key order,
draft SCUs in content order, sums of word weights are exact (``math.fsum``), ties are broken on
reference key and offsets; never on input order or ids.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from annotation.pyramids.model_files import ModelFile
from annotation.pyramids.suggestion_features import _names_numbers, tokens, word_weights
from annotation.pyramids.suggestions import _sentences

Part = tuple[int, int]  # (start, end) in the reference text: Python str indices, end-exclusive

FORMAT = 2  # bump when FEATURES or the candidates change: an older model file is then ignored
RULES_CONTRIBUTOR_THRESHOLD = 0.45  # the rules: weighted Dice of the candidate's and the SCU's words
RULES_PAIR_THRESHOLD = 0.55
MAX_WINDOW = 3  # candidates span at most this many consecutive clauses (and whole sentences)
TOP_PER_REFERENCE = 10  # candidates per reference the model is asked about (the rules' best ones)
MIN_SCORE = 0.08  # a candidate shares at least this weighted Dice with the SCU's words


# --- the interface (docs: /work/wt/PROPOSALS_API.md, issue 30 section 2) -----------------------


@dataclass(frozen=True)
class ReferenceText:
    key: str  # the reference's stable name (its external id), never a database id
    text: str


@dataclass(frozen=True)
class DraftContributor:
    reference: str  # ReferenceText.key
    parts: tuple[Part, ...]  # sorted, non-overlapping, non-empty


@dataclass(frozen=True)
class DraftSCU:
    label: str
    contributors: tuple[DraftContributor, ...]


@dataclass(frozen=True)
class ContributorProposal:
    reference: str
    parts: tuple[Part, ...]
    confidence: float  # 0-1, the ranking key
    why: str  # short text for the expert: what it rests on


@dataclass(frozen=True)
class SCUProposal:
    label: str  # drafted from the spans
    contributors: tuple[DraftContributor, ...]  # >= 2, in different references
    confidence: float


# --- texts: words, candidates -------------------------------------------------------------------

CLAUSE_CUT = re.compile(r"[,;:()\[\]\u2013\u2014\"]|\s-\s")
CLAUSE_OPEN = re.compile(
    r"\s(?=(?:and|but|while|whereas|which|who|whom|because|although|though|after|before|since|"
    r"including|when|where|as well as|so that|such as)\s)",
    re.IGNORECASE,
)
TRIM = " \t\n.,;:!?\"'()[]-\u2013\u2014"


def topic_fingerprint(references: Sequence[ReferenceText]) -> str:
    """The references' identity as content: the hash of their texts (whitespace runs as one space),
    sorted, so that the same summaries give the same fingerprint whatever their keys or order."""
    texts = sorted(" ".join(r.text.split()) for r in references)
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()


def _trimmed(text: str, start: int, end: int) -> Part | None:
    while start < end and text[start] in TRIM:
        start += 1
    while end > start and text[end - 1] in TRIM:
        end -= 1
    return (start, end) if end > start else None


def clauses(text: str, sentence: Part) -> list[Part]:
    """The sentence's clauses, in order: cut at punctuation inside it and before a conjunction or
    relative pronoun (the word opens the next clause)."""
    s, e = sentence
    cuts: list[tuple[int, int]] = []  # (end of one clause, start of the next)
    for m in CLAUSE_CUT.finditer(text, s, e):
        cuts.append((m.start(), m.end()))
    for m in CLAUSE_OPEN.finditer(text, s, e):
        cuts.append((m.start(), m.end()))
    cuts.sort()
    out, at = [], s
    for a, b in cuts:
        if a < at:
            continue
        piece = _trimmed(text, at, a)
        if piece:
            out.append(piece)
        at = b
    piece = _trimmed(text, at, e)
    if piece:
        out.append(piece)
    return out


@dataclass(frozen=True)
class Unit:
    """A candidate span of one reference."""

    reference: str
    span: Part
    sentence: int  # index of its sentence in the reference
    clauses: int  # how many clauses it runs over (0: the whole sentence)


def units(reference: ReferenceText) -> list[Unit]:
    """Every candidate span of the reference, in text order: runs of 1..MAX_WINDOW consecutive
    clauses of a sentence and the whole sentence, each once, each holding a content word."""
    text = reference.text
    out: dict[Part, Unit] = {}
    for i, sentence in enumerate(_sentences(text)):
        whole = _trimmed(text, *sentence)
        if whole is None:
            continue
        pieces = clauses(text, whole)
        for a in range(len(pieces)):
            for b in range(a, min(a + MAX_WINDOW, len(pieces))):
                span = (pieces[a][0], pieces[b][1])
                out.setdefault(span, Unit(reference.key, span, i, b - a + 1))
        out.setdefault(whole, Unit(reference.key, whole, i, 0))
    return [u for _, u in sorted(out.items()) if tokens(text[u.span[0] : u.span[1]])]


class _Reference:
    """One reference's words, for the lemmas of any span of it (tokens with absolute offsets)."""

    def __init__(self, ref: ReferenceText):
        self.key, self.text = ref.key, ref.text
        self.tokens = tokens(ref.text)
        self.starts = [t[1] for t in self.tokens]
        self.units = units(ref)
        self.sentences = _sentences(ref.text)

    def lemmas(self, parts: Iterable[Part]) -> list[str]:
        out = []
        for s, e in parts:
            k = bisect.bisect_left(self.starts, s)
            while k < len(self.tokens) and self.tokens[k][2] <= e:
                out.append(self.tokens[k][0])
                k += 1
        return out


WEIGHT_UNIT = 10**6  # word weights are kept as integers in these units: their sums are exact in any order


def _mass(lemmas: Iterable[str], weights: dict[str, int]) -> int:
    return sum(weights.get(lem, WEIGHT_UNIT) for lem in lemmas)


def _dice(a: set[str], b: set[str], weights: dict[str, int]) -> float:
    """Weighted Dice of two sets of lemmas: the rules' similarity, symmetric."""
    total = _mass(a, weights) + _mass(b, weights)
    return 2 * _mass(a & b, weights) / total if total else 0.0


def _dice_of(a: _Words, b: _Words, weights: dict[str, int]) -> float:
    """``_dice`` of two spans' words, their masses known."""
    total = a.mass + b.mass
    return 2 * _mass(a.lemmas & b.lemmas, weights) / total if total else 0.0


@dataclass
class _Words:
    """A span's (or an SCU's) words as the features compare them."""

    lemmas: set[str]
    bigrams: set[tuple[str, str]]
    names: set[str]
    numbers: set[str]
    length: int  # characters
    position: float  # middle of the span, as a share of its reference's length
    mass: int = 0  # the lemmas' total weight (``Topic.words`` fills it)

    @classmethod
    def of(cls, ref: _Reference, parts: Sequence[Part], weights: dict[str, int]) -> _Words:
        seq = ref.lemmas(parts)
        names: set[str] = set()
        numbers: set[str] = set()
        for s, e in parts:
            n, m = _names_numbers(ref.text[s:e])
            names |= n
            numbers |= m
        length = sum(e - s for s, e in parts)
        middle = (parts[0][0] + parts[-1][1]) / 2 if parts else 0
        lemmas = set(seq)
        return cls(
            lemmas,
            set(zip(seq, seq[1:], strict=False)),
            names,
            numbers,
            length,
            middle / max(len(ref.text), 1),
            _mass(lemmas, weights),
        )


class Topic:
    """The references of one pyramid, read once: their words, candidates and word weights."""

    def __init__(self, references: Sequence[ReferenceText]):
        self.references = {r.key: _Reference(r) for r in sorted(references, key=lambda r: r.key)}
        sentences = [
            r.text[s:e] for r in sorted(references, key=lambda r: r.key) for s, e in _sentences(r.text) if r.text[s:e]
        ]
        self.weights = {lem: round(x * WEIGHT_UNIT) for lem, x in word_weights(sentences).items()}
        self.fingerprint = topic_fingerprint(references)
        self._words: dict[DraftContributor, _Words] = {}
        self._matches: dict[tuple[Unit, str], list[tuple[float, Unit]]] = {}
        self.unit_words = {
            (u.reference, u.span): _Words.of(ref, (u.span,), self.weights)
            for ref in self.references.values()
            for u in ref.units
        }

    def matches(self, unit: Unit, key: str) -> list[tuple[float, Unit]]:
        """The candidates of reference ``key`` sharing a word with ``unit``, by weighted Dice with
        it, best first (ties: text order); computed once per topic."""
        if (unit, key) not in self._matches:
            mine = self.unit_words[(unit.reference, unit.span)]
            found = []
            for v in self.references[key].units:
                theirs = self.unit_words[(key, v.span)]
                if mine.lemmas & theirs.lemmas:
                    found.append((_dice_of(mine, theirs, self.weights), v))
            found.sort(key=lambda dv: (-dv[0], dv[1].span))
            self._matches[(unit, key)] = found
        return self._matches[(unit, key)]

    def words(self, contributor: DraftContributor) -> _Words:
        if len(contributor.parts) == 1 and (contributor.reference, contributor.parts[0]) in self.unit_words:
            return self.unit_words[(contributor.reference, contributor.parts[0])]
        if contributor not in self._words:
            ref = self.references[contributor.reference]
            self._words[contributor] = _Words.of(ref, contributor.parts, self.weights)
        return self._words[contributor]


@lru_cache(maxsize=8)
def read_topic(references: tuple[ReferenceText, ...]) -> Topic:
    """``Topic(references)``, read once per process for the same texts: the builder asks for proposals
    at every SCU the expert makes or opens, and reading the references (their words, every candidate
    span's words, the word weights) was a third of each answer; the candidates' matches are then
    computed once for the whole session too. A Topic depends on nothing but these texts; one of four
    DUC references holds 1-3 MB once every SCU's proposals were asked, hence only the last few."""
    return Topic(references)


# --- features -------------------------------------------------------------------------------------

FEATURES = (
    "dice",  # weighted Dice of the candidate's lemmas and the SCU's best contributor's
    "dice_mean",  # mean weighted Dice over the SCU's contributors
    "share",  # best contributor: weighted share of its lemmas in the candidate
    "cover",  # share of the candidate's lemma mass the SCU's words (pooled) account for
    "label_share",  # the SCU label's weighted share in the candidate
    "sentence_share",  # best contributor: weighted share of its lemmas in the candidate's whole sentence
    "hits",  # lemmas the candidate shares with the SCU (pooled)
    "bigram_share",  # best contributor: share of its adjacent lemma pairs found adjacent in the candidate
    "names_found",  # share of the SCU's names in the candidate (1 when it has none)
    "has_names",
    "numbers_found",  # share of the SCU's numbers in the candidate (1 when it has none)
    "has_numbers",
    "extra_names",  # names and numbers of the candidate the SCU lacks (capped)
    "length_ratio",  # log of the candidate's length over the SCU's contributors' mean length
    "clauses",  # clauses the candidate runs over (0: a whole sentence)
    "position_gap",  # |candidate's place in its reference - the contributors' mean place|
    "weight",  # contributors the SCU has
    "taken",  # share of the candidate's characters other SCUs' contributors hold
    "rival",  # the best weighted Dice of the candidate with another SCU's contributor
    "rival_margin",  # dice - rival
    "rank",  # 0 for the reference's best candidate by dice, 1 for the next, ... (capped)
    "margin",  # dice minus the reference's best other candidate's dice
    "best_share",  # the reference's best candidate's dice (how well the reference says it at all)
    "reverse_margin",  # dice minus the candidate's best dice with another span of the best contributor's reference
    "others_best",  # mean over the other references of their best candidate's dice (is the content shared?)
    "others_strong",  # other references whose best candidate's dice reaches STRONG
    "triangle",  # the best weighted Dice of the candidate with another reference's best candidate
    "reference_covered",  # share of the candidate's reference other SCUs already hold (the expert is done with it?)
)
STRONG = 0.3


def _scu_words(topic: Topic, contributors: Sequence[DraftContributor], label: str) -> dict:
    contributors = [c for c in contributors if c.reference in topic.references]
    words = [topic.words(c) for c in contributors]
    pooled = set().union(*(w.lemmas for w in words)) if words else set()
    label_lemmas = {t[0] for t in tokens(label)}
    return {
        "contributors": contributors,
        "words": words,
        "pooled": pooled | label_lemmas,
        "label": label_lemmas,
        "names": set().union(*(w.names for w in words)) if words else set(),
        "numbers": set().union(*(w.numbers for w in words)) if words else set(),
        "length": sum(w.length for w in words) / len(words) if words else 1.0,
        "position": sum(w.position for w in words) / len(words) if words else 0.5,
        "references": {c.reference for c in contributors},
    }


def _taken(pyramid: Sequence[DraftSCU], scu: DraftSCU | None) -> dict[str, list[Part]]:
    """Spans other SCUs' contributors hold, per reference."""
    out: dict[str, list[Part]] = {}
    for other in pyramid:
        if scu is not None and other == scu:
            continue
        for c in other.contributors:
            out.setdefault(c.reference, []).extend(c.parts)
    return {k: sorted(v) for k, v in out.items()}


def _overlap(span: Part, taken: Sequence[Part]) -> int:
    s, e = span
    covered: list[Part] = []
    for a, b in taken:
        lo, hi = max(a, s), min(b, e)
        if lo < hi:
            covered.append((lo, hi))
    total, reach = 0, s
    for a, b in sorted(covered):
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total


def _features(topic: Topic, scu: dict, unit: Unit, rivals: Sequence[list[_Words]], taken: Sequence[Part]) -> dict:
    w = topic.weights
    cand = topic.unit_words[(unit.reference, unit.span)]
    ref = topic.references[unit.reference]
    dices = [_dice_of(cand, c, w) for c in scu["words"]] or [0.0]
    best = max(range(len(dices)), key=dices.__getitem__)
    best_words = scu["words"][best] if scu["words"] else None
    share = _mass(cand.lemmas & best_words.lemmas, w) / (_mass(best_words.lemmas, w) or 1.0) if best_words else 0.0
    label_mass = _mass(scu["label"], w)
    sentence = ref.sentences[unit.sentence]
    sentence_lemmas = set(ref.lemmas((sentence,)))
    scu_names, scu_numbers = scu["names"], scu["numbers"]
    rival = max((max((_dice_of(cand, r, w) for r in other), default=0.0) for other in rivals), default=0.0)
    home = scu["contributors"][best] if scu["contributors"] else None
    reverse = 0.0
    if home is not None:
        for d, v in topic.matches(unit, home.reference):
            if not any(v.span[0] < e and s < v.span[1] for s, e in home.parts):
                reverse = d
                break
    return {
        "reverse_margin": dices[best] - reverse,
        "dice": dices[best],
        "dice_mean": math.fsum(dices) / len(dices),
        "share": share,
        "cover": _mass(cand.lemmas & scu["pooled"], w) / (_mass(cand.lemmas, w) or 1.0),
        "label_share": _mass(cand.lemmas & scu["label"], w) / label_mass if label_mass else 0.0,
        "sentence_share": (
            _mass(sentence_lemmas & best_words.lemmas, w) / (_mass(best_words.lemmas, w) or 1.0) if best_words else 0.0
        ),
        "hits": float(len(cand.lemmas & scu["pooled"])),
        "bigram_share": (
            len(cand.bigrams & best_words.bigrams) / len(best_words.bigrams)
            if best_words and best_words.bigrams
            else 0.0
        ),
        "names_found": len(scu_names & (cand.names | cand.lemmas)) / len(scu_names) if scu_names else 1.0,
        "has_names": 1.0 if scu_names else 0.0,
        "numbers_found": len(scu_numbers & cand.numbers) / len(scu_numbers) if scu_numbers else 1.0,
        "has_numbers": 1.0 if scu_numbers else 0.0,
        "extra_names": float(min(len((cand.names | cand.numbers) - scu["pooled"]), 5)),
        "length_ratio": math.log(max(cand.length, 1) / max(scu["length"], 1.0)),
        "clauses": float(unit.clauses),
        "position_gap": abs(cand.position - scu["position"]),
        "weight": float(len(scu["words"])),
        "taken": _overlap(unit.span, taken) / max(unit.span[1] - unit.span[0], 1),
        "rival": rival,
        "rival_margin": dices[best] - rival,
        "reference_covered": _overlap((0, len(ref.text)), taken) / max(len(ref.text), 1),
    }


@dataclass(frozen=True)
class Candidate:
    """A candidate contributor of an SCU in one reference, with its features."""

    unit: Unit
    features: dict = field(compare=False)

    def vector(self) -> list[float]:
        return [self.features[name] for name in FEATURES]


def _content_order(pyramid: Sequence[DraftSCU]) -> list[DraftSCU]:
    return sorted(
        pyramid, key=lambda s: (sorted((c.reference, c.parts) for c in s.contributors), " ".join(s.label.split()))
    )


def contributor_candidates(topic: Topic, scu: DraftSCU, pyramid: Sequence[DraftSCU]) -> list[Candidate]:
    """The candidates worth ranking in each reference that has no contributor in ``scu`` yet: per
    reference, the ``TOP_PER_REFERENCE`` best by weighted Dice with the SCU's words (ties: text order)."""
    info = _scu_words(topic, scu.contributors, scu.label)
    if not info["pooled"]:
        return []
    others = [s for s in _content_order(pyramid) if s != scu and s.contributors]
    taken = _taken(pyramid, scu)
    out: list[Candidate] = []
    w = topic.weights
    ranked: dict[str, list[tuple[float, Unit]]] = {}
    for key, ref in topic.references.items():
        if key in info["references"]:
            continue
        scored = []
        for u in ref.units:
            lemmas = topic.unit_words[(key, u.span)].lemmas
            if not lemmas & info["pooled"]:
                continue
            score = max((_dice_of(topic.unit_words[(key, u.span)], c, w) for c in info["words"]), default=0.0)
            score = max(score, _dice(lemmas, info["label"], w))
            if score >= MIN_SCORE:
                scored.append((score, u))
        scored.sort(key=lambda su: (-su[0], su[1].span))
        if scored:
            ranked[key] = scored
    for key, scored in ranked.items():
        rivals = [
            [topic.words(c) for c in s.contributors if c.reference in topic.references and c.reference != key]
            or [topic.words(c) for c in s.contributors if c.reference in topic.references]
            for s in others
        ]
        best = scored[0][0]
        second = scored[1][0] if len(scored) > 1 else 0.0
        elsewhere = [ranked[k][0][0] for k in ranked if k != key]
        their_best = [ranked[k][0][1] for k in ranked if k != key]
        for rank, (score, u) in enumerate(scored[:TOP_PER_REFERENCE]):
            f = _features(topic, info, u, rivals, taken.get(key, ()))
            f["rank"] = float(rank)
            f["margin"] = score - (second if rank == 0 else best)
            f["best_share"] = best
            f["others_best"] = math.fsum(elsewhere) / len(elsewhere) if elsewhere else 0.0
            f["others_strong"] = float(sum(x >= STRONG for x in elsewhere))
            f["triangle"] = _triangle(topic, u, their_best)
            out.append(Candidate(u, f))
    return out


def _triangle(topic: Topic, unit: Unit, others: Sequence[Unit]) -> float:
    """The best weighted Dice of ``unit`` with one of ``others`` (spans of other references): what
    several references say alike is more likely one SCU."""
    best = 0.0
    for v in others:
        for d, w in topic.matches(unit, v.reference):
            if w == v:
                best = max(best, d)
                break
    return best


# --- the model --------------------------------------------------------------------------------------


@dataclass
class ProposalModel:
    """Two classifiers over ``FEATURES``: a candidate contributor of an SCU (``contributor``), and a
    pair of spans of two references as the same SCU (``pair``, for new SCUs), each with the
    threshold chosen on held-out topics. ``seen``: the fingerprints of the references it learnt from
    (never used for them); ``trained_on``: the files and pyramids it learnt from, for the record."""

    contributor: object
    contributor_threshold: float
    pair: object
    pair_threshold: float
    seen: frozenset[str]
    trained_on: tuple[str, ...]
    format: int = FORMAT

    def confidences(self, classifier, rows: Sequence[Sequence[float]]) -> list[float]:
        if not rows:
            return []
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):  # as suggestion_model: threads cost more than they save here
            return [float(p) for p in classifier.predict_proba(rows)[:, 1]]

    def saw(self, topic: Topic) -> bool:
        return topic.fingerprint in self.seen


def usable(model: ProposalModel | None, topic: Topic) -> ProposalModel | None:
    """The model, unless it learnt from these very references (the blind rule): then the rules."""
    if model is not None and model.saw(topic):
        return None
    return model


_file = ModelFile(
    "PROPOSALS_MODEL",
    lambda model: isinstance(model, ProposalModel) and model.format == FORMAT,
    "proposals model %s could not be read; the rules propose",
)


def model_path() -> Path:
    return _file.path()


def save_model(model: ProposalModel, path: Path | None = None) -> Path:
    """Write the model (``model_files``: atomically; a proposal request never reads half a file)."""
    return _file.save(model, path)


def load_model(path: Path | None = None) -> ProposalModel | None:
    """The trained model, or None (no file, an unreadable one, or one of an older format): the rules
    serve. The file is the server's own (written by ``train_proposals``), never one a user uploads."""
    return _file.load(path)


# --- contributor proposals ----------------------------------------------------------------------------


def _rules_confidence(f: dict) -> float:
    return round(min(1.0, f["dice"]), 3)


def scored_contributors(
    topic: Topic, scu: DraftSCU, pyramid: Sequence[DraftSCU], model: ProposalModel | None
) -> list[tuple[Candidate, float]]:
    """Every candidate with its confidence (the model's, else the rules')."""
    found = contributor_candidates(topic, scu, pyramid)
    if model is not None:
        return list(zip(found, model.confidences(model.contributor, [c.vector() for c in found]), strict=True))
    return [(c, _rules_confidence(c.features)) for c in found]


def best_per_reference(scored: Iterable[tuple[Candidate, float]]) -> dict[str, tuple[Candidate, float]]:
    """Each reference's most confident candidate (ties: the shorter span, then text order)."""
    best: dict[str, tuple[Candidate, float]] = {}
    for c, p in scored:
        key = (-p, c.unit.span[1] - c.unit.span[0], c.unit.span)
        have = best.get(c.unit.reference)
        if have is None or key < (-have[1], have[0].unit.span[1] - have[0].unit.span[0], have[0].unit.span):
            best[c.unit.reference] = (c, p)
    return best


def _why(f: dict) -> str:
    parts = [f"{f['share']:.0%} of the weighted words of a contributor"]
    if f["has_names"] and f["names_found"] == 1:
        parts.append("its names")
    if f["has_numbers"] and f["numbers_found"] == 1:
        parts.append("its numbers")
    if f["taken"] >= 0.5:
        parts.append("though another SCU holds most of it")
    return ", ".join(parts)


def contributor_proposals(
    references: Sequence[ReferenceText],
    scu: DraftSCU,
    pyramid: Sequence[DraftSCU],
    model: ProposalModel | None = None,
    *,
    topic: Topic | None = None,
) -> list[ContributorProposal]:
    """Likely contributors of ``scu`` in each reference that has none in it yet, best first
    (confidence descending, ties by reference key then start). Only proposals reaching the model's
    threshold (the rules' when ``model`` is None or learnt from these references). ``pyramid`` is the
    whole pyramid so far (spans already taken by other SCUs weigh against a candidate). ``topic``:
    the references already read (``Topic(references)``), to save reading them again."""
    topic = topic or Topic(references)
    model = usable(model, topic)
    threshold = model.contributor_threshold if model is not None else RULES_CONTRIBUTOR_THRESHOLD
    out = [
        ContributorProposal(c.unit.reference, (c.unit.span,), round(p, 4), _why(c.features))
        for c, p in best_per_reference(scored_contributors(topic, scu, pyramid, model)).values()
        if p >= threshold
    ]
    return sorted(out, key=lambda x: (-x.confidence, x.reference, x.parts))


# --- new-SCU proposals ---------------------------------------------------------------------------------


def _covered(pyramid: Sequence[DraftSCU]) -> dict[str, list[Part]]:
    return _taken(pyramid, None)


def free_units(topic: Topic, pyramid: Sequence[DraftSCU]) -> list[Unit]:
    """Candidates of at most two clauses whose text is mostly uncovered (less than half of their
    characters in any contributor), in reference and text order."""
    covered = _covered(pyramid)
    out = []
    for key, ref in topic.references.items():
        for u in ref.units:
            if u.clauses == 0 and any(v.sentence == u.sentence and v.clauses for v in ref.units if v.span != u.span):
                continue  # a sentence cut into clauses is proposed through them
            if u.clauses > 2:
                continue
            if 2 * _overlap(u.span, covered.get(key, ())) < u.span[1] - u.span[0]:
                out.append(u)
    return out


def pair_candidates(topic: Topic, pyramid: Sequence[DraftSCU]) -> list[tuple[Unit, Unit, dict]]:
    """Pairs of free candidates of two references worth ranking as one SCU, with the features of the
    second as a contributor of an SCU made of the first (each pair once: first in key order)."""
    free = free_units(topic, pyramid)
    by_ref: dict[str, list[Unit]] = {}
    for u in free:
        by_ref.setdefault(u.reference, []).append(u)
    keys = sorted(by_ref)
    covered = _covered(pyramid)
    others = _content_order([s for s in pyramid if s.contributors])
    rivals = [[topic.words(c) for c in s.contributors if c.reference in topic.references] for s in others]
    rows: dict[tuple[Unit, str], list[tuple[float, Unit]]] = {}  # (span, other reference) -> its matches there
    best_of: dict[tuple[Unit, str], float] = {}  # (span, other reference) -> the best match of any span there
    for ka in keys:
        for kb in keys:
            if ka == kb:
                continue
            free_b = set(by_ref[kb])
            for ua in by_ref[ka]:
                row = [(d, ub) for d, ub in topic.matches(ua, kb) if d >= 2 * MIN_SCORE and ub in free_b]
                if row:
                    rows[(ua, kb)] = row
                    best_of[(ua, kb)] = row[0][0]
    out = []
    for i, ka in enumerate(keys):
        for kb in keys[i + 1 :]:
            for ua in by_ref[ka]:
                row = rows.get((ua, kb))
                if not row:
                    continue
                best = row[0][0]
                second = row[1][0] if len(row) > 1 else 0.0
                elsewhere = [best_of[(ua, k)] for k in keys if k not in (ka, kb) and (ua, k) in best_of]
                third = [rows[(ua, k)][0][1] for k in keys if k not in (ka, kb) and (ua, k) in rows]
                info = _scu_words(topic, (DraftContributor(ka, (ua.span,)),), "")
                for rank, (d, ub) in enumerate(row[:TOP_PER_REFERENCE]):
                    f = _features(topic, info, ub, rivals, covered.get(kb, ()))
                    f["rank"] = float(rank)
                    f["margin"] = d - (second if rank == 0 else best)
                    f["best_share"] = best_of.get((ub, ka), 0.0)  # its best match in ka's reference
                    f["others_best"] = math.fsum(elsewhere) / len(elsewhere) if elsewhere else 0.0
                    f["others_strong"] = float(sum(x >= STRONG for x in elsewhere))
                    f["triangle"] = _triangle(topic, ub, third)
                    out.append((ua, ub, f))
    return out


def _overlaps(a: Unit, b: Unit) -> bool:
    return a.reference == b.reference and a.span[0] < b.span[1] and b.span[0] < a.span[1]


def scu_proposals(
    references: Sequence[ReferenceText],
    pyramid: Sequence[DraftSCU],
    model: ProposalModel | None = None,
    *,
    topic: Topic | None = None,
) -> list[SCUProposal]:
    """New SCUs for text no contributor covers yet: spans of >= 2 references saying the same, best
    first. Pairs of spans reaching the threshold are grouped greedily, most confident first; a span
    joins a group when it is confident enough with every member and its reference is not in the
    group yet; no two proposals share text. The label is the text of the member that fits the
    others best."""
    topic = topic or Topic(references)
    model = usable(model, topic)
    pairs = pair_candidates(topic, pyramid)
    if model is not None:
        conf = model.confidences(model.pair, [[f[n] for n in FEATURES] for _, _, f in pairs])
        threshold = model.pair_threshold
    else:
        conf = [_rules_confidence(f) for _, _, f in pairs]
        threshold = RULES_PAIR_THRESHOLD
    return grouped(topic, pairs, conf, threshold)


def grouped(
    topic: Topic, pairs: Sequence[tuple[Unit, Unit, dict]], conf: Sequence[float], threshold: float
) -> list[SCUProposal]:
    """``scu_proposals``' grouping of the pairs (``pair_candidates``) whose confidence reaches
    ``threshold``; training calls it too, to choose the threshold on the proposals themselves."""
    score: dict[tuple[Unit, Unit], float] = {}
    for (ua, ub, _), p in zip(pairs, conf, strict=True):
        score[(ua, ub)] = score[(ub, ua)] = p
    ranked = sorted(
        ((p, ua, ub) for (ua, ub, _), p in zip(pairs, conf, strict=True) if p >= threshold),
        key=lambda x: (-x[0], x[1].reference, x[1].span, x[2].reference, x[2].span),
    )
    groups: list[list[Unit]] = []
    owner: dict[Unit, int] = {}
    used: list[Unit] = []

    def free(u: Unit) -> bool:
        return not any(_overlaps(u, v) for v in used)

    for _, ua, ub in ranked:
        ga, gb = owner.get(ua), owner.get(ub)
        if ga is None and gb is None:
            if free(ua) and free(ub):
                owner[ua] = owner[ub] = len(groups)
                groups.append([ua, ub])
                used.extend((ua, ub))
            continue
        if ga is not None and gb is not None:
            continue
        g, new = (ga, ub) if ga is not None else (gb, ua)
        group = groups[g]
        if any(m.reference == new.reference for m in group) or not free(new):
            continue
        if all(score.get((new, m), 0.0) >= threshold for m in group):
            group.append(new)
            owner[new] = g
            used.append(new)
    out = []
    for group in groups:
        members = sorted(group, key=lambda u: (u.reference, u.span))
        pair_scores = [score.get((a, b), 0.0) for i, a in enumerate(members) for b in members[i + 1 :]]
        fit = {
            m: math.fsum(score.get((m, o), 0.0) for o in members if o is not m) / (len(members) - 1) for m in members
        }
        head = min(members, key=lambda m: (-fit[m], m.span[1] - m.span[0], m.reference, m.span))
        text = topic.references[head.reference].text
        out.append(
            SCUProposal(
                " ".join(text[head.span[0] : head.span[1]].split()),
                tuple(DraftContributor(m.reference, (m.span,)) for m in members),
                round(math.fsum(pair_scores) / len(pair_scores), 4),
            )
        )
    return sorted(out, key=lambda s: (-s.confidence, [(c.reference, c.parts) for c in s.contributors]))
