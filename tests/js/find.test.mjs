// Find by regular expression (frontend/static/frontend/js/find.js with its worker, find_worker.js):
// the untrusted pattern runs off the page's thread and a runaway one is stopped. The browser's
// Worker is stood in for by a node worker thread running find_worker.js itself, so a catastrophic
// pattern really runs and is really stopped.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Worker as ThreadWorker } from "node:worker_threads";

import { FindError, MAX_PATTERN, RegexFinder, START_LIMIT_MS, TIME_LIMIT_MS } from "../../frontend/static/frontend/js/find.js";

const started = [];
const startup = { busyMs: 0 }; // how long the next workers take to start (a busy machine, a slow fetch)

/** The browser's Worker API over a worker thread: postMessage, message events, terminate. */
class Worker {
  constructor(url) {
    const source = readFileSync(fileURLToPath(url), "utf-8");
    const glue = `Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${startup.busyMs});\n` // asleep, no CPU
      + "const { parentPort } = require('node:worker_threads');\n"
      + "const self = { postMessage: (data) => parentPort.postMessage(data) };\n"
      + "parentPort.on('message', (data) => self.onmessage({ data }));\n";
    this.thread = new ThreadWorker(glue + source, { eval: true });
    this.listeners = new Map();
    this.terminated = false;
    started.push(this);
  }
  postMessage(data) { this.thread.postMessage(data); }
  addEventListener(type, listener) {
    const wrapped = (data) => listener({ data });
    this.listeners.set(listener, wrapped);
    this.thread.on(type, wrapped);
  }
  removeEventListener(type, listener) { this.thread.off(type, this.listeners.get(listener)); }
  terminate() { this.terminated = true; this.thread.terminate(); }
}
globalThis.Worker = Worker;
after(() => { for (const worker of started) worker.thread.terminate(); });

const CORPUS = [[1, ["The dam burst", "the dam burst after the rain"]], [2, ["Boats sank", "ten boats sank"]], [3, ["Rain fell", "Ça a plu"]]];

test("ids of the SCUs whose label or a contributor text matches, case-insensitively, in Unicode", { timeout: 10000 }, async () => {
  const finder = new RegexFinder();
  let sent = 0;
  const corpus = () => { sent++; return CORPUS; };
  assert.deepEqual(await finder.search("rain", 1, corpus), new Set([1, 3]));
  assert.deepEqual(await finder.search("^ça\\b", 1, corpus), new Set([3]));
  assert.deepEqual(await finder.search("flood", 1, corpus), new Set());
  assert.equal(sent, 1, "the corpus is sent once per version");
  assert.deepEqual(await finder.search("boats", 2, () => { sent++; return [[4, ["Boats"]]]; }), new Set([4]));
  assert.equal(sent, 2);
});

test("a pattern longer than the limit is refused before it runs", { timeout: 10000 }, async () => {
  const finder = new RegexFinder();
  await assert.rejects(finder.search("a".repeat(MAX_PATTERN + 1), 1, () => CORPUS), (error) => error instanceof FindError && /too long/.test(error.message));
  assert.equal(finder.worker, null);
});

test("an invalid expression is reported as such", { timeout: 10000 }, async () => {
  const finder = new RegexFinder();
  await assert.rejects(finder.search("(dam", 1, () => CORPUS), (error) => error instanceof FindError && /Not a valid regular expression/.test(error.message));
});

test("a newer search supersedes the one in progress: it answers null and its worker is stopped", { timeout: 10000 }, async () => {
  const finder = new RegexFinder();
  const runaway = finder.search("^(a+)+$", 1, () => [[9, ["a".repeat(40) + "!"]]]);
  const first = finder.worker;
  const newer = finder.search("a!", 2, () => [[9, ["a".repeat(40) + "!"]]]);
  assert.equal(await runaway, null);
  assert.ok(first.terminated);
  assert.deepEqual(await newer, new Set([9]));
});

test("a runaway expression is stopped after the time limit, and the next search works", { timeout: 10000 }, async () => {
  const finder = new RegexFinder();
  const corpus = () => [[9, ["a".repeat(40) + "!"]]];
  const start = performance.now();
  await assert.rejects(finder.search("^(a+)+$", 1, corpus), (error) => error instanceof FindError && /took longer than/.test(error.message));
  assert.ok(performance.now() - start >= TIME_LIMIT_MS - 5);
  assert.equal(finder.worker, null, "the stopped worker is dropped");
  assert.deepEqual(await finder.search("a+!", 1, corpus), new Set([9]), "a fresh worker, sent the corpus again");
});

test("a worker slower to start than the time limit still runs a plain pattern: the limit counts from the run", { timeout: 10000 }, async () => {
  startup.busyMs = TIME_LIMIT_MS * 2;
  try {
    const finder = new RegexFinder();
    assert.deepEqual(await finder.search("rain", 1, () => CORPUS), new Set([1, 3]));
  } finally {
    startup.busyMs = 0;
  }
});

test("a worker that does not start in time is given up with a message that says so", { timeout: 10000 }, async () => {
  assert.ok(START_LIMIT_MS >= 10 * TIME_LIMIT_MS, "a slow start is allowed far more than a run");
  const finder = new RegexFinder({ startLimitMs: 300 });
  startup.busyMs = 5000;
  try {
    await assert.rejects(finder.search("rain", 1, () => CORPUS), (error) => error instanceof FindError && /could not start/.test(error.message));
    assert.equal(finder.worker, null, "the worker that did not start is dropped");
  } finally {
    startup.busyMs = 0;
  }
  finder.startLimitMs = START_LIMIT_MS; // a fresh worker on a loaded machine may need more than 0.3 s
  assert.deepEqual(await finder.search("boats", 1, () => CORPUS), new Set([2]), "a fresh worker, sent the corpus again");
});
