// The pyramid builder: select text in a reference, make SCUs, add contributors and parts, merge,
// move, split, relabel. Local first: an action is applied to the document in memory and painted
// at once (only the SCUs and texts that changed are repainted); the server's answer confirms it,
// or refuses it, and then the change is rolled back and the reason shown. Writes still carry the
// revision (no lost updates), wait in the session's queue while offline, and are recorded in the
// server's history; undo/redo are painted at once the same way and applied on the server.
import { ActionError, DocumentSession, bindStatus, readDocument } from "./session.js";
import { SpanView, TextIndex, coverage, draggedSpan, selectedSpan } from "./textspans.js";
import { $, $$, el, plural, sayInStatus, showBanner, hideBanner, isTyping, openChooser, closeChooser, bindTextSize } from "./ui.js";
import { RuleBroken, applyAction, findContributor, findScu, matchIds, scusTouchedBy, statesOf, temporaryId } from "./pyramid_model.js";
import { FindError, RegexFinder } from "./find.js";
import { WindowedList } from "./windowed_list.js";

const root = document.getElementById("builder");
const API = root.dataset.api;
const PYRAMID = Number(root.dataset.pyramid);
const session = new DocumentSession(root.dataset.fullUrl);
bindStatus(session, $(".save-status", root), $(".retry", root));
bindTextSize(root);

const QUICK_KEY = "pyramid.builder.quick";
const WIDE_KEY = "pyramid.builder.wide";

const state = {
  doc: null,                   // what the page shows: the last confirmed document and the actions since
  base: null,                  // the last document read whole from the server
  log: [],                     // actions applied since ``base`` (confirmed or still on their way)
  version: 0,                  // bumped on every change of ``doc`` (the regex finder's corpus)
  indexes: new Map(),          // reference id -> TextIndex
  selectedScu: null,           // scu id
  selectedContributor: null,   // contributor id
  checked: new Set(),          // scu ids checked for merging
  selection: null,             // {reference, start, end} in code points: kept until used
  filter: "",
  regex: false,                // the filter is a regular expression (run in a worker)
  found: null,                 // Set of scu ids the regular expression matched; null: no regex filter
  sort: "weight",              // weight | label | uid | position
  collapseAll: false,
  toggled: new Set(),          // SCUs folded the other way than collapseAll says
  editing: null,               // scu id whose label is being edited
  commenting: null,            // {kind: "scu" | "contributor", id} whose comment is being edited
  draft: null,                 // {key, value, start, end, focused}: the open editor's text survives repaints
  undo: [],                    // [{action, before, after}]: this page's own changes, newest last
  redo: [],
  quick: readFlag(QUICK_KEY),  // quick building: a drag makes an SCU at once (Q; remembered in this browser)
  wide: readFlag(WIDE_KEY),    // the texts side by side, the SCU list hidden (W; remembered in this browser)
};

/** A mode this browser remembers, as it remembers the text size (``toggleQuick``, ``toggleWide``). */
function readFlag(key) {
  try { return localStorage.getItem(key) === "1"; } catch { return false; } // storage refused: off
}

function storeFlag(key, on) {
  try { localStorage.setItem(key, on ? "1" : "0"); } catch { /* storage refused: for this page only */ }
}

// Server ids of objects created in this page, learnt from the answers and from re-reads.
const known = { scus: new Map(), contributors: new Map(), parts: new Map() };

function latestId(kind, id) {
  let seen = 0;
  while (known[kind].has(id) && seen++ < 100) id = known[kind].get(id);
  return id;
}

function serverId(kind, id) {
  id = latestId(kind, id);
  if (id < 0) throw new ActionError("This change builds on one the server refused, so it was not sent.");
  return id;
}

/** The uid the server gave the SCU ``action`` created: in the action (for replays), the page and the undo stacks. */
function learnUid(action, uid) {
  action.uid = uid;
  const scu = findScu(state.doc, action.scu);
  if (scu) scu.uid = uid;
  for (const entry of [...state.undo, ...state.redo])
    for (const states of [entry.before, entry.after]) { const saved = states.get(action.scu); if (saved) saved.uid = uid; }
}

function learnIds(map) {
  for (const kind of Object.keys(known)) for (const [from, to] of map[kind]) known[kind].set(from, to);
}

/** ``action`` with the ids of objects the server has created since put in (for replaying it on ``base``). */
function resolved(action) {
  const copy = { ...action };
  if (copy.scu !== undefined) copy.scu = latestId("scus", copy.scu);
  if (copy.contributor !== undefined) copy.contributor = latestId("contributors", copy.contributor);
  if (copy.sources) copy.sources = copy.sources.map((id) => latestId("scus", id));
  if (copy.states) copy.states = renameStates(copy.states, { scus: known.scus, contributors: known.contributors, parts: known.parts }, latestId);
  return copy;
}

// ---------------------------------------------------------------------------- loading and confirming

function adopt(doc) {
  unsettled.clear();
  state.base = doc;
  state.doc = structuredClone(doc);
  state.log = [];
  state.version++;
  for (const ref of doc.references) if (!state.indexes.has(ref.id)) state.indexes.set(ref.id, new TextIndex(ref.text));
}

async function load() {
  adopt(await session.load());
  keepValidSelection();
  paint(null);
  renderScores();
}

/** States (statesOf) with ids renamed: ``map`` {scus, contributors, parts} or, with ``follow``, the known ids. */
function renameStates(states, map, follow = null) {
  const id = (kind, x) => (follow ? follow(kind, x) : map[kind].get(x) ?? x);
  return new Map([...states].map(([key, scu]) => {
    const copy = scu && structuredClone(scu);
    if (copy) {
      copy.id = id("scus", copy.id);
      for (const c of copy.contributors) { c.id = id("contributors", c.id); for (const p of c.parts) p.id = id("parts", p.id); }
    }
    return [id("scus", key), copy];
  }));
}

/** Rename ids in the page's state and undo stacks (objects the server created or recreated). */
function rename(map) {
  const scu = (id) => map.scus.get(id) ?? id;
  const contributor = (id) => map.contributors.get(id) ?? id;
  state.selectedScu = state.selectedScu === null ? null : scu(state.selectedScu);
  state.selectedContributor = state.selectedContributor === null ? null : contributor(state.selectedContributor);
  state.checked = new Set([...state.checked].map(scu));
  state.toggled = new Set([...state.toggled].map(scu));
  if (state.editing !== null) state.editing = scu(state.editing);
  if (assist.scu !== null) assist.scu = scu(assist.scu);
  if (state.commenting) state.commenting = { ...state.commenting, id: (state.commenting.kind === "scu" ? scu : contributor)(state.commenting.id) };
  if (state.draft) state.draft.key = state.draft.key.replace(/(-?\d+)$/, (id) => String((state.draft.key.startsWith("comment:contributor") ? contributor : scu)(Number(id))));
  for (const entry of [...state.undo, ...state.redo]) { entry.before = renameStates(entry.before, map); entry.after = renameStates(entry.after, map); }
}

/**
 * Read the whole document after the queued writes: learn the ids the server gave, and when no
 * write is pending any more, show exactly what the server holds.
 */
async function refresh() {
  const server = await session.refresh();
  const map = matchIds(state.doc, server);
  learnIds(map);
  if (session.pending) { state.base.scores = server.scores; renderScores(); return; } // the writes still on their way are rebased on the next read
  rename(map);
  adopt(server);
  keepValidSelection();
  paint(null);
  renderScores();
}

let refreshQueued = null;
function scheduleRefresh() {
  if (!refreshQueued) refreshQueued = refresh().catch(() => {}).finally(() => { refreshQueued = null; settle(); });
}

function keepValidSelection() {
  if (state.selectedScu !== null && !findScu(state.doc, state.selectedScu)) state.selectedScu = null;
  if (state.selectedContributor !== null && !findContributor(state.doc, state.selectedContributor)) state.selectedContributor = null;
  for (const id of [...state.checked]) if (!findScu(state.doc, id)) state.checked.delete(id);
  if (state.editing !== null && !findScu(state.doc, state.editing)) state.editing = null;
}

/** Busy (tests and benchmarks wait on it) while anything is queued: writes or the re-read after them. */
function settle() {
  if (session.queue.length || refreshQueued) root.dataset.busy = "1";
  else delete root.dataset.busy;
}

/** Rebuild the shown document from the last confirmed one and the actions still standing. */
function replay() {
  const doc = structuredClone(state.base);
  const standing = [];
  for (const action of state.log) {
    try { applyAction(doc, resolved(action), state.indexes); standing.push(action); } catch (error) { if (!(error instanceof RuleBroken)) throw error; }
  }
  state.doc = doc;
  state.log = standing;
  state.version++;
  keepValidSelection();
}

const unsettled = new Set(); // uids of SCUs the server confirmed while later writes were still on their way

/**
 * The server confirmed ``action``: its answer's delta (docs/editing-api.md, the SCUs it touched,
 * whole, by uid) becomes part of the confirmed document; once nothing is on its way any more the
 * page takes the server's versions of those SCUs (their ids: new SCUs, undo/redo recreate them).
 */
