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
