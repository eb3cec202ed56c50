// Where the rater is: the page asks the server (state/ at the start, next/ after that,
// once what is unsent has gone) and shows the step it names. The steps come back here
// from their buttons and timers, which run only after every module has loaded.

import { ApiError } from "./rater_queue.js";
import { $, keepState, notice, showStep, state, t } from "./rater_page.js";
import { api, sender } from "./rater_api.js";
import { showConsent, showTutorial } from "./rater_onboarding.js";
import { showItem } from "./rater_item.js";
import { showBreak, showWaiting, whileWaiting } from "./rater_pauses.js";
import { showFinished } from "./rater_finished.js";

export async function route(step, body) {
  switch (step) {
    case "consent":
      return showConsent();
    case "tutorial":
      return showTutorial();
    case "qualification":
    case "rating":
      return "item" in body ? showItem(body) : advance();
    case "break":
      return showBreak(body.break_seconds_left ?? body.assignment?.break_seconds_left ?? 1);
    case "paused":
      return showWaiting("paused");
    case "done":
    case "full":
    case "not_eligible":
    case "screened_out":
    case "withdrawn":
      return showFinished(step, body.completion);
    default:
      return problem(t("load_failed", { detail: step }));
  }
}

/** Ask the server what comes now, after sending anything still unsent. */
export async function advance() {
  await whileWaiting(sender.flush());
  return routeSafely(async () => {
    const body = await whileWaiting(api.get("next"));
    return route(body.step, body);
  });
}

export async function routeSafely(operation) {
  try {
    return await operation();
  } catch (error) {
    // a study paused by its team: nothing to do but come back (answers are kept)
    if (error instanceof ApiError && error.body?.error === "study_not_running") {
      return showWaiting("study_paused");
    }
    if (error instanceof ApiError) return problem(t("load_failed", { detail: error.message }));
    throw error;
  }
}

function problem(text) {
  showStep("loading");
  $("#step-loading").hidden = true; // the notice says why: nothing is loading any more
  notice(text);
}

/** Send what is unsent, then ask the server where the rater is. */
export async function start() {
  $("#rater").dataset.unsent = String(sender.queue.list().length);
  await sender.flush(); // an answer saved before a reload goes first, or it would be shown again
  await routeSafely(async () => {
    keepState(await api.get("state"));
    return route(state.step, state);
  });
}
