"""What a ranked suggestion rests on: candidate (SCU, peer sentence) pairs and their features.

Pure functions over texts, shared by the server (``suggestions_for``), the training command and the
benchmark, so that a model is trained on exactly the features it is later asked about.

A candidate is one SCU in one sentence of the peer. Its features say how much of the SCU's wording
(each contributor's, and its label's) the sentence holds, weighted by the topic's own word weights
(idf over the topic's texts: a word every summary of the topic uses tells little) and by the
pyramid's own (idf over its SCUs: a word many SCUs share does not tell which one a sentence
expresses), which word pairs of a contributor occur as pairs, whether the
numbers and names the SCU mentions are there, how strongly the same annotator's OWN earlier matches
of that SCU (in other peers of the topic) resemble the sentence, and how the candidate compares with
the other SCUs of the same sentence and the other sentences of the same SCU. The caller decides
whose earlier matches are passed: only the annotation's own annotator's (the blind rule).

Words are compared as lemmas (simplemma), lower-cased, stop words dropped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import simplemma

from annotation.pyramids.suggestions import STOP, WORD, _sentences, from_earlier

NUMBER = re.compile(r"\d")
FEATURES = (
    "contributor_wshare",  # best contributor: idf-weighted share of its lemmas in the sentence
    "contributor_share",  # the same contributor: unweighted share
    "contributor_hits",  # the same contributor: lemmas found
    "contributor_mean",  # mean weighted share over the SCU's contributors
    "contributors_half",  # share of contributors with a weighted share of at least one half
    "union_wshare",  # all contributors' and the label's lemmas pooled: weighted share
    "label_wshare",  # the SCU label's weighted share
    "sentence_cover",  # share of the sentence's idf mass that the SCU's words account for
    "scu_specific_wshare",  # the pooled lemmas' share found, idf-weighted over the SCUs (words that tell SCUs apart)
    "bigram_share",  # best contributor: share of its adjacent lemma pairs found adjacent in the sentence
    "clause_wshare",  # the SCU's pooled lemmas: weighted share found within the suggested span
    "clause_cover",  # share of the span's idf mass that the SCU's words account for
    "numbers_found",  # share of the SCU's numbers found (1 when it has none)
    "has_numbers",  # the SCU mentions numbers
    "names_found",  # share of the SCU's names found (1 when it has none)
    "has_names",
    "weight",  # the SCU's weight (number of contributors)
    "earlier_exact",  # the annotator matched these very words to the SCU in an earlier peer
    "earlier_wshare",  # best weighted share of an earlier match of the SCU in the sentence
    "earlier_count",  # log(1 + how many earlier peers the annotator matched the SCU in)
    "earlier_any",  # the annotator has earlier peers at all
    "margin_in_sentence",  # this SCU's score minus the best other SCU's score in the sentence
    "rank_in_sentence",  # 0 for the best SCU of the sentence, 1 for the next, ...
    "margin_in_peer",  # this sentence's score minus the best other sentence's for the SCU
    "rank_in_peer",  # 0 for the SCU's best sentence, ...
)


@lru_cache(maxsize=200_000)
def lemma(word: str) -> str:
    """The lemma of a lower-cased word ("dams" -> "dam", "flooded" -> "flood")."""
    return simplemma.lemmatize(word, lang="en").lower()


def tokens(text: str) -> list[tuple[str, int, int, str]]:
    """Content words as (lemma, start, end, the word as written), stop words dropped."""
    out = []
    for m in WORD.finditer(text):
        low = m.group().lower()
        if low in STOP:
            continue
        lem = lemma(low)
        if lem in STOP:
            continue
        out.append((lem, m.start(), m.end(), m.group()))
    return out


def word_weights(texts: Iterable[str]) -> dict[str, float]:
    """The topic's own word weights: smoothed idf of each lemma over the topic's texts."""
    return word_weights_of_sets({t[0] for t in tokens(text)} for text in texts)


def word_weights_of_sets(sets: Iterable[set[str]]) -> dict[str, float]:
    """Smoothed idf of each lemma over sets of lemmas (e.g. the pyramid's SCUs: a word many SCUs
    share does not tell which one a sentence expresses)."""
    sets = list(sets)
    df: dict[str, int] = {}
    for lemmas in sets:
        for lem in lemmas:
            df[lem] = df.get(lem, 0) + 1
    return {lem: math.log((1 + len(sets)) / (1 + d)) + 1 for lem, d in df.items()}


def _names_numbers(text: str) -> tuple[set[str], set[str]]:
    """Numbers, and names (capitalised words not opening a sentence), as lemmas."""
    names, numbers = set(), set()
    for lem, start, _, word in tokens(text):
        if NUMBER.search(word):
            numbers.add(lem)
        elif word[0].isupper() and start > 0 and not re.search(r"[.!?]\s*$", text[max(0, start - 3) : start]):
            names.add(lem)
    return names, numbers


@dataclass
class ScuText:
    """An SCU as the features see it: its id, label and contributor texts (one string each)."""

    scu: int
    label: str
    contributors: Sequence[str]
    lemmas: list[set[str]] = field(default_factory=list, init=False)
    label_lemmas: set[str] = field(default_factory=set, init=False)
    names: set[str] = field(default_factory=set, init=False)
    numbers: set[str] = field(default_factory=set, init=False)

    def __post_init__(self):
        self.lemmas = [s for s in ({t[0] for t in tokens(c)} for c in self.contributors) if s]
        self.label_lemmas = {t[0] for t in tokens(self.label)}
        for text in [*self.contributors, self.label]:
            names, numbers = _names_numbers(text)
            self.names |= names
            self.numbers |= numbers


@dataclass
class Candidate:
    scu: int
    sentence: int  # index of the peer sentence
    span: tuple[int, int]  # peer offsets suggested
    features: dict[str, float]
    exact: tuple[tuple[int, int], ...] = ()  # the earlier match's very words, when found (its spans)
    why: str = ""

    def vector(self) -> list[float]:
        return [self.features[name] for name in FEATURES]


def _mass(lemmas: Iterable[str], weights: dict[str, float]) -> float:
    return sum(weights.get(lem, 1.0) for lem in lemmas)


MIN_WSHARE = 0.2  # a candidate holds at least this weighted share of some contributor, label or earlier match


def candidates(
    peer: str, scus: Sequence[ScuText], weights: dict[str, float], earlier: Sequence[tuple[int, list[str], str]] = ()
) -> list[Candidate]:
    """Every (SCU, sentence) pair worth ranking, with its features.

    ``earlier``: the annotator's OWN matches in other peers of the topic, as (SCU id, part texts,
    which peer) triples; nothing else of anyone's annotations is read. The span suggested runs
    from the first to the last word of the sentence that the SCU's wording (or the earlier match)
    accounts for, or is the earlier match's very words when they occur in the sentence."""
    sentences = _sentences(peer)
    sentence_tokens = [[(lem, s + a, s + b) for lem, a, b, _ in tokens(peer[s:e])] for s, e in sentences]
    sentence_lemmas = [{t[0] for t in toks} for toks in sentence_tokens]
    sentence_mass = [_mass(lems, weights) or 1.0 for lems in sentence_lemmas]
    sentence_names_numbers = [_names_numbers(peer[s:e]) for s, e in sentences]
    exact: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
    for found in from_earlier(peer, earlier):
        at = next((i for i, (s, e) in enumerate(sentences) if s <= found.parts[0][0] < e), None)
        if at is not None:
            exact.setdefault((found.scu, at), found.parts)
    earlier_lemmas: dict[int, list[set[str]]] = {}
    earlier_peers: dict[int, set[str]] = {}
    for scu, parts, where in earlier:
        lems = {t[0] for p in parts for t in tokens(p)}
        if lems:
            earlier_lemmas.setdefault(scu, []).append(lems)
        earlier_peers.setdefault(scu, set()).add(where)
    any_earlier = 1.0 if earlier else 0.0
    pooled_of = {unit.scu: set().union(*unit.lemmas, unit.label_lemmas) for unit in scus}
    scu_weights = word_weights_of_sets(pooled_of.values())
    sentence_bigrams = [
        set(zip([t[0] for t in toks], [t[0] for t in toks][1:], strict=False)) for toks in sentence_tokens
    ]

    out: list[Candidate] = []
    for unit in scus:
        pooled = pooled_of[unit.scu]
        if not pooled:
            continue
        bigrams = [
            set(zip(lems, lems[1:], strict=False)) for lems in ([t[0] for t in tokens(c)] for c in unit.contributors)
        ]
        pooled_mass = _mass(pooled, weights)
        masses = [_mass(lems, weights) for lems in unit.lemmas]
        label_mass = _mass(unit.label_lemmas, weights)
        own = earlier_lemmas.get(unit.scu, [])
        for i, lems in enumerate(sentence_lemmas):
            if not lems & pooled and (unit.scu, i) not in exact:
                continue
            wshares = [_mass(c & lems, weights) / m for c, m in zip(unit.lemmas, masses, strict=True) if m]
            best = max(range(len(wshares)), key=wshares.__getitem__) if wshares else None
            label_wshare = _mass(unit.label_lemmas & lems, weights) / label_mass if label_mass else 0.0
            earlier_wshare = max((_mass(e & lems, weights) / _mass(e, weights) for e in own), default=0.0)
            top = max(max(wshares, default=0.0), label_wshare, earlier_wshare)
            if top < MIN_WSHARE and (unit.scu, i) not in exact:
                continue
            names, numbers = sentence_names_numbers[i]
            found_lemmas = pooled | set().union(*own) if own else pooled
            hit_tokens = [(a, b) for lem, a, b in sentence_tokens[i] if lem in found_lemmas]
            if (unit.scu, i) in exact:
                spans = exact[(unit.scu, i)]
                span = (spans[0][0], spans[-1][1])
            else:
                span = (
                    _clause(peer, sentences[i], (hit_tokens[0][0], hit_tokens[-1][1])) if hit_tokens else sentences[i]
                )
            best_lemmas = unit.lemmas[best] if best is not None else set()
            in_span = {lem for lem, a, b in sentence_tokens[i] if a >= span[0] and b <= span[1]}
            features = {
                "contributor_wshare": wshares[best] if best is not None else 0.0,
                "contributor_share": len(best_lemmas & lems) / len(best_lemmas) if best_lemmas else 0.0,
                "contributor_hits": float(len(best_lemmas & lems)),
                "contributor_mean": sum(wshares) / len(wshares) if wshares else 0.0,
                "contributors_half": sum(w >= 0.5 for w in wshares) / len(wshares) if wshares else 0.0,
                "union_wshare": _mass(pooled & lems, weights) / pooled_mass,
                "label_wshare": label_wshare,
                "sentence_cover": _mass(pooled & lems, weights) / sentence_mass[i],
                "scu_specific_wshare": _mass(pooled & lems, scu_weights) / _mass(pooled, scu_weights),
                "bigram_share": max((len(b & sentence_bigrams[i]) / len(b) for b in bigrams if b), default=0.0),
                "clause_wshare": _mass(pooled & in_span, weights) / pooled_mass,
                "clause_cover": _mass(pooled & in_span, weights) / (_mass(in_span, weights) or 1.0),
                "numbers_found": len(unit.numbers & numbers) / len(unit.numbers) if unit.numbers else 1.0,
                "has_numbers": 1.0 if unit.numbers else 0.0,
                "names_found": len(unit.names & (names | lems)) / len(unit.names) if unit.names else 1.0,
                "has_names": 1.0 if unit.names else 0.0,
                "weight": float(len(unit.contributors)),
                "earlier_exact": 1.0 if (unit.scu, i) in exact else 0.0,
                "earlier_wshare": earlier_wshare,
                "earlier_count": math.log1p(len(earlier_peers.get(unit.scu, ()))),
                "earlier_any": any_earlier,
            }
            if (unit.scu, i) in exact:
                why = "you matched the same words in an earlier peer"
            elif earlier_wshare >= features["contributor_wshare"] and own:
                why = f"{earlier_wshare:.0%} of the words of your earlier match"
            else:
                why = f"{features['contributor_share']:.0%} of the content words of a contributor"
            out.append(Candidate(unit.scu, i, span, features, exact.get((unit.scu, i), ()), why))
    _relative(out)
    return out


