// The run page: each crowd link's Copy button copies the link next to it.
import { copyField } from "../frontend/js/copy.js";

document.querySelectorAll("[data-copy-link]").forEach((button) => {
  const field = button.closest(".copy-field").querySelector("input");
  button.addEventListener("click", () => copyField(field, button));
});
