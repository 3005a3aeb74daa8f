// hymt web UI: plain JavaScript over the native API (/api/*). No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const FORMAT_BY_EXT = { txt: "text", md: "markdown", markdown: "markdown", srt: "srt" };
const EXT_BY_FORMAT = { text: "txt", markdown: "md", srt: "srt", html: "html" };
const STORE_KEY = "hymt.ui";

const state = {
  languages: [],        // [{code, name, chinese_name, aliases}]
  ready: false,
  maxChars: null,       // from /api/status when the server reports it
  detected: null,       // language code detected for the current source text
  file: null,           // {base, ext} of the uploaded file
  controller: null,     // AbortController of the translation in flight
  detectTimer: null,
};

// ---------- small helpers ----------

function languageName(code) {
  const lang = state.languages.find((l) => l.code === code);
  return lang ? lang.name : code;
}

function setText(id, text) {
  $(id).textContent = text;
}

async function readJson(response) {
  const body = await response.json().catch(() => null);
  if (!response.ok) throw apiError(response, body);
  return body;
}

function apiError(response, body) {
  return errorFromBody(body, response.status, response.statusText, response.headers.get("Retry-After"));
}

// The server's error body: {"error": {"message", "type", "field", "valid"}}.
function errorFromBody(body, status = 0, statusText = "", retryAfter = null) {
  const err = (body && body.error) || {};
  const message = typeof err === "string" ? err : err.message;
  return Object.assign(new Error(message || `${status} ${statusText}`.trim() || "Request failed"), {
    status, field: err.field || null, valid: err.valid || null, retryAfter,
  });
}

// ---------- errors ----------

const ERROR_TITLES = { 400: "Invalid request", 401: "API key required", 403: "API key rejected",
  413: "Text too long", 422: "Invalid request", 429: "Server busy", 503: "Not ready" };

function showError(error) {
  const title = ERROR_TITLES[error.status] || (error.status >= 500 ? "Server error" : "Error");
  const details = [];
  if (error.field) details.push(`Field: ${error.field}`);
  if (Array.isArray(error.valid) && error.valid.length) {
    const shown = error.valid.slice(0, 12).join(", ");
    details.push(`Valid: ${shown}${error.valid.length > 12 ? ", …" : ""}`);
  }
  if (error.retryAfter) details.push(`Retry after ${error.retryAfter} s`);
  setText("error-title", title);
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
  const targets = { text: "source-text", tgt: "tgt-lang", src: "src-lang", context: "context", format: "format" };
  for (const [name, id] of Object.entries(targets)) {
    $(id).toggleAttribute("aria-invalid", name === field);
  }
  $("glossary").toggleAttribute("aria-invalid", field === "glossary");
}

// ---------- languages ----------

async function loadLanguages() {
  state.languages = await readJson(await fetch("/api/languages"));
  const sorted = [...state.languages].sort((a, b) => a.name.localeCompare(b.name));
  for (const select of [$("src-lang"), $("tgt-lang")]) {
    for (const lang of sorted) select.add(new Option(lang.name, lang.code));
  }
  const saved = loadSettings();
  $("src-lang").value = saved.src && hasLanguage(saved.src) ? saved.src : "auto";
  $("tgt-lang").value = saved.tgt && hasLanguage(saved.tgt) ? saved.tgt : defaultTarget();
  (saved.glossary || []).forEach(([src, tgt]) => addGlossaryRow(src, tgt));
  updateSwap();
}

function hasLanguage(code) {
  return state.languages.some((l) => l.code === code);
}

// The reader's own language, unless it is English: then Chinese, the models' home language.
function defaultTarget() {
  for (const tag of navigator.languages || [navigator.language]) {
    const lower = tag.toLowerCase();
    const base = lower.split("-")[0];
    const lang = state.languages.find((l) => l.code.toLowerCase() === lower
      || l.aliases.some((a) => a.toLowerCase() === lower)) || state.languages.find((l) => l.code === base);
    if (lang) return lang.code === "en" ? "zh" : lang.code;
  }
  return "en";
}

// ---------- settings (languages and glossary survive a reload) ----------

function loadSettings() {
  try {
    return JSON.parse(localStorage.getItem(STORE_KEY)) || {};
  } catch {
    return {};
  }
}

function saveSettings() {
  const settings = { src: $("src-lang").value, tgt: $("tgt-lang").value, glossary: glossaryRows() };
  try {
    localStorage.setItem(STORE_KEY, JSON.stringify(settings));
  } catch {
    // Storage may be disabled (private mode); the page works without it.
  }
}

// ---------- status ----------

async function pollStatus() {
  let delay = 1000;
  try {
    const status = await readJson(await fetch("/api/status", { cache: "no-store" }));
    renderStatus(status);
    if (status.ready) delay = 10000;
  } catch {
    renderStatus(null);
  }
  setTimeout(pollStatus, delay);
}

