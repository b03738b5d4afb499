// The builder's local-first rules (frontend/static/frontend/js/pyramid_model.js): an action is
// painted at once, so the page must refuse locally what the server would refuse, leave the
// document untouched when it does (the page then replays the remaining actions on the confirmed
// document), take an action back exactly (local undo) and learn the ids the server gave.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  RuleBroken, applyAction, contributorLabel, findContributor, findScu, matchIds, scusTouchedBy, statesOf, temporaryId,
} from "../../frontend/static/frontend/js/pyramid_model.js";
import { TextIndex } from "../../frontend/static/frontend/js/textspans.js";

// Two references; offsets are code points (the emoji is one), as the server stores them.
const TEXTS = { 1: "The dam 😀 burst after the rain.", 2: "Rain broke the old dam." };
const indexes = new Map(Object.entries(TEXTS).map(([id, text]) => [Number(id), new TextIndex(text)]));

function documentWith(...scus) {
  return { revision: 1, scus: structuredClone(scus) };
}

const damScu = {
  id: 10, uid: 1, label: "The dam burst", comment: "", weight: 1,
  contributors: [{ id: 100, reference: 1, label: "The dam", comment: "", legacy_issue: "", parts: [{ id: 1000, reference: 1, start: 0, end: 7 }] }],
};
const rainScu = {
  id: 11, uid: 2, label: "It rained", comment: "", weight: 1,
  contributors: [{ id: 101, reference: 2, label: "Rain", comment: "", legacy_issue: "", parts: [{ id: 1001, reference: 2, start: 0, end: 4 }] }],
};

function refused(doc, action, message) {
  const before = structuredClone(doc);
  assert.throws(() => applyAction(doc, action, indexes), (error) => error instanceof RuleBroken && message.test(error.message));
  assert.deepEqual(doc, before, "a refused action leaves the document as it was");
}

test("temporary ids are negative and never repeat", () => {
  const a = temporaryId(), b = temporaryId();
  assert.ok(a < 0 && b < 0 && a !== b);
});

test("a contributor's label is its parts' texts in text order, by code points, joined with ...", () => {
  const contributor = { reference: 1, parts: [{ reference: 1, start: 10, end: 15 }, { reference: 1, start: 0, end: 9 }] };
  assert.equal(contributorLabel(contributor, indexes), "The dam 😀...burst");
});

test("create_scu adds an SCU of weight 1 labelled as asked, its contributor labelled from the text", () => {
  const doc = documentWith();
  applyAction(doc, { kind: "create_scu", scu: -1, contributor: -2, part: -3, reference: 2, start: 15, end: 22, label: "Old dam" }, indexes);
  assert.deepEqual(doc.scus, [{
    id: -1, uid: null, label: "Old dam", comment: "", proposed: false, weight: 1,
    contributors: [{ id: -2, reference: 2, label: "old dam", comment: "", legacy_issue: "", proposed: false, parts: [{ id: -3, reference: 2, start: 15, end: 22 }] }],
  }]);
});

test("accepted proposed contributors are added at once, marked proposed, or none when one breaks the rule", () => {
  const doc = documentWith(damScu);
  const accepted = (reference, start, end) => ({ contributor: temporaryId(), reference, parts: [{ part: temporaryId(), start, end }] });
  refused(doc, { kind: "accept_contributors", scu: 10, contributors: [accepted(2, 0, 4), accepted(1, 12, 17)] }, /two contributors from one reference/);
  refused(doc, { kind: "accept_contributors", scu: 10, contributors: [accepted(2, 0, 4), accepted(2, 19, 22)] }, /two contributors from one reference/);
  const action = { kind: "accept_contributors", scu: 10, contributors: [accepted(2, 15, 22)] };
  assert.deepEqual(scusTouchedBy(doc, action), [10]);
  const before = statesOf(doc, [10]);
  applyAction(doc, action, indexes);
  const scu = findScu(doc, 10);
  assert.equal(scu.weight, 2);
  assert.deepEqual(scu.contributors.map((c) => [c.reference, c.label, c.proposed ?? false]), [[1, "The dam", false], [2, "old dam", true]]);
  applyAction(doc, { kind: "restore", states: before }, indexes); // one undo step takes them back
  assert.deepEqual(findScu(doc, 10), damScu);
});

