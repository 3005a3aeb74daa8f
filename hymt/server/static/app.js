// hymt web UI: plain JavaScript over the native API (/api/*). No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const FORMAT_BY_EXT = { txt: "text", md: "markdown", markdown: "markdown", srt: "srt" };
const EXT_BY_FORMAT = { text: "txt", markdown: "md", srt: "srt", html: "html" };
const ERROR_TITLES = { 400: "Invalid request", 401: "API key required", 403: "API key rejected",
  413: "Text too long", 422: "Invalid request", 429: "Server busy", 503: "Not ready" };
// Error `field` -> the element to mark invalid.
const FIELD_ELEMENTS = { text: "source-text", src: "src-lang", tgt: "tgt-lang", context: "context",
  format: "format", glossary: "glossary" };

const state = {
  languages: [],     // [{code, name, chinese_name, aliases}] from /api/languages
  ready: false,      // the model is loaded (from /api/status)
  maxChars: null,    // the server's --max-chars, when /api/status reports it
  detected: null,    // language code detected for the current source text
  file: null,        // {base, ext} of the uploaded file, for the download's name
  controller: null,  // AbortController of the translation in flight
  detectTimer: null,
};

// ---------- API helpers ----------

function postJson(url, body, signal) {
  return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal });
}

async function readJson(response) {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw apiError(response, body);
  return body;
}

function apiError(response, body) {
  return errorFromBody(body, response.status, response.headers.get("Retry-After"));
}

// The server's error body: {"error": {"message", "type", "field", "valid"}}.
function errorFromBody(body, status = 0, retryAfter = null) {
  const err = (body && body.error) || {};
  const message = (typeof err === "string" ? err : err.message) || `Request failed (HTTP ${status})`;
  return Object.assign(new Error(message), { status, field: err.field || null, valid: err.valid || null, retryAfter });
}

function setText(id, text) {
  $(id).textContent = text;
}

// ---------- errors ----------

function showError(error) {
  const details = [];
  if (error.field) details.push(`Field: ${error.field}`);
  if (Array.isArray(error.valid) && error.valid.length) {
    details.push(`Valid: ${error.valid.slice(0, 12).join(", ")}${error.valid.length > 12 ? ", …" : ""}`);
  }
  if (error.retryAfter) details.push(`Retry after ${error.retryAfter} s`);
  setText("error-title", ERROR_TITLES[error.status] || (error.status >= 500 ? "Server error" : "Error"));
  setText("error-message", error.message);
  setText("error-detail", details.join(" · "));
  $("error").hidden = false;
  markInvalid(error.field);
}

function clearError() {
  $("error").hidden = true;
  markInvalid(null);
}

function markInvalid(field) {
  for (const [name, id] of Object.entries(FIELD_ELEMENTS)) $(id).toggleAttribute("aria-invalid", name === field);
}

// ---------- languages ----------

async function loadLanguages() {
  state.languages = await readJson(await fetch("/api/languages"));
  const sorted = [...state.languages].sort((a, b) => a.name.localeCompare(b.name));
  for (const select of [$("src-lang"), $("tgt-lang")]) {
    for (const lang of sorted) select.add(new Option(lang.name, lang.code));
  }
  $("tgt-lang").value = defaultTarget();
}

function findLanguage(tag) {
  const lower = tag.toLowerCase();
  return state.languages.find((l) => l.code.toLowerCase() === lower || l.aliases.some((a) => a.toLowerCase() === lower));
}

// The reader's own language, unless it is English: then Chinese, the models' home language.
function defaultTarget() {
  for (const tag of navigator.languages || [navigator.language]) {
    const lang = findLanguage(tag) || findLanguage(tag.split("-")[0]);
    if (lang) return lang.code === "en" ? "zh" : lang.code;
  }
  return "en";
}

// ---------- status ----------

async function pollStatus() {
  let status = null;
  try {
    status = await readJson(await fetch("/api/status", { cache: "no-store" }));
  } catch {
    // Unreachable: shown as such, and polled again.
  }
  renderStatus(status);
  setTimeout(pollStatus, status && status.ready ? 10000 : 1000);
}

function renderStatus(status) {
  state.ready = Boolean(status && status.ready);
  const box = $("status");
  box.dataset.state = !status || status.error ? "down" : status.ready ? "ready" : "loading";
  if (!status) {
    setText("status-text", "Server unreachable");
  } else if (status.error) {
    setText("status-text", `Model failed to load: ${status.error}`);
  } else if (!status.ready) {
    setText("status-text", `Loading model… ${status.model || ""}`.trim());
  } else {
    const load = status.running || status.waiting ? ` · ${status.running || 0} running, ${status.waiting || 0} waiting` : "";
    setText("status-text", [status.model, status.engine, status.device].filter(Boolean).join(" · ") + load);
  }
  box.title = status ? `Family: ${status.family || "?"} · queue depth: ${status.queue_depth ?? 0}` : "";
  if (status && Number.isInteger(status.max_chars)) state.maxChars = status.max_chars;
  updateCount();
  updateButtons();
}

