// The one implementation of text offsets shared by every editor.
//
// The server stores offsets in Unicode code points (Python str indexing); the DOM counts UTF-16
// code units. Everything that crosses the wire goes through TextIndex, so a span chosen in the
// browser lands on the same characters in Python for emoji, combining marks, CJK and RTL text.

const WORDS = new Intl.Segmenter(undefined, { granularity: "word" });
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const TRIM = /[\p{P}\p{S}\p{Z}\s]/u;

export class TextIndex {
  /** Precomputed maps between UTF-16 indexes and code point offsets of one text. */
  constructor(text) {
    this.text = text;
    this.cpOfU16 = new Uint32Array(text.length + 1);
    const u16OfCp = [];
    let cp = 0;
    for (let i = 0; i < text.length; cp++) {
      u16OfCp.push(i);
      const width = text.codePointAt(i) > 0xffff ? 2 : 1;
      for (let k = 0; k < width; k++) this.cpOfU16[i + k] = cp;
      i += width;
    }
    this.cpOfU16[text.length] = cp;
    u16OfCp.push(text.length);
    this.u16OfCp = Uint32Array.from(u16OfCp);
    this.length = cp; // in code points, as Python's len()
  }
  toCodePoints(u16) { return this.cpOfU16[u16]; }
  toUtf16(cp) {
    if (cp < 0 || cp > this.length) throw new RangeError(`offset ${cp} outside the text (length ${this.length})`);
    return this.u16OfCp[cp];
  }
  /** [start, end) in code points -> the substring. */
  slice(start, end) { return this.text.slice(this.toUtf16(start), this.toUtf16(end)); }
}

function graphemeBounds(text) {
  const bounds = new Set([0, text.length]);
  for (const g of GRAPHEMES.segment(text)) bounds.add(g.index);
  return bounds;
}

/**
 * Snap a UTF-16 selection [start, end) to whole words and trim surrounding spaces and
 * punctuation, as DUCView does. Returns null when the selection holds no word.
 */
export function snapToWords(text, start, end) {
  if (end < start) [start, end] = [end, start];
  let first = null, last = null;
  for (const seg of WORDS.segment(text)) {
    const segEnd = seg.index + seg.segment.length;
    if (segEnd <= start || seg.index >= end) continue;
    if (!seg.isWordLike) continue;
    if (first === null) first = seg.index;
    last = segEnd;
  }
  if (first === null) return null;
  // Words may begin or end with punctuation (e.g. "U.S."): trim only what lies outside words,
  // never splitting a grapheme (a base letter and its combining marks stay together).
  const bounds = graphemeBounds(text);
  let s = first, e = last;
  while (s < e && TRIM.test(text[s]) && bounds.has(s + 1)) s++;
  while (e > s && TRIM.test(text[e - 1]) && bounds.has(e - 1)) e--;
  return s < e ? { start: s, end: e } : null;
}

/** UTF-16 offsets of a DOM Range relative to the text content of ``container``. */
export function rangeOffsets(container, range) {
  if (!container.contains(range.startContainer) || !container.contains(range.endContainer)) return null;
  const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
  let offset = 0, start = null, end = null;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node === range.startContainer) start = offset + range.startOffset;
    if (node === range.endContainer) end = offset + range.endOffset;
    offset += node.data.length;
  }
  // A range may start or end on an element boundary rather than inside a text node.
  if (start === null) start = boundaryOffset(container, range.startContainer, range.startOffset);
  if (end === null) end = boundaryOffset(container, range.endContainer, range.endOffset);
  return start === null || end === null ? null : { start, end };
}

function boundaryOffset(container, node, childIndex) {
  const probe = document.createRange();
  probe.setStart(container, 0);
  probe.setEnd(node, childIndex);
  return probe.toString().length;
}

/**
 * The current selection inside ``container`` as code point offsets, snapped to words;
 * null when there is no usable selection there.
 */
export function selectedSpan(container, index) {
  const selection = window.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
  const raw = rangeOffsets(container, selection.getRangeAt(0));
  if (!raw) return null;
  const snapped = snapToWords(index.text, raw.start, raw.end);
  if (!snapped) return null;
  return { start: index.toCodePoints(snapped.start), end: index.toCodePoints(snapped.end) };
}

/**
 * Render ``index.text`` into ``container`` with highlights.
 * spans: [{id, start, end}] in code points (they may overlap). Each piece of text becomes a
 * <span class="seg"> whose data-ids lists the spans covering it ("" when none). Text is set with
 * textContent only: user text is never parsed as HTML.
 */
export function renderSpans(container, index, spans) {
  const cuts = new Set([0, index.text.length]);
  const u16 = spans.map((s) => ({ id: String(s.id), start: index.toUtf16(s.start), end: index.toUtf16(s.end) }));
  for (const s of u16) { cuts.add(s.start); cuts.add(s.end); }
  const points = [...cuts].sort((a, b) => a - b);
  const fragment = document.createDocumentFragment();
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    const el = document.createElement("span");
    el.className = "seg";
    const ids = u16.filter((s) => s.start <= a && s.end >= b).map((s) => s.id);
    el.dataset.ids = ids.join(" ");
    if (ids.length) el.classList.add("covered");
    el.textContent = index.text.slice(a, b);
    fragment.append(el);
  }
  container.replaceChildren(fragment);
}

/** Share of the text's non-space characters covered by at least one span (0..1). */
export function coverage(index, spans) {
  const covered = new Uint8Array(index.length);
  for (const s of spans) covered.fill(1, s.start, s.end);
  let total = 0, hit = 0, cp = 0;
  for (const ch of index.text) {
    if (!/\s/u.test(ch)) { total++; hit += covered[cp]; }
    cp++;
  }
  return total ? hit / total : 0;
}
