// The rater's page (docs/rater-api.md): shows whatever step the server says. Answers go
// through rater_queue.js, which never loses or doubles one. The server decides order,
// breaks, eligibility and completion; the page only shows them, and nothing in it knows
// which video is golden.
//
//   rater_page.js         config, texts, DOM helpers, the step on screen, banners, state
//   rater_api.js          API calls and the unsent-answers sender (rater_queue.js)
//   rater_flow.js         asks the server where the rater is and shows that step
//   rater_onboarding.js   consent and tutorial
//   rater_item.js         an item's life: shown, watched, skipped, answered
//   rater_item_window.js  the window of items and their media downloaded ahead
//   rater_keys.js         Enter saves, Space replays
//   rater_pauses.js       a milestone's message, a break, waiting
//   rater_finished.js     the end: completion code and redirect
//   rater_withdraw.js     leaving the study, asked once more
//
// Each design's widget (widgets/<design>.js, named by the server) shows an item and takes
// its answer; sliders and the player with its telemetry live in rater_controls.js.

import { listenToKeys } from "./rater_keys.js";
import { start } from "./rater_flow.js";
import { listenForWithdrawal } from "./rater_withdraw.js";

// A control that takes the focus (Tab, or the first answer as the video ends) scrolls
// clear of the hint and Next stuck to the window's foot: the page's scroll padding is
// the foot's height, kept as it wraps (rater.css: --foot-height).
const foot = document.querySelector(".rating-foot");
if (foot) {
  new ResizeObserver(() => {
    document.documentElement.style.setProperty("--foot-height", `${foot.offsetHeight}px`);
  }).observe(foot);
}

listenToKeys();
listenForWithdrawal();
start();
