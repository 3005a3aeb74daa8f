// hymt web UI: the error box, with the server's message, field and valid values.

import { KEY_REJECTED } from "./api.js";
import { $, setText } from "./dom.js";
import { askForKey } from "./key_form.js";

const ERROR_TITLES = { 400: "Invalid request", 401: "API key required", 403: "API key rejected",
  413: "Text too long", 422: "Invalid request", 429: "Server busy", 503: "Not ready" };
// Error `field` -> the element to mark invalid.
const FIELD_ELEMENTS = { text: "source-text", src: "src-lang", tgt: "tgt-lang", context: "context",
  format: "format", glossary: "glossary" };

export function showError(error) {
  const details = [];
  if (error.field) details.push(`Field: ${error.field}`);
  if (Array.isArray(error.valid) && error.valid.length) {
    details.push(`Valid: ${error.valid.slice(0, 12).join(", ")}${error.valid.length > 12 ? ", …" : ""}`);
  }
  if (error.retryAfter) details.push(`Retry after ${error.retryAfter} s`);
  const title = error.type === KEY_REJECTED ? ERROR_TITLES[403] : ERROR_TITLES[error.status];
  setText("error-title", title || (error.status >= 500 ? "Server error" : "Error"));
  setText("error-message", error.message);
  setText("error-detail", details.join(" · "));
  $("error").hidden = false;
  markInvalid(error.field);
  if (error.status === 401) askForKey(error.type);
}

export function clearError() {
  $("error").hidden = true;
  markInvalid(null);
}

function markInvalid(field) {
  for (const [name, id] of Object.entries(FIELD_ELEMENTS)) $(id).toggleAttribute("aria-invalid", name === field);
}