// ---------- source text, character count, detection ----------

function updateCount() {
  const count = [...$("source-text").value].length;  // code points, as the server counts
  const limit = state.maxChars ? ` / ${state.maxChars.toLocaleString("en")}` : "";
  setText("char-count", `${count.toLocaleString("en")}${limit} characters`);
  $("char-count").classList.toggle("over", Boolean(state.maxChars && count > state.maxChars));
}

function onSourceInput() {
  updateCount();
  setDetected(null);
  clearTimeout(state.detectTimer);
  if ($("src-lang").value === "auto" && $("source-text").value.trim()) {
    state.detectTimer = setTimeout(detectLanguage, 600);
  }
}

async function detectLanguage() {
  const text = $("source-text").value.slice(0, 2000);
  try {
    const result = await readJson(await postJson("/api/detect", { text }));
    if ($("source-text").value.startsWith(text)) setDetected(result.language);
  } catch {
    // Detection is only a hint here; translating detects again on the server.
  }
}

function setDetected(code) {
  const lang = state.languages.find((l) => l.code === code);
  state.detected = lang ? lang.code : null;
  setText("detected", $("src-lang").value === "auto" && lang ? `Detected: ${lang.name}` : "");
  updateButtons();
}

// ---------- buttons and swap ----------

function updateButtons() {
  const busy = Boolean(state.controller);
  const button = $("translate");
  button.disabled = !busy && !state.ready;
  button.textContent = busy ? "Stop" : "Translate";
  button.classList.toggle("busy", busy);
  button.title = state.ready || busy ? "" : "Waiting for the model to load";
  const hasOutput = $("output").textContent.length > 0;
  $("copy").disabled = $("download").disabled = !hasOutput || busy;
  // Swapping needs a concrete source language: the chosen one, or the detected one under "auto".
  $("swap").disabled = busy || ($("src-lang").value === "auto" && !state.detected);
}

function swapLanguages() {
  const src = $("src-lang").value === "auto" ? state.detected : $("src-lang").value;
  const translation = $("output").textContent;
  $("src-lang").value = $("tgt-lang").value;
  $("tgt-lang").value = src;
  if (translation) {
    $("source-text").value = translation;
    setOutput("");
    setText("stats", "");
  }
  onSourceInput();
}

// ---------- glossary ----------

function addGlossaryRow() {
  const row = $("glossary-row").content.firstElementChild.cloneNode(true);
  row.querySelector(".term-remove").addEventListener("click", () => {
    row.remove();
    labelGlossaryRows();
  });
  $("glossary").append(row);
  labelGlossaryRows();
  row.querySelector("input").focus();
}

function labelGlossaryRows() {
  $("glossary").querySelectorAll(".glossary-row").forEach((row, i) => {
    row.querySelector(".term-src").setAttribute("aria-label", `Source term ${i + 1}`);
    row.querySelector(".term-tgt").setAttribute("aria-label", `Target term ${i + 1}`);
    row.querySelector(".term-remove").setAttribute("aria-label", `Remove term ${i + 1}`);
  });
}

function glossary() {
  const pairs = [...$("glossary").querySelectorAll(".glossary-row")]
    .map((row) => [row.querySelector(".term-src").value.trim(), row.querySelector(".term-tgt").value.trim()]);
  return Object.fromEntries(pairs.filter(([src, tgt]) => src && tgt));
}

// ---------- translation ----------

function requestBody() {
  return {
    text: $("source-text").value, src: $("src-lang").value, tgt: $("tgt-lang").value,
    glossary: glossary(), context: $("context").value.trim(), format: $("format").value,
  };
}

function setOutput(text) {
  $("output").textContent = text;
  updateButtons();
}

// The Translate button doubles as Stop: aborting the fetch disconnects, which cancels on the server.
function onTranslateClick() {
  if (state.controller) stopTranslation();
  else translate();
}

// The page is idle at once, whenever and however the aborted fetch unwinds: its handler sees
// that it no longer owns the page and leaves it alone.
function stopTranslation() {
  const controller = state.controller;
  state.controller = null;
  controller.abort();
  stopProgress();
  setText("stats", "Stopped");
}

async function translate() {
  if (state.controller) state.controller.abort();  // a newer request replaces the one in flight
  clearError();
  const body = requestBody();  // empty or oversize text is the server's to refuse, with its message
  const controller = (state.controller = new AbortController());
  setOutput("");
  startProgress();
  try {
    const response = await postJson("/api/translate/stream", body, controller.signal);
    if (!response.ok) throw apiError(response, await response.json().catch(() => null));
    let finished = false;
    await readEvents(response.body, (event, data) => { finished = onStreamEvent(event, data, body) || finished; });
    if (!finished) throw new Error("The connection closed before the translation was complete.");
  } catch (error) {
    if (state.controller !== controller) return;  // stopped, or replaced by a newer request
    setText("stats", "");
    showError(error);
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      stopProgress();
    }
  }
}

