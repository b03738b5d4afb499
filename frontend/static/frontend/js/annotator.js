// The peer annotator: select text in the peer summary (Shift+select adds a part: discontinuous
// matches), choose the SCU it expresses (click, or type to filter and Enter), or mark it as
// content in no SCU.
//
// Local first: an action changes the annotation held in memory and is painted at once, with the
// score computed here from the same definitions as the server's (pyramidscore.js), marked
// "provisional"; the write is queued (session.js: in order, If-Match, offline queue) and the
// server's answer (the annotation's matches, its new revision) replaces the local guess, or the
// action is rolled back and the reason shown. The stored score of that revision replaces the
// provisional one when it arrives. Undo/redo are painted from the page's own record of its
// actions and then taken from the server's answer.
//
// The next peer is prepared before it is asked for (next_peer.js): "Done, next peer" queues the
// "done" write like any other and paints the next peer from memory, in this page (``show``: the
// one path a page load and a move to the next peer both take).
import { DocumentSession, bindStatus, readDocument } from "./session.js";
import { afterDone, nextPlace, placeOf, prepareDocument, prepareSuggestions } from "./next_peer.js";
import { SpanView, TextIndex, draggedSpan, selectedSpan } from "./textspans.js";
import { scorePeer } from "./pyramidscore.js";
import { $, $$, el, plural, sayInStatus, showBanner, hideBanner, isTyping, openChooser, closeChooser, bindTextSize } from "./ui.js";

const root = document.getElementById("annotator");
const API = root.dataset.api;
// The peer shown. An untouched peer has no annotation yet (issue 21: opening a peer stores
// nothing): its place is (assignment, peer) and the first action that stores something creates
// the annotation in the same request (``placeOfWrite``; "Done": ``start``).
let place = placeOf(API, { annotation: Number(root.dataset.annotation) || null, assignment: root.dataset.assignment, peer: root.dataset.peer });
let canEdit = root.dataset.canEdit === "1";
const session = new DocumentSession(place.full);
bindStatus(session, $(".save-status", root), $(".retry", root));
bindTextSize(root);

const state = {
  doc: null,           // the annotation document; doc.matches = confirmed matches + pending actions
  confirmed: [],       // the matches as the server last answered
  revision: null,      // the revision those confirmed matches are
  pending: [],         // actions painted but not answered yet: [{effect}]
  ids: new Map(),      // local key of a match created here -> its id on the server
  undo: [],            // effects that undo this page's confirmed actions (predictions for Ctrl+Z)
  redo: [],
  stored: null,        // {revision, score} the stored score last read
  peerIndex: null,
  peerView: null,      // SpanView of the peer text: an action repaints only the words it changes
  refViews: null,      // reference id -> SpanView (built once per load; a new SCU patches its contributors in)
  selectedScu: null,   // scu id (list highlight; target of Enter)
  selectedMatch: null, // match id or local key
  selection: [],       // parts [{start, end}] in the peer text, code points (several: discontinuous)
  filter: "",
  step: 0,             // which contributor of the selected SCU is shown in the references
  suggestions: null,   // Autoannotate: the suggestions still to decide on, best first (null: not suggesting)
  struck: new Set(),   // of those shown, the ones struck (A leaves them out)
};

/**
 * Where a write of ``at`` goes, as the server names it when the write is sent: its annotation once
 * known, else (untouched) its assignment and peer, so the first write creates the annotation with
 * it in one request (once, whatever the tabs: the unique constraint, and the Idempotency-Key of
 * the queued POST). It carries the revision this page read (If-Match): if another tab stored
 * changes first, the server refuses it as a conflict and the page reloads, never a silent overwrite.
 */
const placeOfWrite = (at) => (at.annotation ? { annotation: at.annotation } : { assignment: Number(at.assignment), peer: Number(at.peer) });

/** The first write of ``at`` created its annotation: later writes (and a reload) name it. */
function started(at, id) {
  if (at.annotation) return;
  at.annotation = id;
  if (at !== place) return; // the page moved on (e.g. "Done" on an untouched peer)
  session.fullUrl = `${API}annotations/${id}/full/`;
  window.history.replaceState(window.history.state, "", `/annotations/${id}/`);
}

/** The annotation's id when the write is sent (a function for the session's queue). */
function annotationId(at = place) {
  if (!at.annotation) throw new Error("The annotation could not be started.");
  return at.annotation;
}

let localKeys = 0;
const fmt = (v) => (v === null || v === undefined ? "—" : Number(v).toFixed(4));
const scuOf = (id) => state.doc.pyramid.scus.find((s) => s.id === id);
const scuName = (scu) => `(${scu.weight}) ${scu.label}`;
const quoted = (parts) => parts.map((p) => `“${state.peerIndex.slice(p.start, p.end)}”`).join(" … ");
const resolve = (key) => state.ids.get(key) ?? key;
/** A span id of the peer view that is a match's (not the selection's "sel…"). */
const isMatchId = (id) => Boolean(id) && !id.startsWith("sel");

// ---------------------------------------------------------------------------- the document

/** The confirmed matches with the pending actions applied: what the page shows. */
function derive() {
  let matches = state.confirmed.map((m) => ({ ...m }));
  for (const { effect } of state.pending) if (effect) matches = applyEffect(matches, effect);
  state.doc.matches = matches;
  if (state.selectedMatch !== null && !matches.some((m) => m.id === resolve(state.selectedMatch))) state.selectedMatch = null;
}

function applyEffect(matches, effect) {
  if (effect.kind === "batch") return effect.effects.reduce(applyEffect, matches);
  const key = resolve(effect.key);
  if (effect.kind === "create") return [...matches, { id: key, scu: effect.scu, parts: effect.parts }];
  if (effect.kind === "delete") return matches.filter((m) => m.id !== key);
  if (effect.kind === "move") return matches.map((m) => (m.id === key ? { ...m, scu: effect.scu } : m));
  return matches;
}

