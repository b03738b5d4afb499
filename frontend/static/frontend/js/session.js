// A document (pyramid or peer annotation) edited through the API, one action at a time.
//
// Every write carries the revision last seen (If-Match); the server answers with the new one, or
// 409 with what changed meanwhile. Actions are sent in order; while the network is down they wait
// in a queue that is shown to the user and sent when the connection is back. An editor may paint a
// change before it is saved (local first): ``url`` and ``body`` may then be functions, called
// when the write is sent, so ids the server gave to earlier changes are known by then; reads
// queued with ``refresh`` see exactly the writes queued before them. Each POST carries an
// Idempotency-Key kept with the queued action, so a retry after a lost answer is not done twice.
// The session may move on to another document (the annotator's next peer, painted before the
// previous one's "done" is saved): each queued write keeps the revision of the document it was
// queued for, so writes of both stay in one ordered queue and never borrow each other's revision.

export class ActionError extends Error {
  constructor(message, fields = {}) { super(message); this.fields = fields; }
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** A new Idempotency-Key: random, made once per action and sent again with each retry of it, so a
 * create whose answer was lost (a 500 after the commit, the network gone) is not made twice. */
function newIdempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16)); // randomUUID needs HTTPS; this does not
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function messageOf(body) {
  if (!body || typeof body !== "object") return "The server refused the change.";
  if (body.detail) return String(body.detail);
  const parts = [];
  for (const value of Object.values(body)) { // the messages say what is wrong; field names are the API's words, not the user's
    parts.push(Array.isArray(value) ? value.join(" ") : typeof value === "object" ? messageOf(value) : String(value));
  }
  return parts.join(" ") || "The server refused the change.";
}

/** GET ``url`` as JSON: {body, etag} (the ETag is the document's revision where the API gives one). */
export async function readDocument(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new ActionError(`Could not load (${response.status}).`);
  return { body: await response.json(), etag: response.headers.get("ETag")?.replaceAll('"', "") ?? null };
}

export class DocumentSession extends EventTarget {
  /** fullUrl: GET -> the whole document, with its revision in the ETag header. */
  constructor(fullUrl) {
    super();
    this.fullUrl = fullUrl;
    this.document = { revision: null }; // the document writes are queued for now (see ``open``)
    this.queue = [];      // [{method, url, body, label, resolve, reject}]
    this.sending = false;
    this.status = "saved"; // saved | saving | offline | failed | conflict
    window.addEventListener("online", () => this.flush());
  }

  get revision() { return this.document.revision; }
  set revision(value) { this.document.revision = value; }

  /** Edit another document from now on: writes queued before keep their own document's revision. */
  open(fullUrl) {
    this.fullUrl = fullUrl;
    this.document = { revision: null };
  }

  /** Writes not yet saved (queued reads do not count). */
  get pending() { return this.queue.filter((item) => !item.read).length; }

  setStatus(status, detail = "") {
    this.status = status;
    this.dispatchEvent(new CustomEvent("status", { detail: { status, pending: this.pending, queued: this.queue.length, message: detail } }));
  }

  async load() {
    return this.adopt(await readDocument(this.fullUrl));
  }

  /** Take a read of the document (``readDocument``, e.g. made ahead of time) as its current state. */
  adopt({ body, etag }) {
    this.revision = etag;
    if (this.status === "conflict" && !this.pending) this.setStatus("saved"); // the current state is shown: resolved
    this.dispatchEvent(new CustomEvent("loaded", { detail: body }));
    return body;
  }

  /** Queue a write; resolves with the server's answer once saved. */
  send(method, url, body = undefined, label = "") {
    return new Promise((resolve, reject) => {
      this.queue.push({ method, url, body, label, resolve, reject, document: this.document });
      this.flush();
    });
  }

  /** Queue a read of the whole document after the writes queued so far; resolves with it. */
  refresh() {
    return new Promise((resolve, reject) => {
      this.queue.push({ read: true, method: "GET", url: this.fullUrl, resolve, reject, document: this.document });
      this.flush();
    });
  }

  retry() { this.flush(); }

