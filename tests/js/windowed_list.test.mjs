// The builder's windowed SCU list (frontend/static/frontend/js/windowed_list.js): only the rows
// near the viewport are in the DOM, between spacers standing for the rest; measured heights move
// the rows below them but not the row the user is reading; rows that stay are never moved (that
// would take the focus out of an editor in one). The DOM it needs is stood in for here: elements
// that keep their children in order, ResizeObserver and animation frames driven by the test.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

class Node {
  constructor(name = "div") { this.name = name; this.className = ""; this.style = {}; this.parent = null; this.children = []; this.attributes = {}; this.inserted = 0; }
  setAttribute(name, value) { this.attributes[name] = value; }
  get isConnected() { return this.parent !== null; }
  get firstChild() { return this.children[0] ?? null; }
  get nextSibling() { return this.parent ? this.parent.children[this.parent.children.indexOf(this) + 1] ?? null : null; }
  remove() { if (this.parent) { this.parent.children.splice(this.parent.children.indexOf(this), 1); this.parent = null; } }
  insertBefore(node, before) {
    node.remove();
    const at = before ? this.children.indexOf(before) : this.children.length;
    this.children.splice(at, 0, node);
    node.parent = this;
    node.inserted++;
  }
}

let observers, frames;
class ResizeObserver {
  constructor(callback) { this.callback = callback; this.watched = new Set(); observers.push(this); }
  observe(node) { this.watched.add(node); }
  unobserve(node) { this.watched.delete(node); }
}
globalThis.document = { createElement: (name) => new Node(name) };
globalThis.getComputedStyle = () => ({ paddingTop: "0", marginTop: "0", marginBottom: "0" });
globalThis.ResizeObserver = ResizeObserver;
globalThis.requestAnimationFrame = (callback) => { frames.push(callback); return frames.length; };

const { WindowedList } = await import("../../frontend/static/frontend/js/windowed_list.js");

function runFrames() { const now = frames; frames = []; for (const callback of now) callback(); }

/** A list of ``n`` rows in a container 800 px high; render() makes each row's element once. */
function listOf(n, options = {}) {
  const container = new Node("scroller");
  container.clientHeight = 800;
  container.scrollTop = 0;
  container.listeners = {};
  container.addEventListener = (type, listener) => { container.listeners[type] = listener; };
  const list = new WindowedList(container, { overscan: 600, estimate: 32, ...options });
  const elements = new Map();
  const renders = [];
  const rows = Array.from({ length: n }, (_, i) => ({
    key: `scu-${i}`, shape: "one contributor",
    render: () => { renders.push(i); if (!elements.has(i)) { const node = new Node(); node.className = "scu"; node.row = i; elements.set(i, node); } return elements.get(i); },
  }));
  list.setRows(rows);
  return { list, container, elements, renders, rows };
}

const placedRows = (container) => container.children.slice(1, -1).map((node) => node.row);
const range = (first, last) => Array.from({ length: last - first + 1 }, (_, i) => first + i);
const rowsObserver = () => observers.find((o) => o.watched.size);

function measure(list, sizes) {
  const observer = rowsObserver();
  const entries = [...observer.watched].filter((node) => node.row in sizes)
    .map((node) => ({ target: node, borderBoxSize: [{ blockSize: sizes[node.row] }] }));
  observer.callback(entries);
}

beforeEach(() => { observers = []; frames = []; });

test("only the rows within the overscan of the viewport are rendered, between spacers for the rest", () => {
  const { container, renders } = listOf(1000);
  // viewport [0, 800) + 600 px below: rows 0..43 (32 px each) touch it
  assert.deepEqual(placedRows(container), range(0, 43));
  assert.deepEqual([...new Set(renders)].sort((a, b) => a - b), range(0, 43));
  const [top, bottom] = [container.children[0], container.children.at(-1)];
  assert.equal(top.style.height, "0px");
  assert.equal(bottom.style.height, `${(1000 - 44) * 32}px`, "the scroll height stays that of all rows");
  assert.equal(top.attributes["aria-hidden"], "true");
});

test("scrolling places the rows of the new viewport in the next frame", () => {
  const { container } = listOf(1000);
  container.scrollTop = 15992;
  container.listeners.scroll();
  assert.deepEqual(placedRows(container), range(0, 43), "nothing before the frame");
  runFrames();
  // [15992 - 600, 15992 + 800 + 600] = [481 * 32, 543.5 * 32]: rows 481..543 (480 ends where it starts)
  assert.deepEqual(placedRows(container), range(481, 543));
  assert.equal(container.children[0].style.height, `${481 * 32}px`);
});

test("rows that stay placed are never moved when the window slides", () => {
  const { container, elements } = listOf(1000);
  const kept = elements.get(30);
  const insertions = kept.inserted;
  container.scrollTop = 320;
  container.listeners.scroll();
  runFrames();
  assert.deepEqual(placedRows(container), range(0, 53));
  assert.equal(kept.inserted, insertions, "row 30 was not taken out and put back");
});

test("a measured height moves the rows below it, and the row being read stays where it is on screen", () => {
  const { list, container } = listOf(1000);
  container.scrollTop = 320;   // row 10 at the top of the viewport
  container.listeners.scroll();
  runFrames();
  measure(list, Object.fromEntries(placedRows(container).map((row) => [row, 32])));
  assert.equal(list.viewTop, 320, "heights as estimated: nothing moves");
  measure(list, { 2: 100 });   // a row above it turns out 68 px taller
  assert.equal(list.offsets[11], 11 * 32 + 68);
  assert.equal(list.viewTop, 320 + 68, "the viewport follows row 10");
  assert.equal(container.scrollTop, 388, "scrolled at once (layout is fresh in the observer)");
});

test("rows not measured yet count the heights seen for their shape", () => {
  const { list } = listOf(100);
  measure(list, { 0: 48 });
  assert.equal(list.heightOf(list.rows[99]), 48);
  measure(list, { 1: 56 });   // the shape's estimate moves an eighth of the way: one odd row moves it little
  assert.equal(list.heightOf(list.rows[99]), 49);
});

test("reveal scrolls the least distance to bring a row into view", () => {
  const { list, container } = listOf(1000);
  assert.equal(list.reveal("scu-900"), true);
  // row 900 ends at 901 * 32: its bottom aligns with the viewport's
  assert.equal(list.viewTop, 901 * 32 - 800);
  assert.ok(placedRows(container).includes(900));
  runFrames();
  assert.equal(container.scrollTop, 901 * 32 - 800);
  assert.equal(list.reveal("scu-900"), false, "already in view");
  assert.equal(list.reveal("no such row"), false);
});

test("new rows keep the row at the top of the viewport in place", () => {
  const { list, container, rows } = listOf(1000);
  container.scrollTop = 3200;   // row 100 at the top
  container.listeners.scroll();
  runFrames();
  const extra = Array.from({ length: 5 }, (_, i) => ({ key: `new-${i}`, shape: "one contributor", render: () => new Node() }));
  list.setRows([...extra, ...rows]);
  assert.equal(list.viewTop, 3200 + 5 * 32);
  assert.ok(list.has("new-0") && list.has("scu-999") && !list.has("scu-1000"));
});
