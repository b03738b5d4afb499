// Pyramid scores in the browser: the definitions of scoring/scores.py (modified and original, both
// conventions), so the annotator can show a provisional score the moment a match is made. The
// server's stored score stays the reference: tests run this module and scoring/ over every DUC
// 2006/2007 peer annotation and require identical numbers.
//
// Input: the pyramid of an annotation document (GET /api/annotations/{id}/full/: references, SCUs
// with contributors and their parts) and its matches ({scu: id or null}).
//
// nist: weight = number of contributors; Xa = mean SCU count of the references rounded half up.
// sacrerouge: contributors whose parts lie in several references are dropped, then SCUs left
// without contributors or with two contributors from one reference; weight = distinct references;
// Xa = ceiling of the mean; matches of dropped SCUs count nowhere.

export const CONVENTIONS = ["nist", "sacrerouge"];

/** The references a contributor lies in: its own and those of its parts (legacy data has two). */
function referencesOf(contributor) {
  const refs = new Set([contributor.reference]);
  for (const part of contributor.parts ?? []) refs.add(part.reference);
  return refs;
}

/** SCU id -> weight (>= 1) of every SCU taking part in scoring under the convention. */
export function weights(pyramid, convention) {
  const out = new Map();
  for (const scu of pyramid.scus) {
    const contributors = scu.contributors.map(referencesOf);
    let weight;
    if (convention === "nist") weight = contributors.length;
    else if (convention === "sacrerouge") {
      const kept = contributors.filter((refs) => refs.size === 1).map((refs) => [...refs][0]);
      weight = kept.length && new Set(kept).size === kept.length ? kept.length : 0;
    } else throw new Error(`unknown convention ${convention}`);
    if (weight > 0) out.set(scu.id, weight);
  }
  return out;
}

/** Xa from the sum of the weights and the number of references, in exact integer arithmetic. */
export function averageScuCount(total, n, convention) {
  if (convention === "nist") return Math.floor((2 * total + n) / (2 * n)); // floor(total/n + 1/2)
  return Math.floor((total + n - 1) / n);                                   // ceil(total/n)
}

const maxWeight = (desc, k) => desc.slice(0, Math.max(k, 0)).reduce((a, b) => a + b, 0);

/**
 * The scores of a peer: {convention, observed_weight, matched_scus, repetitions, non_matching,
 * size, average_scus, xa, max_weight_x, max_weight_xa, original, modified, repeated} (a score is
 * null when its denominator is 0, as in scoring/scores.py). DUCView's score dialog also shows the
 * maximum attainable weights (max_weight_x, max_weight_xa), the mean SCU count per reference before
 * rounding (average_scus) and the SCUs the peer expresses several times: ``repeated``, [{scu,
 * count}] of the SCUs taking part matched more than once, most often first (then by id).
 */
export function scorePeer(pyramid, matches, convention = "nist") {
  const w = weights(pyramid, convention);
  const counts = new Map();
  let nonMatching = 0;
  for (const m of matches) {
    if (m.scu === null || m.scu === undefined) nonMatching += 1;
    else if (w.has(m.scu)) counts.set(m.scu, (counts.get(m.scu) ?? 0) + 1);
  }
  let observed = 0;
  let repetitions = 0;
  for (const [scu, count] of counts) { observed += w.get(scu); repetitions += count - 1; }
  const matched = counts.size;
  const size = matched + repetitions + nonMatching;
  const desc = [...w.values()].sort((a, b) => b - a);
  const total = desc.reduce((a, b) => a + b, 0);
  const n = pyramid.references.length;
  const repeated = [...counts].filter(([, count]) => count > 1).map(([scu, count]) => ({ scu, count }))
    .sort((a, b) => b.count - a.count || a.scu - b.scu);
  const mwX = maxWeight(desc, size);
  const original = desc.length && size ? observed / mwX : null;
  const xa = n ? averageScuCount(total, n, convention) : null;
  const average = n ? total / n : null; // scoring/scores.py: float(Fraction(total, n)), the same correctly rounded double
  const mwXa = n ? maxWeight(desc, xa) : null;
  const modified = n && desc.length && mwXa ? observed / mwXa : null;
  return {
    convention, observed_weight: observed, matched_scus: matched, repetitions, non_matching: nonMatching,
    size, average_scus: average, xa, max_weight_x: mwX, max_weight_xa: mwXa, original, modified, repeated,
  };
}