CLAUSE_END = re.compile(r"[,;()\u2013\u2014]")


def _clause(text: str, sentence: tuple[int, int], span: tuple[int, int]) -> tuple[int, int]:
    """The span widened to the clause it lies in (to the commas, semicolons, brackets or dashes around
    it, within its sentence): experts match clauses, and the words found are often only their core."""
    start, end = span
    before = [m.end() for m in CLAUSE_END.finditer(text, sentence[0], start)]
    after = CLAUSE_END.search(text, end, sentence[1])
    start = before[-1] if before else sentence[0]
    end = after.start() if after else sentence[1]
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1] in " \n\t.!?;:":
        end -= 1
    return start, end


def _score(c: Candidate) -> float:
    """A rough single score used only to compare candidates with each other (the relative features)."""
    f = c.features
    return max(f["contributor_wshare"], f["label_wshare"], f["earlier_wshare"], f["earlier_exact"])


def _relative(found: list[Candidate]) -> None:
    """Fill the features that compare a candidate with its rivals in the same sentence and for the same SCU."""
    for key, margin, rank in (
        (lambda c: c.sentence, "margin_in_sentence", "rank_in_sentence"),
        (lambda c: c.scu, "margin_in_peer", "rank_in_peer"),
    ):
        groups: dict[int, list[Candidate]] = {}
        for c in found:
            groups.setdefault(key(c), []).append(c)
        for group in groups.values():
            group.sort(key=_score, reverse=True)
            for r, c in enumerate(group):
                other = group[1] if r == 0 and len(group) > 1 else (group[0] if r > 0 else None)
                c.features[margin] = _score(c) - (_score(other) if other else 0.0)
                c.features[rank] = float(min(r, 5))


def covers(suggested: Iterable[tuple[int, int]], expert: Iterable[tuple[int, int]]) -> float:
    """Share of the expert's characters (the union of their spans) that the suggested spans cover."""
    want = set()
    for s, e in expert:
        want.update(range(s, e))
    if not want:
        return 0.0
    have = set()
    for s, e in suggested:
        have.update(range(s, e))
    return len(want & have) / len(want)


def is_right(
    scu: int, spans: Iterable[tuple[int, int]], expert: Iterable[tuple[int, Sequence[tuple[int, int]]]]
) -> bool:
    """A suggestion is right when it names an SCU the expert matched and covers at least half of
    that match's span (the benchmark's and the training labels' one definition)."""
    spans = list(spans)
    return any(e_scu == scu and covers(spans, e_spans) >= 0.5 for e_scu, e_spans in expert)
