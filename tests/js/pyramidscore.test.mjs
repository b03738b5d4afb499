// The annotator's provisional score (frontend/static/frontend/js/pyramidscore.js): the
// definitions of scoring/scores.py on small pyramids worked out by hand (the browser suite
// compares it with the server over every DUC peer; these say what each figure is).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CONVENTIONS, averageScuCount, scorePeer, weights } from "../../frontend/static/frontend/js/pyramidscore.js";

const contributor = (reference, ...others) => ({ reference, parts: [reference, ...others].map((r) => ({ reference: r })) });
const scu = (id, ...contributors) => ({ id, contributors });

// Four references; SCU weights 4, 3, 2, 1, 1 under both conventions.
const pyramid = {
  references: [1, 2, 3, 4].map((id) => ({ id })),
  scus: [
    scu(1, contributor(1), contributor(2), contributor(3), contributor(4)),
    scu(2, contributor(1), contributor(2), contributor(3)),
    scu(3, contributor(1), contributor(2)),
    scu(4, contributor(3)),
    scu(5, contributor(4)),
  ],
};

test("both conventions are offered", () => {
  assert.deepEqual(CONVENTIONS, ["nist", "sacrerouge"]);
});

test("Xa: the mean SCU count rounded half up (nist) or up (sacrerouge)", () => {
  assert.equal(averageScuCount(10, 4, "nist"), 3);        // 2.5 -> 3
  assert.equal(averageScuCount(9, 4, "nist"), 2);         // 2.25 -> 2
  assert.equal(averageScuCount(9, 4, "sacrerouge"), 3);   // 2.25 -> 3
  assert.equal(averageScuCount(8, 4, "sacrerouge"), 2);
});

test("a peer's scores: observed weight over the best weight of as many SCUs (original) and of Xa (modified)", () => {
  const matches = [{ scu: 1 }, { scu: 3 }, { scu: 3 }, { scu: null }];
  assert.deepEqual(scorePeer(pyramid, matches, "nist"), {
    convention: "nist", observed_weight: 6, matched_scus: 2, repetitions: 1, non_matching: 1, size: 4,
    average_scus: 11 / 4, xa: 3, max_weight_x: 10, max_weight_xa: 9, original: 6 / 10, modified: 6 / 9,
    repeated: [{ scu: 3, count: 2 }],
  });
});

test("sacrerouge drops a contributor lying in two references, and an SCU with two contributors from one", () => {
  const legacy = {
    references: pyramid.references,
    scus: [
      scu(1, contributor(1), contributor(2, 3)),     // the second lies in two references: weight 1
      scu(2, contributor(1), contributor(1)),        // twice reference 1: out
      scu(3, contributor(4)),
    ],
  };
  assert.deepEqual([...weights(legacy, "nist")], [[1, 2], [2, 2], [3, 1]]);
  assert.deepEqual([...weights(legacy, "sacrerouge")], [[1, 1], [3, 1]]);
  const score = scorePeer(legacy, [{ scu: 2 }, { scu: 1 }], "sacrerouge");
  assert.equal(score.observed_weight, 1, "a match of a dropped SCU counts nowhere");
  assert.equal(score.size, 1);
  assert.equal(score.xa, 1);                          // ceil(2 / 4)
  assert.equal(score.modified, 1);
});

test("a score with a zero denominator is null, not NaN or Infinity", () => {
  const empty = scorePeer(pyramid, [], "nist");
  assert.equal(empty.original, null);
  assert.equal(empty.modified, 0);
  const noReferences = scorePeer({ references: [], scus: pyramid.scus }, [{ scu: 1 }], "nist");
  assert.equal(noReferences.modified, null);
  assert.equal(noReferences.xa, null);
});

test("an unknown convention is an error", () => {
  assert.throws(() => scorePeer(pyramid, [], "rouge"), /unknown convention rouge/);
});
