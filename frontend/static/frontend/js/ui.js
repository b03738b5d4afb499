// Small DOM helpers shared by the editors. Text always goes in as text nodes: user text is never HTML.

export const $ = (selector, scope = document) => scope.querySelector(selector);
export const $$ = (selector, scope = document) => [...scope.querySelectorAll(selector)];

/** el("div", {class: "x", "data-id": 3}, "text", childElement)
 *  No style= or on*= attributes: the Content Security Policy blocks them (use node.style, addEventListener). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "style" || name.startsWith("on")) throw new Error(`el(): the CSP forbids the ${name} attribute`);
    if (name === "value") node.value = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== "" && child !== null && child !== undefined) node.append(child);
  return node;
}

/** "1 SCU", "3 SCUs", "1 change", "0 changes". */
export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The editor's status line (.last-action, role=status): what the last key or click did, naming
 * what it changed (a destructive action also says "Ctrl+Z to undo"), or why a key did nothing.
 * Refusals and failures go to the banner (role=alert) instead. Both editors say it here.
 */
export function sayInStatus(root, message) {
  const line = $(".last-action", root);
  line.textContent = message;
  line.title = message; // the line keeps one row (no layout shift): a long message is cut, whole on hover
}

export function showBanner(root, message) {
  const banner = $(".banner", root);
  banner.textContent = message;
  banner.hidden = false;
}

export function hideBanner(root) {
  $(".banner", root).hidden = true;
}

/** True while the user types in a field (shortcuts must not fire then). */
export function isTyping(event) {
  const target = event.target;
  return target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

/** A small menu at the pointer: items [{label, pick}]. */
export function openChooser(root, event, items) {
  const menu = $(".chooser", root);
  menu.replaceChildren(el("p", { class: "muted" }, "Several SCUs cover this text:"));
  for (const item of items) {
    const button = el("button", { type: "button", role: "menuitem" }, item.label);
    button.addEventListener("click", () => { closeChooser(root); item.pick(); });
    menu.append(button);
  }
  menu.style.left = `${event.pageX}px`;
  menu.style.top = `${event.pageY}px`;
  menu.hidden = false;
  menu.querySelector("button")?.focus();
  setTimeout(() => document.addEventListener("click", () => closeChooser(root), { once: true }), 0);
}

export function closeChooser(root) {
  const menu = $(".chooser", root);
  if (menu) menu.hidden = true;
}

const TEXT_SIZE_KEY = "pyramid.textSize";
const TEXT_SIZES = ["small", "normal", "large", "larger"];

/**
 * The text size control of an editor (its .text-size select): the summaries' and SCUs' text scale
 * with it (editor.css reads data-text-size), and the choice is remembered in this browser for both
 * editors (localStorage; a browser that refuses storage just does not remember).
 */
export function bindTextSize(root) {
  const select = $(".text-size select", root);
  let size = "normal";
  try { size = localStorage.getItem(TEXT_SIZE_KEY) ?? size; } catch { /* storage refused */ }
  if (!TEXT_SIZES.includes(size)) size = "normal";
  const apply = (value) => { root.dataset.textSize = value; select.value = value; };
  apply(size);
  select.addEventListener("change", () => {
    apply(TEXT_SIZES.includes(select.value) ? select.value : "normal");
    try { localStorage.setItem(TEXT_SIZE_KEY, root.dataset.textSize); } catch { /* storage refused */ }
    select.blur(); // the editor's keys work again at once
  });
}