/** The effect that undoes ``effect`` (applied to ``matches``, before it). */
function inverse(effect, matches) {
  if (effect.kind === "batch") {
    const effects = effect.effects.map((e) => inverse(e, matches)).filter(Boolean).reverse();
    return effects.length ? { kind: "batch", effects } : null;
  }
  if (effect.kind === "create") return { kind: "delete", key: effect.key };
  if (effect.kind === "delete") {
    const m = matches.find((x) => x.id === resolve(effect.key));
    return m ? { kind: "create", key: `local-${++localKeys}`, scu: m.scu, parts: m.parts } : null;
  }
  const m = matches.find((x) => x.id === resolve(effect.key));
  return m ? { kind: "move", key: effect.key, scu: m.scu } : null;
}

/**
 * Show the document of ``at`` (a page load, a reload after a conflict, the next peer): read now, or
 * from a read made ahead (``read``: a promise of {body, etag}, optionally with ``adjust`` applied
 * to the body). ``fresh``: another peer, so everything of the one shown before is forgotten.
 * Resolves false if the page moved on meanwhile (another ``show`` started).
 */
async function show(at, { read = null, adjust = (body) => body, fresh = false } = {}) {
  if (fresh) {
    place = at;
    at.next = null;
    session.open(at.full);
    root.classList.remove("ready");
  }
  const opening = fresh || !state.doc; // another peer, or the page's first: not a reload after a conflict
  const { body, etag } = await (read ?? readDocument(at.full));
  if (place !== at) return false;
  const doc = adjust(session.adopt({ body, etag }));
  if (fresh) forget(doc);
  state.doc = doc;
  state.confirmed = doc.matches;
  state.revision = doc.revision;
  state.pending = [];
  state.stored = { revision: doc.revision, score: doc.score };
  state.peerIndex = new TextIndex(doc.peer.text);
  state.peerView = new SpanView($(".peer-text", root), state.peerIndex);
  state.refViews = null;
  derive();
  render();
  pollScore();
  root.classList.add("ready");
  if (opening && canEdit) suggest({ opening: true }); // issue 30: shown as the peer opens, no key needed
  prepare();
  return true;
}

/** Another peer is shown: nothing of the previous one's selection, history or suggestions stays,
 * and what the server rendered into the page for it is rewritten from the new document. */
function forget(doc) {
  Object.assign(state, { ids: new Map(), undo: [], redo: [], selectedScu: null, selectedMatch: null, selection: [], step: 0 });
  clearFilter();
  stopSuggesting();
  closeChooser(root);
  announce("");
  canEdit = doc.can_edit;
  const topic = root.dataset.topic;
  document.title = `Peer ${doc.peer.external_id} · ${topic} · pyramid`;
  $("h1", root).textContent = `${topic} · peer ${doc.peer.external_id}`;
  Object.assign(root.dataset, { fullUrl: place.full, annotation: place.annotation ?? "", startUrl: place.start ?? "", canEdit: canEdit ? "1" : "0" });
  $(".peer-text", root).scrollTop = 0;
}

const load = () => show(place);

// ---------------------------------------------------------------------------- actions

/**
 * Paint ``effect`` at once, then send the write; the answer's matches replace the guess (or the
 * effect is rolled back with the reason). Resolves true once saved, false if refused.
 */
function perform(effect, method, url, body, { onSaved, record = true } = {}) {
  const at = place;
  const action = { effect };
  const before = state.doc.matches;
  state.pending.push(action);
  if (record && effect) state.redo = [];
  derive();
  paint();
  root.dataset.busy = "1";
  clearTimeout(scoreTimer); // its read would be of the revision this action replaces, beside this save on the server
  const unqueue = () => { const at = state.pending.indexOf(action); if (at >= 0) state.pending.splice(at, 1); };
  return session.send(method, url, body).then((answer) => {
    if (answer.annotation) started(at, answer.annotation);
    if (place !== at) return true; // saved; the page shows another peer since
    unqueue();
    if (effect?.kind === "create" && answer.id !== undefined) state.ids.set(effect.key, answer.id);
    if (effect?.kind === "batch" && answer.ids) effect.effects.forEach((e, i) => { if (e.kind === "create") state.ids.set(e.key, answer.ids[i]); });
    if (answer.delta) state.confirmed = answer.delta.matches;
    else if (effect?.kind === "delete") state.confirmed = state.confirmed.filter((m) => m.id !== resolve(effect.key));
    state.revision = answer.revision ?? Number(session.revision);
    if (record && effect) { const undo = inverse(effect, before); if (undo) state.undo.push(undo); }
    derive();
    paint();
    onSaved?.(answer);
    settle();
    return true;
  }, (error) => {
    if (place !== at) return false;
    unqueue();
    derive();
    paint();
    settle();
    if (!error.fields?.changes) showBanner(root, `Not saved: ${error.message || error}`); // a conflict has its own banner
    return false;
  });
}

function settle() {
  if (!state.pending.length) delete root.dataset.busy;
  pollScore();
  prepare();
}

/** Say what the last action did, naming its SCU (the status line, ui.js sayInStatus). */
const announce = (message) => sayInStatus(root, message);

function clearSelection() {
  state.selection = [];
  clearFilter();
}

/**
 * Match the selection to an SCU. Only ever to an SCU the annotator sees: the one selected in the
 * list as filtered now (a hidden SCU, e.g. the previous match's while the filter shows nothing, is
 * never a target).
 */
function match(scuId = state.selectedScu) {
  if (!state.selection.length) { showBanner(root, "Select the words of the peer summary that express the SCU first."); return; }
  const shown = visibleScus();
  if (!shown.length) {
    showBanner(root, state.filter ? `No SCU label contains “${state.filter}”, so nothing was matched. Change the text you typed, or press Esc to clear it.` : "This pyramid has no SCUs to match.");
    return;
  }
  const scu = shown.find((s) => s.id === scuId);
  if (!scu) { showBanner(root, "Choose the SCU: click it, or type part of its label and press Enter."); return; }
  const parts = state.selection;
  const before = state.doc.matches.filter((m) => m.scu === scu.id).length;
  const text = quoted(parts);
  hideBanner(root);
  clearSelection();
  announce(before ? `Matched ${text} to ${scuName(scu)}: a repetition (found ${before + 1} times).` : `Matched ${text} to ${scuName(scu)}.`);
  return create(scu.id, parts);
}

