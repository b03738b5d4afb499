"""Phase 1 of the Lightweight Pyramid: filtering crowd-written statements and sampling the judged ones.

The released LitePyramids code, per reference summary:

1. strip leading/trailing ``.,!?`` (and spaces);
2. drop statements of more than one sentence, then of more than 20 tokens, then of 3 tokens or fewer;
3. near-duplicates: with A, B the sets of non-stop-word lemmas of two statements,
   |A n B| / min(|A|, |B|) > 0.95 (for short statements: one set contains the other) makes them
   duplicates; the one with more such lemmas is dropped, the later one on equal size.

Then sampling, seeded so it can be repeated: 4 statements per reference for batch 1, 4 more from the
rest for batch 2 (disjoint). A reference with too few statements left is reported; :func:`top_up`
fills the gap from the topic's other references (what the released datasets did by hand).

Lemmas come from simplemma (pure Python, its data installs with it); tokens and sentences from a
small tokenizer close to spaCy's (the released code's). The stop-word list is the usual English
function words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import simplemma

STRIP_CHARACTERS = ".,!? \t\r\n"
MAX_TOKENS = 20
MIN_TOKENS_EXCLUSIVE = 3
DUPLICATE_OVERLAP = 0.95
PER_REFERENCE = 4
BATCHES = 2
TASK_SIZE = 16

MULTIPLE_SENTENCES = "more than one sentence"
TOO_LONG = f"more than {MAX_TOKENS} tokens"
TOO_SHORT = f"{MIN_TOKENS_EXCLUSIVE} tokens or fewer"
EMPTY = "empty"
DUPLICATE = "near-duplicate of another statement"

STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves 's n't 'm 're 've 'd 'll also may might must shall
""".split()
)


@dataclass(frozen=True)
class Statement:
    id: Hashable
    reference: Hashable
    text: str


@dataclass(frozen=True)
class Decision:
    id: Hashable
    reference: Hashable
    text: str  # after stripping
    kept: bool
    reason: str | None = None
    duplicate_of: Hashable | None = None


def clean(text: str) -> str:
    return text.strip(STRIP_CHARACTERS)


@lru_cache(maxsize=50_000)
def _lemma(token: str) -> str:
    return simplemma.lemmatize(token, lang="en").lower()


ABBREVIATIONS = (
    "Dr|Mr|Mrs|Ms|St|Jr|Sr|Prof|Gen|Gov|Sen|Rep|Lt|Col|Capt|Sgt|Mt|Ft|Inc|Co|Corp|Ltd|vs|etc|No|"
    "Jan|Feb|Mar|Apr|Aug|Sep|Sept|Oct|Nov|Dec"
)
# Close to spaCy's English tokenizer, which the released code used: "U.S." and "Dr." are one
# token, "2,000" and "3.5" too, clitics ("'s", "n't") and punctuation are tokens of their own.
TOKEN = re.compile(
    rf"(?:[A-Za-z]\.){{2,}}"  # U.S., e.g.
    rf"|[A-Z]\.(?=\s)"  # Kenneth A. Bergstedt
    rf"|(?:{ABBREVIATIONS})\.(?=\s|$)"  # Dr. Smith
    r"|\d+(?:[.,:]\d+)*"  # 2,000  3.5  10:30
    r"|\w+(?=n't\b)|n't\b"  # do n't
    r"|'(?:s|m|re|ve|d|ll)\b"  # 's 're ...
    r"|\w+"
    r"|[^\w\s]"
)
SENTENCE_END = {".", "!", "?"}


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def sentence_count(text: str) -> int:
    """Sentences: a ``.``, ``!`` or ``?`` token followed by a token starting with a capital letter,
    a digit or a quote starts a new one (abbreviations such as "Dr." and "U.S." are single tokens)."""
    toks = tokens(text)
    count = 1 if toks else 0
    for here, after in zip(toks, toks[1:], strict=False):
        if here in SENTENCE_END and (after[0].isupper() or after[0].isdigit() or after[0] in "\"'"):
            count += 1
    return count


def content_lemmas(text: str) -> frozenset[str]:
    """The set of lemmas of a statement's words that are not stop words (punctuation excluded)."""
    out = set()
    for token in tokens(text):
        word = token.lower()
        if not any(ch.isalnum() for ch in word) or word in STOP_WORDS:
            continue
        lemma = _lemma(token)
        if lemma not in STOP_WORDS:
            out.add(lemma)
    return frozenset(out)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|A n B| / min(|A|, |B|); 0 when either is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _length_reason(text: str) -> str | None:
    if not text:
        return EMPTY
    if sentence_count(text) > 1:
        return MULTIPLE_SENTENCES
    n = len(tokens(text))
    if n > MAX_TOKENS:
        return TOO_LONG
    if n <= MIN_TOKENS_EXCLUSIVE:
        return TOO_SHORT
    return None


