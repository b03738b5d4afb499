"""Write stored pyramids and peer annotations as SacreROUGE reads them (JSON lines).

SacreROUGE (Deutsch & Roth; github.com/danieldeutsch/sacrerouge) keeps pyramids in
``pyramids.jsonl`` and peer annotations in ``pyramid-annotations.jsonl``: one object per line,
written by ``JsonlWriter`` (``jsons.dumps`` of its classes in ``sacrerouge/data/pyramid.py``) and
read back by ``JsonlReader(path, Pyramid)`` / ``JsonlReader(path, PyramidAnnotation)``, which
builds the objects from their constructor arguments. The field names are therefore those
arguments, exactly::

    Pyramid            {"instance_id", "summaries", "summarizer_ids", "scus"}
      SCU              {"scu_id", "label", "contributors"}
        Contributor    {"summary_index", "label", "parts"}
          Part         {"text", "start", "end"}
    PyramidAnnotation  {"instance_id", "summarizer_id", "summarizer_type", "summary", "scus"}
      SCUAnnotation    {"scu_id", "label", "contributors"}
        ContributorAnnotation {"label", "parts"}

``pyramid-based`` dataset readers join an annotation to its pyramid by ``instance_id``, score
with ``SCU.get_weight()`` (distinct ``summary_index`` values) and average the SCU counts over
``summarizer_ids``. What we write is what SacreROUGE's own DUC/TAC setup scripts would have
written from our DUCView export of the same objects (``Pyramid.from_xml`` /
``PyramidAnnotation.from_xml``):

- ``instance_id``: the topic id with its base lower-cased, as those scripts name instances
  (``D0601`` -> ``d0601``, ``D0801-A`` -> ``d0801-A``);
- a reference summary is its text stripped, newlines made spaces; a peer summary has every run of
  whitespace collapsed to one space and is stripped. Part offsets index these strings (``text`` =
  ``summary[start:end]``); a part left empty by the normalisation is dropped;
- legacy pyramid content is filtered as ``Pyramid._load_scus`` does: a contributor whose parts lie
  in several references is skipped, then an SCU without contributors, or with two contributors from
  one reference, is skipped whole. Matches of skipped SCUs and non-matching units are left out of
  the annotation (``PyramidAnnotation._load_scus``); each repetition is one contributor;
- labels lose DUC's `` (2.1)`` suffixes (and the ``(w) `` prefix of peer SCU labels), as there.

So ``scoring.scores`` under ``Convention.SACREROUGE`` and SacreROUGE's ``pyramid-score`` metric on
these files agree (tested in ``tests/transfer/test_api.py``).
"""

import json
import re
from collections import defaultdict
from dataclasses import dataclass

from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

MEDIA_TYPE = "application/jsonl"
_LABEL_SUFFIX = re.compile(r" \(\d+\.\d+\)$")


def instance_id(topic_external_id: str) -> str:
    """SacreROUGE's instance id of a topic: the part before the first '-' lower-cased."""
    base, sep, group = topic_external_id.partition("-")
    return base.lower() + sep + group


def clean_label(label: str) -> str:
    return _LABEL_SUFFIX.sub("", label)


@dataclass(frozen=True)
class NormalizedText:
    """A text rewritten character by character, with the map of old offsets to new ones.

    ``starts[i]``: where raw character i lands (or, for a dropped character, where the next kept
    one lands); ``ends[i]``: the new end offset of a raw span ending at i. So a raw span [s, e)
    becomes [starts[s], ends[e]), trimmed of whatever the normalisation dropped at its edges.
    """

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """The new span of raw [start, end), or None when nothing of it is left."""
        start, end = max(0, min(start, len(self.starts) - 1)), max(0, min(end, len(self.ends) - 1))
        new_start, new_end = self.starts[start], self.ends[end]
        return (new_start, new_end) if new_start < new_end else None


def _normalize(raw: str, collapse: bool) -> NormalizedText:
    """Strip ``raw``; newlines become spaces (``collapse``: every whitespace run becomes one space)."""
    out: list[str] = []
    position: list[int | None] = []  # where each raw character lands, None if dropped
    lead = len(raw) - len(raw.lstrip())
    tail = len(raw.rstrip())
    pending = False
    for i, char in enumerate(raw):
        if i < lead or i >= tail:
            position.append(None)
        elif collapse and char.isspace():
            pending = True
            position.append(None)
        else:
            if pending:
                out.append(" ")
                pending = False
            position.append(len(out))
            out.append(" " if char == "\n" else char)
    n = len(raw)
    starts = [0] * (n + 1)
    starts[n] = len(out)
    for i in range(n - 1, -1, -1):
        starts[i] = position[i] if position[i] is not None else starts[i + 1]
    ends = [0] * (n + 1)
    for i in range(1, n + 1):
        ends[i] = position[i - 1] + 1 if position[i - 1] is not None else ends[i - 1]
    return NormalizedText("".join(out), tuple(starts), tuple(ends))


def reference_summary(text: str) -> NormalizedText:
    """``Pyramid._load_summaries``: ``text.strip().replace('\\n', ' ')``."""
    return _normalize(text, collapse=False)