function create(scu, parts) {
  const effect = { kind: "create", key: `local-${++localKeys}`, scu, parts };
  const at = place;
  return perform(effect, "POST", `${API}matches/`, () => ({ ...placeOfWrite(at), scu, parts }));
}

function nonMatching() {
  if (!state.selection.length) { showBanner(root, "Select the peer text that matches no SCU first."); return; }
  const parts = state.selection;
  hideBanner(root);
  announce(`Marked ${quoted(parts)} as content in no SCU.`);
  clearSelection();
  return create(null, parts);
}

/** The URL of a match that may have been created here: known once its creation was answered. */
function matchUrl(key) {
  return () => {
    const id = resolve(key);
    if (typeof id !== "number") throw new Error("The match it refers to was not saved.");
    return `${API}matches/${id}/`;
  };
}

function removeMatch() {
  const key = state.selectedMatch;
  if (key === null) { showBanner(root, "Click a highlighted span of the peer to select its match first."); return; }
  const m = state.doc.matches.find((x) => x.id === resolve(key));
  hideBanner(root);
  announce(`Removed the match of ${quoted(m.parts)}${m.scu === null ? " (no SCU)" : ` to ${scuName(scuOf(m.scu))}`}. Ctrl+Z to undo.`);
  state.selectedMatch = null;
  return perform({ kind: "delete", key }, "DELETE", matchUrl(key));
}

function moveMatch() {
  const key = state.selectedMatch;
  if (key === null || !state.selectedScu || !visibleScus().some((s) => s.id === state.selectedScu)) {
    showBanner(root, "Select a match (click it in the peer) and the SCU to move it to.");
    return;
  }
  const m = state.doc.matches.find((x) => x.id === resolve(key));
  const scu = scuOf(state.selectedScu);
  hideBanner(root);
  announce(`Moved ${quoted(m.parts)} to ${scuName(scu)}.`);
  return perform({ kind: "move", key, scu: scu.id }, "PATCH", matchUrl(key), { scu: scu.id });
}

/** Undo/redo on the server (the user's own last change), painted at once when this page knows it. */
function history(kind) {
  const stack = kind === "undo" ? state.undo : state.redo;
  const other = kind === "undo" ? state.redo : state.undo;
  const effect = stack.pop() ?? null;
  const before = state.doc.matches;
  announce(kind === "undo" ? "Undone." : "Redone.");
  if (!place.annotation && !state.pending.length) { announce(`Nothing to ${kind}.`); return Promise.resolve(false); }
  const at = place;
  return perform(effect, "POST", () => `${API}annotations/${annotationId(at)}/${kind}/`, {}, {
    record: false,
    onSaved: () => { const back = effect && inverse(effect, before); if (back) other.push(back); },
  }).then((ok) => { if (!ok && effect) stack.push(effect); return ok; });
}

// ---------------------------------------------------------------------------- Autoannotate

/** How many suggestions are shown at once: each is struck with its digit (1-9). */
const SUGGESTIONS_SHOWN = 9;

/**
 * Autoannotate: the server's suggestions (from the pyramid, and from this annotator's own other
 * peers of the topic), ranked by the server, shown as the peer opens, the most confident first
 * (issue 30): up to nine at once, numbered, their words outlined in the peer. A digit strikes the
 * wrong one (again: restores it); A accepts every one shown and not struck, in one action (one undo
 * step), and shows the next ones; Esc hides them; S shows them again. Nothing is matched without A.
 */
async function suggest({ opening = false } = {}) {
  const at = place;
  // Read ahead while the previous peer was shown (``prepare``, "Done"), shown at once; used once
  // (S again: read anew, as of the matches made since).
  const ready = at.suggested?.promise ?? prepareSuggestions(at);
  at.suggested = null;
  showSuggestionBar("Looking for suggestions…", false);
  let suggestions;
  try {
    suggestions = await ready;
  } catch (error) {
    if (place !== at) return;
    stopSuggesting();
    showBanner(root, `Could not get suggestions: ${error.message}`);
    return;
  }
  if (place !== at) return;
  state.suggestions = suggestions.filter((s) => !taken(s));
  state.struck = new Set();
  const shown = shownSuggestions().length;
  // As the peer opens the list says it all (the status line keeps the last thing the annotator did);
  // S asked, so the status line answers.
  if (!shown) {
    stopSuggesting();
    if (!opening) announce("No suggestions left for this peer.");
    return;
  }
  renderSuggestions();
  renderPeer();
  if (!opening) announce(`${plural(shown, "suggestion")} shown: strike the wrong ones (1–${shown}), A accepts the others.`);
}

/** A suggestion a match made meanwhile already covers (the same SCU, overlapping words). */
const taken = (s) => state.doc.matches.some((m) => m.scu === s.scu && m.parts.some((p) => s.parts.some((q) => p.start < q.end && q.start < p.end)));

/**
 * The suggestions shown: the most confident, at most SUGGESTIONS_SHOWN. One a match made meanwhile
 * covers stays in its place, marked matched (a row taken away would move what is under the
 * pointer), until A shows the next ones.
 */
function shownSuggestions() {
  return state.suggestions ? state.suggestions.slice(0, SUGGESTIONS_SHOWN) : [];
}

/**
 * Outline the words of the suggestions shown (struck ones apart) with the CSS Custom Highlight API,
 * never by rewriting the peer's text: suggestions arriving while the annotator drags over the text
 * would otherwise replace the nodes under the pointer (and move the selection). Ranges are built
 * anew after each repaint of the text (its nodes may have been replaced).
 */