def filter_reference(statements: Sequence[Statement]) -> list[Decision]:
    """The released filters over one reference's statements, in their order; every statement gets a decision."""
    decisions: dict[Hashable, Decision] = {}
    kept: list[tuple[Statement, str, frozenset[str]]] = []
    for s in statements:
        text = clean(s.text)
        reason = _length_reason(text)
        if reason:
            decisions[s.id] = Decision(s.id, s.reference, text, False, reason)
            continue
        lemmas = content_lemmas(text)
        dropped_self = False
        for other, other_text, other_lemmas in list(kept):
            if overlap(lemmas, other_lemmas) <= DUPLICATE_OVERLAP:
                continue
            if len(lemmas) >= len(other_lemmas):  # the new one is larger, or equal and later: drop it
                decisions[s.id] = Decision(s.id, s.reference, text, False, DUPLICATE, other.id)
                dropped_self = True
                break
            kept.remove((other, other_text, other_lemmas))
            decisions[other.id] = Decision(other.id, other.reference, other_text, False, DUPLICATE, s.id)
        if not dropped_self:
            kept.append((s, text, lemmas))
            decisions[s.id] = Decision(s.id, s.reference, text, True)
    return [decisions[s.id] for s in statements]


def filter_statements(statements: Sequence[Statement]) -> list[Decision]:
    """:func:`filter_reference` per reference (never across references), in input order."""
    by_reference: dict[Hashable, list[Statement]] = {}
    for s in statements:
        by_reference.setdefault(s.reference, []).append(s)
    decided = {d.id: d for group in by_reference.values() for d in filter_reference(group)}
    return [decided[s.id] for s in statements]


@dataclass(frozen=True)
class Shortfall:
    reference: Hashable
    batch: int  # 1-based
    missing: int


@dataclass(frozen=True)
class Sampling:
    batches: tuple[tuple[tuple[Hashable, Hashable], ...], ...]  # per batch: (reference, statement id)
    short: tuple[Shortfall, ...]
    target: int  # statements per batch wanted


def sample_batches(
    kept: Mapping[Hashable, Sequence[Hashable]],
    seed: int,
    per_reference: int = PER_REFERENCE,
    batches: int = BATCHES,
) -> Sampling:
    """``per_reference`` statements of each reference per batch, disjoint batches, seeded.

    ``kept``: reference -> its kept statement ids (in a stable order). References are visited in
    sorted order of their string form so the same seed gives the same sample everywhere.
    """
    rng = random.Random(seed)
    out: list[list[tuple[Hashable, Hashable]]] = [[] for _ in range(batches)]
    short = []
    for reference in sorted(kept, key=str):
        pool = list(kept[reference])
        rng.shuffle(pool)
        for b in range(batches):
            take, pool = pool[:per_reference], pool[per_reference:]
            out[b].extend((reference, s) for s in take)
            if len(take) < per_reference:
                short.append(Shortfall(reference, b + 1, per_reference - len(take)))
    return Sampling(tuple(tuple(b) for b in out), tuple(short), per_reference * len(kept))


def top_up(sampling: Sampling, kept: Mapping[Hashable, Sequence[Hashable]], seed: int) -> Sampling:
    """Fill each short batch up to its target from the unused statements of the topic's other references.

    Statements already in any batch are never reused (batches stay disjoint). What cannot be filled
    stays reported in ``short`` (reference = None: the topic as a whole ran out).
    """
    rng = random.Random(seed)
    used = {s for batch in sampling.batches for _, s in batch}
    spare = [(r, s) for r in sorted(kept, key=str) for s in kept[r] if s not in used]
    rng.shuffle(spare)
    batches, short = [], []
    for b, batch in enumerate(sampling.batches):
        missing = sampling.target - len(batch)
        short_refs = {x.reference for x in sampling.short if x.batch == b + 1}
        # prefer statements of references that are not themselves short in this batch
        spare.sort(key=lambda rs: rs[0] in short_refs)
        extra, spare = spare[: max(missing, 0)], spare[max(missing, 0) :]
        batches.append(tuple(batch) + tuple(extra))
        if missing > len(extra):
            short.append(Shortfall(None, b + 1, missing - len(extra)))
    return Sampling(tuple(batches), tuple(short), sampling.target)


def chunk(statements: Sequence[Hashable], size: int = TASK_SIZE) -> list[list[Hashable]]:
    """Split a batch into tasks of at most ``size`` statements (a 4-reference batch is one task)."""
    return [list(statements[i : i + size]) for i in range(0, len(statements), size)]
