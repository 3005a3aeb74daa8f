// hymt web UI: the two DOM helpers every module uses.

export const $ = (id) => document.getElementById(id);

export function setText(id, text) {
  $(id).textContent = text;
}