function onConfirmed(action, answer) {
  state.log = state.log.filter((a) => a !== action);
  const delta = answer?.delta;
  const base = state.base;
  if (delta) {
    learnIds(matchIds(state.doc, { scus: delta.scus }));
    const removed = new Set(delta.removed_scus);
    const fresh = new Map(delta.scus.map((scu) => [scu.uid, scu]));
    base.scus = base.scus.filter((scu) => !removed.has(scu.uid) && !fresh.has(scu.uid));
    base.scus.push(...delta.scus);
    base.revision = delta.revision;
    for (const score of base.scores ?? []) score.current = false;
    for (const uid of [...removed, ...fresh.keys()]) unsettled.add(uid);
  } else { // a delete answers 204, without a body: it did what the page did
    try { applyAction(base, resolved(action), state.indexes); } catch (error) { if (!(error instanceof RuleBroken)) throw error; }
    for (const id of scusTouchedBy(state.doc, action)) { const scu = findScu(state.doc, latestId("scus", id)); if (scu?.uid != null) unsettled.add(scu.uid); }
  }
  if (!session.pending && !state.log.length) settleIds();
}

/** Take the confirmed versions of the SCUs confirmed lately (all writes are in): same content, server ids. */
function settleIds() {
  const uids = new Set(unsettled);
  unsettled.clear();
  const local = state.doc.scus.filter((scu) => uids.has(scu.uid));
  const server = state.base.scus.filter((scu) => uids.has(scu.uid));
  const map = matchIds({ scus: local }, { scus: server });
  learnIds(map);
  rename(map);
  const touched = new Set([...local.map((scu) => scu.id), ...server.map((scu) => scu.id)]);
  const references = referencesOf(new Map(local.map((scu) => [scu.id, scu])), new Map(server.map((scu) => [scu.id, scu])));
  state.doc.scus = state.doc.scus.filter((scu) => !uids.has(scu.uid)).concat(server.map((scu) => structuredClone(scu)));
  state.doc.revision = state.base.revision;
  state.version++;
  keepValidSelection();
  paint(touched, references);
}

/**
 * Apply ``action`` here and now, then send ``request`` ({method, url, body}; url/body may be
 * functions, called when sent). ``learn(answer)`` records the ids the answer gives.
 * ``reread``: the answer does not say everything the page needs (e.g. ids of recreated objects).
 * ``said``: what the action did, for the status line (and for the undo that takes it back);
 * ``removed``: it removed something, so the line says how to get it back; ``hint``: what to do next.
 */
function perform(action, request, { learn = null, reread = false, undoable = true, said = "", removed = false, hint = "" } = {}) {
  const keys = scusTouchedBy(state.doc, action);
  const before = statesOf(state.doc, keys);
  try {
    applyAction(state.doc, action, state.indexes);
  } catch (error) {
    if (!(error instanceof RuleBroken)) throw error;
    showBanner(root, error.message);
    return null;
  }
  state.version++;
  state.log.push(action);
  const after = statesOf(state.doc, keys);
  if (undoable) { state.undo.push({ action, before, after, said }); state.redo = []; }
  hideBanner(root);
  say([said, removed ? "Ctrl+Z to undo." : "", hint].filter(Boolean).join(" "));
  paint(new Set(keys), referencesOf(before, after));
  const sent = session.send(request.method, request.url, request.body);
  root.dataset.busy = "1";
  sent.then((answer) => {
    learn?.(answer);
    onConfirmed(action, answer);
    if ((reread && !answer?.delta) || scoresOpen()) scheduleRefresh();
  }).catch((error) => {
    if (error instanceof ActionError && error.fields?.changes) return; // a conflict: the session's "conflict" handler reloads
    state.log = state.log.filter((a) => a !== action);
    state.undo = state.undo.filter((entry) => entry.action !== action);
    state.redo = state.redo.filter((entry) => entry.action !== action);
    rename(known); // what the server confirmed meanwhile carries its ids in ``base``
    replay();
    paint(null);
    showBanner(root, `Not saved, so undone here: ${error.message || error}`);
  }).finally(settle);
  return sent;
}

/** The status line (ui.js sayInStatus): what the last key or click did, or why it did nothing. */
const say = (message) => sayInStatus(root, message);

// ---------------------------------------------------------------------------- painting

const refViews = new Map(); // reference id -> {card, text, signature}
const scuViews = new Map(); // scu id -> {item, signature}
const tierViews = new Map(); // weight -> heading

/**
 * Repaint what changed. ``touched``: ids of the SCUs whose content may have changed;
 * ``references``: ids of the texts whose highlights may have changed (null: any).
 */
function paint(touched = new Set(), references = touched === null ? null : new Set()) {
  renderTexts(references);
  renderScus(touched);
  highlight();
}

/** Repaint after the text selection moved from ``previous`` (null or {reference, ...}) to state.selection. */
function paintSelection(previous) {
  paint(new Set(), new Set([previous?.reference, state.selection?.reference].filter((id) => id !== undefined)));
}

/** The references an SCU's states (statesOf) have parts in. */
function referencesOf(...states) {
  const ids = new Set();
  for (const map of states) for (const scu of map.values()) for (const c of scu?.contributors ?? []) for (const p of c.parts) ids.add(p.reference);
  return ids;
}

/** A text segment's id that is a contributor's (not "sel", the text selection, nor "p0", a proposal). */
const isContributorId = (id) => /^-?\d+$/.test(id);

function contributorSpans(references) {
  const byReference = new Map(state.doc.references.filter((r) => !references || references.has(r.id)).map((r) => [r.id, []]));
  for (const scu of state.doc.scus)
    for (const c of scu.contributors)
      for (const p of c.parts) byReference.get(p.reference)?.push({ id: c.id, start: p.start, end: p.end });
  return byReference;
}

function renderTexts(references = null) {
  const container = $(".texts", root);
  const spansOf = contributorSpans(references);
  state.doc.references.forEach((ref, position) => {
    if (references && !references.has(ref.id) && refViews.has(ref.id)) return;
    const index = state.indexes.get(ref.id);
    const spans = spansOf.get(ref.id);
    const sel = state.selection?.reference === ref.id ? [{ id: "sel", start: state.selection.start, end: state.selection.end }] : [];
    let view = refViews.get(ref.id);
    if (!view) {
      const text = el("div", { class: "ref-text", "data-ref": ref.id, lang: "" });
      const share = el("span", { class: "coverage", title: "Share of the text covered by contributors" });
      const card = el("article", { class: "ref", "data-ref": ref.id }, el("header", {}, el("h2", {}, `Reference ${ref.external_id}`), share), text);
      view = { card, share, spans: new SpanView(text, index) };
      refViews.set(ref.id, view);
    }
    if (container.children[position] !== view.card) container.insertBefore(view.card, container.children[position] ?? null);
    if (!view.spans.update([...spans, ...sel, ...proposalSpans(ref.id)])) return;
    const percent = Math.round(coverage(index, spans) * 100);
    const bar = el("span", { class: "bar" }, el("span", { class: `fill p${Math.round(percent / 5) * 5}` }));
    view.share.replaceChildren(bar, `${percent}% covered`);
  });
}

/** An SCU as the status line names it: SCU 12 “The dam burst” (a new one has no number yet). */
function scuName(scu, label = scu.label) {
  return `${scu.uid == null ? "the new SCU" : `SCU ${scu.uid}`} “${label}”`;
}

function referenceName(id) {
  return state.doc.references.find((r) => r.id === id)?.external_id ?? "?";
}

function referencePosition() {
  return new Map(state.doc.references.map((r, i) => [r.id, i]));
}

/** Where an SCU first appears in the texts: [reference position, start]. */
function textPosition(scu, positions) {
  let best = [Infinity, Infinity];
  for (const c of scu.contributors) for (const p of c.parts) {
    const here = [positions.get(p.reference) ?? Infinity, p.start];
    if (here[0] < best[0] || (here[0] === best[0] && here[1] < best[1])) best = here;
  }
  return best;
}

const COLLATOR = new Intl.Collator(); // far quicker than localeCompare over 1,000 labels

function sortedScus() {
  const scus = [...state.doc.scus];
  const byLabel = (a, b) => COLLATOR.compare(a.label, b.label);
  if (state.sort === "label") return scus.sort((a, b) => byLabel(a, b) || (a.uid ?? Infinity) - (b.uid ?? Infinity));
  if (state.sort === "uid") return scus.sort((a, b) => (a.uid ?? Infinity) - (b.uid ?? Infinity));
  if (state.sort === "position") {
    const positions = referencePosition();
    const keys = new Map(scus.map((s) => [s.id, textPosition(s, positions)]));
    return scus.sort((a, b) => keys.get(a.id)[0] - keys.get(b.id)[0] || keys.get(a.id)[1] - keys.get(b.id)[1] || byLabel(a, b));
  }
  return scus.sort((a, b) => b.weight - a.weight || byLabel(a, b));
}