function renderStatus(status) {
  state.ready = Boolean(status && status.ready);
  const box = $("status");
  if (!status) {
    box.dataset.state = "down";
    setText("status-text", "Server unreachable");
  } else if (!status.ready) {
    box.dataset.state = "loading";
    setText("status-text", `Loading model… ${status.model || ""}`.trim());
  } else {
    box.dataset.state = "ready";
    const parts = [status.model, status.engine, status.device].filter(Boolean);
    const load = status.running || status.waiting ? ` · ${status.running || 0} running, ${status.waiting || 0} waiting` : "";
    setText("status-text", parts.join(" · ") + load);
  }
  box.title = status ? `family: ${status.family || "?"} · queue: ${status.queue_depth ?? 0}` : "";
  if (status && Number.isInteger(status.max_chars)) state.maxChars = status.max_chars;
  updateCount();
  updateButtons();
}

// ---------- source text, character count, detection ----------

function updateCount() {
  const count = [...$("source-text").value].length;  // code points, as the server counts
  const limit = state.maxChars ? ` / ${state.maxChars.toLocaleString()}` : "";
  setText("char-count", `${count.toLocaleString()}${limit} characters`);
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
    const response = await fetch("/api/detect", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text }),
    });
    const result = await readJson(response);
    if ($("source-text").value.startsWith(text)) setDetected(result.language);
  } catch {
    // Detection is a hint only; translation detects again on the server.
  }
}

function setDetected(code) {
  state.detected = code && hasLanguage(code) ? code : null;
  const auto = $("src-lang").value === "auto";
  setText("detected", auto && state.detected ? `Detected: ${languageName(state.detected)}` : "");
  updateSwap();
}

// ---------- buttons ----------

function updateButtons() {
  const busy = Boolean(state.controller);
  const button = $("translate");
  button.disabled = !busy && !state.ready;
  button.textContent = busy ? "Stop" : "Translate";
  button.classList.toggle("busy", busy);
  button.title = state.ready ? "" : "Waiting for the model to load";
  const hasOutput = $("output").textContent.length > 0;
  $("copy").disabled = !hasOutput || busy;
  $("download").disabled = !hasOutput || busy;
  updateSwap();
}

// Swapping needs a concrete source language: the chosen one, or the detected one under "auto".
function updateSwap() {
  const src = $("src-lang").value;
  $("swap").disabled = Boolean(state.controller) || (src === "auto" && !state.detected);
}

function swapLanguages() {
  const src = $("src-lang").value === "auto" ? state.detected : $("src-lang").value;
  if (!src) return;
  const translation = $("output").textContent;
  $("src-lang").value = $("tgt-lang").value;
  $("tgt-lang").value = src;
  if (translation) {
    $("source-text").value = translation;
    setOutput("");
  }
  setDetected(null);
  updateCount();
  updateButtons();
  saveSettings();
}

// ---------- glossary ----------

function addGlossaryRow(src = "", tgt = "") {
  const row = $("glossary-row").content.firstElementChild.cloneNode(true);
  row.querySelector(".term-src").value = src;
  row.querySelector(".term-tgt").value = tgt;
  row.querySelector(".term-remove").addEventListener("click", () => {
    row.remove();
    labelGlossaryRows();
    saveSettings();
  });
  $("glossary").append(row);
  labelGlossaryRows();
  return row;
}

function labelGlossaryRows() {
  $("glossary").querySelectorAll(".glossary-row").forEach((row, i) => {
    row.querySelector(".term-src").setAttribute("aria-label", `Source term ${i + 1}`);
    row.querySelector(".term-tgt").setAttribute("aria-label", `Target term ${i + 1}`);
    row.querySelector(".term-remove").setAttribute("aria-label", `Remove term ${i + 1}`);
  });
}

function glossaryRows() {
  return [...$("glossary").querySelectorAll(".glossary-row")]
    .map((row) => [row.querySelector(".term-src").value.trim(), row.querySelector(".term-tgt").value.trim()])
    .filter(([src, tgt]) => src && tgt);
}

// ---------- translation ----------

function requestBody() {
  return {
    text: $("source-text").value,
    src: $("src-lang").value,
    tgt: $("tgt-lang").value,
    glossary: Object.fromEntries(glossaryRows()),
    context: $("context").value.trim(),
    format: $("format").value,
  };
}

function setOutput(text) {
  $("output").textContent = text;
  updateButtons();
}

async function translate() {
  if (state.controller) {
    state.controller.abort();
    return;
  }
  clearError();
  const body = requestBody();
  if (!body.text.trim()) {
    showError(Object.assign(new Error("Enter some text to translate."), { field: "text" }));
    return;
  }
  state.controller = new AbortController();
  startProgress();
  setOutput("");
  setText("stats", "Translating…");
  try {
    const response = await fetch("/api/translate/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: state.controller.signal,
    });
    if (!response.ok) throw apiError(response, await response.json().catch(() => null));
    let finished = false;
    await readEvents(response.body, (event, data) => { finished = onStreamEvent(event, data, body) || finished; });
    if (!finished) throw new Error("The translation stream ended before the translation was complete.");
  } catch (error) {
    setText("stats", "");
    if (error.name !== "AbortError") showError(error);
  } finally {
    state.controller = null;
    stopProgress();
    updateButtons();
  }
}

