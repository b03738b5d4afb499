// The pyramid builder: select text in a reference, make SCUs, add contributors and parts, merge,
// move, split, relabel; every action is one API call, saved at once, undoable on the server.
import { DocumentSession, actionRunner, bindStatus } from "./session.js";
import { TextIndex, coverage, renderSpans, selectedSpan } from "./textspans.js";
import { $, $$, el, showBanner, hideBanner, isTyping, openChooser, closeChooser } from "./ui.js";

const root = document.getElementById("builder");
const API = root.dataset.api;
const PYRAMID = root.dataset.pyramid;
const session = new DocumentSession(root.dataset.fullUrl);
bindStatus(session, $(".save-status", root), $(".retry", root));

const state = {
  doc: null,
  indexes: new Map(),         // reference id -> TextIndex
  scuOfContributor: new Map(), // contributor id -> scu
  selectedScu: null,           // scu id
  selectedContributor: null,   // contributor id
  checked: new Set(),          // scu ids checked for merging
  selection: null,             // {reference, start, end} in code points: kept until used
  filter: "",
  editing: null,               // scu id whose label is being edited
  commenting: null,            // {kind: "scu" | "contributor", id} whose comment is being edited
};

// ---------------------------------------------------------------------------- loading

async function reload() {
  const previous = state.doc?.revision;
  const doc = await session.load();
  state.doc = doc;
  state.scuOfContributor.clear();
  for (const scu of doc.scus) for (const c of scu.contributors) state.scuOfContributor.set(c.id, scu);
  if (state.selectedScu && !doc.scus.some((s) => s.id === state.selectedScu)) state.selectedScu = null;
  if (state.selectedContributor && !state.scuOfContributor.has(state.selectedContributor)) state.selectedContributor = null;
  for (const id of [...state.checked]) if (!doc.scus.some((s) => s.id === id)) state.checked.delete(id);
  if (previous !== doc.revision || !$(".ref", root)) render();
  else renderScores();
  scheduleScorePolling();
}

let scoreTimer = null;
function scheduleScorePolling() {
  clearTimeout(scoreTimer);
  const scores = state.doc?.scores ?? [];
  const updating = scores.some((s) => !s.current);
  $(".scores-state", root).textContent = updating ? "· updating…" : scores.length ? "· up to date" : "";
  if (updating) scoreTimer = setTimeout(() => reload().catch(() => {}), 1500);
}

// ---------------------------------------------------------------------------- rendering

function render() {
  renderTexts();
  renderScus();
  renderScores();
  highlight();
}

function contributorSpans(referenceId) {
  const spans = [];
  for (const scu of state.doc.scus)
    for (const c of scu.contributors)
      for (const p of c.parts) if (p.reference === referenceId) spans.push({ id: c.id, start: p.start, end: p.end });
  return spans;
}

function renderTexts() {
  const container = $(".texts", root);
  container.replaceChildren();
  for (const ref of state.doc.references) {
    if (!state.indexes.has(ref.id) || state.indexes.get(ref.id).text !== ref.text) state.indexes.set(ref.id, new TextIndex(ref.text));
    const index = state.indexes.get(ref.id);
    const spans = contributorSpans(ref.id);
    const share = Math.round(coverage(index, spans) * 100);
    const text = el("div", { class: "ref-text", "data-ref": ref.id, lang: "" });
    const sel = state.selection?.reference === ref.id ? [{ id: "sel", start: state.selection.start, end: state.selection.end }] : [];
    renderSpans(text, index, [...spans, ...sel]);
    const card = el("article", { class: "ref", "data-ref": ref.id },
      el("header", {}, el("h2", {}, `Reference ${ref.external_id}`),
        el("span", { class: "coverage", title: "Share of the text covered by contributors" },
          el("span", { class: "bar" }, el("span", { style: `width:${share}%` })), `${share}% covered`)),
      text);
    container.append(card);
  }
}

function matchesFilter(scu) {
  if (!state.filter) return true;
  const needle = state.filter.toLowerCase();
  return scu.label.toLowerCase().includes(needle) || scu.contributors.some((c) => c.label.toLowerCase().includes(needle));
}

function referenceName(id) {
  return state.doc.references.find((r) => r.id === id)?.external_id ?? "?";
}