function matchesFilter(scu) {
  if (state.found) return state.found.has(scu.id) || scu.id < 0 && state.found.has(known.scus.get(scu.id));
  if (!state.filter || state.regex) return true;
  const needle = state.filter.toLowerCase();
  return scu.label.toLowerCase().includes(needle) || scu.contributors.some((c) => c.label.toLowerCase().includes(needle));
}

function isCollapsed(id) { return state.collapseAll !== state.toggled.has(id); }

const scuList = new WindowedList($(".scu-list", root));
let shownIds = []; // ids of the SCUs the list shows (filtered), in its order

/** The list's row of an SCU; its shape names what decides its height before it is measured. */
function scuRow(scu) {
  const collapsed = isCollapsed(scu.id);
  return { key: `scu:${scu.id}`, shape: collapsed ? "scu:collapsed" : `scu:${scu.contributors.length}`, render: () => scuView(scu) };
}

/**
 * Lay out the SCU list: ordered, filtered, with weight headings; only the rows near the viewport
 * are built and placed (WindowedList). ``touched``: ids of SCUs whose content may have changed
 * (null: any), so their items are compared again when next placed.
 */
function renderScus(touched = new Set()) {
  const scus = sortedScus();
  const present = new Set(scus.map((scu) => scu.id));
  for (const [id, view] of scuViews) {
    if (!present.has(id)) scuViews.delete(id);
    else if (touched === null || touched.has(id)) view.stale = true; // its height is measured again when placed
  }
  const shown = scus.filter(matchesFilter);
  shownIds = shown.map((scu) => scu.id);
  const rows = [];
  if (state.sort === "weight") {
    const tiers = new Map();
    for (const scu of scus) tiers.set(scu.weight, (tiers.get(scu.weight) ?? 0) + 1);
    let tier = null;
    for (const scu of shown) {
      if (scu.weight !== tier) {
        tier = scu.weight;
        const weight = tier;
        rows.push({ key: `tier:${weight}`, shape: "tier", render: () => tierHeading(weight, tiers.get(weight)) });
      }
      rows.push(scuRow(scu));
    }
  } else rows.push(...shown.map(scuRow));
  if (!scus.length) rows.push(messageRow(state.quick ? "No SCUs yet. Drag over text in a reference: quick building makes an SCU of it." : "No SCUs yet. Select text in a reference and press N."));
  else if (!shown.length) rows.push(messageRow("No SCU matches the filter."));
  scuList.setRows(rows);
  const total = scus.length;
  scuList.container.dataset.scus = String(total);
  $(".counts", root).textContent = `${shown.length === total ? "" : `${shown.length} of `}${total} SCU${total === 1 ? "" : "s"}`;
}

function tierHeading(weight, count) {
  let heading = tierViews.get(weight);
  if (!heading) { heading = el("h3", { class: "tier" }); tierViews.set(weight, heading); }
  const text = `Weight ${weight} · ${count} SCU${count === 1 ? "" : "s"}`;
  if (heading.dataset.text !== text) {
    heading.dataset.text = text;
    heading.replaceChildren(`Weight ${weight}`, el("span", { class: "muted" }, ` · ${count} SCU${count === 1 ? "" : "s"}`));
  }
  return heading;
}

const messages = new Map(); // text -> the <p> saying it
function messageRow(text) {
  if (!messages.has(text)) messages.set(text, el("p", { class: "empty" }, text));
  return { key: `message:${text}`, shape: "message", render: () => messages.get(text) };
}

/**
 * The list item of an SCU, rebuilt only when what it shows changed: its content (compared only
 * when it was touched since: a pyramid of 1,000 SCUs is not serialised at every key press) or the
 * page's state about it (selected, checked, folded, being edited).
 */
function scuView(scu) {
  const selected = scu.id === state.selectedScu;
  const ui = `${selected}|${selected && state.selectedContributor}|${state.checked.has(scu.id)}|${isCollapsed(scu.id)}|${state.editing === scu.id}|` +
    `${state.commenting && (state.commenting.kind === "scu" ? state.commenting.id === scu.id : scu.contributors.some((c) => c.id === state.commenting.id))}`;
  const view = scuViews.get(scu.id);
  const content = !view || view.stale ? JSON.stringify(scu) : view.content;
  if (view && view.ui === ui && view.content === content) { view.stale = false; return view.item; }
  const item = scuElement(scu);
  if (view?.item.isConnected) { repainting = true; view.item.replaceWith(item); repainting = false; }
  scuViews.set(scu.id, { item, ui, content, stale: false });
  return item;
}

let repainting = false; // an editor removed by a repaint must not save on its way out

function scuElement(scu) {
  const selected = scu.id === state.selectedScu;
  const collapsed = isCollapsed(scu.id);
  const item = el("div", {
    class: `scu${selected ? " selected" : ""}${state.checked.has(scu.id) ? " checked" : ""}${collapsed ? " collapsed" : ""}`,
    "data-id": scu.id, draggable: "true", "aria-current": String(selected),
  });
  const check = el("input", { type: "checkbox", title: "Check for merging (X)", "aria-label": `Check SCU ${scu.uid ?? ""} for merging` });
  check.checked = state.checked.has(scu.id);
  const fold = el("button", { type: "button", class: "fold", "aria-expanded": String(!collapsed),
    title: collapsed ? "Show the contributors (O)" : "Hide the contributors (O)", "aria-label": collapsed ? "Expand" : "Collapse" }, collapsed ? "▸" : "▾");
  const label = state.editing === scu.id ? labelEditor(scu) : el("span", { class: "label", title: "Double-click or press E to relabel" }, scu.label);
  item.append(el("div", { class: "scu-head" }, fold, check, el("span", { class: "weight", title: "Weight" }, String(scu.weight)), label,
    scu.comment ? commentIcon(scu.comment) : ""));
  if (state.commenting?.kind === "scu" && state.commenting.id === scu.id) item.append(commentEditor(`comment:scu:${scu.id}`, scu.comment, (text) => saveComment("scu", scu.id, scu.comment, text)));
  else if (scu.comment) item.append(el("p", { class: "comment" }, scu.comment));
  if (collapsed) return item;
  const contributors = el("ul", { class: "contributors" });
  for (const c of scu.contributors) {
    const li = el("li", { class: `contrib${c.id === state.selectedContributor ? " selected" : ""}`, "data-id": c.id, draggable: "true", title: c.comment || "" },
      el("span", { class: "ref-tag" }, referenceName(c.reference)), el("span", { class: "contrib-text" }, c.label));
    if (c.legacy_issue) li.append(el("span", { class: "legacy", title: c.legacy_issue }, "legacy"));
    if (c.review_note) li.append(el("span", { class: "review", title: c.review_note }, "review"));
    if (c.comment) li.append(commentIcon(c.comment));
    contributors.append(li);
    if (state.commenting?.kind === "contributor" && state.commenting.id === c.id)
      contributors.append(el("li", { class: "comment-row" }, commentEditor(`comment:contributor:${c.id}`, c.comment, (text) => saveComment("contributor", c.id, c.comment, text))));
  }
  item.append(contributors);
  return item;
}

/** A speech-bubble mark drawn in CSS (no emoji font needed), named for screen readers. */
function commentIcon(comment) {
  return el("span", { class: "has-comment", role: "img", "aria-label": `Comment: ${comment}`, title: comment });
}

/** Keep what is typed in an editor (and its caret) when a repaint rebuilds it. */
function keepDraft(key, field, initial) {
  const draft = state.draft?.key === key ? state.draft : null;
  field.value = draft ? draft.value : initial;
  const store = () => { state.draft = { key, value: field.value, start: field.selectionStart, end: field.selectionEnd }; };
  field.addEventListener("input", store);
  field.addEventListener("select", store);
  field.addEventListener("keyup", store);
  queueMicrotask(() => {
    if (!field.isConnected) return;
    field.focus({ preventScroll: true }); // the list revealed it (a scroll here would force a layout)
    if (draft) field.setSelectionRange(draft.start, draft.end); else if (field.select) field.select();
  });
}

function labelEditor(scu) {
  const input = el("input", { class: "label-edit", "aria-label": `Label of SCU ${scu.uid ?? ""}` });
  keepDraft(`label:${scu.id}`, input, scu.label);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); saveLabel(scu.id, input.value); }
    if (event.key === "Escape") { event.preventDefault(); state.editing = null; state.draft = null; paint(); }
    event.stopPropagation();
  });
  input.addEventListener("blur", () => {
    if (!repainting && input.isConnected && state.editing === scu.id) { const value = input.value; whenPressEnds(() => { if (state.editing === scu.id) saveLabel(scu.id, value); }); }
  });
  return input;
}

/**
 * A mouse press that takes the focus from a label field (right after N, a click on an SCU or a
 * contributor in the list) must not lose its click: saving the label repaints the list, and a row
 * rebuilt between the press and the release gets no click. So the save waits until the press ends
 * (its click handled first); a blur without a press (the window left, Tab) saves at once.
 */