// Returns true for the final "done" event.
function onStreamEvent(event, data, body) {
  if (event === "error") throw errorFromBody(data);
  if (event === "done") finishTranslation(data, body);
  if (event === "delta") {
    $("output").append(data.text);
    updateProgress(body.text);
  }
  return event === "done";
}

function finishTranslation(result, body) {
  setOutput(result.translation);
  if (body.src === "auto") setDetected(result.src);
  const usage = result.usage || {};
  const parts = [`${(result.elapsed_ms / 1000).toFixed(2)} s`];
  if (usage.completion_tokens != null) parts.push(`${usage.completion_tokens} tokens`);
  if (result.cached) parts.push("cached");
  setText("stats", parts.join(" · "));
  const issues = (result.issues || []).map((i) => (typeof i === "string" ? i : i.message || JSON.stringify(i)));
  $("issues").hidden = issues.length === 0;
  $("issues").textContent = `⚠ ${issues.length} issue${issues.length === 1 ? "" : "s"}`;
  $("issues").title = issues.join("\n");
}

// Server-Sent Events over a fetch body: blocks end with a blank line; "event:" and "data:" lines.
async function readEvents(stream, onEvent) {
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

// ---------- progress: lines out against lines in (every format keeps its line structure) ----------

function startProgress() {
  $("output").setAttribute("aria-busy", "true");
  $("progress").hidden = false;
  $("progress").removeAttribute("value");  // indeterminate until lines arrive
  $("issues").hidden = true;
  setText("stats", "Translating…");
}

function updateProgress(source) {
  const total = source.split("\n").length;
  if (total >= 4) $("progress").value = Math.min(0.99, $("output").textContent.split("\n").length / total);
}

function stopProgress() {
  $("output").setAttribute("aria-busy", "false");
  $("progress").hidden = true;
  updateButtons();
}

// ---------- files ----------

async function loadFile(file) {
  if (!file) return;
  clearError();
  const dot = file.name.lastIndexOf(".");
  const ext = dot > 0 ? file.name.slice(dot + 1).toLowerCase() : "";
  if (!FORMAT_BY_EXT[ext]) {
    return showError(Object.assign(new Error(`Cannot translate “${file.name}”: choose a .txt, .md or .srt file.`), { field: "file" }));
  }
  state.file = { base: file.name.slice(0, dot), ext };
  $("source-text").value = await file.text();
  $("format").value = FORMAT_BY_EXT[ext];
  setText("file-name", file.name);
  $("file-name").hidden = false;
  onSourceInput();
  await translate();
}

function downloadName() {
  const tgt = $("tgt-lang").value;
  if (state.file) return `${state.file.base}.${tgt}.${state.file.ext}`;
  return `translation.${tgt}.${EXT_BY_FORMAT[$("format").value]}`;
}

function download() {
  const blob = new Blob([$("output").textContent], { type: "text/plain;charset=utf-8" });
  const link = Object.assign(document.createElement("a"), { href: URL.createObjectURL(blob), download: downloadName() });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function clearSource() {
  $("source-text").value = "";
  state.file = null;
  $("file-name").hidden = true;
  $("format").value = "text";
  $("issues").hidden = true;
  setText("stats", "");
  setOutput("");
  clearError();
  onSourceInput();
}

// ---------- copy ----------

async function copyOutput() {
  const text = $("output").textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Pages served over plain http on a LAN address get no clipboard API: copy a selection instead.
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  $("copy").textContent = "Copied";
  setTimeout(() => { $("copy").textContent = "Copy"; }, 1200);
}

// ---------- wiring ----------

function bindEvents() {
  $("source-text").addEventListener("input", onSourceInput);
  $("src-lang").addEventListener("change", onSourceInput);
  $("swap").addEventListener("click", swapLanguages);
  $("translate").addEventListener("click", onTranslateClick);
  $("copy").addEventListener("click", copyOutput);
  $("download").addEventListener("click", download);
  $("clear").addEventListener("click", clearSource);
  $("error-close").addEventListener("click", clearError);
  $("glossary-add").addEventListener("click", addGlossaryRow);
  $("file-input").addEventListener("change", (e) => { loadFile(e.target.files[0]); e.target.value = ""; });
  const box = $("source-text");
  box.addEventListener("dragover", (e) => { e.preventDefault(); box.classList.add("drop"); });
  box.addEventListener("dragleave", () => box.classList.remove("drop"));
  box.addEventListener("drop", (e) => { e.preventDefault(); box.classList.remove("drop"); loadFile(e.dataTransfer.files[0]); });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || !(e.ctrlKey || e.metaKey)) return;
    e.preventDefault();
    if (!state.controller && !$("translate").disabled) translate();
  });
}

async function main() {
  if (/Mac|iPhone|iPad/.test(navigator.platform)) document.querySelector(".hint kbd").textContent = "⌘";
  bindEvents();
  pollStatus();
  try {
    await loadLanguages();
  } catch (error) {
    showError(error);
  }
}

main();