function renderScus() {
  const list = $(".scu-list", root);
  const scus = [...state.doc.scus].sort((a, b) => b.weight - a.weight || a.label.localeCompare(b.label));
  const shown = scus.filter(matchesFilter);
  $(".counts", root).textContent = `${shown.length === scus.length ? "" : `${shown.length} of `}${scus.length} SCUs`;
  list.replaceChildren();
  let tier = null;
  for (const scu of shown) {
    if (scu.weight !== tier) {
      tier = scu.weight;
      const count = scus.filter((s) => s.weight === tier).length;
      list.append(el("h3", { class: "tier" }, `Weight ${tier}`, el("span", { class: "muted" }, ` · ${count} SCU${count === 1 ? "" : "s"}`)));
    }
    list.append(scuElement(scu));
  }
  if (!scus.length) list.append(el("p", { class: "empty" }, "No SCUs yet. Select text in a reference and press N."));
}

function scuElement(scu) {
  const item = el("div", {
    class: `scu${scu.id === state.selectedScu ? " selected" : ""}${state.checked.has(scu.id) ? " checked" : ""}`,
    "data-id": scu.id, draggable: "true", role: "option", "aria-selected": String(scu.id === state.selectedScu),
  });
  const check = el("input", { type: "checkbox", title: "Check for merging (X)", "aria-label": `Check SCU ${scu.uid} for merging` });
  check.checked = state.checked.has(scu.id);
  check.addEventListener("change", () => { toggleChecked(scu.id); });
  const label = state.editing === scu.id ? labelEditor(scu) : el("span", { class: "label", title: "Double-click or press E to relabel" }, scu.label);
  item.append(el("div", { class: "scu-head" }, check, el("span", { class: "weight", title: "Weight" }, String(scu.weight)), label,
    scu.comment ? el("span", { class: "has-comment", title: scu.comment }, "💬") : ""));
  if (state.commenting?.kind === "scu" && state.commenting.id === scu.id) item.append(commentEditor(scu.comment, (text) => saveComment("scu", scu, text)));
  else if (scu.comment) item.append(el("p", { class: "comment" }, scu.comment));
  const contributors = el("ul", { class: "contributors" });
  for (const c of scu.contributors) {
    const li = el("li", { class: `contrib${c.id === state.selectedContributor ? " selected" : ""}`, "data-id": c.id, draggable: "true", title: c.comment || "" },
      el("span", { class: "ref-tag" }, referenceName(c.reference)), el("span", { class: "contrib-text" }, c.label));
    if (c.legacy_issue) li.append(el("span", { class: "legacy", title: c.legacy_issue }, "legacy"));
    if (c.comment) li.append(el("span", { class: "has-comment", title: c.comment }, "💬"));
    contributors.append(li);
    if (state.commenting?.kind === "contributor" && state.commenting.id === c.id)
      contributors.append(el("li", { class: "comment-row" }, commentEditor(c.comment, (text) => saveComment("contributor", c, text))));
  }
  item.append(contributors);
  return item;
}

function labelEditor(scu) {
  const input = el("input", { class: "label-edit", value: scu.label, "aria-label": `Label of SCU ${scu.uid}` });
  queueMicrotask(() => { input.focus(); input.select(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") { event.preventDefault(); saveLabel(scu, input.value); }
    if (event.key === "Escape") { event.preventDefault(); state.editing = null; renderScus(); highlight(); }
    event.stopPropagation();
  });
  input.addEventListener("blur", () => { if (state.editing === scu.id) saveLabel(scu, input.value); });
  return input;
}

function commentEditor(value, save) {
  const box = el("textarea", { class: "comment-edit", rows: "2", placeholder: "Comment (Enter to save, Shift+Enter for a new line, Esc to cancel)", "aria-label": "Comment" });
  box.value = value || "";
  queueMicrotask(() => box.focus());
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); save(box.value); }
    if (event.key === "Escape") { event.preventDefault(); state.commenting = null; renderScus(); highlight(); }
    event.stopPropagation();
  });
  return box;
}