// Returns true once the final "done" event has arrived.
function onStreamEvent(event, data, body) {
  if (event === "error") throw errorFromBody(data);
  if (event === "done") {
    finishTranslation(data, body);
    return true;
  }
  if (event === "delta") {
    $("output").append(data.text);
    updateProgress(body.text);
  }
  return false;
}

function finishTranslation(result, body) {
  setOutput(result.translation);
  if (body.src === "auto") setDetected(result.src);
  const usage = result.usage || {};
  const parts = [`${(result.elapsed_ms / 1000).toFixed(2)} s`];
  if (usage.completion_tokens != null) parts.push(`${usage.completion_tokens} tokens`);
  if (result.cached) parts.push("cached");
  setText("stats", parts.join(" · "));
  const issues = result.issues || [];
  $("issues").hidden = issues.length === 0;
  $("issues").textContent = issues.length ? `⚠ ${issues.length} issue${issues.length > 1 ? "s" : ""}` : "";
  $("issues").title = issues.map((i) => (typeof i === "string" ? i : i.message || JSON.stringify(i))).join("\n");
}

// Server-Sent Events over a fetch body: blocks separated by a blank line, "event:" and "data:" lines.
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

// ---------- progress (lines of output against lines of input: formats keep their lines) ----------

function startProgress() {
  $("output").setAttribute("aria-busy", "true");
  $("issues").hidden = true;
  $("progress").hidden = false;
  $("progress").removeAttribute("value");
  updateButtons();
}

function updateProgress(source) {
  const total = source.split("\n").length;
  if (total < 4) return;  // a short text has no meaningful progress: keep the bar indeterminate
  const done = $("output").textContent.split("\n").length;
  $("progress").value = Math.min(0.99, done / total);
}

function stopProgress() {
  $("output").setAttribute("aria-busy", "false");
  $("progress").hidden = true;
}

// ---------- files ----------

async function loadFile(file) {
  if (!file) return;
  clearError();
  const dot = file.name.lastIndexOf(".");
  const ext = dot > 0 ? file.name.slice(dot + 1).toLowerCase() : "";
  if (!FORMAT_BY_EXT[ext]) {
    showError(Object.assign(new Error(`Cannot translate “${file.name}”: choose a .txt, .md or .srt file.`), { field: "file" }));
    return;
  }
  state.file = { base: file.name.slice(0, dot), ext };
  $("source-text").value = await file.text();
  $("format").value = FORMAT_BY_EXT[ext];
  $("file-name").textContent = file.name;
  $("file-name").hidden = false;
  onSourceInput();
  await translate();
}

function downloadName() {
  const tgt = $("tgt-lang").value;
  if (state.file) return `${state.file.base}.${tgt}.${state.file.ext}`;
  return `translation.${tgt}.${EXT_BY_FORMAT[$("format").value] || "txt"}`;
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
  setOutput("");
  setText("stats", "");
  $("issues").hidden = true;
  onSourceInput();
  clearError();
}

// ---------- copy ----------

async function copyOutput() {
  const text = $("output").textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    copyWithSelection(text);  // plain-http pages on a LAN address have no clipboard API
  }
  flash($("copy"), "Copied");
}

function copyWithSelection(text) {
  const area = Object.assign(document.createElement("textarea"), { value: text });
  document.body.append(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

function flash(button, label) {
  const original = button.textContent;
  button.textContent = label;
  setTimeout(() => { button.textContent = original; }, 1200);
}

// ---------- wiring ----------

function bindEvents() {
  $("source-text").addEventListener("input", onSourceInput);
  $("src-lang").addEventListener("change", () => { saveSettings(); onSourceInput(); });
  $("tgt-lang").addEventListener("change", saveSettings);
  $("swap").addEventListener("click", swapLanguages);
  $("translate").addEventListener("click", translate);
  $("copy").addEventListener("click", copyOutput);
  $("download").addEventListener("click", download);
  $("clear").addEventListener("click", clearSource);
  $("error-close").addEventListener("click", clearError);
  $("glossary-add").addEventListener("click", () => addGlossaryRow().querySelector("input").focus());
  $("glossary").addEventListener("change", saveSettings);
  $("file-input").addEventListener("change", (e) => { loadFile(e.target.files[0]); e.target.value = ""; });
  bindDrop($("source-text"));
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      if (!$("translate").disabled && !state.controller) translate();
    }
  });
}

function bindDrop(target) {
  target.addEventListener("dragover", (e) => { e.preventDefault(); target.classList.add("drop"); });
  target.addEventListener("dragleave", () => target.classList.remove("drop"));
  target.addEventListener("drop", (e) => {
    e.preventDefault();
    target.classList.remove("drop");
    loadFile(e.dataTransfer.files[0]);
  });
}

async function main() {
  bindEvents();
  pollStatus();
  try {
    await loadLanguages();
  } catch (error) {
    showError(error);
  }
  if (/Mac|iPhone|iPad/.test(navigator.platform)) document.querySelector(".hint kbd").textContent = "⌘";
}

main();
