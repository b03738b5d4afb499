"""What a ranked suggestion rests on: candidate (SCU, peer sentence) pairs and their features.

Pure functions over texts, shared by the server (``suggestions_for``), the training command and the
benchmark, so that a model is trained on exactly the features it is later asked about.

A candidate is one SCU in one sentence of the peer. Its features say how much of the SCU's wording
(each contributor's, and its label's) the sentence holds, weighted by the topic's own word weights
(idf over the topic's texts: a word every summary of the topic uses tells little) and by the
pyramid's own (idf over its SCUs: a word many SCUs share does not tell which one a sentence
expresses), which word pairs of a contributor occur as pairs, whether the
numbers and names the SCU mentions are there, how strongly the same annotator's OWN earlier matches
of that SCU (in other peers of the topic) resemble the sentence, whether that annotator put the SCU
in the most alike sentence of the peers they finished (DUC peers are extractive: a sentence they
read and left without the SCU says it is not there; the strongest evidence held out, 2026-11-29),
and how the candidate compares with the other SCUs of the same sentence and the other sentences of
the same SCU. The caller decides whose earlier work is passed: only the annotation's own
annotator's (the blind rule).

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
    "rivals_in_sentence",  # log(1 + how many other SCUs are candidates in the same sentence)
    "position",  # where the sentence lies in the peer (0 first, 1 last)
    "sentence_words",  # log(1 + the sentence's content words)
    "span_share",  # share of the sentence's characters the suggested span covers
    "weight_share",  # the SCU's weight over the pyramid's highest
    "earlier_rate",  # share of the annotator's earlier peers that matched the SCU (0 without earlier peers)
    "earlier_bigram",  # best share of an earlier match's adjacent lemma pairs found adjacent in the sentence
    "seen_likeness",  # how alike (lemma Jaccard) the most alike sentence of the annotator's finished earlier peers is
    "seen_matched",  # the annotator matched the SCU in that sentence (1), or read it and did not (0)
    "seen_matches",  # log(1 + how many SCUs the annotator matched in that sentence)
    "union_mass",  # idf mass of the SCU's pooled lemmas found (absolute: a short contributor's share is weak evidence)
    "rarest_hit",  # the highest idf of a pooled lemma found (one rare word shared says more than several common ones)
    "order_share",  # best contributor: longest common subsequence of lemmas over the contributor's lemmas
    "stem_wshare",  # best contributor: weighted share found when lemmas match on their first 5 letters (derivations)
    "length_ratio",  # log of the span's content words over the best contributor's
    "strong_rivals",  # log(1 + other SCUs of the sentence whose best contributor share is at least one half)
    "best_other_in_sentence",  # the best other SCU's score in the same sentence
    "best_other_in_peer",  # the same SCU's best score in the peer's other sentences
    "context_wshare",  # best contributor's reference sentence: weighted share of its lemmas in the sentence
    "context_rest_wshare",  # the same, its lemmas outside the SCU's wording only (the sentence it was written from)
)
SEEN_ALIKE = 0.5  # an earlier sentence less alike than this tells nothing of this one
STEM = 5  # lemmas sharing their first letters this far count as one word for ``stem_wshare``
STRONG = 0.5  # a rival whose best contributor share reaches this is a ``strong_rivals`` one


# Texts whose words are kept (``tokens``): a DUC topic's suggestions read ~1,200 (its ~35 summaries
# whole, their sentences, its SCUs' contributors, labels and reference sentences). Measured on DUC
# 2006: a sentence with its words ~1.6 KB, a whole summary ~30 KB; 4,096 sentences 6.7 MB, so ~10 MB
# for that mix (~130 MB only if every text kept were a whole summary).
TOKENS_KEPT = 4096


@lru_cache(maxsize=200_000)
def lemma(word: str) -> str:
    """The lemma of a lower-cased word ("dams" -> "dam", "flooded" -> "flood")."""
    return simplemma.lemmatize(word, lang="en").lower()


@lru_cache(maxsize=TOKENS_KEPT)
def tokens(text: str) -> tuple[tuple[str, int, int, str], ...]:
    """Content words as (lemma, start, end, the word as written), stop words dropped.

    Kept per process for the last ``TOKENS_KEPT`` texts: a peer's suggestions read the same texts at
    every request (the topic's references and peers for the word weights, every SCU's contributors,
    labels and reference sentences, the annotator's finished peers), and splitting them into words
    was a fifth of a request and a third of the reading of its pyramid. A tuple: shared, never changed."""
    out = []
    for m in WORD.finditer(text):
        low = m.group().lower()
        if low in STOP:
            continue
        lem = lemma(low)
        if lem in STOP:
            continue
        out.append((lem, m.start(), m.end(), m.group()))
    return tuple(out)


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
    """An SCU as the features see it: its id, label and contributor texts (one string each), and the
    reference sentences each contributor lies in (``contributor_context``; none when unknown)."""

    scu: int
    label: str
    contributors: Sequence[str]
    contexts: Sequence[str] = ()
    lemmas: list[set[str]] = field(default_factory=list, init=False)
    label_lemmas: set[str] = field(default_factory=set, init=False)
    names: set[str] = field(default_factory=set, init=False)
    numbers: set[str] = field(default_factory=set, init=False)
    context_lemmas: list[set[str]] = field(default_factory=list, init=False)

    def __post_init__(self):
        self.lemmas = [s for s in ({t[0] for t in tokens(c)} for c in self.contributors) if s]
        self.label_lemmas = {t[0] for t in tokens(self.label)}
        self.context_lemmas = [s for s in ({t[0] for t in tokens(c)} for c in self.contexts) if s]
        for text in [*self.contributors, self.label]:
            names, numbers = _names_numbers(text)
            self.names |= names
            self.numbers |= numbers


def contributor_context(parts: Iterable[tuple[str, int, int]]) -> str:
    """The reference sentences a contributor's parts lie in (``parts``: (reference text, start, end)),
    each once, in the parts' order: a reference sentence was often written from one source sentence, which an
    extractive peer may copy; its other words then say the peer sentence is that one."""
    out: list[str] = []
    for text, start, end in parts:
        for s, e in _sentences(text):
            if s < max(end, start + 1) and start < e and text[s:e].strip() not in out:
                out.append(text[s:e].strip())
    return " ".join(out)


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
    """The lemmas' summed weights, exactly rounded (``math.fsum``): a plain sum over a set depends on
    its order, which string hashing changes from one process to the next, and the last bit it flips
    reorders tied candidates (``rank_in_*``, the best contributor) and so the trees' splits: the same
    files gave held-out thresholds 0.27 and 0.36 in two runs."""
    return math.fsum(weights.get(lem, 1.0) for lem in lemmas)


MIN_WSHARE = 0.2  # a candidate holds at least this weighted share of some contributor, label or earlier match


Seen = Sequence[tuple[str, Sequence[tuple[int, Sequence[tuple[int, int]]]]]]


def seen_sentences(seen: Seen) -> list[tuple[set[str], frozenset[int]]]:
    """Each sentence of the annotator's finished earlier peers as (its lemmas, the SCUs the annotator
    matched in it: a match part overlapping the sentence). ``seen``: (peer text, its matches as
    (SCU id, spans)) pairs. A sentence read and left without an SCU says that SCU is not there."""
    out = []
    for text, matches in seen:
        for start, end in _sentences(text):
            lemmas = {t[0] for t in tokens(text[start:end])}
            if lemmas:
                scus = frozenset(scu for scu, spans in matches if any(a < end and start < b for a, b in spans))
                out.append((lemmas, scus))
    return out


def most_alike(lemmas: set[str], sentences: Sequence[tuple[set[str], frozenset[int]]]) -> tuple[float, frozenset[int]]:
    """The lemma Jaccard of the most alike of ``sentences`` and the SCUs matched in it ((0, {}) when
    none is at least ``SEEN_ALIKE`` alike)."""
    best, scus = 0.0, frozenset()
    for other, matched in sentences:
        alike = len(lemmas & other) / len(lemmas | other)
        if alike > best or (alike == best and len(matched) > len(scus)):
            best, scus = alike, matched
    return (best, scus) if best >= SEEN_ALIKE else (0.0, frozenset())


def candidates(
    peer: str,
    scus: Sequence[ScuText],
    weights: dict[str, float],
    earlier: Sequence[tuple[int, list[str], str]] = (),
    seen: Seen = (),
) -> list[Candidate]:
    """Every (SCU, sentence) pair worth ranking, with its features.

    ``earlier``: the annotator's OWN matches in other peers of the topic, as (SCU id, part texts,
    which peer) triples; ``seen``: the annotator's OWN finished other peers of the topic, as (text,
    matches) pairs; nothing else of anyone's annotations is read. The span suggested runs
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
    earlier_bigrams: dict[int, list[set[tuple[str, str]]]] = {}
    earlier_peers: dict[int, set[str]] = {}
    for scu, parts, where in earlier:
        sequence = [t[0] for p in parts for t in tokens(p)]
        if sequence:
            earlier_lemmas.setdefault(scu, []).append(set(sequence))
        if len(sequence) > 1:
            earlier_bigrams.setdefault(scu, []).append(set(zip(sequence, sequence[1:], strict=False)))
        earlier_peers.setdefault(scu, set()).add(where)
    peers_before = len({where for *_, where in earlier})
    top_weight = max((len(unit.contributors) for unit in scus), default=0) or 1
    any_earlier = 1.0 if earlier else 0.0
    read = seen_sentences(seen)
    alike = [most_alike(lems, read) if lems else (0.0, frozenset()) for lems in sentence_lemmas]
    pooled_of = {unit.scu: set().union(*unit.lemmas, unit.label_lemmas) for unit in scus}
    scu_weights = word_weights_of_sets(pooled_of.values())
    sentence_sequences = [[t[0] for t in toks] for toks in sentence_tokens]
    sentence_bigrams = [set(zip(seq, seq[1:], strict=False)) for seq in sentence_sequences]
    sentence_stems = [{lem[:STEM] for lem in lems} for lems in sentence_lemmas]

    out: list[Candidate] = []
    for unit in scus:
        pooled = pooled_of[unit.scu]
        if not pooled:
            continue
        sequences = [seq for seq in map(_lemma_sequence, unit.contributors) if seq]
        bigrams = [set(zip(seq, seq[1:], strict=False)) for seq in sequences]
        pooled_mass = _mass(pooled, weights)
        masses = [_mass(lems, weights) for lems in unit.lemmas]
        contexts = [(lems, _mass(lems, weights), lems - pooled) for lems in unit.context_lemmas]
        contexts = [(lems, mass, rest, _mass(rest, weights)) for lems, mass, rest in contexts]
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
            found = pooled & lems
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
                "position": i / (len(sentences) - 1) if len(sentences) > 1 else 0.0,
                "sentence_words": math.log1p(len(sentence_tokens[i])),
                "span_share": (span[1] - span[0]) / max(1, sentences[i][1] - sentences[i][0]),
                "weight_share": len(unit.contributors) / top_weight,
                "earlier_rate": len(earlier_peers.get(unit.scu, ())) / peers_before if peers_before else 0.0,
                "seen_likeness": alike[i][0],
                "seen_matched": 1.0 if unit.scu in alike[i][1] else 0.0,
                "seen_matches": math.log1p(len(alike[i][1])),
                "earlier_bigram": max(
                    (len(b & sentence_bigrams[i]) / len(b) for b in earlier_bigrams.get(unit.scu, ())), default=0.0
                ),
                "union_mass": _mass(found, weights),
                "rarest_hit": max((weights.get(lem, 1.0) for lem in found), default=0.0),
                "order_share": max(
                    (_common_subsequence(seq, sentence_sequences[i]) / len(seq) for seq in sequences), default=0.0
                ),
                "stem_wshare": max(
                    (
                        _mass({lem for lem in c if lem in lems or lem[:STEM] in sentence_stems[i]}, weights) / m
                        for c, m in zip(unit.lemmas, masses, strict=True)
                        if m
                    ),
                    default=0.0,
                ),
                "length_ratio": math.log((1 + len(in_span)) / (1 + len(best_lemmas))),
                "context_wshare": max((_mass(c & lems, weights) / m for c, m, _, _ in contexts if m), default=0.0),
                "context_rest_wshare": max(
                    (_mass(rest & lems, weights) / m for _, _, rest, m in contexts if m), default=0.0
                ),
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


