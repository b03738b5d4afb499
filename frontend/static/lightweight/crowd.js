// Keyboard answering on the judging page: P = present, N = not present, for the statement that has
// the focus (or the first unanswered one); then the focus moves to the next statement.
const form = document.querySelector("[data-judge]");
if (form) {
  const sets = [...form.querySelectorAll("[data-statement]")];
  const current = () => sets.find((s) => s.contains(document.activeElement))
    || sets.find((s) => !s.querySelector("input:checked")) || sets[sets.length - 1];
  form.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.toLowerCase();
    const value = key === "p" ? "present" : key === "n" ? "absent" : null;
    if (!value) return;
    const set = current();
    if (!set) return;
    event.preventDefault();
    set.querySelector(`input[value="${value}"]`).checked = true;
    const next = sets[sets.indexOf(set) + 1];
    (next ? next.querySelector("input") : form.querySelector("button[type=submit]")).focus();
  });
}

// The worker's key (frontend/lightweight/views.py, _work) is kept in the site's storage as well as
// in its cookie: a browser blocking third-party cookies keeps none in MTurk's frame, where the
// storage (MTurk's partition) lasts from one HIT to the next. A page whose key was just issued (its
// request presented none) is asked again with the stored key, once (the answer is never "fresh").
const keyForm = document.querySelector("[data-crowd-key]");
if (keyForm) {
  const name = `crowd-key:${keyForm.dataset.crowdKey}`;
  const key = keyForm.elements.key.value;
  let stored = null;
  try {
    stored = localStorage.getItem(name);
  } catch {
    // no storage here: the cookie and the page keep the key
  }
  if (keyForm.hasAttribute("data-fresh") && stored && stored !== key) {
    keyForm.elements.key.value = stored;
    keyForm.submit();
  } else if (stored !== key) {
    try {
      localStorage.setItem(name, key);
    } catch {
      // as above
    }
  }
}
