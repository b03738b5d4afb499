// Keeps a dashboard page's figures up to date while the coordinator watches.
// Polls status.json; while the stored figures lag behind the data it shows "updating…"; when a new
// snapshot lands it fetches this page again and swaps in its [data-figures] part (server-rendered,
// escaped by the templates; text set here goes in with textContent only). A page rendered while the
// dataset's first figures are computed ([data-computing]) reloads itself once they are stored.

const POLL_MS = 3000;
const root = document.querySelector("[data-live]");

async function refreshFigures() {
  const response = await fetch(window.location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } });
  if (!response.ok) return false;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("[data-figures]");
  const current = document.querySelector("[data-figures]");
  if (!fresh || !current) return false;
  current.replaceWith(document.importNode(fresh, true));
  document.dispatchEvent(new CustomEvent("figures:replaced"));   // charts.js redraws
  return true;
}

async function poll(state) {
  try {
    const response = await fetch(root.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (response.ok) {
      const status = await response.json();
      if (root.hasAttribute("data-computing")) {
        // The first figures were being computed: the whole page (its controls too) comes with them.
        if (status.computed_at) {
          window.location.reload();
          return;
        }
      } else {
        if (status.computed_at !== state.computedAt && (await refreshFigures())) {
          state.computedAt = status.computed_at;
          root.dataset.computedAt = status.computed_at;
          const time = root.querySelector("[data-as-of]");
          if (time) {
            time.textContent = status.as_of;
            time.setAttribute("datetime", status.computed_at);
          }
        }
        const settled = Boolean(status.current) && status.computed_at === state.computedAt;
        for (const mark of root.querySelectorAll("[data-updating], [data-updating-note]")) mark.hidden = settled;
      }
    }
  } catch {
    // Offline or the server restarting: try again at the next tick.
  }
  window.setTimeout(() => poll(state), document.hidden ? POLL_MS * 4 : POLL_MS);
}

if (root && root.dataset.statusUrl) {
  window.setTimeout(() => poll({ computedAt: root.dataset.computedAt }), POLL_MS);
}
