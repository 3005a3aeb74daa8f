// hymt web UI: requests to the server, carrying the API key when one is set, and its errors.

const KEY_STORAGE = "hymt.apiKey";
// The server's error type for a key it does not accept (a missing key is "missing_key").
export const KEY_REJECTED = "invalid_key";
// What an HTTP header value may hold: a key outside it could never be sent.
const HEADER_SAFE = /^[\x21-\x7e]+$/;

// ---------- the API key (kept in localStorage, sent as a Bearer token) ----------

export function apiKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) || "";
  } catch {
    return "";  // storage disabled (private mode, file policy): no key kept
  }
}

// Stores `key` (an empty key forgets it). Throws on a key no header can carry.
export function setApiKey(key) {
  const value = key.trim();
  if (value && !HEADER_SAFE.test(value)) {
    throw new Error("An API key is printable ASCII without spaces; this one cannot be sent.");
  }
  try {
    if (value) localStorage.setItem(KEY_STORAGE, value);
    else localStorage.removeItem(KEY_STORAGE);
  } catch {
    // Not kept across visits, but still refused below rather than silently lost.
    throw new Error("This browser does not let the page store the key (storage is disabled).");
  }
}

// A link may hand the key over as ?token=KEY: it is stored, then removed from the address bar
// (replaceState: it stays out of the history too, and out of anything copied from the bar).
export function takeTokenFromUrl() {
  const url = new URL(window.location.href);
  if (!url.searchParams.has("token")) return;
  const token = url.searchParams.get("token");
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  if (token) setApiKey(token);
}

// ---------- requests ----------

export function apiFetch(url, options = {}) {
  const headers = new Headers(options.headers || {});
  const key = apiKey();
  if (key) headers.set("Authorization", `Bearer ${key}`);
  return fetch(url, { ...options, headers });
}

export function postJson(url, body, signal) {
  return apiFetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal });
}

export async function readJson(response) {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw apiError(response, body);
  return body;
}

export function apiError(response, body) {
  return errorFromBody(body, response.status, response.headers.get("Retry-After"));
}

// The server's error body: {"error": {"message", "type", "field", "valid"}}.
export function errorFromBody(body, status = 0, retryAfter = null) {
  const err = (body && body.error) || {};
  const message = (typeof err === "string" ? err : err.message) || `Request failed (HTTP ${status})`;
  return Object.assign(new Error(message), {
    status, type: err.type || null, field: err.field || null, valid: err.valid || null, retryAfter,
  });
}

// ---------- streams ----------

// Server-Sent Events over a fetch body: blocks end with a blank line; "event:" and "data:" lines.
export async function readEvents(stream, onEvent) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      parseEvent(buffer.slice(0, end), onEvent);
      buffer = buffer.slice(end + 2);
    }
  }
  if (buffer.trim()) parseEvent(buffer, onEvent);
}

function parseEvent(block, onEvent) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (data.length) onEvent(event, JSON.parse(data.join("\n")));
}
