// Find SCUs by a regular expression over their labels and contributor texts. The expression is
// untrusted (typed by the user, possibly catastrophic): it runs in a Web Worker that is stopped
// after TIME_LIMIT_MS, and patterns are bounded in length.

export const TIME_LIMIT_MS = 400;
export const MAX_PATTERN = 300;

export class FindError extends Error {}

export class RegexFinder {
  constructor() {
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
      const timer = setTimeout(() => {
        worker.terminate(); // the only way to stop a runaway expression
        if (this.worker === worker) this.worker = null;
        this.pending = null;
        reject(new FindError(`The pattern took longer than ${TIME_LIMIT_MS} ms and was stopped; make it simpler.`));
      }, TIME_LIMIT_MS);
      const listener = ({ data }) => {
        if (data.query !== query) return;
        clearTimeout(timer);
        this.pending = null;
        worker.removeEventListener("message", listener);
        if (data.error) reject(new FindError(`Not a valid regular expression: ${data.error}`));
        else resolve(new Set(data.ids));
      };
      this.pending = { timer, resolve };
      worker.addEventListener("message", listener);
      worker.postMessage({ query, pattern });
    });
  }
}