test("an accepted proposed SCU is a new SCU marked proposed with all its contributors", () => {
  const doc = documentWith(damScu);
  const contributors = [
    { contributor: -31, reference: 1, parts: [{ part: -32, start: 0, end: 3 }, { part: -33, start: 10, end: 15 }] },
    { contributor: -34, reference: 2, parts: [{ part: -35, start: 0, end: 4 }] },
  ];
  applyAction(doc, { kind: "accept_scu", scu: -30, label: " It rained ", contributors }, indexes);
  const scu = findScu(doc, -30);
  assert.deepEqual([scu.label, scu.proposed, scu.weight], ["It rained", true, 2]);
  assert.deepEqual(scu.contributors.map((c) => [c.id, c.label, c.proposed, c.parts.map((p) => p.id)]), [[-31, "The...burst", true, [-32, -33]], [-34, "Rain", true, [-35]]]);
  refused(doc, { kind: "accept_scu", scu: -40, label: "  ", contributors }, /may not be empty/);
});

test("an SCU takes one contributor per reference (a legacy one aside)", () => {
  const doc = documentWith(damScu);
  refused(doc, { kind: "add_contributor", scu: 10, contributor: -1, part: -2, reference: 1, start: 12, end: 17 }, /already has a contributor from this reference/);
  applyAction(doc, { kind: "add_contributor", scu: 10, contributor: -1, part: -2, reference: 2, start: 19, end: 22 }, indexes);
  assert.equal(findScu(doc, 10).weight, 2);
  assert.equal(findContributor(doc, -1).contributor.label, "dam");
});

test("a part may not overlap the contributor's parts; an added one is kept in text order and relabels", () => {
  const burst = structuredClone(damScu);
  burst.contributors[0].parts = [{ id: 1000, reference: 1, start: 10, end: 15 }];
  const doc = documentWith(burst);
  refused(doc, { kind: "add_part", contributor: 100, part: -1, start: 4, end: 12 }, /overlaps a part/);
  applyAction(doc, { kind: "add_part", contributor: 100, part: -1, start: 0, end: 7 }, indexes);
  const { contributor } = findContributor(doc, 100);
  assert.deepEqual(contributor.parts.map((p) => [p.start, p.end]), [[0, 7], [10, 15]]);
  assert.equal(contributor.label, "The dam...burst");
});

test("a label may not be empty; it is stored trimmed", () => {
  const doc = documentWith(damScu);
  refused(doc, { kind: "update_scu", scu: 10, label: "   " }, /may not be empty/);
  applyAction(doc, { kind: "update_scu", scu: 10, label: "  Dam failed " }, indexes);
  assert.equal(findScu(doc, 10).label, "Dam failed");
});

test("acting on what no longer exists is refused with what is gone", () => {
  refused(documentWith(damScu), { kind: "delete_scu", scu: 99 }, /The SCU no longer exists/);
  refused(documentWith(damScu), { kind: "update_contributor", contributor: 99, comment: "x" }, /The contributor no longer exists/);
});

test("removing an SCU's last contributor removes the SCU", () => {
  const doc = documentWith(damScu, rainScu);
  applyAction(doc, { kind: "remove_contributor", contributor: 100 }, indexes);
  assert.deepEqual(doc.scus.map((s) => s.id), [11]);
});

test("move: never into its own SCU nor beside a contributor of the same reference; an emptied SCU goes", () => {
  const doc = documentWith(damScu, rainScu);
  refused(doc, { kind: "move", contributor: 100, scu: 10 }, /already in this SCU/);
  const twin = structuredClone(rainScu);
  twin.contributors[0].reference = 1;
  refused(documentWith(damScu, twin), { kind: "move", contributor: 100, scu: 11 }, /two contributors from one reference/);
  assert.deepEqual(scusTouchedBy(doc, { kind: "move", contributor: 100, scu: 11 }), [10, 11]);
  applyAction(doc, { kind: "move", contributor: 100, scu: 11 }, indexes);
  assert.deepEqual(doc.scus.map((s) => [s.id, s.weight]), [[11, 2]]);
});

test("merge checks every source before changing anything", () => {
  const third = { ...structuredClone(rainScu), id: 12, uid: 3 };
  const doc = documentWith(damScu, rainScu, third);
  refused(doc, { kind: "merge", scu: 10, sources: [11, 12] }, /two contributors from one reference/);
  applyAction(doc, { kind: "merge", scu: 10, sources: [11] }, indexes);
  assert.deepEqual(doc.scus.map((s) => [s.id, s.weight]), [[10, 2], [12, 1]]);
});