let pressing = false;
let afterPress = [];
function whenPressEnds(work) { if (pressing) afterPress.push(work); else work(); }
function pressEnded() {
  if (!pressing) return;
  pressing = false;
  const work = afterPress;
  afterPress = [];
  if (work.length) setTimeout(() => { for (const w of work) w(); }, 0); // after the click this release makes
}
document.addEventListener("pointerdown", (event) => { if (event.button === 0) pressing = true; }, true);
for (const type of ["pointerup", "pointercancel", "dragend"]) document.addEventListener(type, pressEnded, true);

function commentEditor(key, value, save) {
  const box = el("textarea", { class: "comment-edit", rows: "2", placeholder: "Comment (Enter to save, Shift+Enter for a new line, Esc to cancel)", "aria-label": "Comment" });
  keepDraft(key, box, value || "");
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); save(box.value); }
    if (event.key === "Escape") { event.preventDefault(); state.commenting = null; state.draft = null; paint(); }
    event.stopPropagation();
  });
  return box;
}

function scoresOpen() { return $(".scores", root).open; }

let scoreTimer = null;
function renderScores() {
  const scores = state.base?.scores ?? [];
  const body = $(".scores tbody", root);
  body.replaceChildren();
  const fmt = (v) => (v === null || v === undefined ? "—" : v.toFixed(4));
  for (const s of scores)
    body.append(el("tr", { class: s.current ? "" : "stale" }, el("td", {}, s.peer), el("td", {}, s.version || s.annotator || "—"),
      el("td", {}, s.current ? fmt(s.modified) : "updating…"), el("td", {}, s.current ? fmt(s.original) : "updating…")));
  const updating = scores.some((s) => !s.current);
  const delayed = state.base?.scores_delayed;  // why stale scores cannot be recomputed now (e.g. Redis unreachable)
  $(".scores-state", root).textContent = updating ? (delayed ? `· out of date: ${delayed}` : "· updating…") : scores.length ? "· up to date" : "";
  clearTimeout(scoreTimer);
  if (updating && scoresOpen()) scoreTimer = setTimeout(scheduleRefresh, 1500);
}

let lit = []; // segments highlighted for the selected SCU

function segmentsOf(id) {
  return [...refViews.values()].flatMap((view) => view.spans.segmentsOf(id));
}

function highlight() {
  for (const seg of lit) seg.classList.remove("hl", "hl-contrib", "proposed", "proposed-current");
  lit = [];
  const scu = state.selectedScu === null ? null : findScu(state.doc, state.selectedScu);
  for (const c of scu?.contributors ?? []) {
    for (const seg of segmentsOf(c.id)) {
      seg.classList.add("hl");
      if (c.id === state.selectedContributor) seg.classList.add("hl-contrib");
      lit.push(seg);
    }
  }
  for (const seg of segmentsOf("sel")) seg.classList.add("pending");
  shown().forEach((_, k) => {
    for (const seg of segmentsOf(`p${k}`)) {
      seg.classList.add("proposed");
      if (k === assist.current) seg.classList.add("proposed-current");
      if (!seg.dataset.ids.split(" ").some(isContributorId)) seg.classList.remove("covered"); // proposed, not yet in the pyramid
      lit.push(seg);
    }
  });
  for (const button of $$("[data-action]", root)) {
    const a = button.dataset.action;
    if (a === "new-scu") button.disabled = !state.selection;
    if (a === "add-contributor") button.disabled = !(state.selection && state.selectedScu !== null);
    if (a === "add-part") button.disabled = !(state.selection && state.selectedContributor !== null);
    if (a === "merge") button.disabled = !(state.selectedScu !== null && [...state.checked].some((id) => id !== state.selectedScu));
  }
  const contributors = scu ? orderedContributors(scu) : [];
  const at = contributors.findIndex((c) => c.id === state.selectedContributor);
  $(".step-text", root).textContent = !scu ? "no SCU selected" : at === -1 ? plural(contributors.length, "contributor") : `contributor ${at + 1} of ${contributors.length}`;
  for (const button of $$("[data-step]", root)) button.disabled = !contributors.length;
}

// ---------------------------------------------------------------------------- selection

function select(scuId, contributorId = null, { scrollText = true } = {}) {
  if (state.selectedScu === scuId && state.selectedContributor === contributorId) return; // re-rendering would eat a double-click
  state.selectedScu = scuId;
  state.selectedContributor = contributorId;
  say(""); // a reason given for a key that did nothing no longer holds
  renderScus();
  highlight();
  reveal(scuId, contributorId, scrollText);
  proposeFor(scuId);
}

/** Scroll the SCU into view in the list (and its contributor, or first one, in the texts). */
function reveal(scuId, contributorId = null, scrollText = true) {
  scuList.reveal(`scu:${scuId}`);
  const scu = findScu(state.doc, scuId);
  const first = contributorId ?? scu?.contributors[0]?.id;
  if (scrollText && first !== undefined && first !== null) segmentsOf(first)[0]?.scrollIntoView({ block: "nearest" });
}

/** The SCU's contributors in text order (reference, then start), as DUCView's < > walks them. */
function orderedContributors(scu) {
  const positions = referencePosition();
  const key = (c) => [positions.get(c.reference) ?? Infinity, Math.min(...c.parts.map((p) => p.start))];
  return [...scu.contributors].sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1]);
}

function step(by) {
  const scu = state.selectedScu === null ? null : findScu(state.doc, state.selectedScu);
  if (!scu) { say("Select an SCU first; < and > then step through its contributors in the texts."); return; }
  const contributors = orderedContributors(scu);
  if (!contributors.length) { say("The selected SCU has no contributors to step through."); return; }
  const at = contributors.findIndex((c) => c.id === state.selectedContributor);
  const next = contributors[at === -1 ? (by > 0 ? 0 : contributors.length - 1) : (at + by + contributors.length) % contributors.length];
  select(scu.id, next.id, { scrollText: false });
  segmentsOf(next.id)[0]?.scrollIntoView({ block: "center" });
}

/**
 * Esc clears the selection one level at a time, so a later Del never removes what the user
 * thought was no longer selected: the text selection and the merge checks with the first press,
 * and the selected contributor, else the selected SCU. The status line says what is left.
 */
function clearOneLevel() {
  const previous = state.selection;
  const had = [previous && "the text selection", state.checked.size && "the merge checks"].filter(Boolean);
  state.selection = null;
  state.checked.clear();
  hideBanner(root);
  let left = "";
  if (state.selectedContributor !== null) {
    state.selectedContributor = null;
    had.push("the selected contributor");
    left = " Its SCU stays selected: Esc again clears it.";
  } else if (state.selectedScu !== null) {
    state.selectedScu = null;
    had.push("the selected SCU");
  }
  say(had.length ? `Cleared ${had.join(", ")}.${left}` : "Nothing is selected.");
  if (state.selectedScu === null && assist.scu !== null) { proposeFor(null); return; } // repaints the texts, the selection's too
  paintSelection(previous);
}

function toggleChecked(id) {
  if (state.checked.has(id)) state.checked.delete(id); else state.checked.add(id);
  renderScus();
  highlight();
}

function toggleFold(id) {
  if (state.toggled.has(id)) state.toggled.delete(id); else state.toggled.add(id);
  scuList.forget(`scu:${id}`);
  renderScus();
  highlight();
}

function foldAll() {
  state.collapseAll = !state.collapseAll;
  state.toggled.clear();
  $(".fold-all", root).textContent = state.collapseAll ? "Expand" : "Collapse";
  scuList.forget();
  renderScus();
  highlight();
}

let dragStart = null; // {x, y, text} of the last mousedown in a reference text

function onTextMouseDown(event) {
  const text = event.target.closest(".ref-text");
  dragStart = text ? { x: event.clientX, y: event.clientY, text } : null;
}

/**
 * A drag ends: the text selected becomes the page's selection. A drag released past the end of its
 * text (in the card around it, where people end a selection "to the end") is still that text's:
 * were it ignored, the browser would show a selection that N does not see, and the label typed
 * after N would be taken as commands (S splitting the selected contributor, E relabelling).
 */
