// Runs the user's regular expression over the SCUs' texts off the page's thread: a pattern that
// backtracks for ever only stalls this worker, which the page stops after a time limit. The page's
// clock starts when this worker says it is running the pattern, so a worker slow to start (a busy
// machine) is not taken for a runaway pattern.
let corpus = []; // [[scu id, [label, contributor texts...]], ...]

self.onmessage = ({ data }) => {
  if (data.corpus) { corpus = data.corpus; return; }
  let pattern;
  try {
    pattern = new RegExp(data.pattern, "iu");
  } catch (error) {
    self.postMessage({ query: data.query, error: error.message });
    return;
  }
  self.postMessage({ query: data.query, running: true });
  const ids = [];
  for (const [id, texts] of corpus) if (texts.some((text) => pattern.test(text))) ids.push(id);
  self.postMessage({ query: data.query, ids });
};
