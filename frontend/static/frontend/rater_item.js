// An item's life on the rating step (qualification and sessions alike): entering it, the
// design's widget (widgets/<design>.js, named by the server) showing it and gating Next
// until it has been watched, a video that cannot play offered for skipping, and the
// answer submitted through the unsent-answers queue, after which the page goes on.
//
// The widget takes the answer's values; the page adds the envelope (id, times,
// telemetry). Within the window (rater_item_window.js) the page goes on at once after an
// answer, online or offline; the answers wait in the queue and go out in order. At the
// window's end the server decides what comes (more items, a test's verdict, the golden
// gate), but for a rest break, which the page counts down itself so that a rater without
// a connection rests too. Nothing here knows which video is golden.

import { ApiError, clock, newUuid, request } from "./rater_queue.js";
import { setText } from "./live_text.js";
import {
  $,
  asSentence,
  config,
  currentStep,
  field,
  fromTemplate,
  leaving,
  loadWidget,
  notice,
  showStep,
  state,
  t,
} from "./rater_page.js";
import { api, sender } from "./rater_api.js";
import { holdMedia, takeVideo, takeWindow, win } from "./rater_item_window.js";
import { message, showBreak, showWaiting, whileWaiting } from "./rater_pauses.js";
import { advance, route } from "./rater_flow.js";

// the item on screen: {item, kind, widget, shownAt, shownSince, submitting}
export let rating = null;

// How long this rater takes an item on this page, from shown to answered (so a break is
// not counted): the time left in the session or test is told once three are known.
const paces = [];

function timeLeft(remaining) {
  if (paces.length < 3 || remaining <= 0) return "";
  const recent = paces.slice(-10).sort((a, b) => a - b);
  const minutes = Math.round((recent[Math.floor(recent.length / 2)] * remaining) / 60000);
  return minutes < 1 ? t("time_left_under_a_minute") : t("time_left", { minutes });
}

function showProgress(body) {
  $("#progress").max = Math.max(1, body.length);
  $("#progress").value = body.position;
  $("#progress-text").textContent = t("progress", {
    position: body.position,
    length: body.length,
  });
  const left = timeLeft(body.length - body.position);
  $("#time-left").textContent = left;
  $("#time-left").hidden = !left;
}

/** The server's next/ answer: its window replaces the page's. */
export async function showItem(body) {
  takeWindow(body);
  if (!body.item) {
    const reason = body.step === "qualification" ? "qualification_not_ready" : "nothing_to_rate";
    return showWaiting(reason);
  }
  return showCurrent();
}

/** Show the window's first item. */
async function showCurrent() {
  const item = win.items[0];
  const WidgetClass = await loadWidget();
  showStep("rating");
  const section = $("#step-rating");
  Object.assign(section.dataset, { item: item.id, position: win.position, kind: win.kind });
  delete section.dataset.ready;
  field(section, "title").textContent =
    win.kind === "qualification" ? t("qualification_title") : t("rating_title");
  showProgress(win);

  const mount = fromTemplate("widget-template");
  $("#widget").replaceChildren(mount);
  const current = { item, kind: win.kind, submitting: false };
  const refresh = () => {
    if (!current.widget) return;
    if (current.widget.watched) section.dataset.ready = "";
    $("#next").disabled = !current.widget.ready || current.submitting;
    setText($("#rating-hint"), current.widget.hint); // a live region
  };
  current.refresh = refresh;
  current.widget = new WidgetClass({
    mount,
    item,
    state,
    t,
    takeVideo,
    onChange: refresh,
    onProblem: (error) => offerSkip(current, error),
  });
  $("#next").textContent = t("next");
  $("#skip-video").hidden = true;
  $("#rating-form").onsubmit = (event) => {
    event.preventDefault();
    submitRating();
  };
  refresh();
  current.shownAt = clock.iso();
  current.shownSince = performance.now();
  rating = current;
  leaving.push(() => {
    current.widget.stop();
    rating = null;
  });
  current.widget.start().catch(() => {}); // muted autoplay; if refused, Play is there
  enterItem(mount);
}

/** A new item: the keyboard goes on from it and a screen reader says which it is. The
 * control in focus went with the last item (the focus fell to the page's top, and the
 * widget takes it to its first control only once the video has played), so the item's
 * region takes it, named by the step's heading, unless the widget put it on a control of
 * its own. Its position ("Video 12 of 300") is said once, in a live region written only
 * when its words change. */