function onTextMouseUp(event) {
  const text = event.target.closest(".ref-text") ?? dragStart?.text;
  if (!text) return;
  const reference = Number(text.dataset.ref);
  const index = state.indexes.get(reference);
  const span = event.shiftKey && dragStart?.text === text
    ? draggedSpan(text, index, dragStart, { x: event.clientX, y: event.clientY })
    : selectedSpan(text, index);
  if (span) {
    const previous = state.selection;
    state.selection = { reference, ...span };
    window.getSelection().removeAllRanges();
    hideBanner(root);
    if (event.shiftKey && state.selectedContributor !== null) { addPart(); return; }
    if (!event.shiftKey && (event.ctrlKey || event.metaKey)) { // Ctrl+select (⌘ on a Mac): A at once
      if (state.selectedScu !== null) { addContributor(); return; }
      say("Ctrl+select adds the text to the selected SCU, and none is selected: the text is only selected (N makes a new SCU of it).");
      paintSelection(previous);
      return;
    }
    if (!event.shiftKey && state.quick) { newScu({ quick: true }); return; }
    say(event.shiftKey ? "Shift+select adds a part to the selected contributor, and none is selected: the text is only selected (A adds it to the selected SCU)." : "");
    paintSelection(previous);
    return;
  }
  // A click (no selection) on highlighted text selects its SCU, with a chooser when several overlap.
  const seg = event.target.closest(".seg");
  const ids = (seg?.dataset.ids || "").split(" ").filter(isContributorId).map(Number); // not the selection, nor a proposal
  const owners = new Map();
  for (const id of ids) { const found = findContributor(state.doc, id); if (found && !owners.has(found.scu.id)) owners.set(found.scu.id, [found.scu, id]); }
  const scus = [...owners.values()];
  if (scus.length === 1) select(scus[0][0].id, scus[0][1]);
  else if (scus.length > 1)
    openChooser(root, event, scus.map(([scu, contributorId]) => ({ label: `(${scu.weight}) ${scu.label}`, pick: () => select(scu.id, contributorId) })));
}

// ---------------------------------------------------------------------------- actions

function selectionText() {
  return selectionTextOf(state.selection);
}

function selectionTextOf(s) {
  return s ? state.indexes.get(s.reference).slice(s.start, s.end) : "";
}

function requireSelection() {
  if (!state.selection) { say("Select some text in a reference first."); return false; }
  return true;
}

/**
 * A new SCU from the selected text, its contributor selected. By N: its label (the text) opens for
 * editing; by a drag in quick building (``quick``): the label stays the text, as DUCView's New SCU
 * leaves it, so the next drag or key is the builder's (E relabels).
 */
function newScu({ quick = false } = {}) {
  if (!requireSelection()) return;
  const s = state.selection;
  const label = selectionText().replace(/\s+/gu, " ").trim(); // a selection across lines is one label line
  const action = { kind: "create_scu", scu: temporaryId(), contributor: temporaryId(), part: temporaryId(), label, reference: s.reference, start: s.start, end: s.end };
  const previous = [state.selectedScu, state.selectedContributor];
  state.selection = null;
  state.editing = quick ? null : action.scu;
  state.draft = null;
  // Its contributor selected, as A selects the one it adds: Shift+select adds a part at once, no click first.
  [state.selectedScu, state.selectedContributor] = [action.scu, action.contributor]; // painted with the action: one repaint
  const sent = perform(action, { method: "POST", url: `${API}scus/`, body: { pyramid: PYRAMID, label, reference: s.reference, parts: [{ start: s.start, end: s.end }] } }, {
    reread: true, // the answer names the SCU, not its contributor
    learn: (answer) => { known.scus.set(action.scu, answer.id); learnUid(action, answer.uid); if (assist.scu === action.scu) fetchProposals(); },
    said: `New SCU “${label}” from reference ${referenceName(s.reference)}.`,
    hint: quick ? "Ctrl+drag adds a contributor to it, Shift+drag a part; E relabels it, Ctrl+Z takes it back." : "Type its label; Enter keeps it.",
  });
  if (sent) { reveal(action.scu, null, false); proposeFor(action.scu); }
  else { state.selection = s; state.editing = null; [state.selectedScu, state.selectedContributor] = previous; }
}

function addContributor() {
  if (!requireSelection()) return;
  const scu = state.selectedScu === null ? null : findScu(state.doc, state.selectedScu);
  if (!scu) { say("Select the SCU to add the text to (click it in the list)."); return; }
  const s = state.selection;
  const twin = scu.contributors.find((c) => c.reference === s.reference && !c.legacy_issue);
  if (twin) {
    showBanner(root, `SCU ${scu.uid ?? ""} already has a contributor from reference ${referenceName(s.reference)}: an SCU takes at most one contributor per reference. ` +
      "Select that contributor and press P to add the text as a part of it, or choose another SCU.");
    return;
  }
  const action = { kind: "add_contributor", scu: scu.id, contributor: temporaryId(), part: temporaryId(), reference: s.reference, start: s.start, end: s.end };
  const previous = state.selectedContributor;
  state.selection = null;
  state.selectedContributor = action.contributor; // the new contributor is selected: Shift+select adds a part to it
  const text = selectionTextOf(s);
  const said = `Added “${text}” (reference ${referenceName(s.reference)}) to ${scuName(scu)}; it is selected: Shift+select adds a part to it.`;
  const sent = perform(action, { method: "POST", url: `${API}contributors/`, body: () => ({ scu: serverId("scus", action.scu), reference: s.reference, parts: [{ start: s.start, end: s.end }] }) },
    { learn: (answer) => known.contributors.set(action.contributor, answer.id), said });
  if (!sent) { state.selection = s; state.selectedContributor = previous; paintSelection(null); }
}

function addPart() {
  if (!requireSelection()) return;
  const found = state.selectedContributor === null ? null : findContributor(state.doc, state.selectedContributor);
  if (!found) { say("Select the contributor to extend (click it in the SCU list)."); return; }
  const { contributor } = found;
  if (contributor.reference !== state.selection.reference) {
    showBanner(root, `The selected contributor lies in reference ${referenceName(contributor.reference)}; a part must come from the same reference.`);
    paint();
    return;
  }
  const s = state.selection;
  const action = { kind: "add_part", contributor: contributor.id, part: temporaryId(), start: s.start, end: s.end };
  state.selection = null;
  const said = `Added “${selectionTextOf(s)}” as a part of the contributor from reference ${referenceName(s.reference)}.`;
  if (!perform(action, { method: "POST", url: () => `${API}contributors/${serverId("contributors", action.contributor)}/parts/`, body: { start: s.start, end: s.end } },
    { learn: (answer) => known.parts.set(action.part, answer.part.id), said })) { state.selection = s; paintSelection(null); }
}

/** Quick building on or off (Q): a drag then makes a new SCU at once, so an SCU costs one gesture per part. */
function toggleQuick() {
  state.quick = !state.quick;
  storeFlag(QUICK_KEY, state.quick);
  paintModes();
  if (state.doc) renderScus(); // the empty list's hint says how to make an SCU
  say(state.quick ? "Quick building on: a drag makes a new SCU of its text at once; Ctrl+drag adds the text to the selected SCU, Shift+drag adds a part. Q turns it off."
    : "Quick building off: a drag only selects text (N, A and P use it; Ctrl+drag still adds to the selected SCU).");
}

/**
 * The texts side by side or not (W): one column per reference across the page, the SCU list (and
 * the proposals' list) hidden, so that a scroll shows the same stretch of every reference and an
 * SCU's contributors are mostly in sight together. The status line still says what each gesture
 * did, the texts highlight the selected SCU and the proposals (Y, Shift+Y, 1-9 and R still work).
 */
function toggleWide() {
  state.wide = !state.wide;
  storeFlag(WIDE_KEY, state.wide);
  paintModes();
  say(state.wide ? "The texts side by side, the SCU list hidden (W shows it again); the texts highlight the selected SCU and the proposals."
    : "The SCU list is back beside the texts (W hides it again).");
}

function paintModes() {
  $("[data-action=quick]", root).setAttribute("aria-pressed", String(state.quick));
  $("[data-action=wide]", root).setAttribute("aria-pressed", String(state.wide));
  root.classList.toggle("quick", state.quick);
  root.classList.toggle("wide", state.wide);
}

function merge(targetId = state.selectedScu, sources = [...state.checked]) {
  sources = sources.filter((id) => id !== targetId);
  if (targetId === null || !sources.length) { say("Check the SCUs to merge (X) and select the one to merge them into."); return; }
  const action = { kind: "merge", scu: targetId, sources };
  const target = findScu(state.doc, targetId);
  const gone = sources.map((id) => scuName(findScu(state.doc, id))).join(", ");
  const said = `Merged ${gone} into ${scuName(target)} (${plural(sources.length, "SCU")} removed).`;
  const previous = [state.selectedScu, state.selectedContributor, new Set(state.checked)];
  [state.selectedScu, state.selectedContributor] = [targetId, null];
  state.checked.clear();
  if (perform(action, { method: "POST", url: () => `${API}scus/${serverId("scus", targetId)}/merge/`, body: () => ({ sources: sources.map((id) => serverId("scus", id)) }) }, { said, removed: true }))
    reveal(targetId);
  else { [state.selectedScu, state.selectedContributor, state.checked] = previous; paint(); }
}

function moveContributor(contributorId, targetScuId) {
  const found = findContributor(state.doc, contributorId);
  const target = findScu(state.doc, targetScuId);
  if (!found || !target) return;
  if (found.scu.id === targetScuId) { say("The contributor already belongs to that SCU: drop it on another SCU to move it there."); return; }
  const action = { kind: "move", contributor: contributorId, scu: targetScuId };
  perform(action, { method: "POST", url: () => `${API}contributors/${serverId("contributors", contributorId)}/move/`, body: () => ({ scu: serverId("scus", targetScuId) }) },
    { said: `Moved the contributor from reference ${referenceName(found.contributor.reference)} to ${scuName(target)}.` });
}

