// Runs the user's regular expression over the SCUs' texts off the page's thread: a pattern that
// backtracks for ever only stalls this worker, which the page stops after a time limit.
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
  const ids = [];
  for (const [id, texts] of corpus) if (texts.some((text) => pattern.test(text))) ids.push(id);
  self.postMessage({ query: data.query, ids });
};