function outlineSuggestions() {
  if (!globalThis.CSS?.highlights || typeof Highlight === "undefined") return;
  const outlined = { "peer-suggested": [], "peer-suggested-struck": [] };
  const shown = shownSuggestions();
  if (shown.length) {
    const nodes = [];
    const walker = document.createTreeWalker($(".peer-text", root), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(), at = 0; node; at += node.data.length, node = walker.nextNode()) nodes.push([node, at]);
    const point = (u16) => { const found = nodes.findLast(([, at]) => at <= u16) ?? nodes[0]; return [found[0], Math.min(u16 - found[1], found[0].data.length)]; };
    const open = shown.filter((x) => !taken(x));
    const kept = open.filter((x) => !state.struck.has(x)).flatMap((x) => x.parts);
    for (const s of open) {
      const struck = state.struck.has(s);
      // Words another suggestion still offers are not shown struck.
      if (struck && s.parts.some((p) => kept.some((q) => p.start < q.end && q.start < p.end))) continue;
      for (const p of s.parts) {
        const range = new Range();
        range.setStart(...point(state.peerIndex.toUtf16(p.start)));
        range.setEnd(...point(state.peerIndex.toUtf16(p.end)));
        outlined[struck ? "peer-suggested-struck" : "peer-suggested"].push(range);
      }
    }
  }
  for (const [name, ranges] of Object.entries(outlined)) CSS.highlights.set(name, Object.assign(new Highlight(...ranges), { priority: name === "peer-suggested" ? 1 : 0 }));
}

/** The list of the suggestions shown (``data-scu`` and ``data-parts``: code points, for tools). */
function renderSuggestions() {
  if (!state.suggestions) return;
  const shown = shownSuggestions();
  if (!shown.length) { stopSuggesting(); return; }
  const left = state.suggestions.length - shown.length;
  const rows = shown.map((s, i) => {
    const scu = scuOf(s.scu);
    const struck = state.struck.has(s);
    if (taken(s)) return el("li", { class: "suggestion taken", "data-n": String(i + 1), "data-scu": String(s.scu), title: "Matched meanwhile." }, el("kbd", {}, String(i + 1)), ` ✓ ${scuName(scu)}: matched`);
    const what = [scuName(scu), " ", el("span", { class: "confidence muted" }, `${Math.round(100 * s.confidence)}%`), " ", el("span", { class: "quote" }, quoted(s.parts))];
    return el("li", { class: `suggestion${struck ? " struck" : ""}`, "data-n": String(i + 1), "data-scu": String(s.scu),
      "data-parts": s.parts.map((p) => `${p.start}-${p.end}`).join(","),
      title: `${quoted(s.parts)} → ${scuName(scu)}. ${s.why[0].toUpperCase()}${s.why.slice(1)}. Press ${i + 1} to ${struck ? "restore" : "strike"} it.` },
    el("kbd", {}, String(i + 1)), " ", struck ? el("s", {}, ...what) : el("span", {}, ...what));
  });
  $(".suggestion-list", root).replaceChildren(...rows);
  const kept = shown.filter((s) => !state.struck.has(s) && !taken(s)).length;
  $(".suggestion-bar", root).dataset.more = String(left);
  showSuggestionBar(`Suggested: ${kept} of ${shown.length} to accept${left ? `, ${left} more after` : ""}`, true);
}

function showSuggestionBar(message, ready) {
  const bar = $(".suggestion-bar", root);
  bar.hidden = false;
  $(".suggestion-text", bar).textContent = message;
  if (!ready) $(".suggestion-list", bar).replaceChildren();
  for (const button of $$("button", bar)) button.disabled = !ready;
}

function stopSuggesting() {
  const was = state.suggestions !== null;
  state.suggestions = null;
  state.struck = new Set();
  $(".suggestion-list", root).replaceChildren();
  $(".suggestion-bar", root).hidden = true;
  if (was && state.peerView) renderPeer();
}

/** A digit: strike the suggestion of that number (it will not be accepted), or restore it. */
function strikeSuggestion(n) {
  const s = shownSuggestions()[n - 1];
  if (!s || taken(s)) return;
  const struck = !state.struck.has(s);
  if (struck) state.struck.add(s); else state.struck.delete(s);
  renderSuggestions();
  renderPeer();
  announce(`${struck ? "Struck" : "Restored"} suggestion ${n}: ${quoted(s.parts)} → ${scuName(scuOf(s.scu))}${struck ? ` (press ${n} again to restore it)` : ""}.`);
}

/** A: every suggestion shown and not struck becomes a match, in one action (one undo step). */
function acceptSuggestions() {
  const shown = shownSuggestions();
  if (!shown.length) return;
  const kept = shown.filter((s) => !state.struck.has(s) && !taken(s));
  const struck = shown.filter((s) => state.struck.has(s)).length;
  const rest = state.suggestions.slice(shown.length);
  state.suggestions = null; // while the matches are painted: the page decided on is gone
  state.struck = new Set();
  if (kept.length) acceptMatches(kept.map((s) => ({ scu: s.scu, parts: s.parts.map((p) => ({ start: p.start, end: p.end })) })));
  state.suggestions = rest.filter((s) => !taken(s)); // the next ones, less those just matched
  const more = shownSuggestions().length;
  const after = more ? ` ${plural(more, "more suggestion")} shown.` : "";
  if (kept.length) announce(`Accepted ${plural(kept.length, "suggestion")}${struck ? ` (${struck} struck)` : ""}: ${kept.map((s) => scuName(scuOf(s.scu))).join("; ")}. Ctrl+Z undoes them at once.${after}`);
  else announce(`Accepted none: ${struck ? `all ${plural(struck, "suggestion")} struck` : "nothing left to accept"}.${after}`);
  if (more) { renderSuggestions(); renderPeer(); } else stopSuggesting();
}

