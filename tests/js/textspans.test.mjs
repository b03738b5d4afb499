// The offsets every editor shares (frontend/static/frontend/js/textspans.js): the server counts
// code points, the DOM UTF-16 units; a selection snaps to whole words as DUCView's does.
import assert from "node:assert/strict";
import { test } from "node:test";

import { TextIndex, coverage, snapToWords } from "../../frontend/static/frontend/js/textspans.js";

test("code points and UTF-16 units map both ways around a character outside the BMP", () => {
  const index = new TextIndex("a😀b");
  assert.equal(index.length, 3, "Python's len()");
  assert.equal(index.toUtf16(2), 3);
  assert.equal(index.toCodePoints(3), 2);
  assert.equal(index.slice(1, 2), "😀");
  assert.equal(index.slice(2, 3), "b");
  assert.throws(() => index.toUtf16(4), RangeError);
});

test("a selection snaps to the whole words it touches, without the spaces and punctuation around them", () => {
  assert.deepEqual(snapToWords("The dam burst.", 1, 6), { start: 0, end: 7 });
  assert.deepEqual(snapToWords("The dam burst.", 6, 1), { start: 0, end: 7 }, "a backwards selection");
  assert.deepEqual(snapToWords("\"Stop!\" he said", 0, 7), { start: 1, end: 5 });
  assert.equal(snapToWords("Hi, ... there", 2, 7), null, "no word in it");
});

test("a letter and its combining mark stay together", () => {
  const text = "e\u0301te\u0301, ok";
  assert.deepEqual(snapToWords(text, 0, 6), { start: 0, end: 5 });
});

test("coverage: the share of the non-space characters under at least one span", () => {
  const index = new TextIndex("ab  cd\n");
  assert.equal(coverage(index, [{ start: 0, end: 3 }]), 0.5);
  assert.equal(coverage(index, [{ start: 0, end: 2 }, { start: 1, end: 7 }]), 1);
  assert.equal(coverage(new TextIndex("   "), [{ start: 0, end: 3 }]), 0);
});