function renderScores() {
  const body = $(".scores tbody", root);
  body.replaceChildren();
  const fmt = (v) => (v === null || v === undefined ? "—" : v.toFixed(4));
  for (const s of state.doc.scores ?? [])
    body.append(el("tr", { class: s.current ? "" : "stale" }, el("td", {}, s.peer), el("td", {}, s.annotator || "—"),
      el("td", {}, s.current ? fmt(s.modified) : "updating…"), el("td", {}, s.current ? fmt(s.original) : "updating…")));
}

function highlight() {
  const scu = state.doc.scus.find((s) => s.id === state.selectedScu);
  const ids = new Set(scu ? scu.contributors.map((c) => String(c.id)) : []);
  for (const seg of $$(".ref-text .seg", root)) {
    const segIds = seg.dataset.ids ? seg.dataset.ids.split(" ") : [];
    seg.classList.toggle("hl", segIds.some((id) => ids.has(id)));
    seg.classList.toggle("hl-contrib", state.selectedContributor !== null && segIds.includes(String(state.selectedContributor)));
    seg.classList.toggle("pending", segIds.includes("sel"));
  }
  for (const button of $$("[data-action]", root)) {
    const a = button.dataset.action;
    if (a === "new-scu") button.disabled = !state.selection;
    if (a === "add-contributor") button.disabled = !(state.selection && state.selectedScu);
    if (a === "add-part") button.disabled = !(state.selection && state.selectedContributor);
    if (a === "merge") button.disabled = !(state.selectedScu && [...state.checked].some((id) => id !== state.selectedScu));
  }
}

// ---------------------------------------------------------------------------- selection

function select(scuId, contributorId = null) {
  if (state.selectedScu === scuId && state.selectedContributor === contributorId) return; // re-rendering would eat a double-click
  state.selectedScu = scuId;
  state.selectedContributor = contributorId;
  renderScus();
  highlight();
  const item = $(`.scu[data-id="${scuId}"]`, root);
  item?.scrollIntoView({ block: "nearest" });
  const first = contributorId ?? state.doc.scus.find((s) => s.id === scuId)?.contributors[0]?.id;
  if (first) $(`.seg[data-ids~="${first}"]`, root)?.scrollIntoView({ block: "nearest" });
}

function toggleChecked(id) {
  if (state.checked.has(id)) state.checked.delete(id); else state.checked.add(id);
  renderScus();
  highlight();
}

function onTextMouseUp(event) {
  const text = event.target.closest(".ref-text");
  if (!text) return;
  const reference = Number(text.dataset.ref);
  const span = selectedSpan(text, state.indexes.get(reference));
  if (span) {
    state.selection = { reference, ...span };
    window.getSelection().removeAllRanges();
    hideBanner(root);
    if (event.shiftKey && state.selectedContributor) { addPart(); return; }
    renderTexts();
    highlight();
    return;
  }
  // A click (no selection) on highlighted text selects its SCU, with a chooser when several overlap.
  const seg = event.target.closest(".seg");
  const ids = (seg?.dataset.ids || "").split(" ").filter((id) => id && id !== "sel").map(Number);
  const scus = [...new Map(ids.map((id) => [state.scuOfContributor.get(id).id, [state.scuOfContributor.get(id), id]])).values()];
  if (scus.length === 1) select(scus[0][0].id, scus[0][1]);
  else if (scus.length > 1)
    openChooser(root, event, scus.map(([scu, contributorId]) => ({ label: `(${scu.weight}) ${scu.label}`, pick: () => select(scu.id, contributorId) })));
}

// ---------------------------------------------------------------------------- actions

const act = actionRunner(root, {
  reload, clearSelection: () => { state.selection = null; }, afterError: () => { renderTexts(); highlight(); },
  showError: (message) => showBanner(root, message), hideError: () => hideBanner(root),
});

function selectionText() {
  const s = state.selection;
  return s ? state.indexes.get(s.reference).slice(s.start, s.end) : "";
}

function requireSelection() {
  if (!state.selection) { showBanner(root, "Select some text in a reference first."); return false; }
  return true;
}

async function newScu() {
  if (!requireSelection()) return;
  const s = state.selection;
  const label = selectionText().replace(/\s+/gu, " ").trim(); // a selection across lines is one label line
  const result = await act(session.send("POST", `${API}scus/`, { pyramid: Number(PYRAMID), label, reference: s.reference, parts: [{ start: s.start, end: s.end }] }));
  if (result?.id) { state.editing = result.id; select(result.id); }
}

