// hymt web UI: the Documents tab. A file dropped or chosen here becomes a job on the server
// (POST /api/documents); its progress arrives as Server-Sent Events over fetch (so the API key
// goes in the Authorization header, as on every call), and the translated file downloads from
// the job's result. The list comes from GET /api/documents, so it survives a reload.

import { apiError, apiFetch, readEvents, readJson } from "./api.js";
import { $, setText } from "./dom.js";
import { clearError, showError } from "./errors.js";

const STATE_LABELS = { queued: "Queued", translating: "Translating", done: "Done", error: "Failed" };
const TAB_HASH = "#documents";

const docs = {
  suffixes: [],          // the server's document suffixes (GET /api/documents/formats)
  staged: null,          // the File chosen, not yet sent
  following: new Map(),  // job id -> AbortController of its event stream
  listed: false,         // the job list was loaded once
  options: () => ({}),   // the Options card's glossary and context
};

// `languages` from /api/languages; `options()` gives {glossary, context} of the Options card.
export function initDocuments(languages, options) {
  docs.options = options;
  const sorted = [...languages].sort((a, b) => a.name.localeCompare(b.name));
  for (const select of [$("doc-src"), $("doc-tgt")]) {
    for (const lang of sorted) select.add(new Option(lang.name, lang.code));
  }
  $("doc-tgt").value = $("tgt-lang").value;  // the text tab's choice: the reader's language
  bindEvents();
  loadFormats();
  if (window.location.hash === TAB_HASH) showTab("documents");
}

// ---------- tabs ----------

function showTab(name) {
  const documents = name === "documents";
  $("tab-text").setAttribute("aria-selected", String(!documents));
  $("tab-documents").setAttribute("aria-selected", String(documents));
  $("text-panel").hidden = documents;
  $("documents-panel").hidden = !documents;
  const url = window.location.pathname + window.location.search + (documents ? TAB_HASH : "");
  history.replaceState(history.state, "", url);
  if (documents && !docs.listed) refreshJobs();
}

// ---------- formats and the chosen file ----------

async function loadFormats() {
  try {
    const { formats } = await readJson(await apiFetch("/api/documents/formats"));
    docs.suffixes = formats.flatMap((f) => f.suffixes);
    $("doc-file").accept = docs.suffixes.join(",");
    setText("doc-formats", `Word, PowerPoint, Excel, PDF, XLIFF, PO, JSON, YAML and subtitles: ${docs.suffixes.join(" ")}`);
  } catch (error) {
    showError(error);
  }
}

function suffixOf(name) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot).toLowerCase() : "";
}

function stage(file) {
  if (!file) return;
  clearError();
  if (docs.suffixes.length && !docs.suffixes.includes(suffixOf(file.name))) {
    const error = new Error(`Cannot translate “${file.name}”: choose one of ${docs.suffixes.join(", ")}.`);
    showError(Object.assign(error, { field: "file" }));
    return;
  }
  docs.staged = file;
  setText("doc-staged", file.name);
  $("doc-staged").hidden = false;
  $("doc-start").disabled = false;
  $("doc-start").focus();
}

function unstage() {
  docs.staged = null;
  $("doc-staged").hidden = true;
  $("doc-start").disabled = true;
}

// ---------- jobs ----------

async function start() {
  const file = docs.staged;
  if (!file) return;
  clearError();
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("src", $("doc-src").value);
  form.append("tgt", $("doc-tgt").value);
  const { glossary, context } = docs.options();
  if (glossary && Object.keys(glossary).length) form.append("glossary", JSON.stringify(glossary));
  if (context) form.append("context", context);
  $("doc-start").disabled = true;
  try {
    const job = await readJson(await apiFetch("/api/documents", { method: "POST", body: form }));
    unstage();
    renderJob(job, true);
    follow(job.id);
  } catch (error) {
    $("doc-start").disabled = false;
    showError(error);
  }
}

async function refreshJobs() {
  try {
    const { documents } = await readJson(await apiFetch("/api/documents", { cache: "no-store" }));
    docs.listed = true;
    for (const job of [...documents].reverse()) renderJob(job, true);
    for (const job of documents) if (job.state === "queued" || job.state === "translating") follow(job.id);
  } catch (error) {
    showError(error);
  }
  updateEmpty();
}