test("a contributor with a legacy issue does not count as the reference's contributor", () => {
  const legacy = structuredClone(rainScu);
  legacy.contributors[0].reference = 1;
  legacy.contributors[0].legacy_issue = "two references";
  const doc = documentWith(damScu, legacy);
  applyAction(doc, { kind: "merge", scu: 10, sources: [11] }, indexes);
  assert.equal(findScu(doc, 10).weight, 2);
  const flagged = structuredClone(rainScu);
  flagged.contributors[0].legacy_issue = "two references";
  const other = documentWith(flagged);
  applyAction(other, { kind: "add_contributor", scu: 11, contributor: -1, part: -2, reference: 2, start: 15, end: 22 }, indexes);
  assert.equal(findScu(other, 11).weight, 2, "beside the legacy contributor of reference 2");
});

test("split: not an SCU's only contributor; the new SCU is labelled as the contributor by default", () => {
  refused(documentWith(damScu), { kind: "split", contributor: 100, scu: -1 }, /only contributor/);
  const two = structuredClone(damScu);
  two.contributors.push(structuredClone(rainScu.contributors[0]));
  const doc = documentWith(two);
  assert.deepEqual(scusTouchedBy(doc, { kind: "split", contributor: 101, scu: -1 }), [-1, 10]);
  applyAction(doc, { kind: "split", contributor: 101, scu: -1 }, indexes);
  assert.deepEqual(doc.scus.map((s) => [s.id, s.label, s.weight]), [[10, "The dam burst", 1], [-1, "Rain", 1]]);
});

test("undo restores exactly the states an action touched, redo reapplies them", () => {
  const doc = documentWith(damScu, rainScu);
  const original = structuredClone(doc);
  const action = { kind: "merge", scu: 10, sources: [11] };
  const keys = scusTouchedBy(doc, action);
  const before = statesOf(doc, keys);
  applyAction(doc, action, indexes);
  const after = statesOf(doc, keys);
  const merged = structuredClone(doc);
  applyAction(doc, { kind: "restore", states: before }, indexes);
  assert.deepEqual(new Set(doc.scus.map((s) => s.id)), new Set(original.scus.map((s) => s.id)));
  assert.deepEqual(findScu(doc, 10), findScu(original, 10));
  assert.deepEqual(findScu(doc, 11), findScu(original, 11));
  applyAction(doc, { kind: "restore", states: after }, indexes);
  assert.deepEqual(doc, merged);
});

test("the states kept for undo are copies: later changes do not alter them", () => {
  const doc = documentWith(damScu);
  const states = statesOf(doc, [10, 99]);
  findScu(doc, 10).label = "changed";
  assert.equal(states.get(10).label, "The dam burst");
  assert.equal(states.get(99), null);
});

test("matchIds: the server's ids for what the page created, by uid, then reference and first part, then part", () => {
  const local = documentWith({
    id: -5, uid: 7, label: "x", comment: "", weight: 1,
    contributors: [{ id: -6, reference: 2, label: "", comment: "", legacy_issue: "", parts: [{ id: -7, reference: 2, start: 0, end: 4 }, { id: -8, reference: 2, start: 6, end: 11 }] }],
  }, damScu);
  const server = documentWith({
    id: 50, uid: 7, label: "x", comment: "", weight: 1,
    contributors: [{ id: 60, reference: 2, label: "", comment: "", legacy_issue: "", parts: [{ id: 70, reference: 2, start: 0, end: 4 }, { id: 71, reference: 2, start: 6, end: 11 }] }],
  }, damScu);
  const map = matchIds(local, server);
  assert.deepEqual([...map.scus], [[-5, 50]]);
  assert.deepEqual([...map.contributors], [[-6, 60]]);
  assert.deepEqual([...map.parts], [[-7, 70], [-8, 71]]);
});

test("an unknown action is a programming error, not a broken rule", () => {
  assert.throws(() => applyAction(documentWith(), { kind: "rename" }, indexes), (error) => !(error instanceof RuleBroken));
  assert.throws(() => scusTouchedBy(documentWith(), { kind: "rename" }), /unknown action/);
});