async function addContributor() {
  if (!requireSelection()) return;
  const scu = state.doc.scus.find((x) => x.id === state.selectedScu);
  if (!scu) { showBanner(root, "Select the SCU to add the text to (click it in the list)."); return; }
  const s = state.selection;
  const twin = scu.contributors.find((c) => c.reference === s.reference && !c.legacy_issue);
  if (twin) {
    showBanner(root, `SCU ${scu.uid} already has a contributor from reference ${referenceName(s.reference)}: an SCU takes at most one contributor per reference. ` +
      "Select that contributor and press P to add the text as a part of it, or choose another SCU.");
    return;
  }
  await act(session.send("POST", `${API}contributors/`, { scu: scu.id, reference: s.reference, parts: [{ start: s.start, end: s.end }] }));
}

async function addPart() {
  if (!requireSelection()) return;
  const contributorId = state.selectedContributor;
  const scu = state.scuOfContributor.get(contributorId);
  const contributor = scu?.contributors.find((c) => c.id === contributorId);
  if (!contributor) { showBanner(root, "Select the contributor to extend (click it in the SCU list)."); return; }
  if (contributor.reference !== state.selection.reference) {
    showBanner(root, `The selected contributor lies in reference ${referenceName(contributor.reference)}; a part must come from the same reference.`);
    renderTexts(); highlight();
    return;
  }
  await act(session.send("POST", `${API}contributors/${contributorId}/parts/`, { start: state.selection.start, end: state.selection.end }));
}

async function merge(targetId = state.selectedScu, sources = [...state.checked]) {
  sources = sources.filter((id) => id !== targetId);
  if (!targetId || !sources.length) { showBanner(root, "Check the SCUs to merge (X) and select the one to merge them into."); return; }
  const done = await act(session.send("POST", `${API}scus/${targetId}/merge/`, { sources }), { keepSelection: true });
  if (done) { state.checked.clear(); select(targetId); }
}

async function moveContributor(contributorId, targetScuId) {
  await act(session.send("POST", `${API}contributors/${contributorId}/move/`, { scu: targetScuId }), { keepSelection: true });
}

async function split() {
  if (!state.selectedContributor) { showBanner(root, "Select a contributor to split off."); return; }
  const result = await act(session.send("POST", `${API}contributors/${state.selectedContributor}/split/`, {}), { keepSelection: true });
  if (result?.scu) { state.editing = result.scu.id; select(result.scu.id); }
}

async function saveLabel(scu, label) {
  state.editing = null;
  label = label.trim();
  if (!label || label === scu.label) { renderScus(); highlight(); return; }
  await act(session.send("PATCH", `${API}scus/${scu.id}/`, { label }), { keepSelection: true });
}

function startComment() {
  if (state.selectedContributor) state.commenting = { kind: "contributor", id: state.selectedContributor };
  else if (state.selectedScu) state.commenting = { kind: "scu", id: state.selectedScu };
  else { showBanner(root, "Select an SCU or a contributor to comment on."); return; }
  renderScus();
}

async function saveComment(kind, obj, comment) {
  state.commenting = null;
  if (comment === (obj.comment || "")) { renderScus(); highlight(); return; }
  await act(session.send("PATCH", `${API}${kind === "scu" ? "scus" : "contributors"}/${obj.id}/`, { comment }), { keepSelection: true });
}

async function copyLabel() {
  const scu = state.scuOfContributor.get(state.selectedContributor);
  if (!scu) { showBanner(root, "Select a contributor whose text should become the label."); return; }
  const contributor = scu.contributors.find((c) => c.id === state.selectedContributor);
  await act(session.send("PATCH", `${API}scus/${scu.id}/`, { label: contributor.label }), { keepSelection: true });
}

async function remove() {
  if (state.selectedContributor) {
    await act(session.send("DELETE", `${API}contributors/${state.selectedContributor}/`), { keepSelection: true });
  } else if (state.selectedScu) {
    const scu = state.doc.scus.find((s) => s.id === state.selectedScu);
    if (confirm(`Delete SCU ${scu.uid} “${scu.label}” and its ${scu.contributors.length} contributor(s)? (Undo with Ctrl+Z)`))
      await act(session.send("DELETE", `${API}scus/${scu.id}/`), { keepSelection: true });
  }
}

