// The peer annotator: select text in the peer summary, choose the SCU it expresses (click, or type
// to filter and Enter), or mark it as content in no SCU. Every match is saved at once; the score
// panel shows the server's computation and says "updating" until it is current.
import { DocumentSession, actionRunner, bindStatus } from "./session.js";
import { TextIndex, renderSpans, selectedSpan } from "./textspans.js";
import { $, $$, el, showBanner, hideBanner, isTyping, openChooser, closeChooser } from "./ui.js";

const root = document.getElementById("annotator");
const API = root.dataset.api;
const ANNOTATION = root.dataset.annotation;
const canEdit = root.dataset.canEdit === "1";
const session = new DocumentSession(root.dataset.fullUrl);
bindStatus(session, $(".save-status", root), $(".retry", root));

const state = {
  doc: null,
  peerIndex: null,
  refIndexes: new Map(),
  selectedScu: null,   // scu id (list highlight; target of Enter)
  selectedMatch: null, // match id
  selection: null,     // {start, end} in the peer text, code points
  filter: "",
  step: 0,             // which contributor of the selected SCU is shown in the references
};

const fmt = (v) => (v === null || v === undefined ? "—" : Number(v).toFixed(4));

// ---------------------------------------------------------------------------- loading

async function reload() {
  const previous = state.doc?.revision;
  state.doc = await session.load();
  if (state.selectedMatch && !state.doc.matches.some((m) => m.id === state.selectedMatch)) state.selectedMatch = null;
  if (previous !== state.doc.revision || !state.peerIndex) render();
  else renderScore();
  pollScore();
}

let scoreTimer = null;
function pollScore() {
  clearTimeout(scoreTimer);
  if (!state.doc.score?.current) scoreTimer = setTimeout(() => reload().catch(() => {}), 600);
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
  $(".progress-text", root).textContent = doc.progress ? `Peer ${doc.peer.external_id} · ${doc.progress.done} of ${doc.progress.total} peers done` : "";
  if (!state.peerIndex || state.peerIndex.text !== doc.peer.text) state.peerIndex = new TextIndex(doc.peer.text);
  renderPeer();
  renderScus();
  renderRefs();
  renderScore();
  for (const button of $$(".toolbar button[data-action]", root)) if (!["help"].includes(button.dataset.action)) button.disabled = !canEdit;
}

function renderPeer() {
  const spans = [];
  for (const m of state.doc.matches) for (const p of m.parts) spans.push({ id: m.id, start: p.start, end: p.end });
  if (state.selection) spans.push({ id: "sel", ...state.selection });
  renderSpans($(".peer-text", root), state.peerIndex, spans);
  const nonMatching = new Set(state.doc.matches.filter((m) => m.scu === null).map((m) => String(m.id)));
  const scu = state.selectedScu;
  const ofScu = new Set(state.doc.matches.filter((m) => scu !== null && m.scu === scu).map((m) => String(m.id)));
  for (const seg of $$(".peer-text .seg", root)) {
    const ids = seg.dataset.ids ? seg.dataset.ids.split(" ") : [];
    seg.classList.toggle("nm", ids.length > 0 && ids.every((id) => nonMatching.has(id)));
    seg.classList.toggle("hl", ids.some((id) => ofScu.has(id)));
    seg.classList.toggle("hl-match", ids.includes(String(state.selectedMatch)));
    seg.classList.toggle("pending", ids.includes("sel"));
  }
}

function renderScus() {
  const list = $(".scu-list", root);
  const counts = new Map();
  for (const m of state.doc.matches) if (m.scu !== null) counts.set(m.scu, (counts.get(m.scu) ?? 0) + 1);
  const scus = visibleScus();
  $(".counts", root).textContent = `${scus.length} of ${state.doc.pyramid.scus.length} SCUs`;
  list.replaceChildren();
  for (const scu of scus) {
    const found = counts.get(scu.id) ?? 0;
    const item = el("div", { class: `scu${scu.id === state.selectedScu ? " selected" : ""}`, "data-id": scu.id, role: "option", "aria-selected": String(scu.id === state.selectedScu) },
      el("div", { class: "scu-head" }, el("span", { class: "weight", title: "Weight" }, String(scu.weight)), el("span", { class: "label" }, scu.label),
        found ? el("span", { class: "found", title: found > 1 ? `found ${found} times: ${found - 1} repetition(s)` : "found once" }, found > 1 ? `×${found}` : "✓") : ""));
    list.append(item);
  }
  if (!scus.length) list.append(el("p", { class: "empty" }, state.filter ? "No SCU label contains that text." : "This pyramid has no SCUs."));
}

