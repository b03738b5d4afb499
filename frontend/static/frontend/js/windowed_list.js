// A scrolling list that keeps only the rows near the viewport in the DOM.
//
// A pyramid of 1,000 SCUs is some 15,000 elements in its list: styling and laying them out took
// most of a key press's frame. Here the rows are described (key, shape, render) and only those
// within ``overscan`` pixels of the viewport are placed, between two spacers whose heights stand
// for the rest, so the scroll height stays right. Heights are measured by a ResizeObserver (after
// layout, never forcing one); rows not measured yet count the last height seen for their shape
// (e.g. "an SCU with 3 contributors"). The list must lay its rows out without collapsing margins
// (a flex column), so a row's height is its border box plus its margins.

const MARGINS = new Map(); // class name -> vertical margins (px) of rows of that class

function margins(element) {
  const key = element.className;
  if (!MARGINS.has(key)) {
    const style = getComputedStyle(element);
    MARGINS.set(key, parseFloat(style.marginTop) + parseFloat(style.marginBottom));
  }
  return MARGINS.get(key);
}

export class WindowedList {
  /** ``container``: the scrolling element (its children are managed here). */
  constructor(container, { overscan = 600, estimate = 32 } = {}) {
    this.container = container;
    this.overscan = overscan;
    this.estimate = estimate;
    this.rows = [];              // [{key, shape, render: () => Element}] in order
    this.positions = new Map();  // key -> index in rows
    this.heights = new Map();    // key -> measured height
    this.shapes = new Map();     // shape -> last measured height of a row of that shape
    this.offsets = new Float64Array(1);
    this.keyOf = new WeakMap();  // placed element -> key
    this.placed = new Set();
    this.viewTop = 0;
    this.viewHeight = 0;
    this.scrollQueued = false;   // the container scrolls to viewTop in the next frame
    this.ownScroll = null;       // the scrollTop this list set last (its scroll event is not the user's)
    this.revealing = null;       // key to keep in view while its neighbours get measured
    this.frame = 0;
    this.padding = parseFloat(getComputedStyle(container).paddingTop) || 0; // rows start below it
    this.top = this.spacer();
    this.bottom = this.spacer();
    this.observer = new ResizeObserver((entries) => this.measured(entries));
    new ResizeObserver(() => { this.viewHeight = container.clientHeight; this.place(); }).observe(container);
    container.addEventListener("scroll", () => {
      if (this.scrollQueued) return; // a scroll to viewTop is on its way
      const top = container.scrollTop;
      if (this.ownScroll !== null && Math.abs(top - this.ownScroll) < 1) { this.ownScroll = null; return; }
      this.viewTop = top;
      this.revealing = null; // the user scrolled: stop keeping a revealed row in view
      if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.place(); });
    }, { passive: true });
  }

  spacer() {
    const node = document.createElement("div");
    node.className = "window-spacer";
    node.setAttribute("aria-hidden", "true");
    return node;
  }

  /** Show ``rows`` (each {key, shape, render}); render() is called only for the rows placed. */
  setRows(rows) {
    const anchor = this.anchor();
    this.rows = rows;
    this.positions = new Map(rows.map((row, i) => [row.key, i]));
    const top = this.viewTop;
    this.layout(anchor);
    this.place();
    if (this.viewTop !== top) this.scrollTo(this.viewTop);
  }

  /** Drop the measured height of ``key`` (its content changed while it was not placed); all without a key. */
  forget(key) {
    if (key === undefined) this.heights.clear(); else this.heights.delete(key);
  }

  heightOf(row) {
    return this.heights.get(row.key) ?? this.shapes.get(row.shape) ?? this.estimate;
  }

  /** The row at the top of the viewport and how far above the viewport it starts. */
  anchor() {
    if (!this.rows.length) return null;
    const i = this.rowAt(this.viewTop);
    return { key: this.rows[i].key, above: this.viewTop - this.offsets[i] };
  }

  /**
   * Recompute the rows' offsets; with ``anchor``, the row at the top of the viewport stays where
   * it is on screen when rows above it change height or come and go (viewTop follows it; the
   * caller scrolls there: the browser's own scroll anchoring is off for this list).
   */
  layout(anchor = null) {
    const offsets = new Float64Array(this.rows.length + 1);
    for (let i = 0; i < this.rows.length; i++) offsets[i + 1] = offsets[i] + this.heightOf(this.rows[i]);
    this.offsets = offsets;
    const i = anchor ? this.positions.get(anchor.key) : undefined;
    if (i !== undefined) this.viewTop = Math.max(0, offsets[i] + anchor.above);
  }

  /** The first index whose row ends below ``y``. */
  rowAt(y) {
    let lo = 0, hi = this.rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.offsets[mid + 1] <= y) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  /** Put the rows near the viewport (and nothing else) in the container, in order. */
  place() {
    if (!this.viewHeight) this.viewHeight = this.container.clientHeight || 800;
    const n = this.rows.length;
    const first = n ? this.rowAt(this.viewTop - this.overscan) : 0;
    const last = n ? this.rowAt(this.viewTop + this.viewHeight + this.overscan) : -1;
    const wanted = [this.top];
    for (let i = first; i <= last; i++) {
      const node = this.rows[i].render();
      this.keyOf.set(node, this.rows[i].key);
      wanted.push(node);
    }
    wanted.push(this.bottom);
    this.top.style.height = `${this.offsets[first]}px`;
    this.bottom.style.height = `${this.offsets[n] - this.offsets[last + 1]}px`;
    // Remove what leaves first: the rows that stay are then in order and never moved (moving a row
    // would take the focus out of an editor in it).
    const now = new Set(wanted.slice(1, -1));
    for (const node of [...this.container.children]) if (node !== this.top && node !== this.bottom && !now.has(node)) node.remove();
    let cursor = this.container.firstChild;
    for (const node of wanted) {
      if (node === cursor) cursor = cursor.nextSibling;
      else this.container.insertBefore(node, cursor);
    }
    while (cursor) { const next = cursor.nextSibling; cursor.remove(); cursor = next; }
    for (const node of this.placed) if (!now.has(node)) this.observer.unobserve(node);
    for (const node of now) if (!this.placed.has(node)) this.observer.observe(node);
    this.placed = now;
  }

  measured(entries) {
    const anchor = this.anchor();
    let changed = false;
    for (const entry of entries) {
      const key = this.keyOf.get(entry.target);
      if (key === undefined || !entry.target.isConnected) continue;
      const height = entry.borderBoxSize[0].blockSize + margins(entry.target);
      const row = this.rows[this.positions.get(key)];
      if (row) { // the mean height of the rows of this shape seen so far: one odd row (an editor) moves no estimate much
        const seen = this.shapes.get(row.shape);
        this.shapes.set(row.shape, seen === undefined ? height : seen + (height - seen) / 8);
      }
      if (Math.abs((this.heights.get(key) ?? -1) - height) > 0.5) { this.heights.set(key, height); changed = true; }
    }
    if (!changed) return;
    const top = this.viewTop;
    this.layout(anchor);
    // Keep a revealed row in view without placing the rows in between: a row taken out and put
    // back loses the focus of an editor in it.
    if (this.revealing === null || !this.reveal(this.revealing, !this.scrollQueued)) {
      this.place();
      if (this.viewTop !== top && !this.scrollQueued) this.scrollTo(this.viewTop, true); // after layout: no frame shows the jump
    }
  }

  /**
   * Scroll so that the row ``key`` is in view (the least distance), placing it now. The scroll
   * itself is set in the next frame: setting scrollTop here would force a layout of the whole page
   * (the texts just patched included) inside the event handler; ``now`` where layout is fresh
   * anyway. Returns whether it placed rows.
   */
  reveal(key, now = false) {
    const i = this.positions.get(key);
    if (i === undefined) return false;
    const [top, bottom] = [this.offsets[i] + this.padding, this.offsets[i + 1] + this.padding];
    // Whole pixels, rounded towards the row (see scrollTo).
    let target = this.viewTop;
    if (top < this.viewTop) target = Math.floor(top);
    else if (bottom > this.viewTop + this.viewHeight) target = Math.min(Math.floor(top), Math.ceil(bottom - this.viewHeight));
    this.revealing = key;
    if (Math.abs(target - this.viewTop) < 0.5) return false;
    this.viewTop = target;
    this.place();
    this.scrollTo(target, now);
    return true;
  }

  /**
   * Scroll the container to ``top`` (viewTop already says it): in the next frame, or ``now`` (only
   * where layout is fresh anyway, e.g. in a ResizeObserver callback).
   */
  scrollTo(top, now = false) {
    top = Math.floor(top + 0.01); // the browser snaps scrollTop to whole pixels; rounding up would put a row aligned at the top half a pixel outside
    this.viewTop = top;
    if (now) { this.ownScroll = top; this.container.scrollTop = top; return; }
    if (this.scrollQueued) return;
    this.scrollQueued = true;
    requestAnimationFrame(() => {
      this.scrollQueued = false;
      this.ownScroll = this.viewTop; // where the rows are placed for by then
      this.container.scrollTop = this.viewTop;
    });
  }

  /** Whether the row ``key`` is in the list. */
  has(key) { return this.positions.has(key); }
}