@lru_cache(maxsize=20_000)
def _lemma_sequence(text: str) -> tuple[str, ...]:
    """A contributor's content lemmas in order: the same for every peer its SCU is ranked against."""
    return tuple(t[0] for t in tokens(text))


def _common_subsequence(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of the longest common subsequence of two lemma sequences: the contributor's words
    found in its own order, gaps allowed (a paraphrase inserts words; bigrams need them adjacent)."""
    # A word absent from the other sequence is in no common subsequence: leaving such words out
    # gives the same length, and a sentence shares only a few of its words with a contributor.
    shared = set(a) & set(b)
    a = [x for x in a if x in shared]
    b = [y for y in b if y in shared]
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


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
    for key, margin, rank, best_other in (
        (lambda c: c.sentence, "margin_in_sentence", "rank_in_sentence", "best_other_in_sentence"),
        (lambda c: c.scu, "margin_in_peer", "rank_in_peer", "best_other_in_peer"),
    ):
        groups: dict[int, list[Candidate]] = {}
        for c in found:
            groups.setdefault(key(c), []).append(c)
        for group in groups.values():
            group.sort(key=_score, reverse=True)
            for r, c in enumerate(group):
                other = group[1] if r == 0 and len(group) > 1 else (group[0] if r > 0 else None)
                c.features[best_other] = _score(other) if other else 0.0
                c.features[margin] = _score(c) - c.features[best_other]
                c.features[rank] = float(min(r, 5))
    rivals: dict[int, int] = {}
    strong: dict[int, int] = {}
    for c in found:
        rivals[c.sentence] = rivals.get(c.sentence, 0) + 1
        strong[c.sentence] = strong.get(c.sentence, 0) + (c.features["contributor_wshare"] >= STRONG)
    for c in found:
        c.features["rivals_in_sentence"] = math.log1p(rivals[c.sentence] - 1)
        c.features["strong_rivals"] = math.log1p(strong[c.sentence] - (c.features["contributor_wshare"] >= STRONG))


def covers(suggested: Iterable[tuple[int, int]], expert: Iterable[tuple[int, int]]) -> float:
    """Share of the expert's characters (the union of their spans) that the suggested spans cover."""
    want, have = _union(expert), _union(suggested)
    size = sum(e - s for s, e in want)
    if not size:
        return 0.0
    common = sum(max(0, min(e, f) - max(s, t)) for s, e in want for t, f in have)
    return common / size


def _union(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans as disjoint, sorted intervals (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def is_right(
    scu: int, spans: Iterable[tuple[int, int]], expert: Iterable[tuple[int, Sequence[tuple[int, int]]]]
) -> bool:
    """A suggestion is right when it names an SCU the expert matched and covers at least half of
    that match's span (the benchmark's and the training labels' one definition)."""
    spans = list(spans)
    return any(e_scu == scu and covers(spans, e_spans) >= 0.5 for e_scu, e_spans in expert)