function renderRefs() {
  const scu = state.doc.pyramid.scus.find((s) => s.id === state.selectedScu);
  const contributors = scu ? scu.contributors : [];
  state.step = contributors.length ? ((state.step % contributors.length) + contributors.length) % contributors.length : 0;
  $(".step-text", root).textContent = scu ? `contributor ${contributors.length ? state.step + 1 : 0} of ${contributors.length}` : "select an SCU";
  const container = $(".texts", root);
  container.replaceChildren();
  for (const ref of state.doc.pyramid.references) {
    if (!state.refIndexes.has(ref.id)) state.refIndexes.set(ref.id, new TextIndex(ref.text));
    const spans = contributors.flatMap((c) => c.parts.filter((p) => p.reference === ref.id).map((p) => ({ id: c.id, start: p.start, end: p.end })));
    const text = el("div", { class: "ref-text" });
    renderSpans(text, state.refIndexes.get(ref.id), spans);
    container.append(el("article", { class: "ref", "data-ref": ref.id }, el("header", {}, el("h2", {}, `Reference ${ref.external_id}`)), text));
  }
  const current = contributors[state.step];
  if (current) {
    for (const seg of $$(`.refs-pane .seg[data-ids~="${current.id}"]`, root)) seg.classList.add("hl");
    $(`.refs-pane .seg[data-ids~="${current.id}"]`, root)?.scrollIntoView({ block: "nearest" });
  }
}

function renderScore() {
  const score = state.doc.score;
  const panel = $(".score-panel", root);
  const current = Boolean(score?.current);
  panel.classList.toggle("updating", !current);
  const badge = $(".score-state", root);
  badge.textContent = current ? "up to date" : "updating…";
  badge.classList.toggle("updating", !current);
  $(".convention", root).textContent = score ? `(${score.convention} convention)` : "";
  const v = current ? score.values : {};
  const rows = [
    ["Matched SCUs", v.matched_scus], ["Repetitions", v.repetitions], ["Non-matching units", v.non_matching],
    ["Observed weight (D)", v.observed_weight], ["Original score", current ? fmt(v.original) : undefined], ["Modified score", current ? fmt(v.modified) : undefined],
  ];
  $(".score-grid", root).replaceChildren(...rows.flatMap(([name, value]) => [el("dt", {}, name), el("dd", { "data-name": name }, value === undefined ? "…" : String(value))]));
}

// ---------------------------------------------------------------------------- actions

const act = actionRunner(root, {
  reload, clearSelection: () => { state.selection = null; }, afterError: renderPeer,
  showError: (message) => showBanner(root, message), hideError: () => hideBanner(root),
});

function match(scuId = state.selectedScu) {
  if (!state.selection) { showBanner(root, "Select the words of the peer summary that express the SCU first."); return; }
  if (!scuId) { showBanner(root, "Choose the SCU: click it, or type part of its label and press Enter."); return; }
  return act(session.send("POST", `${API}matches/`, { annotation: Number(ANNOTATION), scu: scuId, parts: [{ start: state.selection.start, end: state.selection.end }] }));
}

function nonMatching() {
  if (!state.selection) { showBanner(root, "Select the peer text that matches no SCU first."); return; }
  return act(session.send("POST", `${API}matches/`, { annotation: Number(ANNOTATION), scu: null, parts: [{ start: state.selection.start, end: state.selection.end }] }));
}

function removeMatch() {
  if (!state.selectedMatch) { showBanner(root, "Click a highlighted span of the peer to select its match first."); return; }
  return act(session.send("DELETE", `${API}matches/${state.selectedMatch}/`), { keepSelection: true });
}

function moveMatch() {
  if (!state.selectedMatch || !state.selectedScu) { showBanner(root, "Select a match (click it in the peer) and the SCU to move it to."); return; }
  return act(session.send("PATCH", `${API}matches/${state.selectedMatch}/`, { scu: state.selectedScu }), { keepSelection: true });
}

async function done() {
  const ok = await act(session.send("PATCH", `${API}annotations/${ANNOTATION}/`, { status: "done" }), { keepSelection: true });
  if (ok === null) return;
  openNext(state.doc.next);
}

/** Go to the next peer: its annotation if it exists, else open it through the assignment (POST). */
function openNext(next) {
  if (!next) { showBanner(root, "All your peers of this topic are done."); return; }
  if (next.annotation) { window.location.href = `/annotations/${next.annotation}/`; return; }
  const form = el("form", { method: "post", action: `/assignments/${next.assignment}/open/`, hidden: true },
    el("input", { type: "hidden", name: "csrfmiddlewaretoken", value: decodeURIComponent(document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/)?.[1] ?? "") }),
    el("input", { type: "hidden", name: "peer", value: next.peer_id }));
  document.body.append(form);
  form.submit();
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