// Follows a job's events until it is done, failed or deleted.
async function follow(id) {
  if (docs.following.has(id)) return;
  const controller = new AbortController();
  docs.following.set(id, controller);
  try {
    const response = await apiFetch(`/api/documents/${id}/events`, { signal: controller.signal });
    if (!response.ok) throw apiError(response, await response.json().catch(() => null));
    await readEvents(response.body, (event, data) => {
      if (event === "progress" || event === "done") renderJob(data);
      else if (event === "error" && data.job) renderJob(data.job);
      else if (event === "error") removeJob(id);
    });
  } catch (error) {
    if (!controller.signal.aborted) showError(error);
  } finally {
    docs.following.delete(id);
  }
}

function rowOf(id) {
  return $("doc-jobs").querySelector(`[data-id="${id}"]`);
}

// Creates or updates the row of `job`; a new row goes first (`newest`) or last.
function renderJob(job, newest = false) {
  let row = rowOf(job.id);
  if (!row) {
    row = $("doc-job-row").content.firstElementChild.cloneNode(true);
    row.dataset.id = job.id;
    row.querySelector(".doc-download").addEventListener("click", () => download(job.id));
    row.querySelector(".doc-delete").addEventListener("click", () => remove(job.id));
    if (newest) $("doc-jobs").prepend(row);
    else $("doc-jobs").append(row);
  }
  const name = job.filename || `document.${job.format}`;
  row.dataset.state = job.state;
  row.querySelector(".doc-name").textContent = name;
  row.querySelector(".doc-langs").textContent = `${job.src} → ${job.tgt}`;
  row.querySelector(".doc-state").textContent = STATE_LABELS[job.state] || job.state;
  const { done, total } = job.progress;
  const bar = row.querySelector(".doc-progress");
  if (job.state === "queued" || !total) bar.removeAttribute("value");  // indeterminate
  else bar.value = job.state === "done" ? 1 : done / total;
  bar.hidden = job.state === "error";
  bar.setAttribute("aria-label", `${name}: ${done} of ${total} segments`);
  row.querySelector(".doc-detail").textContent = detail(job);
  const button = row.querySelector(".doc-download");
  button.disabled = job.state !== "done";
  button.setAttribute("aria-label", `Download the translation of ${name}`);
  row.querySelector(".doc-delete").setAttribute("aria-label", `Delete ${name}`);
  row._job = job;
  updateEmpty();
}

function detail(job) {
  const { done, total } = job.progress;
  if (job.state === "error") return job.error || "The translation failed.";
  if (job.state === "done") return `${total} segments → ${job.result.filename}`;
  if (job.state === "queued") return `Waiting · about ${total} segments`;
  const left = job.seconds_remaining != null ? ` · about ${job.seconds_remaining} s left` : "";
  return `${done} / ${total} segments${left}`;
}

function removeJob(id) {
  const controller = docs.following.get(id);
  if (controller) controller.abort();
  const row = rowOf(id);
  if (row) row.remove();
  updateEmpty();
}

function updateEmpty() {
  $("doc-empty").hidden = $("doc-jobs").children.length > 0;
}

async function download(id) {
  const job = rowOf(id)._job;
  try {
    const response = await apiFetch(job.result.url);
    if (!response.ok) throw apiError(response, await response.json().catch(() => null));
    const blob = await response.blob();
    const link = Object.assign(document.createElement("a"),
      { href: URL.createObjectURL(blob), download: job.result.filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  } catch (error) {
    showError(error);
  }
}

async function remove(id) {
  try {
    const response = await apiFetch(`/api/documents/${id}`, { method: "DELETE" });
    if (!response.ok && response.status !== 404) throw apiError(response, await response.json().catch(() => null));
    removeJob(id);
  } catch (error) {
    showError(error);
  }
}

// ---------- wiring ----------

function bindEvents() {
  $("tab-text").addEventListener("click", () => showTab("text"));
  $("tab-documents").addEventListener("click", () => showTab("documents"));
  $("doc-file").addEventListener("change", (e) => { stage(e.target.files[0]); e.target.value = ""; });
  $("doc-start").addEventListener("click", start);
  const zone = $("doc-drop");
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("drop"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("drop"));
  zone.addEventListener("drop", (e) => { e.preventDefault(); zone.classList.remove("drop"); stage(e.dataTransfer.files[0]); });
}