function enterItem(mount) {
  mount.tabIndex = -1;
  mount.setAttribute("role", "group");
  mount.setAttribute("aria-labelledby", "rating-title");
  // without scrolling, as the steps' headings and the widgets' controls take it: a
  // questionnaire's region is taller than the window, and its top would hide the heading
  if (!mount.contains(document.activeElement)) mount.focus({ preventScroll: true });
  // a rater who scrolled down the last item starts the new one at its top
  if (window.scrollY > 0) window.scrollTo({ top: 0 });
  const place = { number: win.position + 1, length: win.length };
  setText($("#item-said"), t(`item_${state.design}`, place));
}

/** The item's video cannot be played here (a damaged file, a codec the browser lacks):
 * the rater may skip it. The server takes it out of what the rater is asked and tells
 * the team (POST problems/), once the answers before it are delivered; then the page
 * asks what comes next. */
function offerSkip(current, error) {
  if (rating !== current) return;
  notice(t("video_failed"));
  const button = $("#skip-video");
  button.hidden = false;
  button.disabled = false;
  // the browser's MediaError, for the team: 3 is a decode error, 4 a format it cannot play
  const detail = error ? `MediaError ${error.code}: ${error.message || ""}`.trim() : "";
  button.onclick = async () => {
    if (rating !== current || current.submitting) return;
    button.disabled = true;
    current.submitting = true;
    try {
      await whileWaiting(sender.flush());
      await api.post("problems", { item: current.item.id, detail });
      notice(t("video_skipped"));
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      notice(asSentence(failure.message));
      if (failure.body?.error === "too_many_skipped") return (button.hidden = true);
    }
    return advance();
  };
}

function canSubmit() {
  return rating !== null && !rating.submitting && rating.widget.ready;
}

export async function submitRating() {
  if (!canSubmit()) return;
  const { item, kind, widget, shownAt } = rating;
  rating.submitting = true;
  rating.refresh();
  notice("");
  const answeredAt = performance.now();
  paces.push(answeredAt - rating.shownSince);
  const answer = {
    client_uuid: newUuid(),
    item: item.id,
    ...widget.values(),
    shown_at: shownAt,
    answered_at: clock.iso(),
    ...widget.telemetry(),
  };
  widget.stop();
  // Queued before the first byte leaves: a reload or a crash loses nothing.
  const delivery = sender.submit(answer);
  const last = win.position + 1 >= win.length;
  if (win.items.length > 1) {
    win.items.shift();
    win.position += 1;
    holdMedia();
    delivery.then(afterDelivery);
    return showCurrent();
  }
  if (win.ends === "break" && kind === "rating" && !last) {
    delivery.then(afterDelivery);
    return showBreak(win.restSeconds, answeredAt);
  }
  $("#next").textContent = t("sending");
  const outcomes = await whileWaiting(delivery);
  const mine = outcomes.find((o) => o.answer.client_uuid === answer.client_uuid);
  if (mine?.kind === "stored") return afterStored(mine.body, kind);
  return advance(); // refused (the notice says why) or held back: the server decides
}

/** An answer sent from the window: a refusal or a hold sends the page back to the
 * server, which decides what comes now; otherwise the window is topped up. */
function afterDelivery(outcomes) {
  if (outcomes.some((o) => o.kind === "refused" || o.kind === "held")) return advance();
  return topUp();
}

let toppingUp = false;

/** Ask for the window again once the server has every answer: it grows back to its
 * size, and the page learns of a pause or another device's answers. */
async function topUp() {
  if (toppingUp || !win || currentStep !== "rating" || sender.queue.list().length) return;
  toppingUp = true;
  const asked = win;
  const position = win.position;
  try {
    const { body } = await request("GET", config.api.next);
    if (win !== asked || win.position !== position || sender.queue.list().length) return;
    const same = body.step === win.kind && body.item?.id === win.items[0].id;
    if (!same) return route(body.step, body);
    Object.assign(win, {
      items: body.window?.length ? [...body.window] : [body.item],
      ends: body.window_ends || "end",
      preload: body.preload,
      restSeconds: body.rest_seconds || 0,
    });
    holdMedia();
  } catch {
    // offline or refused: the next answer's delivery asks again
  } finally {
    toppingUp = false;
  }
}

/** A milestone the rater should see before going on; otherwise ask for the next item. */
function afterStored(body, previousKind) {
  if (previousKind === "qualification" && body.step === "rating") {
    return message(t("qualification_passed"));
  }
  if (previousKind === "qualification" && body.step === "qualification" && body.position === 0) {
    return message(t("qualification_retry"));
  }
  if (previousKind === "rating" && body.step === "rating" && body.position >= body.length) {
    return message(t("session_finished"));
  }
  return advance();
}
