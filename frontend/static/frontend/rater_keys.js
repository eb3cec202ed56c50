// The rating step's keys: the widget's own first (a choice, a move), then Enter saves the
// answer and Space replays the video; a focused control and a text field keep theirs.

import { currentStep } from "./rater_page.js";
import { rating, submitRating } from "./rater_item.js";

/** Whether Enter or Space is for the widget's focused control (a choice, a place, a
 * move, a play button) rather than for the page's save and replay: Space on a button or
 * a box to tick; Enter on a button, except on the choice already made (aria-pressed),
 * where Enter saves, so a choice clicked and then Enter saves it. */
function operatesFocused(event) {
  const target = event.target;
  if (!(target instanceof Element) || !target.closest("#widget")) return false;
  if (event.key === " ") {
    return target.matches("button, summary, select, input[type=checkbox], input[type=radio]");
  }
  if (event.key === "Enter") {
    return target.matches("button, summary, a[href]") && target.getAttribute("aria-pressed") !== "true";
  }
  return false;
}

/** Take the rating step's keys, once, as the page starts. */
export function listenToKeys() {
  document.addEventListener("keydown", onKey);
}

function onKey(event) {
  if (currentStep !== "rating" || !rating || event.altKey || event.ctrlKey || event.metaKey) {
    return;
  }
  // a text field keeps its keys: Space and Enter are the rater's text there; and so does
  // a dialog over the item (withdrawing), whose Enter is for its own buttons
  if (event.target.closest?.("textarea, input[type=text], [contenteditable=true], dialog")) return;
  if (operatesFocused(event)) return; // the browser's own: it presses the focused control
  if (rating.widget.onKey(event)) {
    event.preventDefault();
  } else if (event.key === "Enter") {
    event.preventDefault(); // also keeps a focused button from submitting a second time
    submitRating();
  } else if (event.key === " ") {
    event.preventDefault();
    rating.widget.replay();
  }
}
