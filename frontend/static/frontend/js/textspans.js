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

/** A DOM Range inside ``container`` as code point offsets snapped to words; null when it holds no word there. */
function spanOfRange(container, index, range) {
  const raw = rangeOffsets(container, range);
  if (!raw) return null;
  const snapped = snapToWords(index.text, raw.start, raw.end);
  if (!snapped) return null;
  return { start: index.toCodePoints(snapped.start), end: index.toCodePoints(snapped.end) };
}

/**
 * The current selection inside ``container`` as code point offsets, snapped to words;
 * null when there is no usable selection there.
 */
export function selectedSpan(container, index) {
  const selection = window.getSelection();
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
  return spanOfRange(container, index, selection.getRangeAt(0));
}

/** The caret position under a viewport point as a collapsed Range, or null. */
function caretAt(x, y) {
  if (document.caretPositionFromPoint) {
    const position = document.caretPositionFromPoint(x, y);
    if (!position) return null;
    const range = document.createRange();
    range.setStart(position.offsetNode, position.offset);
    return range;
  }
  return document.caretRangeFromPoint?.(x, y) ?? null;
}

/**
 * The text dragged over between two viewport points ({x, y}: mousedown and mouseup), snapped to
 * words, as code point offsets; null when it holds no word of ``container``. Shift+drag needs it:
 * the browser extends whatever caret it left elsewhere (another text, the SCU list) instead of
 * selecting what was dragged over.
 */
export function draggedSpan(container, index, from, to) {
  const a = caretAt(from.x, from.y), b = caretAt(to.x, to.y);
  if (!a || !b || !container.contains(a.startContainer) || !container.contains(b.startContainer)) return null;
  const range = document.createRange();
  if (a.compareBoundaryPoints(Range.START_TO_START, b) <= 0) { range.setStart(a.startContainer, a.startOffset); range.setEnd(b.startContainer, b.startOffset); }
  else { range.setStart(b.startContainer, b.startOffset); range.setEnd(a.startContainer, a.startOffset); }
  return range.collapsed ? null : spanOfRange(container, index, range);
}

/** The pieces of [from, to) (UTF-16) cut by ``u16`` spans: [{a, b, ids}] (ids in the spans' order). */
function pieces(u16, from, to) {
  const cuts = new Set([from, to]);
  for (const s of u16) { if (s.start > from && s.start < to) cuts.add(s.start); if (s.end > from && s.end < to) cuts.add(s.end); }
  const points = [...cuts].sort((x, y) => x - y);
  const byStart = [...u16].sort((x, y) => x.start - y.start);
  const out = [];
  let next = 0, active = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [a, b] = [points[i], points[i + 1]];
    while (next < byStart.length && byStart[next].start <= a) active.push(byStart[next++]);
    active = active.filter((s) => s.end > a); // ends are cut points: past a means reaching b
    if (active.length > 1) active.sort((x, y) => x.order - y.order);
    out.push({ a, b, ids: active.map((s) => s.id) });
  }
  return out;
}

/**
 * A text shown with highlights, kept in step with a list of spans: ``update(spans)`` replaces only
 * the segments where the spans changed, so a text with hundreds of spans is not rebuilt (nor its
 * text shaped again) for one new span. spans: [{id, start, end}] in code points (they may
 * overlap). Each piece of text is a <span class="seg"> whose data-ids lists the spans covering it
 * ("" when none). Text is set with textContent only: user text is never parsed as HTML.
 */
export class SpanView {
  constructor(container, index) {
    this.container = container;
    this.index = index;
    this.keys = null;      // "id:start:end" of the spans shown
    this.segments = [];    // [{el, a, b, ids}] in text order (UTF-16 offsets)
  }

  /** Show ``spans``; returns true when something was repainted. */
  update(spans) {
    const index = this.index;
    const u16 = spans.map((s, order) => ({ id: String(s.id), order, start: index.toUtf16(s.start), end: index.toUtf16(s.end) }));
    const keys = new Set(u16.map((s) => `${s.id}:${s.start}:${s.end}`));
    if (this.keys === null) {
      this.segments = pieces(u16, 0, index.text.length).map((p) => this.segment(p));
      this.container.replaceChildren(...this.segments.map((s) => s.el));
      this.keys = keys;
      return true;
    }
    if (!this.segments.length) { this.keys = null; return this.update(spans); }
    let lo = Infinity, hi = -Infinity; // the stretch of text whose spans changed
    const widen = (key) => { const [, start, end] = key.split(":").map(Number); lo = Math.min(lo, start); hi = Math.max(hi, end); };
    for (const key of keys) if (!this.keys.has(key)) widen(key);
    for (const key of this.keys) if (!keys.has(key)) widen(key);
    this.keys = keys;
    if (lo > hi) return false;
    let first = this.segments.findIndex((s) => s.b > lo);
    let last = first;
    while (last + 1 < this.segments.length && this.segments[last + 1].a < hi) last++;
    // Widen to cuts that remain (an old cut no span makes any more must disappear with its segment).
    const cuts = new Set([0, index.text.length]);
    for (const s of u16) { cuts.add(s.start); cuts.add(s.end); }
    while (!cuts.has(this.segments[first].a)) first--;
    while (!cuts.has(this.segments[last].b)) last++;
    const [from, to] = [this.segments[first].a, this.segments[last].b];
    const fresh = pieces(u16.filter((s) => s.start < to && s.end > from).map((s) => ({ ...s, start: Math.max(s.start, from), end: Math.min(s.end, to) })), from, to)
      .map((p) => this.segment(p));
    this.segments[last].el.after(...fresh.map((s) => s.el));
    for (let i = first; i <= last; i++) this.segments[i].el.remove();
    this.segments.splice(first, last - first + 1, ...fresh);
    return true;
  }

  segment({ a, b, ids }) {
    const el = document.createElement("span");
    el.className = ids.length ? "seg covered" : "seg";
    el.dataset.ids = ids.join(" ");
    el.textContent = this.index.text.slice(a, b);
    return { el, a, b, ids };
  }

  /** The segments covered by span ``id``. */
  segmentsOf(id) {
    const key = String(id);
    return this.segments.filter((s) => s.ids.includes(key)).map((s) => s.el);
  }
}

/** Render ``index.text`` into ``container`` with highlights (a SpanView shown once). */
export function renderSpans(container, index, spans) {
  new SpanView(container, index).update(spans);
}

const NON_SPACE = new WeakMap(); // TextIndex -> {mask, total}: which code points are not white space

/** Share of the text's non-space characters covered by at least one span (0..1). */
export function coverage(index, spans) {
  if (!NON_SPACE.has(index)) {
    const mask = new Uint8Array(index.length);
    let cp = 0, total = 0;
    for (const ch of index.text) { if (!/\s/u.test(ch)) { mask[cp] = 1; total++; } cp++; }
    NON_SPACE.set(index, { mask, total });
  }
  const { mask, total } = NON_SPACE.get(index);
  const covered = new Uint8Array(index.length);
  for (const s of spans) covered.fill(1, s.start, s.end);
  let hit = 0;
  for (let cp = 0; cp < covered.length; cp++) hit += covered[cp] & mask[cp];
  return total ? hit / total : 0;
}