/** Several matches made in one action: POST matches/accept/ (one revision, one undo step). */
function acceptMatches(matches) {
  const effects = matches.map((m) => ({ kind: "create", key: `local-${++localKeys}`, scu: m.scu, parts: m.parts }));
  const at = place;
  return perform({ kind: "batch", effects }, "POST", `${API}matches/accept/`, () => ({ ...placeOfWrite(at), matches }));
}

/**
 * "Done, next peer": the "done" write is queued (in order, after this peer's writes, kept while
 * offline) and the next peer is painted at once from what was read ahead, at its own URL. If the
 * write is refused, the finished peer is shown again with the reason: nothing is lost.
 */
async function done() {
  if (state.pending.length || session.pending) { showBanner(root, "Your last changes are still being saved; try again in a moment."); return; }
  const finished = place;
  const doc = state.doc;
  // Nothing is being saved: the annotation exists, or the peer is untouched and "Done" creates it
  // finished and empty (a score of 0), in one request.
  const saved = finished.annotation ? session.send("PATCH", `${API}annotations/${finished.annotation}/`, { status: "done" })
    : session.send("POST", finished.start, { status: "done" }).then((answer) => { started(finished, answer.id); return answer; });
  const next = finished.next ?? nextPlace(API, doc.next);
  if (!next) {
    root.dataset.busy = "1";
    try { await saved; } catch (error) { if (!error.fields?.changes) showBanner(root, `Not saved: ${error.message || error}`); return; } finally { delete root.dataset.busy; }
    showBanner(root, "All your peers of this topic are done.");
    return;
  }
  saved.catch((error) => goBack(finished, doc, error));
  prepareSuggestions(next, suggestionsAfter(doc, state.revision), finished.annotation).catch(() => {}); // as of this peer's last change
  window.history.pushState(null, "", next.annotation ? `/annotations/${next.annotation}/` : next.page);
  // Not read ahead (the peer was done before it settled): read once its "done" is saved, since a
  // read racing that save could count the peer or not, and the progress must count it once.
  const readAhead = Boolean(next.read);
  const read = readAhead ? prepareDocument(next) : saved.catch(() => {}).then(() => prepareDocument(next));
  const finishedPeer = { peer: doc.peer.id, wasDone: doc.status === "done", counted: !readAhead };
  await show(next, { read, adjust: (body) => afterDone(body, finishedPeer), fresh: true })
    .catch((error) => showBanner(root, `Could not load the next peer: ${error.message}`));
}

/** The "done" of ``finished`` was refused: show that peer again (read anew), and say why. */
async function goBack(finished, doc, error) {
  window.history.replaceState(null, "", finished.annotation ? `/annotations/${finished.annotation}/` : finished.page);
  const reason = error.fields?.changes ? "it was changed elsewhere meanwhile." : (error.message || String(error));
  try {
    if (!await show(finished, { fresh: true })) return;
  } catch { /* the banner below says what was not saved */ }
  showBanner(root, `Peer ${doc.peer.external_id} was not marked done: ${reason} It is shown again as stored; mark it done when ready.`);
}

/** What the next peer's suggestions depend on: this annotator's matches in the peer shown (its revision). */
const suggestionsAfter = (doc, revision) => `${doc.peer.id}@${revision}`;

const PREPARE_IDLE_MS = 1000;
let preparing = null;
/**
 * Once the peer shown has settled: the next peer's document at once, and after a pause in the
 * annotator's changes the next peer's suggestions (they learn from this peer's matches: read once
 * per state of it, and again at "Done" if it changed since). Read at once, they would run on the
 * server beside the saves of the very actions that follow. The peer's own suggestions are read as
 * it opens (shown then: issue 30), and anew when S asks again. Background reads: a failure is
 * forgotten and the read made again when asked for.
 */
function prepare() {
  clearTimeout(preparing);
  const at = place;
  if (!canEdit || state.pending.length || session.pending || !root.classList.contains("ready")) return;
  at.next ??= nextPlace(API, state.doc.next);
  if (!at.next) return;
  prepareDocument(at.next).catch(() => {});
  const after = suggestionsAfter(state.doc, state.revision);
  if (at.next.suggested?.after === after) return;
  preparing = setTimeout(() => {
    if (place !== at || state.pending.length || session.pending || suggestionsAfter(state.doc, state.revision) !== after) return;
    prepareSuggestions(at.next, after, at.annotation).catch(() => {});
  }, PREPARE_IDLE_MS);
}

// ---------------------------------------------------------------------------- the score

/**
 * The stored score while it is the score of what is shown (no pending action, same revision,
 * current); otherwise the score computed here, marked provisional.
 */
function renderScore() {
  const stored = state.stored;
  const confirmedNow = !state.pending.length && stored && stored.revision === state.revision && stored.score?.current;
  const local = scorePeer(state.doc.pyramid, state.doc.matches, "nist");
  const values = confirmedNow ? stored.score.values : local;
  const panel = $(".score-panel", root);
  panel.classList.toggle("provisional", !confirmedNow);
  const badge = $(".score-state", root);
  const delayed = !confirmedNow && !state.pending.length && stored?.score?.delayed;
  badge.textContent = confirmedNow ? "confirmed" : delayed ? "provisional: scoring service unreachable" : "provisional";
  badge.title = confirmedNow ? "The score the server computed and stored for this revision." : delayed || "Computed in your browser; the stored score follows.";
  badge.classList.toggle("updating", !confirmedNow);
  $(".convention", root).textContent = "(nist convention)";
  // DUCView's score dialog: the counts, the maximum attainable weights and the average SCU count
  // per reference behind the two scores, and the SCUs the peer expresses several times.
  const count = (v) => (v === null || v === undefined ? "—" : String(v));
  const rows = [
    ["Matched SCUs", count(values.matched_scus)], ["Repetitions", count(values.repetitions)], ["Non-matching units", count(values.non_matching)],
    ["Observed weight (D)", count(values.observed_weight)],
    ["Max. weight of X SCUs", `${count(values.max_weight_x)} (X = ${count(values.size)})`],
    ["Average SCUs per reference", values.average_scus === null || values.average_scus === undefined ? "—" : `${Number(values.average_scus).toFixed(2)} (Xa = ${count(values.xa)})`],
    ["Max. weight of Xa SCUs", count(values.max_weight_xa)],
    ["Original score", fmt(values.original)], ["Modified score", fmt(values.modified)],
  ];
  $(".score-grid", root).replaceChildren(...rows.flatMap(([name, value]) => [el("dt", {}, name), el("dd", { "data-name": name }, value)]));
  const repeated = local.repeated.map(({ scu, count: times }) => el("li", {}, `${scuName(scuOf(scu))} `, el("span", { class: "times" }, `×${times}`)));
  $(".score-repeated", root).replaceChildren(el("h3", {}, "SCUs found several times"),
    repeated.length ? el("ul", {}, ...repeated) : el("p", { class: "muted" }, "none"));
}

