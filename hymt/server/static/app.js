// hymt web UI: plain JavaScript over the native API (/api/*). No framework, no build step:
// ES modules (api.js requests and the key, errors.js the error box, key_form.js the key form,
// documents.js the Documents tab).

import { apiError, apiFetch, errorFromBody, postJson, readEvents, readJson, takeTokenFromUrl } from "./api.js";
import { initDocuments } from "./documents.js";
import { $, setText } from "./dom.js";
import { clearError, showError } from "./errors.js";
import { checkKey, forgetKey, saveKey, toggleKeyForm, updateKeyToggle } from "./key_form.js";

const FORMAT_BY_EXT = { txt: "text", md: "markdown", markdown: "markdown", srt: "srt" };
const EXT_BY_FORMAT = { text: "txt", markdown: "md", srt: "srt", html: "html" };

const state = {
  languages: [],     // [{code, name, chinese_name, aliases}] from /api/languages
  ready: false,      // the model is loaded (from /api/status)
  loadFailed: false, // the model failed to load (from /api/status)
  maxChars: null,    // the server's --max-chars, when /api/status reports it
  detected: null,    // language code detected for the current source text
  file: null,        // {base, ext} of the uploaded file, for the download's name
  shown: null,       // {tgt, format, file} of the translation in the output, for the download's name
  controller: null,  // AbortController of the translation in flight
  detectTimer: null,
};

// ---------- languages ----------

async function loadLanguages() {
  state.languages = await readJson(await apiFetch("/api/languages"));
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
    status = await readJson(await apiFetch("/api/status", { cache: "no-store" }));
  } catch {
    // Unreachable: shown as such, and polled again.
  }
  renderStatus(status);
  setTimeout(pollStatus, status && status.ready ? 10000 : 1000);
}

function renderStatus(status) {
  state.ready = Boolean(status && status.ready);
  state.loadFailed = Boolean(status && status.error);
  const box = $("status");
  box.dataset.state = !status || status.error ? "down" : status.ready ? "ready" : "loading";
  if (!status) {
    setText("status-text", "Server unreachable");
  } else if (status.error) {
    setText("status-text", "Model failed to load");
  } else if (!status.ready) {
    setText("status-text", `Loading model… ${status.model || ""}`.trim());
  } else {
    const load = status.running || status.waiting ? ` · ${status.running || 0} running, ${status.waiting || 0} waiting` : "";
    setText("status-text", [status.model, status.engine, status.device].filter(Boolean).join(" · ") + load);
  }
  box.title = status ? `Family: ${status.family || "?"} · queue depth: ${status.queue_depth ?? 0}` : "";
  renderLoadError(status && status.error);
  if (status && Number.isInteger(status.max_chars)) state.maxChars = status.max_chars;
  updateCount();
  updateButtons();
}

// The whole reason, however long: the useful part of a load error (what to do) is often last.
function renderLoadError(message) {
  const details = $("load-error");
  details.hidden = !message;
  if (message && $("load-error-text").textContent !== message) {
    setText("load-error-text", message);
    details.open = true;  // a new reason is shown open; the reader may fold it away
  }
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
  const waiting = state.loadFailed ? "The model failed to load" : "Waiting for the model to load";
  button.title = state.ready || busy ? "" : waiting;
  const hasOutput = $("output").textContent.length > 0;
  $("copy").disabled = !hasOutput || busy;
  $("download").disabled = !hasOutput || busy || !state.shown;
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
    showOutput("", null);
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

// Replaces the output; `shown` says what it is a translation into (null: nothing shown).
function showOutput(text, shown) {
  state.shown = shown;
  setOutput(text);
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
  showOutput("", { tgt: body.tgt, format: body.format, file: state.file });
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
  if (state.controller) stopTranslation();  // its text is being replaced
  state.file = { base: file.name.slice(0, dot), ext };
  $("source-text").value = await file.text();
  $("format").value = FORMAT_BY_EXT[ext];
  setText("file-name", file.name);
  $("file-name").hidden = false;
  showOutput("", null);
  $("issues").hidden = true;
  onSourceInput();
  // Not translated yet: the reader checks the languages first.
  setText("stats", `${file.name} loaded: check the languages, then Translate.`);
  $("translate").focus();
}

// Named after what the output holds (its target language), not the pickers' current values.
function downloadName() {
  const { tgt, format, file } = state.shown;
  if (file) return `${file.base}.${tgt}.${file.ext}`;
  return `translation.${tgt}.${EXT_BY_FORMAT[format]}`;
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
  showOutput("", null);
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
  $("key-toggle").addEventListener("click", () => toggleKeyForm());
  $("key-form").addEventListener("submit", (event) => { clearError(); saveKey(event); });
  $("key-forget").addEventListener("click", forgetKey);
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
  try {
    takeTokenFromUrl();
  } catch (error) {
    showError(error);
  }
  updateKeyToggle();
  pollStatus();
  checkKey();
  try {
    await loadLanguages();
  } catch (error) {
    showError(error);
  }
  initDocuments(state.languages, () => ({ glossary: glossary(), context: $("context").value.trim() }));
}

main();