  async flush() {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length) {
        const item = this.queue[0];
        if (!item.read) this.setStatus("saving");
        let url, body;
        try {
          url = typeof item.url === "function" ? item.url() : item.url;
          body = typeof item.body === "function" ? item.body() : item.body;
        } catch (error) { // e.g. it names an object whose creation the server refused
          this.queue.shift();
          item.reject(error instanceof ActionError ? error : new ActionError(error.message || String(error)));
          continue;
        }
        let response;
        try {
          const headers = item.read ? { Accept: "application/json" }
            : { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken(), "If-Match": `"${item.document.revision}"` };
          if (item.method === "POST") headers["Idempotency-Key"] = item.key ??= newIdempotencyKey();
          response = await fetch(url, {
            method: item.method, credentials: "same-origin", headers,
            body: body === undefined ? undefined : JSON.stringify(body),
          });
        } catch {
          const pending = this.pending;
          this.setStatus("offline", `Offline: ${pending} change${pending === 1 ? "" : "s"} not saved yet; they will be sent when the connection is back.`);
          setTimeout(() => this.flush(), 3000);
          return;
        }
        const payload = response.status === 204 ? {} : await response.json().catch(() => ({}));
        if (response.status >= 500) {
          const pending = this.pending;
          this.setStatus("failed", `Saving failed (server error ${response.status}): ${pending} change${pending === 1 ? "" : "s"} not saved.`);
          return; // kept in the queue for retry()
        }
        if (response.status === 409 && payload.code === "idempotency_in_progress") {
          setTimeout(() => this.flush(), 1000); // its first attempt is still running: its answer comes next
          return;
        }
        this.queue.shift();
        if (response.status === 409) {
          item.document.revision = payload.revision ?? item.document.revision;
          this.rejectAll(new ActionError("Changed elsewhere: your change was not applied."));
          this.setStatus("conflict", messageOf(payload));
          this.dispatchEvent(new CustomEvent("conflict", { detail: payload }));
          item.reject(new ActionError("Changed elsewhere.", payload));
          return;
        }
        if (!response.ok) {
          item.reject(new ActionError(messageOf(payload), payload));
          if (this.pending) this.setStatus("saving");
          continue;
        }
        if (payload.revision !== undefined) item.document.revision = String(payload.revision);
        else if (response.headers.get("ETag")) item.document.revision = response.headers.get("ETag").replaceAll('"', "");
        if (!item.read) this.setStatus(this.pending ? "saving" : "saved");
        item.resolve(payload);
        await null; // let the editor learn from this answer (e.g. new ids) before the next write is built
      }
      this.setStatus("saved");
    } finally {
      this.sending = false;
    }
  }

  rejectAll(error) {
    for (const item of this.queue.splice(0)) item.reject(error);
  }
}

/**
 * Keep a status element (role=status) in step with a session. The pill shows a short word of one
 * width (CSS) whatever the status, so a change of status never reflows the toolbar and never moves
 * the text or the SCU under the pointer (an offline message once wrapped the toolbar mid-drag and
 * the next click landed beside its SCU); the whole message is its title and is read to screen
 * readers from a hidden part of the live region.
 */
export function bindStatus(session, element, retryButton) {
  const labels = { saved: "All changes saved", saving: "Saving…", offline: "Offline", failed: "Not saved", conflict: "Conflict" };
  const shown = document.createElement("span");
  const spoken = document.createElement("span");
  spoken.className = "visually-hidden";
  element.replaceChildren(shown, spoken);
  shown.textContent = labels[session.status];
  session.addEventListener("status", (event) => {
    const { status, message, pending } = event.detail;
    element.dataset.status = status;
    shown.textContent = (status === "offline" || status === "failed") && pending ? `${labels[status]}: ${pending} unsaved` : labels[status];
    spoken.textContent = message ? `. ${message}` : "";
    element.title = message || labels[status];
    if (retryButton) retryButton.hidden = status !== "failed";
  });
  if (retryButton) retryButton.addEventListener("click", () => session.retry());
  window.addEventListener("beforeunload", (event) => {
    if (session.pending) { event.preventDefault(); event.returnValue = ""; }
  });
}

/**
 * The editors' way to run one action: the page is marked busy until it shows the server's answer
 * (tests and the UI wait on that); a refusal is shown in the banner, a conflict is left to the
 * session's "conflict" event. ``clearSelection`` runs after a success unless ``keepSelection``.
 */
export function actionRunner(root, { reload, clearSelection, afterError, showError, hideError }) {
  return async function act(promise, { keepSelection = false } = {}) {
    root.dataset.busy = "1";
    try {
      const result = await promise;
      if (!keepSelection) clearSelection();
      hideError();
      await reload();
      return result;
    } catch (error) {
      if (error instanceof ActionError && error.fields?.changes) return null;
      showError(error.message || String(error));
      afterError();
      return null;
    } finally {
      delete root.dataset.busy;
    }
  };
}