let scoreTimer = null;
let scoreBusy = false;
let scoreTries = { revision: null, count: 0 };
/**
 * Read the stored score (annotations/{id}/score/, the session's revision left alone) until it is
 * that of the revision shown: soon after a change, then less often while no worker answers.
 */
function pollScore() {
  clearTimeout(scoreTimer);
  const wanted = state.revision;
  const at = place;
  if (!at.annotation) return; // nothing stored yet: the score shown is this page's (of no matches)
  if (state.pending.length || (state.stored?.revision === wanted && state.stored.score?.current)) return;
  if (scoreTries.revision !== wanted) scoreTries = { revision: wanted, count: 0 };
  // The worker stores a score tens of milliseconds after the save when idle: ask soon, then back off.
  const delay = Math.min(3000, 60 * 1.5 ** scoreTries.count++);
  scoreTimer = setTimeout(async () => {
    if (scoreBusy) return;
    scoreBusy = true;
    try {
      const response = await fetch(`${API}annotations/${at.annotation}/score/`, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) {
        const stored = await response.json();
        if (place === at && stored.revision === state.revision) {
          state.stored = { revision: stored.revision, score: { current: stored.current, values: stored.scores?.nist, delayed: stored.delayed } };
          renderScore();
        }
      }
    } catch { /* offline: try again */ }
    finally { scoreBusy = false; pollScore(); }
  }, delay);
}

// ---------------------------------------------------------------------------- rendering

function scusByWeight() {
  return [...state.doc.pyramid.scus].sort((a, b) => b.weight - a.weight || a.label.localeCompare(b.label));
}

function visibleScus() {
  const needle = state.filter.toLowerCase();
  return scusByWeight().filter((s) => !needle || s.label.toLowerCase().includes(needle));
}

function render() {
  const doc = state.doc;
  $(".progress-text", root).textContent = doc.progress ? `Peer ${doc.peer.external_id} · ${doc.progress.done} of ${plural(doc.progress.total, "peer")} done` : "";
  paint();
  renderRefs();
  for (const button of $$(".toolbar button[data-action]", root)) if (button.dataset.action !== "help") button.disabled = !canEdit;
}

/** What an action changes: the peer's highlights, the SCU list's counts, the score. */
function paint() {
  renderSuggestions();
  renderPeer();
  renderScus();
  renderScore();
}

function renderPeer() {
  const spans = [];
  for (const m of state.doc.matches) for (const p of m.parts) spans.push({ id: m.id, start: p.start, end: p.end });
  state.selection.forEach((p, i) => spans.push({ id: `sel${i}`, ...p }));
  state.peerView.update(spans);
  const nonMatching = new Set(state.doc.matches.filter((m) => m.scu === null).map((m) => String(m.id)));
  const scu = state.selectedScu;
  const ofScu = new Set(state.doc.matches.filter((m) => scu !== null && m.scu === scu).map((m) => String(m.id)));
  const unsaved = new Set(state.doc.matches.filter((m) => typeof m.id !== "number").map((m) => m.id));
  const selected = String(resolve(state.selectedMatch));
  const review = new Map(state.doc.matches.filter((m) => m.review_note).map((m) => [String(m.id), m.review_note]));
  for (const seg of $$(".peer-text .seg", root)) {
    const ids = seg.dataset.ids ? seg.dataset.ids.split(" ") : [];
    const matchIds = ids.filter(isMatchId);
    seg.classList.toggle("nm", matchIds.length > 0 && matchIds.every((id) => nonMatching.has(id)));
    seg.classList.toggle("hl", ids.some((id) => ofScu.has(id)));
    seg.classList.toggle("hl-match", ids.includes(selected));
    seg.classList.toggle("pending", ids.some((id) => id.startsWith("sel")));
    seg.classList.toggle("unsaved", ids.some((id) => unsaved.has(id)));
    const notes = [...new Set(ids.filter((id) => review.has(id)).map((id) => review.get(id)))];
    seg.classList.toggle("to-review", notes.length > 0);
    if (notes.length) seg.title = notes.join("; "); else seg.removeAttribute("title");
  }
  renderReviewSummary(review);
  outlineSuggestions();
  const parts = state.selection.length;
  $(".selection-text", root).textContent = parts > 1 ? `${plural(parts, "part")} selected: one match (Shift+select adds a part)` : "";
}

/** Imported matches whose evidence the import could not place (``review_note``): said above the text. */
function renderReviewSummary(review) {
  const line = $(".review-summary", root);
  const notes = [...new Set(review.values())];
  line.hidden = !review.size;
  line.textContent = review.size ? `${plural(review.size, "imported match", "imported matches")} to review (outlined; the SCU list marks ${review.size > 1 ? "them" : "it"}): ${notes.join("; ")}.` : "";
}

