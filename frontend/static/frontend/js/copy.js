// Copy a read-only field's text (a link to share) with its button. The clipboard API needs a
// secure context and the page's permission; where it is missing or refused, the field's text is
// selected and copied the old way (execCommand), and failing that the button says how to finish.
export async function copyField(field, button) {
  field.focus();
  field.select();
  let copied;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    try {
      copied = document.execCommand("copy");
    } catch {
      copied = false;
    }
  }
  button.textContent = copied ? "Copied" : "Press Ctrl+C";
  return copied;
}