async function history(kind) {
  await act(session.send("POST", `${API}pyramids/${PYRAMID}/${kind}/`, {}), { keepSelection: true });
}

function move(step) {
  const ids = $$(".scu", root).map((item) => Number(item.dataset.id));
  if (!ids.length) return;
  const at = ids.indexOf(state.selectedScu);
  select(ids[Math.max(0, Math.min(ids.length - 1, at === -1 ? 0 : at + step))]);
}

const ACTIONS = {
  "new-scu": newScu, "add-contributor": addContributor, "add-part": addPart, merge: () => merge(),
  undo: () => history("undo"), redo: () => history("redo"), help: () => $("dialog.help", root).showModal(),
  comment: startComment, split, delete: remove, "copy-label": copyLabel,
};

// ---------------------------------------------------------------------------- events

$(".texts", root).addEventListener("mouseup", onTextMouseUp);
$(".toolbar", root).addEventListener("click", (event) => {
  const action = event.target.closest("[data-action]")?.dataset.action;
  if (action) ACTIONS[action]();
});
$(".filter", root).addEventListener("input", (event) => { state.filter = event.target.value; renderScus(); highlight(); });

const list = $(".scu-list", root);
list.addEventListener("click", (event) => {
  if (event.target.matches("input")) return;
  const contributor = event.target.closest(".contrib");
  const scu = event.target.closest(".scu");
  if (scu) select(Number(scu.dataset.id), contributor ? Number(contributor.dataset.id) : null);
});
list.addEventListener("dblclick", (event) => {
  const scu = event.target.closest(".scu");
  if (scu && event.target.closest(".label")) { state.editing = Number(scu.dataset.id); renderScus(); }
});
list.addEventListener("mouseover", (event) => {
  const scu = state.doc?.scus.find((s) => s.id === Number(event.target.closest(".scu")?.dataset.id));
  const ids = new Set(scu ? scu.contributors.map((c) => String(c.id)) : []);
  for (const seg of $$(".ref-text .seg", root)) seg.classList.toggle("hover", (seg.dataset.ids || "").split(" ").some((id) => ids.has(id)));
});
list.addEventListener("mouseleave", () => { for (const seg of $$(".seg.hover", root)) seg.classList.remove("hover"); });

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

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") {
    closeChooser(root);
    if (!isTyping(event)) { state.selection = null; state.checked.clear(); hideBanner(root); render(); }
    return;
  }
  if (isTyping(event)) return;
  const key = event.key.toLowerCase();
  const ctrl = event.ctrlKey || event.metaKey;
  if (ctrl && key === "z") { event.preventDefault(); history(event.shiftKey ? "redo" : "undo"); return; }
  if (ctrl && key === "y") { event.preventDefault(); history("redo"); return; }
  if (ctrl || event.altKey) return;
  const handlers = {
    n: newScu, a: addContributor, p: addPart, m: () => merge(), s: split, c: copyLabel, ";": startComment, "/": () => $(".filter", root).focus(),
    e: () => { if (state.selectedScu) { state.editing = state.selectedScu; renderScus(); } },
    f2: () => { if (state.selectedScu) { state.editing = state.selectedScu; renderScus(); } },
    x: () => { if (state.selectedScu) toggleChecked(state.selectedScu); },
    delete: remove, backspace: remove, j: () => move(1), arrowdown: () => move(1), k: () => move(-1), arrowup: () => move(-1),
    "?": () => $("dialog.help", root).showModal(),
  };
  const handler = handlers[key] ?? handlers[event.key];
  if (handler) { event.preventDefault(); handler(); }
});

session.addEventListener("conflict", async (event) => {
  const changes = (event.detail.changes || []).map((c) => `${c.summary}${c.user ? ` (${c.user})` : ""}`);
  showBanner(root, `This pyramid was changed elsewhere, so your last change was not applied. Changed meanwhile: ${changes.join("; ") || "unknown"}. ` +
    "The page now shows the current state; your text selection is kept.");
  await reload();
});

reload().then(() => root.classList.add("ready")).catch((error) => showBanner(root, `Could not load the pyramid: ${error.message}`));
