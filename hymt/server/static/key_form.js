// hymt web UI: the API key form. The key is asked for once the server refuses a request
// without one (or with a wrong one), and checked against a key-protected endpoint.

import { KEY_REJECTED, apiFetch, apiKey, errorFromBody, setApiKey } from "./api.js";
import { $, setText } from "./dom.js";

let keyNeeded = false;  // the server asked for an API key (a 401 seen)

// Shows the key form: a request was refused (401) with the error `type` the server gave.
export function askForKey(type) {
  keyNeeded = true;
  $("key-toggle").hidden = false;
  toggleKeyForm(true);
  setText("key-status", type === KEY_REJECTED ? "The server rejected this key." : "This server needs an API key.");
  $("api-key").focus();
}

export function toggleKeyForm(open = $("key-form").hidden) {
  $("key-form").hidden = !open;
  $("key-toggle").setAttribute("aria-expanded", String(open));
  if (open) $("api-key").value = apiKey();
}

export async function saveKey(event) {
  event.preventDefault();
  try {
    setApiKey($("api-key").value);
  } catch (error) {
    setText("key-status", error.message);
    return;
  }
  await checkKey();
}

export function forgetKey() {
  setApiKey("");
  $("api-key").value = "";
  setText("key-status", "Key forgotten.");
  updateKeyToggle();
}

export function updateKeyToggle() {
  $("key-toggle").hidden = !keyNeeded && !apiKey();
  $("key-toggle").textContent = apiKey() ? "API key ✓" : "API key";
}

// Asks a key-protected endpoint whether the server takes the current key (or needs one at all).
export async function checkKey() {
  let response;
  try {
    response = await apiFetch("/api/models", { cache: "no-store" });
  } catch {
    return;  // unreachable: the status pill says so
  }
  if (response.status === 401) {
    askForKey(errorFromBody(await response.json().catch(() => null), 401).type);
  } else if (response.ok && apiKey()) {
    setText("key-status", "Key accepted.");
    toggleKeyForm(false);
  }
  updateKeyToggle();
}
