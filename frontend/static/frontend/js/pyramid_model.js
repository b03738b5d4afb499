// The pyramid document in memory, and the builder's actions applied to it the way the server's
// pyramid_actions.py applies them. The builder paints a change the moment it is made; the
// server's answer then confirms it (or refuses it, and the change is rolled back by replaying the
// remaining ones on the last confirmed document). Objects created here get negative ids until
// the server's answer tells their real ones.
//
// An action is a plain object {kind, ...}; applyAction mutates the document (the page then
// repaints only the SCUs and texts whose content changed).

let lastTemporaryId = 0;
/** A fresh id for an object the server has not created yet (negative: never a server id). */
export function temporaryId() { return --lastTemporaryId; }

export class RuleBroken extends Error {}

/** DUCView's contributor label: its parts' texts in text order joined with "..." (as Contributor.label). */
export function contributorLabel(contributor, indexes) {
  const parts = [...contributor.parts].sort((a, b) => (a.reference !== contributor.reference) - (b.reference !== contributor.reference) || a.start - b.start);
  return parts.map((p) => indexes.get(p.reference).slice(p.start, p.end)).join("...");
}

export function findScu(doc, id) { return doc.scus.find((s) => s.id === id) ?? null; }

export function findContributor(doc, id) {
  for (const scu of doc.scus) {
    const contributor = scu.contributors.find((c) => c.id === id);
    if (contributor) return { scu, contributor };
  }
  return null;
}

function need(found, what) {
  if (!found) throw new RuleBroken(`${what} no longer exists.`);
  return found;
}

function twinOf(scu, reference, except = null) {
  return scu.contributors.find((c) => c.reference === reference && !c.legacy_issue && c !== except);
}

function newContributor(id, partId, reference, start, end, indexes) {
  const contributor = { id, reference, label: "", comment: "", legacy_issue: "", proposed: false, parts: [{ id: partId, reference, start, end }] };
  contributor.label = contributorLabel(contributor, indexes);
  return contributor;
}

/** A contributor accepted from a proposal: {contributor, parts: [{part, start, end}], reference} -> the document's shape. */
function proposedContributor(accepted, indexes) {
  const { reference } = accepted;
  const contributor = { id: accepted.contributor, reference, label: "", comment: "", legacy_issue: "", proposed: true,
    parts: accepted.parts.map((p) => ({ id: p.part, reference, start: p.start, end: p.end })) };
  contributor.label = contributorLabel(contributor, indexes);
  return contributor;
}

/** Accepted contributors must come from references the SCU (and each other) have none from. */
function checkAccepted(scu, accepted) {
  const seen = new Set();
  for (const { reference } of accepted) {
    if ((scu && twinOf(scu, reference)) || seen.has(reference)) throw new RuleBroken(`SCU ${scu?.uid ?? ""} would have two contributors from one reference.`);
    seen.add(reference);
  }
}

/** The states an action will touch (SCU id -> deep copy or null), for local undo. */
export function statesOf(doc, scuIds) {
  const states = new Map();
  for (const id of scuIds) { const scu = findScu(doc, id); states.set(id, scu ? structuredClone(scu) : null); }
  return states;
}

/** The SCU ids an action touches (before it is applied). */
export function scusTouchedBy(doc, action) {
  switch (action.kind) {
    case "create_scu": case "split": return [action.scu, ...(action.kind === "split" ? [findContributor(doc, action.contributor)?.scu.id] : [])].filter((x) => x != null);
    case "add_contributor": case "update_scu": case "delete_scu": case "accept_contributors": case "accept_scu": return [action.scu];
    case "add_part": case "update_contributor": case "remove_contributor": return [findContributor(doc, action.contributor)?.scu.id].filter((x) => x != null);
    case "move": return [findContributor(doc, action.contributor)?.scu.id, action.scu].filter((x) => x != null);
    case "merge": return [action.scu, ...action.sources];
    case "restore": return [...action.states.keys()];
    default: throw new Error(`unknown action ${action.kind}`);
  }
}

/**
 * Apply ``action`` to ``doc`` (mutating it); throws RuleBroken, leaving ``doc`` unchanged, when a
 * rule the server would enforce is broken.
 */
