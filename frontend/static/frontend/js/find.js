// Find SCUs by a regular expression over their labels and contributor texts. The expression is
// untrusted (typed by the user, possibly catastrophic): it runs in a Web Worker that is stopped
// after TIME_LIMIT_MS of running, and patterns are bounded in length. The limit counts from the
// worker's "running" answer, not from the request: starting a worker (fetching and parsing its
// script) can take longer than the limit on a busy machine, and a plain word is no runaway pattern.
// A worker that never starts is given up after START_LIMIT_MS.

export const TIME_LIMIT_MS = 400;
export const START_LIMIT_MS = 15000;
export const MAX_PATTERN = 300;

export class FindError extends Error {}

export class RegexFinder {
  /** startLimitMs: how long a new worker may take to start running a pattern (shorter in tests). */
  constructor({ startLimitMs = START_LIMIT_MS } = {}) {
    this.startLimitMs = startLimitMs;
    this.worker = null;
    this.corpusVersion = null;
    this.query = 0;
    this.pending = null; // {timer, resolve} of the search in progress
  }

  start() {
    this.worker = new Worker(new URL("./find_worker.js", import.meta.url));
    this.corpusVersion = null;
  }

  /**
   * Ids of the SCUs whose label or a contributor text matches ``pattern`` (corpus(): [[id, texts]],
   * sent again when ``version`` changes); null when a newer search superseded this one.
   */
  search(pattern, version, corpus) {
    if (pattern.length > MAX_PATTERN) return Promise.reject(new FindError(`The pattern is too long (at most ${MAX_PATTERN} characters).`));
    if (this.pending) { // the user typed on: the old search is moot, and may be the slow one
      clearTimeout(this.pending.timer);
      this.pending.resolve(null);
      this.worker?.terminate();
      this.worker = null;
    }
    if (!this.worker) this.start();
    if (this.corpusVersion !== version) { this.worker.postMessage({ corpus: corpus() }); this.corpusVersion = version; }
    const query = ++this.query;
    const worker = this.worker;
    return new Promise((resolve, reject) => {
      const pending = { timer: null, resolve };
      const finish = () => {
        clearTimeout(pending.timer);
        if (this.pending === pending) this.pending = null;
        worker.removeEventListener("message", listener);
      };
      const stop = (message) => {
        finish();
        worker.terminate(); // the only way to stop a runaway expression
        if (this.worker === worker) this.worker = null;
        reject(new FindError(message));
      };
      const listener = ({ data }) => {
        if (data.query !== query) return;
        if (data.running) {
          clearTimeout(pending.timer);
          pending.timer = setTimeout(() => stop(`The pattern took longer than ${TIME_LIMIT_MS} ms and was stopped; make it simpler.`), TIME_LIMIT_MS);
          return;
        }
        finish();
        if (data.error) reject(new FindError(`Not a valid regular expression: ${data.error}`));
        else resolve(new Set(data.ids));
      };
      pending.timer = setTimeout(() => stop(`The search could not start within ${this.startLimitMs / 1000} s; try again.`), this.startLimitMs);
      this.pending = pending;
      worker.addEventListener("message", listener);
      worker.postMessage({ query, pattern });
    });
  }
}