def peer_summary(text: str) -> NormalizedText:
    """``PyramidAnnotation._load_summary``: lines stripped and joined, ``\\s+`` -> one space, stripped."""
    return _normalize(text, collapse=True)


def _parts(spans, summary: NormalizedText) -> list[dict]:
    parts = []
    for start, end in spans:
        new = summary.span(start, end)
        if new is not None:
            parts.append({"text": summary.text[new[0] : new[1]], "start": new[0], "end": new[1]})
    return parts


def _pyramid_content(pyramid: Pyramid) -> tuple[list, list[dict], dict[int, tuple[int, str]]]:
    """(reference ids, SacreROUGE SCU dicts, kept SCU pk -> (uid, clean label)) in a fixed number of queries."""
    references = list(pyramid.references.order_by("external_id").values_list("pk", "external_id", "text"))
    index = {pk: i for i, (pk, _, _) in enumerate(references)}
    summaries = {pk: reference_summary(text) for pk, _, text in references}
    raw_texts = {pk: text for pk, _, text in references}
    parts = defaultdict(list)
    for contributor_id, reference_id, start, end in (
        ContributorPart.objects.filter(contributor__scu__pyramid=pyramid)
        .order_by("reference__external_id", "start", "id")
        .values_list("contributor_id", "reference_id", "start", "end")
    ):
        parts[contributor_id].append((reference_id, start, end))
    contributors = defaultdict(list)
    for contributor_id, scu_id in (
        Contributor.objects.filter(scu__pyramid=pyramid).order_by("id").values_list("id", "scu_id")
    ):
        contributors[scu_id].append(contributor_id)
    scus, kept = [], {}
    for pk, uid, label in SCU.objects.filter(pyramid=pyramid).order_by("uid").values_list("pk", "uid", "label"):
        written = []
        for contributor_id in contributors[pk]:
            spans = parts[contributor_id]
            homes = {reference_id for reference_id, _, _ in spans}
            if len(homes) != 1 or not homes <= index.keys():
                continue  # a contributor in several summaries is skipped (legacy data)
            (home,) = homes
            written.append(
                {
                    "summary_index": index[home],
                    "label": "...".join(raw_texts[home][start:end] for _, start, end in spans),
                    "parts": _parts([(start, end) for _, start, end in spans], summaries[home]),
                }
            )
        indices = [c["summary_index"] for c in written]
        if not written or len(set(indices)) != len(indices):
            continue  # no contributor left, or two from one summary: SacreROUGE skips the SCU
        scus.append({"scu_id": uid, "label": clean_label(label), "contributors": written})
        kept[pk] = (uid, clean_label(label))
    return [(external_id, summaries[pk].text) for pk, external_id, _ in references], scus, kept


def pyramid_record(pyramid: Pyramid) -> dict:
    """One line of SacreROUGE's ``pyramids.jsonl``."""
    references, scus, _ = _pyramid_content(pyramid)
    return {
        "instance_id": instance_id(pyramid.topic.external_id),
        "summaries": [text for _, text in references],
        "summarizer_ids": [external_id for external_id, _ in references],
        "scus": scus,
    }


def summarizer_type(peer_external_id: str) -> str:
    """As SacreROUGE's TAC readers decide: model summaries have letter ids, systems numbers."""
    return "reference" if peer_external_id.isalpha() else "peer"


def annotation_record(annotation: PeerAnnotation) -> dict:
    """One line of SacreROUGE's ``pyramid-annotations.jsonl``."""
    peer = annotation.peer
    _, _, kept = _pyramid_content(annotation.pyramid)
    summary = peer_summary(peer.text)
    spans = defaultdict(list)
    for match_id, start, end in (
        PeerMatchPart.objects.filter(match__annotation=annotation)
        .order_by("start", "id")
        .values_list("match_id", "start", "end")
    ):
        spans[match_id].append((start, end))
    by_scu = defaultdict(list)
    for match_id, scu_id in (
        PeerMatch.objects.filter(annotation=annotation, scu__isnull=False).order_by("id").values_list("id", "scu_id")
    ):
        if scu_id not in kept:
            continue  # an SCU SacreROUGE's pyramid reader skipped
        parts = _parts(spans[match_id], summary)
        if parts:
            by_scu[scu_id].append(
                {"label": "...".join(peer.text[start:end] for start, end in spans[match_id]), "parts": parts}
            )
    scus = [
        {"scu_id": kept[scu_id][0], "label": kept[scu_id][1], "contributors": contributors}
        for scu_id, contributors in sorted(by_scu.items(), key=lambda item: kept[item[0]][0])
    ]
    return {
        "instance_id": instance_id(peer.topic.external_id),
        "summarizer_id": peer.external_id,
        "summarizer_type": summarizer_type(peer.external_id),
        "summary": summary.text,
        "scus": scus,
    }


def to_jsonl(records) -> str:
    """JSON lines as ``JsonlWriter`` writes them (``json.dumps`` defaults: ASCII, one object a line)."""
    return "".join(json.dumps(record) + "\n" for record in records)


def pyramid_jsonl(pyramid: Pyramid) -> str:
    return to_jsonl([pyramid_record(pyramid)])


def annotation_jsonl(annotation: PeerAnnotation) -> str:
    return to_jsonl([annotation_record(annotation)])