function split() {
  if (state.selectedContributor === null) { say("Select a contributor to split off."); return; }
  const action = { kind: "split", contributor: state.selectedContributor, scu: temporaryId() };
  const { scu: from, contributor } = findContributor(state.doc, action.contributor);
  const said = `Split the contributor “${contributor.label}” (reference ${referenceName(contributor.reference)}) off ${scuName(from)} into a new SCU.`;
  const previous = [state.selectedScu, state.selectedContributor];
  [state.selectedScu, state.editing, state.draft] = [action.scu, action.scu, null];
  const sent = perform(action, { method: "POST", url: () => `${API}contributors/${serverId("contributors", action.contributor)}/split/`, body: {} }, {
    learn: (answer) => { known.scus.set(action.scu, answer.scu.id); learnUid(action, answer.scu.uid); }, said, hint: "Type its label; Enter keeps it.",
  });
  if (sent) reveal(action.scu, action.contributor);
  else { [state.selectedScu, state.selectedContributor] = previous; state.editing = null; paint(); }
}

function saveLabel(scuId, label) {
  state.editing = null;
  state.draft = null;
  const scu = findScu(state.doc, scuId);
  label = label.trim();
  if (!scu || !label || label === scu.label) { paint(); return; }
  perform({ kind: "update_scu", scu: scuId, label }, { method: "PATCH", url: () => `${API}scus/${serverId("scus", scuId)}/`, body: { label } },
    { said: `Relabelled ${scuName(scu, label)} (was “${scu.label}”).` });
}

function startComment() {
  if (state.selectedContributor !== null) state.commenting = { kind: "contributor", id: state.selectedContributor };
  else if (state.selectedScu !== null) state.commenting = { kind: "scu", id: state.selectedScu };
  else { say("Select an SCU or a contributor to comment on."); return; }
  state.draft = null;
  paint();
  reveal(state.selectedScu, null, false); // its editor is built once the list places it
}

function saveComment(kind, id, old, comment) {
  state.commenting = null;
  state.draft = null;
  if (comment === (old || "")) { paint(); return; }
  const said = `${comment ? "Commented" : "Removed the comment of"} the ${kind === "scu" ? "SCU" : "contributor"}${comment ? `: “${comment}”` : ""}.`;
  if (kind === "scu") perform({ kind: "update_scu", scu: id, comment }, { method: "PATCH", url: () => `${API}scus/${serverId("scus", id)}/`, body: { comment } }, { said });
  else perform({ kind: "update_contributor", contributor: id, comment }, { method: "PATCH", url: () => `${API}contributors/${serverId("contributors", id)}/`, body: { comment } }, { said });
}

function copyLabel() {
  const found = state.selectedContributor === null ? null : findContributor(state.doc, state.selectedContributor);
  if (!found) { say("Select a contributor whose text should become the label."); return; }
  const { scu, contributor } = found;
  perform({ kind: "update_scu", scu: scu.id, label: contributor.label }, { method: "PATCH", url: () => `${API}scus/${serverId("scus", scu.id)}/`, body: { label: contributor.label } },
    { said: `Relabelled ${scuName(scu, contributor.label)} with its contributor's text (was “${scu.label}”).` });
}

function remove() {
  if (state.selectedContributor !== null) {
    const id = state.selectedContributor;
    const { scu, contributor } = findContributor(state.doc, id);
    state.selectedContributor = null;
    perform({ kind: "remove_contributor", contributor: id }, { method: "DELETE", url: () => `${API}contributors/${serverId("contributors", id)}/` },
      { said: `Removed the contributor “${contributor.label}” (reference ${referenceName(contributor.reference)}) from ${scuName(scu)}.`, removed: true });
  } else if (state.selectedScu !== null) {
    const scu = findScu(state.doc, state.selectedScu);
    const count = scu.contributors.length;
    if (window.confirm(`Delete SCU ${scu.uid ?? ""} “${scu.label}” and its ${count} contributor${count === 1 ? "" : "s"}? (Undo with Ctrl+Z)`))
      perform({ kind: "delete_scu", scu: scu.id }, { method: "DELETE", url: () => `${API}scus/${serverId("scus", scu.id)}/` },
        { said: `Deleted ${scuName(scu)} and its ${plural(count, "contributor")}.`, removed: true });
  } else say("Nothing to delete: select a contributor or an SCU first.");
}

/**
 * Undo/redo this page's own last change at once (its recorded states put back), then on the
 * server, which recreates what it restores (new ids: re-read). Without a change of this page to
 * go back to (e.g. after a reload) the server's history decides, and the page shows its answer.
 */
function history(kind) {
  const [from, to] = kind === "undo" ? [state.undo, state.redo] : [state.redo, state.undo];
  const request = { method: "POST", url: `${API}pyramids/${PYRAMID}/${kind}/`, body: {} };
  const [done, again] = kind === "undo" ? ["Undone", "Ctrl+Shift+Z redoes it"] : ["Redone", "Ctrl+Z undoes it"];
  const entry = from.pop();
  if (!entry) { // the server's history decides: the page says what it did once it has read the result
    const sent = session.send(request.method, request.url, request.body);
    root.dataset.busy = "1";
    say(`${kind === "undo" ? "Undoing" : "Redoing"} the last change kept on the server…`);
    sent.then(() => { say(`${done}: the last change kept on the server (${again}).`); scheduleRefresh(); },
      (error) => { say(""); if (!error.fields?.changes) showBanner(root, error.message); }).finally(settle);
    return;
  }
  const action = { kind: "restore", states: kind === "undo" ? entry.before : entry.after };
  const said = `${done}: ${entry.said || "the last change"} (${again}).`;
  const sent = perform(action, request, { reread: true, undoable: false, said });
  if (sent) { to.push(entry); sent.then(reproposeAfterUndo, () => {}); } else from.push(entry);
}

function move(by) {
  const ids = shownIds;
  if (!ids.length) { say(state.doc.scus.length ? "No SCU matches the filter: there is nothing to walk through." : "No SCUs yet: select text in a reference and press N."); return; }
  const at = ids.indexOf(state.selectedScu);
  select(ids[Math.max(0, Math.min(ids.length - 1, at === -1 ? 0 : at + by))]);
}

// ---------------------------------------------------------------------------- assistance (issue 30 §2)

/**
 * Proposals (the server's ``assistance``): for the selected SCU, its likely contributor in each
 * other reference, ranked, painted in the texts and listed below the SCUs; with U, new SCUs for the
 * text no contributor covers. Y accepts the ringed one (1-9: the one of that number), R rejects it,
 * Shift+Y accepts every one still shown in one action (one undo step). Nothing is added without a
 * key or a click, and a dataset that builds unassisted (``data-assisted``) asks for nothing.
 */
const ASSISTED = root.dataset.assisted === "1";
const assist = {
  scu: null,    // the SCU (page id) whose contributor proposals are shown
  items: [],    // its proposals still open, best first: {reference, parts, text, confidence, why}
  scus: null,   // proposed new SCUs while shown (U), else null: {label, contributors, confidence}
  current: 0,   // the ringed proposal: an index into what is shown
  asked: 0,     // bumped by every request and change of SCU: a late answer is dropped
  timer: null,
};

/** What the panel shows: the proposed SCUs while U shows them, else the selected SCU's open proposals. */
function shown() {
  if (assist.scus) return assist.scus;
  const scu = assist.scu === null ? null : findScu(state.doc, assist.scu);
  if (!scu || assist.scu !== state.selectedScu) return [];
  const taken = new Set(scu.contributors.map((c) => c.reference)); // added meanwhile (A): no longer proposed
  return assist.items.filter((p) => !taken.has(p.reference));
}

/** The texts' spans of what is shown: ids p0, p1, ... (every contributor of a proposed SCU under its number). */
function proposalSpans(reference) {
  if (!state.doc) return [];
  return shown().flatMap((p, k) => (p.contributors ?? [p]).filter((c) => c.reference === reference).flatMap((c) => c.parts.map((part) => ({ id: `p${k}`, ...part }))));
}

/** Show the proposals of ``scuId`` (null: none); read once the SCU exists on the server. */
function proposeFor(scuId) {
  if (!ASSISTED || assist.scu === scuId && !assist.scus) return;
  assist.scu = scuId;
  assist.items = [];
  assist.scus = null;
  assist.current = 0;
  assist.asked++;
  clearTimeout(assist.timer);
  paintProposals();
  if (scuId !== null) { assist.timer = setTimeout(fetchProposals, 150); root.dataset.proposing = "1"; } // J/K walking the list asks only where it stops
  else delete root.dataset.proposing;
}

async function fetchProposals() {
  const scuId = assist.scu;
  const id = scuId === null ? -1 : latestId("scus", scuId);
  if (id < 0) return; // not on the server yet: asked again when its creation is confirmed (newScu)
  const asked = ++assist.asked;
  try {
    const { body } = await readDocument(`${API}scus/${id}/proposals/`);
    if (asked !== assist.asked || assist.scus) return;
    assist.items = body;
    assist.current = 0;
  } catch { if (asked === assist.asked) delete root.dataset.proposing; return; } // no proposals (the SCU deleted meanwhile, assistance turned off): building goes on
  delete root.dataset.proposing; // shown (tests and the construction bench wait for it)
  paintProposals();
}

