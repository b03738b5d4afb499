// The annotator's peers as places to read and write, and the reads made before they are asked for
// (issue 21: no page does work on the request that can be prepared). Once a peer has settled, the
// next peer's document and suggestions are read in the background, so "Done, next peer" paints it
// from memory with its suggestions. Only the peer the server named as next (``doc.next``: a peer
// of the annotator's own assignment, walked by the server) is ever read ahead, through the same
// API as a page load, whose permission checks hold.
import { readDocument } from "./session.js";

/**
 * Where a peer's annotation is read and written: its annotation once it exists, else (untouched:
 * nothing stored yet) its page in the assignment, whose first action creates the annotation.
 */
export function placeOf(api, { annotation = null, assignment = null, peer = null }) {
  const base = annotation ? `${api}annotations/${annotation}/` : `${api}assignments/${assignment}/peers/${peer}/`;
  return {
    annotation, assignment, peer,
    start: annotation ? null : `${base}annotation/`,
    full: `${base}full/`,
    suggestions: `${base}suggestions/`,
    page: annotation ? `/annotations/${annotation}/` : `/assignments/${assignment}/peers/${peer}/`,
    read: null,       // a read of ``full`` made ahead ({body, etag} promise)
    suggested: null,  // a read of ``suggestions`` made ahead: {after, promise}
  };
}

/** The place of the next peer the server named (null: none, or not a peer of an assignment). */
export function nextPlace(api, next) {
  if (!next?.assignment) return null;
  return placeOf(api, { annotation: next.annotation, assignment: next.assignment, peer: next.peer_id });
}

/** Read the place's document ahead (once): a failed read is forgotten, to be made again when asked. */
export function prepareDocument(place) {
  if (!place.read) {
    place.read = readDocument(place.full);
    place.read.catch(() => { place.read = null; });
  }
  return place.read;
}

/**
 * The place's suggestions as they are after ``after`` (the state of the annotator's other peers
 * they depend on: suggestions learn from the annotator's own earlier matches), read once per state.
 * ``finishing``: the annotation of the peer shown, read ahead of its "done": the server takes it as
 * finished (what the annotator left unmatched in it tells the ranking too).
 */
export function prepareSuggestions(place, after = null, finishing = null) {
  if (!place.suggested || place.suggested.after !== after) {
    const url = finishing ? `${place.suggestions}?finishing=${finishing}` : place.suggestions;
    const promise = readDocument(url).then(({ body }) => body.suggestions);
    const held = { after, promise };
    place.suggested = held;
    promise.catch(() => { if (place.suggested === held) place.suggested = null; });
  }
  return place.suggested.promise;
}

/**
 * The next peer's document as it is once the peer it was read from is done: its progress counts
 * that peer (read ahead, it was not done yet; ``finished.counted``: read after its "done" was
 * saved, so the server counted it already), and its own ``next`` is never that peer. Pure.
 */
export function afterDone(body, finished) {
  const progress = body.progress && !finished.wasDone && !finished.counted ? { ...body.progress, done: Math.min(body.progress.total, body.progress.done + 1) } : body.progress;
  // Read while the finished peer was not done, the next peer's ``next`` may name it only if it was
  // the last peer left besides the next one: now done, there is none.
  const next = body.next && body.next.peer_id === finished.peer ? null : body.next;
  return { ...body, progress, next };
}