function renderScus() {
  const list = $(".scu-list", root);
  const counts = new Map();
  const review = new Map();
  for (const m of state.doc.matches) if (m.scu !== null) counts.set(m.scu, (counts.get(m.scu) ?? 0) + 1);
  for (const m of state.doc.matches) if (m.scu !== null && m.review_note) review.set(m.scu, [...new Set([...(review.get(m.scu) ?? []), m.review_note])]);
  const scus = visibleScus();
  // A listbox must hold options: with none to show (a filter that finds nothing, an empty pyramid)
  // the list is a plain group, so assistive technology is not told of a list it cannot enter.
  list.setAttribute("role", scus.length ? "listbox" : "group");
  $(".counts", root).textContent = `${scus.length} of ${plural(state.doc.pyramid.scus.length, "SCU")}`;
  // An item is rebuilt only when what it shows changed, and the list only when the filter changed
  // which SCUs it holds: a match repaints one or two items, not the page's layout of 100 SCUs.
  const old = new Map($$(".scu", list).map((item) => [Number(item.dataset.id), item]));
  const items = scus.map((scu) => {
    const found = counts.get(scu.id) ?? 0;
    const notes = review.get(scu.id) ?? [];
    const shows = JSON.stringify([scu.weight, scu.label, scu.id === state.selectedScu, found, notes]);
    const item = old.get(scu.id);
    return item?.dataset.shows === shows ? item : scuItem(scu, found, shows, notes);
  });
  if (items.length && items.length === list.children.length && scus.every((scu, i) => old.get(scu.id) === list.children[i])) {
    items.forEach((item, i) => { if (list.children[i] !== item) list.children[i].replaceWith(item); });
  } else list.replaceChildren(...items);
  if (!scus.length) list.append(el("p", { class: "empty" }, state.filter ? "No SCU label contains that text." : "This pyramid has no SCUs."));
}

function scuItem(scu, found, shows, notes = []) {
  const selected = scu.id === state.selectedScu;
  return el("div", { class: `scu${selected ? " selected" : ""}`, "data-id": scu.id, "data-shows": shows, role: "option", "aria-selected": String(selected) },
    el("div", { class: "scu-head" }, el("span", { class: "weight", title: "Weight" }, String(scu.weight)), el("span", { class: "label" }, scu.label),
      found ? el("span", { class: "found", title: found > 1 ? `found ${found} times: ${plural(found - 1, "repetition")}` : "found once" }, found > 1 ? `×${found}` : "✓") : ""),
    notes.length ? el("p", { class: "review" }, notes.join("; ")) : "");
}

function renderRefs() {
  const scu = scuOf(state.selectedScu);
  const contributors = scu ? scu.contributors : [];
  state.step = contributors.length ? ((state.step % contributors.length) + contributors.length) % contributors.length : 0;
  $(".step-text", root).textContent = scu ? `contributor ${contributors.length ? state.step + 1 : 0} of ${contributors.length}` : "select an SCU";
  if (!state.refViews) {
    state.refViews = new Map();
    const articles = state.doc.pyramid.references.map((ref) => {
      const text = el("div", { class: "ref-text" });
      state.refViews.set(ref.id, new SpanView(text, new TextIndex(ref.text)));
      return el("article", { class: "ref", "data-ref": ref.id }, el("header", {}, el("h2", {}, `Reference ${ref.external_id}`)), text);
    });
    $(".texts", root).replaceChildren(...articles);
  }
  for (const [ref, view] of state.refViews) {
    view.update(contributors.flatMap((c) => c.parts.filter((p) => p.reference === ref).map((p) => ({ id: c.id, start: p.start, end: p.end }))));
  }
  for (const seg of $$(".refs-pane .seg.hl", root)) seg.classList.remove("hl");
  const current = contributors[state.step];
  if (current) {
    for (const seg of $$(`.refs-pane .seg[data-ids~="${current.id}"]`, root)) seg.classList.add("hl");
    // Scrolled at the next frame: here it would force a layout of the page in the middle of a
    // match (the list and the peer are repainted after), 5 ms of every click on an SCU.
    const first = $(`.refs-pane .seg[data-ids~="${current.id}"]`, root);
    requestAnimationFrame(() => first?.scrollIntoView({ block: "nearest" }));
  }
}

function selectScu(id, { scroll = true } = {}) {
  state.selectedScu = id;
  state.step = 0;
  renderScus();
  renderPeer();
  renderRefs();
  if (scroll) $(`.scu[data-id="${id}"]`, root)?.scrollIntoView({ block: "nearest" });
}

function moveInList(step) {
  const ids = $$(".scu", root).map((item) => Number(item.dataset.id));
  if (!ids.length) return;
  const at = ids.indexOf(state.selectedScu);
  selectScu(ids[Math.max(0, Math.min(ids.length - 1, at === -1 ? 0 : at + step))]);
}

const ACTIONS = {
  match: () => match(), "non-matching": nonMatching, remove: removeMatch, move: moveMatch, suggest,
  accept: acceptSuggestions, stop: () => { stopSuggesting(); state.selection = []; renderPeer(); },
  undo: () => history("undo"), redo: () => history("redo"), help: () => $("dialog.help", root).showModal(), done,
};

// ---------------------------------------------------------------------------- events

let dragStart = null; // {x, y} of the last mousedown in the peer text
// While a peer is being read (the page's first load, or a next peer not read ahead) the page takes
// no action: it would act on the peer shown before.
const loading = () => !root.classList.contains("ready");

