// The steps between items, where the rater reads or waits: a milestone's message (a test
// passed, a session finished), a rest break counted down by the page itself, and waiting
// (a paused session or study, videos not ready yet, the connection gone at the window's
// end). Each goes on by asking the server again (rater_flow.js).

import { retryNow } from "./rater_queue.js";
import { $, connectionLost, field, leaving, showStep, state, t } from "./rater_page.js";
import { advance, start } from "./rater_flow.js";

const WAITING_AFTER_MS = 1500;

/** Wait for `promise`; when the connection is gone and it takes long, say so. */
export async function whileWaiting(promise) {
  const timer = setTimeout(() => {
    if (connectionLost) showWaiting("window_end");
  }, WAITING_AFTER_MS);
  try {
    return await promise;
  } finally {
    clearTimeout(timer);
  }
}

// message: a milestone the rater should see before going on

export function message(text) {
  showStep("message");
  $("#message-text").textContent = text;
  const button = $("#message-continue");
  button.disabled = false;
  button.onclick = () => {
    button.disabled = true;
    advance();
  };
  button.focus();
}

// break

/** A rest of `seconds` from `from` (a performance.now() value: no change of the
 * computer's clock shortens it); the server still decides when it is over. */
export function showBreak(seconds, from = performance.now()) {
  showStep("break");
  const deadline = from + Math.max(1, seconds) * 1000;
  const countdown = $("#break-countdown");
  const render = () => {
    const left = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
    countdown.textContent = t("break_left", {
      minutes: Math.floor(left / 60),
      seconds: String(left % 60).padStart(2, "0"),
    });
    return left;
  };
  render();
  const timer = setInterval(() => {
    if (render() > 0) return;
    clearInterval(timer);
    advance(); // the server decides whether the break is over
  }, 250);
  leaving.push(() => clearInterval(timer));
}

// waiting: a paused session or study, videos not ready yet; nothing to do but come back

export function showWaiting(reason) {
  showStep("waiting");
  const section = $("#step-waiting");
  section.dataset.reason = reason;
  field(section, "title").textContent = t(`${reason}_title`);
  field(section, "text").textContent = t(`${reason}_text`);
  const button = $("#waiting-retry");
  button.disabled = false;
  button.onclick = () => {
    button.disabled = true;
    retryNow(); // a queued answer waiting out its backoff goes now
    // sends what is held first, then asks the server again (from the start when the
    // page never loaded the study: it was paused when the page opened)
    if (state === null) start();
    else advance();
  };
}