function history(kind) {
  return act(session.send("POST", `${API}annotations/${ANNOTATION}/${kind}/`, {}), { keepSelection: true });
}

const ACTIONS = {
  match: () => match(), "non-matching": nonMatching, remove: removeMatch, move: moveMatch,
  undo: () => history("undo"), redo: () => history("redo"), help: () => $("dialog.help", root).showModal(), done,
};

// ---------------------------------------------------------------------------- events

$(".peer-text", root).addEventListener("mouseup", (event) => {
  const span = selectedSpan($(".peer-text", root), state.peerIndex);
  if (span) {
    state.selection = span;
    window.getSelection().removeAllRanges();
    hideBanner(root);
    renderPeer();
    $(".filter", root).focus(); // type to find the SCU, Enter to match
    return;
  }
  const seg = event.target.closest(".seg");
  const ids = (seg?.dataset.ids || "").split(" ").filter((id) => id && id !== "sel").map(Number);
  const matches = state.doc.matches.filter((m) => ids.includes(m.id));
  const pick = (m) => { state.selectedMatch = m.id; if (m.scu !== null) selectScu(m.scu); else renderPeer(); };
  if (matches.length === 1) pick(matches[0]);
  else if (matches.length > 1) {
    const label = (m) => (m.scu === null ? "No SCU (non-matching)" : `(${state.doc.pyramid.scus.find((s) => s.id === m.scu)?.weight}) ${state.doc.pyramid.scus.find((s) => s.id === m.scu)?.label}`);
    openChooser(root, event, matches.map((m) => ({ label: label(m), pick: () => pick(m) })));
  }
});

$(".toolbar", root).addEventListener("click", (event) => {
  const action = event.target.closest("[data-action]")?.dataset.action;
  if (action) ACTIONS[action]();
});
$(".scu-list", root).addEventListener("click", (event) => {
  const item = event.target.closest(".scu");
  if (!item) return;
  const id = Number(item.dataset.id);
  if (state.selection && canEdit) { selectScu(id, { scroll: false }); match(id); }
  else selectScu(id, { scroll: false });
});
$(".stepper", root).addEventListener("click", (event) => {
  const step = Number(event.target.closest("[data-step]")?.dataset.step);
  if (step) { state.step += step; renderRefs(); }
});

const filter = $(".filter", root);
filter.addEventListener("input", () => {
  state.filter = filter.value;
  renderScus();
  const first = visibleScus()[0];
  if (state.filter && first) { state.selectedScu = first.id; renderScus(); }
});
filter.addEventListener("keydown", (event) => {
  if (event.key === "Enter") { event.preventDefault(); if (state.selection && canEdit) match(); }
  else if (event.key === "ArrowDown") { event.preventDefault(); moveInList(1); }
  else if (event.key === "ArrowUp") { event.preventDefault(); moveInList(-1); }
  else if (event.key === "Escape") { filter.value = ""; state.filter = ""; renderScus(); filter.blur(); }
});

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") { closeChooser(root); if (!isTyping(event)) { state.selection = null; state.selectedMatch = null; hideBanner(root); renderPeer(); } return; }
  if (isTyping(event)) return;
  const ctrl = event.ctrlKey || event.metaKey;
  const key = event.key.toLowerCase();
  if (ctrl && key === "z") { event.preventDefault(); history(event.shiftKey ? "redo" : "undo"); return; }
  if (ctrl && key === "y") { event.preventDefault(); history("redo"); return; }
  if (ctrl || event.altKey) return;
  if (event.key === "N" && event.shiftKey) { event.preventDefault(); done(); return; }
  const handlers = {
    enter: () => match(), u: nonMatching, delete: removeMatch, backspace: removeMatch, m: moveMatch,
    j: () => moveInList(1), arrowdown: () => moveInList(1), k: () => moveInList(-1), arrowup: () => moveInList(-1),
    "/": () => filter.focus(), "[": () => { state.step -= 1; renderRefs(); }, "]": () => { state.step += 1; renderRefs(); },
    "?": () => $("dialog.help", root).showModal(),
  };
  const handler = handlers[key] ?? handlers[event.key];
  if (handler && (canEdit || ["j", "k", "arrowdown", "arrowup", "/", "[", "]", "?"].includes(key))) { event.preventDefault(); handler(); }
});

session.addEventListener("conflict", async (event) => {
  const changes = (event.detail.changes || []).map((c) => c.summary);
  showBanner(root, `This annotation was changed elsewhere, so your last change was not applied. Changed meanwhile: ${changes.join("; ") || "unknown"}. The page now shows the current state.`);
  await reload();
});

reload().then(() => root.classList.add("ready")).catch((error) => showBanner(root, `Could not load the annotation: ${error.message}`));