$(".peer-text", root).addEventListener("mousedown", (event) => { dragStart = { x: event.clientX, y: event.clientY }; });
$(".peer-text", root).addEventListener("mouseup", (event) => {
  if (loading()) return;
  const text = $(".peer-text", root);
  // Shift+drag: the browser would extend a caret left elsewhere, so the dragged text is read from the pointer.
  const span = event.shiftKey && dragStart ? draggedSpan(text, state.peerIndex, dragStart, { x: event.clientX, y: event.clientY }) : selectedSpan(text, state.peerIndex);
  if (span) {
    const overlaps = state.selection.some((p) => p.start < span.end && span.start < p.end);
    state.selection = event.shiftKey && state.selection.length && !overlaps
      ? [...state.selection, span].sort((a, b) => a.start - b.start)
      : [span];
    window.getSelection().removeAllRanges();
    hideBanner(root);
    renderPeer();
    // The focus stays out of the filter, so the guide's keys (U, M, S, J/K, Del, Enter) act on the
    // selection at once; "/" is the key that finds an SCU by typing.
    return;
  }
  const seg = event.target.closest(".seg");
  const ids = (seg?.dataset.ids || "").split(" ").filter(isMatchId);
  const matches = state.doc.matches.filter((m) => ids.includes(String(m.id)));
  const pick = (m) => {
    state.selectedMatch = m.id;
    if (m.review_note) announce(`This imported match: ${m.review_note}.`);
    if (m.scu !== null) selectScu(m.scu); else renderPeer();
  };
  if (matches.length === 1) pick(matches[0]);
  else if (matches.length > 1) {
    const label = (m) => (m.scu === null ? "No SCU (non-matching)" : scuName(scuOf(m.scu)));
    openChooser(root, event, matches.map((m) => ({ label: label(m), pick: () => pick(m) })));
  }
});

for (const bar of [$(".toolbar", root), $(".suggestion-bar", root)]) {
  bar.addEventListener("click", (event) => {
    const action = event.target.closest("[data-action]")?.dataset.action;
    if (action && !loading()) ACTIONS[action]();
  });
}
$(".suggestion-list", root).addEventListener("click", (event) => {
  const row = event.target.closest(".suggestion");
  if (row && !loading() && canEdit) strikeSuggestion(Number(row.dataset.n));
});
$(".scu-list", root).addEventListener("click", (event) => {
  const item = event.target.closest(".scu");
  if (!item || loading()) return;
  const id = Number(item.dataset.id);
  selectScu(id, { scroll: false });
  if (state.selection.length && canEdit) match(id);
});
$(".stepper", root).addEventListener("click", (event) => {
  const step = Number(event.target.closest("[data-step]")?.dataset.step);
  if (step) { state.step += step; renderRefs(); }
});

const filter = $(".filter", root);
function clearFilter() {
  filter.value = "";
  state.filter = "";
}
filter.addEventListener("input", () => {
  if (loading()) return;
  state.filter = filter.value;
  const shown = visibleScus();
  // The selected SCU is always one the annotator sees: the first one found, or none.
  if (state.filter || !shown.some((s) => s.id === state.selectedScu)) { state.selectedScu = shown[0]?.id ?? null; state.step = 0; renderRefs(); renderPeer(); }
  renderScus();
});
/**
 * "/" always means "find an SCU": it focuses the filter and selects what it holds, so what is typed
 * next replaces it ("/, type, Enter" works whatever the filter held). It is never typed into the
 * filter: an SCU is found by the words around a "/" of its label.
 */
function focusFilter() {
  filter.focus();
  filter.select();
}
filter.addEventListener("keydown", (event) => {
  if (loading()) { event.preventDefault(); return; }
  if (event.key === "/") { event.preventDefault(); focusFilter(); }
  else if (event.key === "Enter") { event.preventDefault(); if (state.selection.length && canEdit) match(); }
  else if (event.key === "ArrowDown") { event.preventDefault(); moveInList(1); }
  else if (event.key === "ArrowUp") { event.preventDefault(); moveInList(-1); }
  else if (event.key === "Escape") { clearFilter(); renderScus(); filter.blur(); }
});

document.addEventListener("keydown", (event) => {
  if (loading()) return;
  if (event.key === "Escape") { closeChooser(root); if (!isTyping(event)) { stopSuggesting(); state.selection = []; state.selectedMatch = null; hideBanner(root); renderPeer(); } return; }
  if (isTyping(event)) return;
  const ctrl = event.ctrlKey || event.metaKey;
  const key = event.key.toLowerCase();
  if (ctrl && key === "z") { event.preventDefault(); if (canEdit) history(event.shiftKey ? "redo" : "undo"); return; }
  if (ctrl && key === "y") { event.preventDefault(); if (canEdit) history("redo"); return; }
  if (ctrl || event.altKey) return;
  if (event.key === "N" && event.shiftKey) { event.preventDefault(); if (canEdit) done(); return; }
  if (state.suggestions && canEdit && key === "a") { event.preventDefault(); acceptSuggestions(); return; }
  if (state.suggestions && canEdit && /^[1-9]$/.test(event.key)) { event.preventDefault(); strikeSuggestion(Number(event.key)); return; }
  const handlers = {
    s: suggest, enter: () => match(), u: nonMatching, delete: removeMatch, backspace: removeMatch, m: moveMatch,
    j: () => moveInList(1), arrowdown: () => moveInList(1), k: () => moveInList(-1), arrowup: () => moveInList(-1),
    "/": focusFilter, "[": () => { state.step -= 1; renderRefs(); }, "]": () => { state.step += 1; renderRefs(); },
    "?": () => $("dialog.help", root).showModal(),
  };
  const handler = handlers[key] ?? handlers[event.key];
  if (handler && (canEdit || ["j", "k", "arrowdown", "arrowup", "/", "[", "]", "?"].includes(key))) { event.preventDefault(); handler(); }
});

session.addEventListener("conflict", async (event) => {
  const changes = (event.detail.changes || []).map((c) => c.summary);
  if (!await load().catch(() => true)) return; // the page moved to another peer meanwhile
  state.undo = [];
  state.redo = [];
  showBanner(root, `This annotation was changed elsewhere, so your last change was not applied. Changed meanwhile: ${changes.join("; ") || "unknown"}. The page now shows the current state.`);
});

// Back and forward between peers shown in this page: the page of the URL, loaded anew.
window.addEventListener("popstate", () => window.location.reload());

load().catch((error) => showBanner(root, `Could not load the annotation: ${error.message}`));