export function applyAction(doc, action, indexes) {
  switch (action.kind) {
    case "create_scu": {
      const contributor = newContributor(action.contributor, action.part, action.reference, action.start, action.end, indexes);
      doc.scus.push({ id: action.scu, uid: action.uid ?? null, label: action.label, comment: "", proposed: false, weight: 1, contributors: [contributor] });
      break;
    }
    case "accept_contributors": {
      const scu = need(findScu(doc, action.scu), "The SCU");
      checkAccepted(scu, action.contributors);
      scu.contributors.push(...action.contributors.map((c) => proposedContributor(c, indexes)));
      break;
    }
    case "accept_scu": {
      if (!action.label.trim()) throw new RuleBroken("The label may not be empty.");
      checkAccepted(null, action.contributors);
      doc.scus.push({ id: action.scu, uid: action.uid ?? null, label: action.label.trim(), comment: "", proposed: true, weight: 0,
        contributors: action.contributors.map((c) => proposedContributor(c, indexes)) });
      break;
    }
    case "add_contributor": {
      const scu = need(findScu(doc, action.scu), "The SCU");
      if (twinOf(scu, action.reference)) throw new RuleBroken(`SCU ${scu.uid ?? ""} already has a contributor from this reference.`);
      scu.contributors.push(newContributor(action.contributor, action.part, action.reference, action.start, action.end, indexes));
      break;
    }
    case "add_part": {
      const { contributor } = need(findContributor(doc, action.contributor), "The contributor");
      if (contributor.parts.some((p) => p.reference === contributor.reference && p.start < action.end && p.end > action.start))
        throw new RuleBroken("This span overlaps a part the contributor already has.");
      contributor.parts.push({ id: action.part, reference: contributor.reference, start: action.start, end: action.end });
      contributor.parts.sort((a, b) => a.start - b.start);
      contributor.label = contributorLabel(contributor, indexes);
      break;
    }
    case "remove_contributor": {
      const { scu, contributor } = need(findContributor(doc, action.contributor), "The contributor");
      scu.contributors = scu.contributors.filter((c) => c !== contributor);
      if (!scu.contributors.length) doc.scus = doc.scus.filter((s) => s !== scu); // an SCU without contributors has no meaning
      break;
    }
    case "delete_scu": {
      const scu = need(findScu(doc, action.scu), "The SCU");
      doc.scus = doc.scus.filter((s) => s !== scu);
      break;
    }
    case "update_scu": {
      const scu = need(findScu(doc, action.scu), "The SCU");
      if (action.label !== undefined) {
        if (!action.label.trim()) throw new RuleBroken("The label may not be empty.");
        scu.label = action.label.trim();
      }
      if (action.comment !== undefined) scu.comment = action.comment;
      break;
    }
    case "update_contributor": {
      need(findContributor(doc, action.contributor), "The contributor").contributor.comment = action.comment;
      break;
    }
    case "move": {
      const { scu: source, contributor } = need(findContributor(doc, action.contributor), "The contributor");
      const target = need(findScu(doc, action.scu), "The target SCU");
      if (target === source) throw new RuleBroken("The contributor is already in this SCU.");
      if (!contributor.legacy_issue && twinOf(target, contributor.reference)) throw new RuleBroken(`SCU ${target.uid ?? ""} would have two contributors from one reference.`);
      source.contributors = source.contributors.filter((c) => c !== contributor);
      target.contributors.push(contributor);
      if (!source.contributors.length) doc.scus = doc.scus.filter((s) => s !== source);
      break;
    }
    case "merge": {
      const target = need(findScu(doc, action.scu), "The SCU to merge into");
      const sources = action.sources.filter((id) => id !== target.id).map((id) => need(findScu(doc, id), "An SCU to merge"));
      const present = new Set(target.contributors.filter((c) => !c.legacy_issue).map((c) => c.reference));
      for (const c of sources.flatMap((s) => s.contributors)) {
        if (c.legacy_issue) continue;
        if (present.has(c.reference)) throw new RuleBroken(`SCU ${target.uid ?? ""} would have two contributors from one reference; remove or move one of them first.`);
        present.add(c.reference);
      }
      for (const source of sources) target.contributors.push(...source.contributors);
      doc.scus = doc.scus.filter((s) => !sources.includes(s));
      break;
    }
    case "split": {
      const { scu: source, contributor } = need(findContributor(doc, action.contributor), "The contributor");
      if (source.contributors.length === 1) throw new RuleBroken("This is the SCU's only contributor: there is nothing to split it from.");
      source.contributors = source.contributors.filter((c) => c !== contributor);
      doc.scus.push({ id: action.scu, uid: action.uid ?? null, label: action.label ?? contributor.label, comment: "", proposed: false, weight: 1, contributors: [contributor] });
      break;
    }
    case "restore": {
      for (const [id, state] of action.states) {
        const at = doc.scus.findIndex((s) => s.id === id);
        if (state === null) { if (at >= 0) doc.scus.splice(at, 1); }
        else if (at >= 0) doc.scus[at] = structuredClone(state);
        else doc.scus.push(structuredClone(state));
      }
      break;
    }
    default:
      throw new Error(`unknown action ${action.kind}`);
  }
  for (const scu of doc.scus) scu.weight = scu.contributors.length;
}

/**
 * {scus, contributors, parts}: old id -> new id for every object of ``local`` that ``server``
 * holds under another id (objects created or recreated by the server: new SCUs, undo). SCUs are
 * matched by uid, contributors by SCU, reference and first part, parts by position.
 */
export function matchIds(local, server) {
  const map = { scus: new Map(), contributors: new Map(), parts: new Map() };
  const byUid = new Map(server.scus.map((s) => [s.uid, s]));
  const key = (c) => `${c.reference}:${c.parts[0]?.start}:${c.parts[0]?.end}`;
  for (const scu of local.scus) {
    const twin = scu.uid != null ? byUid.get(scu.uid) : null;
    if (!twin) continue;
    if (twin.id !== scu.id) map.scus.set(scu.id, twin.id);
    const contributors = new Map(twin.contributors.map((c) => [key(c), c]));
    for (const c of scu.contributors) {
      const other = contributors.get(key(c));
      if (!other) continue;
      if (other.id !== c.id) map.contributors.set(c.id, other.id);
      const parts = new Map(other.parts.map((p) => [`${p.reference}:${p.start}:${p.end}`, p.id]));
      for (const p of c.parts) {
        const id = parts.get(`${p.reference}:${p.start}:${p.end}`);
        if (id !== undefined && id !== p.id) map.parts.set(p.id, id);
      }
    }
  }
  return map;
}