/** An undo or redo may take accepted proposals back (or bring them again): the shown SCU's are read anew. */
function reproposeAfterUndo() {
  if (!ASSISTED || assist.scu === null || assist.scus || latestId("scus", assist.scu) < 0) return;
  assist.asked++;
  root.dataset.proposing = "1";
  fetchProposals();
}

async function toggleScuProposals() {
  if (!ASSISTED) { say("Assistance is off for this dataset: the builder proposes nothing."); return; }
  if (assist.scus) { assist.scus = null; assist.current = 0; paintProposals(); say("Proposed SCUs hidden (U shows them again)."); return; }
  const asked = ++assist.asked;
  say("Looking for SCUs in the text no contributor covers yet…");
  let body;
  try { ({ body } = await readDocument(`${API}pyramids/${PYRAMID}/proposals/`)); } catch (error) { say(`No proposed SCUs: ${error.message}`); return; }
  if (asked !== assist.asked) return;
  assist.scus = body;
  assist.current = 0;
  paintProposals();
  say(body.length ? `${plural(body.length, "proposed SCU")} for uncovered text: Y accepts the ringed one (then edit its label, merge with M, split with S), R rejects it; U hides them.`
    : "No proposed SCUs: no two references say the same in the text still uncovered.");
}

const percent = (confidence) => `${Math.round(confidence * 100)}%`;

/** The panel below the SCU list, and the proposals' highlights in the texts (repainted once a press ends:
 * texts rebuilt under a drag would lose the selection being made). */
function paintProposals() {
  const panel = $(".proposals", root);
  if (!panel) return;
  const items = shown();
  assist.current = Math.max(0, Math.min(assist.current, items.length - 1));
  const scu = assist.scu === null ? null : findScu(state.doc, assist.scu);
  panel.hidden = !items.length && !assist.scus;
  panel.classList.toggle("of-scus", Boolean(assist.scus));
  const title = $(".proposals-title", panel);
  title.textContent = assist.scus ? `Proposed SCUs for uncovered text · ${items.length}`
    : scu ? `Proposed for ${scu.uid == null ? "the new SCU" : `SCU ${scu.uid}`} · ${items.length}` : "";
  title.title = assist.scus || !scu ? "" : `Likely contributors of ${scuName(scu)} in the other references, most likely first`;
  $("[data-assist=accept-all]", panel).hidden = Boolean(assist.scus);
  $("[data-assist=hide]", panel).hidden = !assist.scus;
  $(".proposal-list", panel).replaceChildren(...items.map((p, k) => {
    const what = p.contributors
      ? [el("span", { class: "proposal-text" }, el("span", { class: "proposal-label" }, p.label),
        el("span", { class: "muted" }, ` · references ${p.contributors.map((c) => referenceName(c.reference)).join(", ")}`))]
      : [el("span", { class: "ref-tag" }, referenceName(p.reference)), el("span", { class: "proposal-text" }, p.text)];
    const spans = (p.contributors ?? [p]).map((c) => `${c.reference}:${c.parts.map((part) => `${part.start}-${part.end}`).join(",")}`);
    return el("li", { class: `proposal${k === assist.current ? " current" : ""}`, "data-k": String(k), "data-spans": spans.join(" "), title: p.why ?? "" },
      el("span", { class: "rank", "aria-label": `Proposal ${k + 1}` }, String(k + 1)), ...what,
      el("span", { class: "confidence muted", title: "How confident the proposal is" }, percent(p.confidence)),
      el("button", { type: "button", class: "quiet", "data-assist": "accept", title: k === assist.current ? "Accept (Y)" : `Accept (${k + 1})`, "aria-label": `Accept proposal ${k + 1}` }, "✓"),
      el("button", { type: "button", class: "quiet", "data-assist": "reject", title: k === assist.current ? "Reject (R)" : "Reject", "aria-label": `Reject proposal ${k + 1}` }, "✕"));
  }));
  whenPressEnds(() => paint(new Set(), null));
}

function leftAfter() {
  const n = shown().length;
  return n ? `${plural(n, "proposal")} left: Y accepts the ringed one, R rejects it.` : "No proposals left.";
}

function noProposal() {
  say(!ASSISTED ? "Assistance is off for this dataset: the builder proposes nothing."
    : assist.scus ? "No proposed SCU there." : "No proposal there: select an SCU (or N) to see its proposed contributors; U proposes new SCUs.");
}

/** Accepted contributors as the action carries them (page ids for the new objects) and as the API reads them. */
function acceptedOf(proposals) {
  const contributors = proposals.map((p) => ({ contributor: temporaryId(), reference: p.reference, parts: p.parts.map((part) => ({ part: temporaryId(), start: part.start, end: part.end })) }));
  const body = contributors.map((c) => ({ reference: c.reference, parts: c.parts.map(({ start, end }) => ({ start, end })) }));
  return { contributors, body };
}

function acceptProposal(k) {
  const items = shown();
  const proposal = items[k];
  if (!proposal) { noProposal(); return; }
  if (assist.scus) { acceptScu(proposal); return; }
  const scu = findScu(state.doc, assist.scu);
  const { contributors, body } = acceptedOf([proposal]);
  const action = { kind: "accept_contributors", scu: scu.id, contributors };
  assist.items = assist.items.filter((p) => p !== proposal);
  assist.current = Math.min(k, items.length - 2);
  const said = `Accepted the proposed contributor “${proposal.text}” (reference ${referenceName(proposal.reference)}) into ${scuName(scu)}.`;
  if (!perform(action, { method: "POST", url: () => `${API}scus/${serverId("scus", scu.id)}/accept/`, body: { contributors: body } }, { said, hint: leftAfter() }))
    assist.items.splice(k, 0, proposal);
  paintProposals();
}

function acceptAll() {
  const items = shown();
  if (assist.scus || !items.length) { say(assist.scus ? "Shift+Y accepts a SCU's proposed contributors; proposed SCUs are accepted one by one (Y)." : "No proposals to accept."); return; }
  const scu = findScu(state.doc, assist.scu);
  const { contributors, body } = acceptedOf(items);
  const action = { kind: "accept_contributors", scu: scu.id, contributors };
  const references = items.map((p) => referenceName(p.reference)).join(", ");
  const said = items.length === 1 ? `Accepted 1 proposed contributor (reference ${references}) into ${scuName(scu)}; Ctrl+Z takes it back.`
    : `Accepted ${items.length} proposed contributors (references ${references}) into ${scuName(scu)}; Ctrl+Z takes them all back in one step.`;
  const kept = assist.items;
  assist.items = [];
  if (!perform(action, { method: "POST", url: () => `${API}scus/${serverId("scus", scu.id)}/accept/`, body: { contributors: body } }, { said }))
    assist.items = kept;
  paintProposals();
}

/** A proposed SCU accepted: a new SCU (selected, its label open for editing, as N does), recorded as proposed. */
function acceptScu(proposal) {
  const { contributors, body } = acceptedOf(proposal.contributors);
  const action = { kind: "accept_scu", scu: temporaryId(), label: proposal.label, contributors };
  const previous = [state.selectedScu, state.selectedContributor];
  [state.selectedScu, state.selectedContributor, state.editing, state.draft] = [action.scu, null, action.scu, null];
  const kept = assist.scus;
  assist.scus = assist.scus.filter((p) => p !== proposal);
  const references = proposal.contributors.map((c) => referenceName(c.reference)).join(", ");
  const said = `Accepted the proposed SCU “${proposal.label}” (references ${references}).`;
  const sent = perform(action, { method: "POST", url: `${API}pyramids/${PYRAMID}/accept-scu/`, body: { label: proposal.label, contributors: body } }, {
    learn: (answer) => { known.scus.set(action.scu, answer.scu.id); learnUid(action, answer.scu.uid); },
    said, hint: "Type its label; Enter keeps it.",
  });
  if (sent) reveal(action.scu, null, false);
  else { [state.selectedScu, state.selectedContributor] = previous; state.editing = null; assist.scus = kept; }
  paintProposals();
}

function rejectProposal(k = assist.current) {
  const items = shown();
  const proposal = items[k];
  if (!proposal) { noProposal(); return; }
  if (assist.scus) assist.scus = assist.scus.filter((p) => p !== proposal);
  else assist.items = assist.items.filter((p) => p !== proposal);
  assist.current = Math.min(k, items.length - 2);
  const said = proposal.contributors ? `Rejected the proposed SCU “${proposal.label}”.`
    : `Rejected the proposed contributor “${proposal.text}” (reference ${referenceName(proposal.reference)}); nothing was added.`;
  say(`${said} ${leftAfter()}`);
  paintProposals();
}

// ---------------------------------------------------------------------------- finding

