// What every step of the rater's page shares: the config and texts the template hands
// over, t() and the DOM helpers, which step is on screen, the notice and the connection
// banner, and the server's last /state/ answer with the design's widget module it names.

import { setText } from "./live_text.js";

export const config = JSON.parse(document.getElementById("rater-config").textContent);
const strings = JSON.parse(document.getElementById("rater-strings").textContent);

export function t(key, values = {}) {
  return (strings[key] ?? key).replace(/\{(\w+)\}/g, (match, name) =>
    name in values ? String(values[name]) : match,
  );
}

export const $ = (selector, root = document) => root.querySelector(selector);

export function field(root, name) {
  return root.querySelector(`[data-field="${name}"]`);
}

/** The server's message (lower case, no stop, as API errors are) as a sentence of its own. */
export function asSentence(text) {
  const trimmed = String(text).trim();
  if (!trimmed) return "";
  const stop = /[.!?]$/.test(trimmed) ? "" : ".";
  return trimmed[0].toUpperCase() + trimmed.slice(1) + stop;
}

export function fromTemplate(id) {
  return document.getElementById(id).content.firstElementChild.cloneNode(true);
}

export let currentStep = "loading";
export const leaving = []; // clean-ups of the step on screen (timers, players)

export function showStep(name) {
  while (leaving.length) leaving.pop()();
  currentStep = name;
  $("#rater").dataset.step = name;
  if (name !== "rating") setText($("#item-said"), ""); // the next item is said anew
  for (const section of document.querySelectorAll("#rater > .step")) {
    section.hidden = section.dataset.stepName !== name;
  }
  // leaving is offered wherever the rater is in the study (the consent has its own button)
  $("#withdraw-bar").hidden = ["loading", "consent", "finished"].includes(name);
  // The control in focus went with the step it was on (I agree, Continue): the focus goes
  // to the new step's heading, so a keyboard goes on from there and a screen reader
  // says where it is, rather than starting again from the top of the page.
  const active = document.activeElement;
  if (!active || active === document.body || active.closest(".step")?.hidden) {
    const heading = $(`#rater > .step[data-step-name="${name}"] h1`);
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: true });
    }
  }
}

export function notice(text) {
  const box = $("#notice");
  box.textContent = text || "";
  box.hidden = !text;
}

export let connectionLost = false;

/** The banner for a transient failure (null: all is well again). */
export function trouble(error) {
  connectionLost = Boolean(error);
  const box = $("#connection");
  box.textContent = error ? t(error.signedOut ? "signed_out" : "connection_lost") : "";
  box.hidden = !error;
}

export let state = null; // the last /state/ answer: study texts, dimensions, scale

/** Keep the server's /state/ answer (after the start, the consent, the tutorial). */
export function keepState(body) {
  state = body;
  return body;
}

let widgetModule = null; // the design's widget module, imported once

export async function loadWidgetModule() {
  if (!widgetModule) widgetModule = await import(state.widget_url);
  return widgetModule;
}

export async function loadWidget() {
  return (await loadWidgetModule()).default;
}
