// Set-up pages: preview a form's input without leaving the page (its files stay chosen), and
// allow Save only while the preview shown is of the input as it is now.
import { copyField } from "../frontend/js/copy.js";

const previewForm = document.querySelector("[data-preview-form]");

function previewState(form, ok, text) {
  form.querySelector("[data-save-button]").disabled = !ok;
  form.querySelector("[data-preview-state]").textContent = text;
}

async function preview(form, button) {
  const target = document.querySelector("[data-preview]");
  const body = new FormData(form);
  body.set("action", "preview");
  button.disabled = true;
  previewState(form, false, "Reading…");
  try {
    const response = await fetch(form.getAttribute("action") || location.href, {  // form.action is the button named "action"
      method: "POST", body, headers: { "X-Preview": "fragment" }, credentials: "same-origin",
    });
    if (response.status === 413) {
      previewState(form, false, "The upload is too large: nothing was read.");
      target.replaceChildren();
      return;
    }
    target.innerHTML = await response.text();  // rendered by the server's template, escaped there
    const plan = target.querySelector("[data-plan]");
    const ok = plan && plan.dataset.ok === "1";
    previewState(form, ok, ok ? "Check the preview below, then save." : "Fix what the preview lists, then preview again.");
    target.scrollIntoView({ behavior: "smooth", block: "start" });
  } catch (error) {
    previewState(form, false, `The preview failed (${error.message}); try again.`);
  } finally {
    button.disabled = false;
  }
}

if (previewForm) {
  previewForm.addEventListener("submit", (event) => {
    const button = event.submitter;
    if (button && button.matches("[data-preview-button]")) {
      event.preventDefault();
      preview(previewForm, button);
    }
  });
  const stale = () => {
    if (document.querySelector("[data-plan]")) previewState(previewForm, false, "Changed since the preview: preview again before saving.");
  };
  previewForm.addEventListener("input", stale);
  previewForm.addEventListener("change", stale);
}

// DUCView import: send the files with upload progress, then show the server's report in place.
const uploadForm = document.querySelector("[data-upload-form]");

function uploadFiles(form) {
  const button = form.querySelector("[data-upload-button]");
  const box = form.querySelector("[data-upload-progress]");
  const bar = form.querySelector("[data-upload-bar]");
  const text = form.querySelector("[data-upload-text]");
  const state = form.querySelector("[data-upload-state]");
  const result = document.querySelector("[data-import-result]");
  const request = new XMLHttpRequest();
  request.open("POST", form.getAttribute("action") || location.href);
  request.setRequestHeader("X-Preview", "fragment");
  request.upload.addEventListener("progress", (event) => {
    if (!event.lengthComputable) return;
    const percent = Math.round((100 * event.loaded) / event.total);
    bar.value = percent;
    text.textContent = `Uploading… ${percent}%`;
  });
  request.upload.addEventListener("load", () => {
    bar.removeAttribute("value");  // indeterminate: the server is importing
    text.textContent = "Uploaded. Importing and scoring on the server…";
  });
  request.addEventListener("load", () => {
    button.disabled = false;
    box.hidden = true;
    if (request.status === 413) {
      state.textContent = "The upload is too large: nothing was imported.";
      return;
    }
    if (request.status >= 500) {
      state.textContent = `The server failed (${request.status}); nothing was shown. Try again.`;
      return;
    }
    result.innerHTML = request.responseText;  // rendered and escaped by the server's template
    state.textContent = request.status === 200 ? "Done." : "Nothing was imported.";
    result.scrollIntoView({ behavior: "smooth", block: "start" });
  });
  request.addEventListener("error", () => {
    button.disabled = false;
    box.hidden = true;
    state.textContent = "The connection failed; nothing may have been imported. Try again.";
  });
  button.disabled = true;
  box.hidden = false;
  bar.value = 0;
  text.textContent = "Uploading… 0%";
  state.textContent = "";
  result.replaceChildren();
  request.send(new FormData(form));
}

if (uploadForm) {
  uploadForm.addEventListener("submit", (event) => {
    event.preventDefault();
    uploadFiles(uploadForm);
  });
}

// Invitation link: one click copies it.
const copyButton = document.querySelector("[data-copy]");
if (copyButton) {
  copyButton.addEventListener("click", () => copyField(document.querySelector("[data-invitation-url]"), copyButton));
}

// New account: the initial password field only when a password is chosen.
const accessRadios = document.querySelectorAll("[data-account-form] input[name$='access']");
function showPasswordField() {
  const chosen = document.querySelector("[data-account-form] input[name$='access']:checked");
  const field = document.querySelector("[data-account-form] [data-field$='password']");
  if (field) field.hidden = !chosen || chosen.value !== "password";
}
accessRadios.forEach((radio) => radio.addEventListener("change", showPasswordField));
showPasswordField();

// Deleting a topic: the button waits until the topic id is typed exactly (the server checks it too).
const deleteButton = document.querySelector("[data-delete-form] [data-delete-button]");
if (deleteButton) {
  const typed = document.querySelector("[data-delete-form] input[name='confirm']");
  const check = () => { deleteButton.disabled = typed.value.trim() !== deleteButton.dataset.confirmValue; };
  typed.addEventListener("input", check);
  check();
}