const finder = new RegexFinder();

function corpus() {
  return state.doc.scus.map((scu) => [scu.id, [scu.label, ...scu.contributors.map((c) => c.label)]]);
}

/** Repaint the list after the filter changed, keeping the selected SCU in view when it is shown. */
function paintFound() {
  paint();
  if (state.selectedScu !== null && shownIds.includes(state.selectedScu)) scuList.reveal(`scu:${state.selectedScu}`);
}

async function applyFilter() {
  const message = $(".find-error", root);
  message.hidden = true;
  if (!state.regex || !state.filter) { state.found = null; paintFound(); return; }
  try {
    const found = await finder.search(state.filter, state.version, corpus);
    if (found === null) return; // superseded by a newer search
    state.found = found;
  } catch (error) {
    if (!(error instanceof FindError)) throw error;
    state.found = new Set();
    message.textContent = error.message;
    message.hidden = false;
  }
  paintFound();
}

// ---------------------------------------------------------------------------- events

const ACTIONS = {
  "new-scu": newScu, "add-contributor": addContributor, "add-part": addPart, merge: () => merge(),
  undo: () => history("undo"), redo: () => history("redo"), help: () => $("dialog.help", root).showModal(),
  comment: startComment, split, delete: remove, "copy-label": copyLabel, quick: toggleQuick, wide: toggleWide,
};

$(".texts", root).addEventListener("mousedown", onTextMouseDown);
$(".texts", root).addEventListener("mouseup", onTextMouseUp);
$(".toolbar", root).addEventListener("click", (event) => {
  const action = event.target.closest("[data-action]")?.dataset.action;
  if (action) ACTIONS[action]();
});
$(".filter", root).addEventListener("input", (event) => { state.filter = event.target.value; applyFilter(); });
$(".regex", root).addEventListener("change", (event) => { state.regex = event.target.checked; applyFilter(); });
$(".sort", root).addEventListener("change", (event) => { state.sort = event.target.value; paint(); });
$(".fold-all", root).addEventListener("click", foldAll);
$("[data-action=propose-scus]", root)?.addEventListener("click", toggleScuProposals);
$(".proposals", root)?.addEventListener("click", (event) => {
  const button = event.target.closest("[data-assist]");
  if (!button) return;
  const k = Number(button.closest("[data-k]")?.dataset.k);
  ({ accept: () => acceptProposal(k), reject: () => rejectProposal(k), "accept-all": acceptAll, hide: toggleScuProposals })[button.dataset.assist]();
});
for (const button of $$("[data-step]", root)) button.addEventListener("click", () => step(Number(button.dataset.step)));
$(".scores", root).addEventListener("toggle", () => { if (scoresOpen()) scheduleRefresh(); });

const list = $(".scu-list", root);
list.addEventListener("click", (event) => {
  if (event.target.matches("input")) return;
  const scu = event.target.closest(".scu");
  if (!scu) return;
  if (event.target.closest(".fold")) { toggleFold(Number(scu.dataset.id)); return; }
  const contributor = event.target.closest(".contrib");
  select(Number(scu.dataset.id), contributor ? Number(contributor.dataset.id) : null);
});
list.addEventListener("change", (event) => {
  const scu = event.target.closest(".scu");
  if (scu && event.target.matches("input[type=checkbox]")) toggleChecked(Number(scu.dataset.id));
});
list.addEventListener("dblclick", (event) => {
  const scu = event.target.closest(".scu");
  if (scu && event.target.closest(".label")) { state.editing = Number(scu.dataset.id); state.draft = null; paint(); }
});
let hovered = [];
list.addEventListener("mouseover", (event) => {
  const scu = state.doc ? findScu(state.doc, Number(event.target.closest(".scu")?.dataset.id)) : null;
  for (const seg of hovered) seg.classList.remove("hover");
  hovered = scu ? scu.contributors.flatMap((c) => segmentsOf(c.id)) : [];
  for (const seg of hovered) seg.classList.add("hover");
});
list.addEventListener("mouseleave", () => { for (const seg of hovered) seg.classList.remove("hover"); hovered = []; });

// Drag an SCU onto another to merge; drag a contributor onto an SCU to move it.
list.addEventListener("dragstart", (event) => {
  const contributor = event.target.closest(".contrib");
  const scu = event.target.closest(".scu");
  if (contributor) event.dataTransfer.setData("application/x-contributor", contributor.dataset.id);
  else if (scu) event.dataTransfer.setData("application/x-scu", scu.dataset.id);
  event.dataTransfer.effectAllowed = "move";
});
list.addEventListener("dragover", (event) => {
  const target = event.target.closest(".scu");
  if (!target) return;
  event.preventDefault();
  for (const item of $$(".scu.drop", list)) item.classList.remove("drop");
  target.classList.add("drop");
});
list.addEventListener("dragleave", (event) => event.target.closest(".scu")?.classList.remove("drop"));
list.addEventListener("drop", (event) => {
  const target = event.target.closest(".scu");
  if (!target) return;
  event.preventDefault();
  target.classList.remove("drop");
  const targetId = Number(target.dataset.id);
  const contributor = event.dataTransfer.getData("application/x-contributor");
  const scu = event.dataTransfer.getData("application/x-scu");
  if (contributor) moveContributor(Number(contributor), targetId);
  else if (scu && Number(scu) !== targetId) merge(targetId, [Number(scu)]);
});

/**
 * A label editor is open (N, S, E) but does not hold the focus yet (it is being placed in the
 * list, or was rebuilt by a repaint): the key is the label's, never a command. The field takes the
 * focus now, so the browser types the key into it; a field not placed yet keeps the character in
 * its draft, which it shows (caret at the end) once placed.
 */
function keyForOpenLabel(event) {
  if (state.editing === null || event.target?.closest?.(".label-edit")) return false;
  const field = $(".label-edit", root);
  if (field) { field.focus({ preventScroll: true }); return true; }
  if (!shownIds.includes(state.editing)) return false; // filtered out of the list: no field will take the key
  if (event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey) {
    event.preventDefault();
    const key = `label:${state.editing}`;
    const value = (state.draft?.key === key ? state.draft.value : "") + event.key;
    state.draft = { key, value, start: value.length, end: value.length };
    reveal(state.editing, null, false);
  }
  return true;
}

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") {
    closeChooser(root);
    if (state.editing !== null && !isTyping(event)) { state.editing = null; state.draft = null; paint(); return; } // the label, as Esc in it
    if (!isTyping(event) && !$("dialog.help", root).open) clearOneLevel();
    return;
  }
  if (keyForOpenLabel(event)) return;
  if (isTyping(event)) return;
  const key = event.key.toLowerCase();
  const ctrl = event.ctrlKey || event.metaKey;
  if (ctrl && key === "z") { event.preventDefault(); history(event.shiftKey ? "redo" : "undo"); return; }
  if (ctrl && key === "y") { event.preventDefault(); history("redo"); return; }
  if (ctrl || event.altKey) return;
  if (event.key === "Y") { event.preventDefault(); acceptAll(); return; }
  if (/^[1-9]$/.test(event.key) && (assist.items.length || assist.scus)) { event.preventDefault(); acceptProposal(Number(event.key) - 1); return; }
  const relabel = () => { if (state.selectedScu !== null) { state.editing = state.selectedScu; state.draft = null; paint(); reveal(state.selectedScu, null, false); } else say("Select an SCU to relabel first."); };
  const handlers = {
    n: newScu, a: addContributor, p: addPart, m: () => merge(), s: split, c: copyLabel, ";": startComment, "/": () => $(".filter", root).focus(),
    e: relabel, f2: relabel,
    x: () => { if (state.selectedScu !== null) toggleChecked(state.selectedScu); else say("Select an SCU to check for merging first."); },
    o: () => { if (state.selectedScu !== null) toggleFold(state.selectedScu); else say("Select an SCU to collapse or expand first."); },
    "<": () => step(-1), ">": () => step(1), ",": () => step(-1), ".": () => step(1),
    delete: remove, backspace: remove, j: () => move(1), arrowdown: () => move(1), k: () => move(-1), arrowup: () => move(-1),
    "?": () => $("dialog.help", root).showModal(),
    y: () => acceptProposal(assist.current), r: () => rejectProposal(), u: toggleScuProposals, q: toggleQuick, w: toggleWide,
  };
  const handler = handlers[event.key] ?? handlers[key];
  if (handler) { event.preventDefault(); handler(); }
});

session.addEventListener("conflict", async (event) => {
  const changes = (event.detail.changes || []).map((c) => `${c.summary}${c.user ? ` (${c.user})` : ""}`);
  state.undo = [];
  state.redo = [];
  await load();
  showBanner(root, `This pyramid was changed elsewhere, so your last change was not applied. Changed meanwhile: ${changes.join("; ") || "unknown"}. ` +
    "The page now shows the current state; your text selection is kept.");
  settle();
});

paintModes();
load().then(() => root.classList.add("ready")).catch((error) => showBanner(root, `Could not load the pyramid: ${error.message}`));
