// The rater's page (docs/rater-api.md): shows whatever step the server says. Answers go
// through rater_queue.js, which never loses or doubles one.
//
//   1. config, strings and DOM helpers
//   2. API calls and the unsent-answers queue (wired to rater_queue.js)
//   3. the steps: consent, tutorial, rating (qualification and sessions), break, waiting,
//      finished
//   4. start: flush what is unsent, then ask the server where we are
//
// Each design's widget (widgets/<design>.js, named by the server) shows an item and takes
// its answer; sliders and the player with its telemetry live in rater_controls.js.
//
// The server decides order, breaks, eligibility and completion; this module only shows
// them. Nothing here knows which video is golden.

import {
  AnswerQueue,
  AnswerSender,
  ApiError,
  browserStorage,
  clock,
  newUuid,
  request,
  retryNow,
  withRetry,
} from "./rater_queue.js";
import { Slider, makeVideo } from "./rater_controls.js";
import { setText } from "./live_text.js";
import { MediaStore, mediaUrls } from "./rater_window.js";

// ---------------------------------------------------------------- 1. config and helpers

const config = JSON.parse(document.getElementById("rater-config").textContent);
const strings = JSON.parse(document.getElementById("rater-strings").textContent);

function t(key, values = {}) {
  return (strings[key] ?? key).replace(/\{(\w+)\}/g, (match, name) =>
    name in values ? String(values[name]) : match,
  );
}

const $ = (selector, root = document) => root.querySelector(selector);

function field(root, name) {
  return root.querySelector(`[data-field="${name}"]`);
}

/** The server's message (lower case, no stop, as API errors are) as a sentence of its own. */
function asSentence(text) {
  const trimmed = String(text).trim();
  if (!trimmed) return "";
  const stop = /[.!?]$/.test(trimmed) ? "" : ".";
  return trimmed[0].toUpperCase() + trimmed.slice(1) + stop;
}

function fromTemplate(id) {
  return document.getElementById(id).content.firstElementChild.cloneNode(true);
}

let currentStep = "loading";
const leaving = []; // clean-ups of the step on screen (timers, players)

function showStep(name) {
  while (leaving.length) leaving.pop()();
  currentStep = name;
  $("#rater").dataset.step = name;
  if (name !== "rating") setText($("#item-said"), ""); // the next item is said anew
  for (const section of document.querySelectorAll("#rater > .step")) {
    section.hidden = section.dataset.stepName !== name;
  }
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

function notice(text) {
  const box = $("#notice");
  box.textContent = text || "";
  box.hidden = !text;
}

let connectionLost = false;
const WAITING_AFTER_MS = 1500;

/** The banner for a transient failure (null: all is well again). */
function trouble(error) {
  connectionLost = Boolean(error);
  const box = $("#connection");
  box.textContent = error ? t(error.signedOut ? "signed_out" : "connection_lost") : "";
  box.hidden = !error;
}

// ---------------------------------------------------------------- 2. API and queue

const api = {
  get: (name) =>
    withRetry(() => request("GET", config.api[name]), { onTrouble: trouble }).then(
      (response) => response.body,
    ),
  post: (name, payload) =>
    withRetry(() => request("POST", config.api[name], { csrfToken: config.csrf_token, payload }), {
      onTrouble: trouble,
    }).then((response) => response.body),
};

const sender = new AnswerSender({
  // Kept per study and per user, so that two people sharing a browser never mix answers.
  queue: new AnswerQueue(browserStorage(), `mosaic:unsent:${config.slug}:${config.user}`),
  url: config.api.answers,
  csrfToken: config.csrf_token,
  onTrouble: trouble,
  onRefused: (outcome) =>
    notice(t("answer_refused", { detail: outcome.body.detail || outcome.body.error })),
  onChange: (unsent) => ($("#rater").dataset.unsent = String(unsent)),
});

// ---------------------------------------------------------------- 3. steps

let state = null; // the last /state/ answer: study texts, dimensions, scale

async function route(step, body) {
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
      return showFinished(step, body.completion);
    default:
      return problem(t("load_failed", { detail: step }));
  }
}

/** Ask the server what comes now, after sending anything still unsent. */
async function advance() {
  await whileWaiting(sender.flush());
  return routeSafely(async () => {
    const body = await whileWaiting(api.get("next"));
    return route(body.step, body);
  });
}

async function routeSafely(operation) {
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

// consent

function showConsent() {
  showStep("consent");
  const section = $("#step-consent");
  field(section, "study-name").textContent = state.study.name;
  field(section, "instructions").textContent = state.study.instructions;
  field(section, "consent-text").textContent = state.study.consent_text;
  const button = $("#consent-accept");
  button.disabled = false;
  button.onclick = async () => {
    button.disabled = true;
    const box = $("#consent-error");
    box.hidden = true;
    try {
      state = await api.post("consent", {
        accept: true,
        viewport_width: window.innerWidth,
        viewport_height: window.innerHeight,
        pixel_ratio: window.devicePixelRatio || 1,
        screen_width: window.screen?.width || 0,
        screen_height: window.screen?.height || 0,
        user_agent: navigator.userAgent,
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const small =
        error.body.error === "viewport_too_small" || error.body.reason === "viewport_too_small";
      field(box, "title").textContent = t(small ? "viewport_too_small" : "consent_failed");
      field(box, "detail").textContent = asSentence(error.message);
      field(box, "hint").textContent = small ? t("viewport_hint") : "";
      box.dataset.reason = error.body.reason || error.body.error || "";
      box.hidden = false;
      button.disabled = false;
      return;
    }
    await routeSafely(() => route(state.step, state));
  };
}

// tutorial

async function showTutorial() {
  showStep("tutorial");
  // the design's intro, every paragraph of it
  const intro = document.getElementById("tutorial-intro-template").content.cloneNode(true);
  $("#tutorial-intro").replaceChildren(intro);
  const { pairs, exemplars = [] } = await api.get("tutorial");
  const groups = $("#tutorial-groups");
  groups.replaceChildren(...(exemplars.length ? await exemplarGroups(exemplars) : []));
  const dimensions = new Map((state.dimensions || []).map((d) => [d.key, d]));
  // a design that asks questions (a preference study) names a pair's group by its question
  const questions = new Map((state.questions || []).map((q) => [q.key, q]));
  let group = null;
  pairs.forEach((pair, index) => {
    const dimension = dimensions.get(pair.dimension);
    const question = questions.get(pair.dimension);
    if (!group || group.dataset.dimension !== pair.dimension) {
      group = fromTemplate("tutorial-group-template");
      group.dataset.dimension = pair.dimension;
      field(group, "label").textContent = dimension?.label || question?.label || pair.dimension;
      field(group, "help").textContent = dimension?.help_text || question?.text || "";
      groups.append(group);
    }
    field(group, "pairs").append(tutorialPair(pair, dimension, index));
  });
  const examples = pairs.length + exemplars.length > 0;
  for (const node of $("#tutorial-intro").querySelectorAll(".if-examples")) {
    node.hidden = !examples; // the intro speaks of examples only where there are some
  }
  const empty = $("#tutorial-empty");
  empty.textContent = t("no_tutorial");
  empty.hidden = examples;
  const done = $("#tutorial-done");
  done.disabled = false;
  done.onclick = () => {
    done.disabled = true;
    return routeSafely(async () => {
      state = await api.post("tutorial_done");
      return route(state.step, state);
    });
  };
}

/** The experts' exemplars (questionnaire): question by question, each video asked it
 * with its prompt, the experts' answer in the question's terms (the widget module's
 * `answerText`) and why. */
async function exemplarGroups(exemplars) {
  const { answerText = (question, value) => String(value) } = await loadWidgetModule();
  const questions = new Map((state.questions || []).map((q) => [q.key, q]));
  const keys = new Set(questions.keys());
  for (const answer of exemplars.flatMap((exemplar) => exemplar.answers)) keys.add(answer.question);
  const groups = [];
  for (const key of keys) {
    const question = questions.get(key);
    const shown = exemplars.flatMap((exemplar) =>
      exemplar.answers.filter((a) => a.question === key).map((answer) => [exemplar, answer]),
    );
    if (!shown.length) continue;
    const group = fromTemplate("exemplar-group-template");
    group.dataset.question = key;
    field(group, "label").textContent = question?.label || key;
    field(group, "help").textContent = question?.text || "";
    for (const [exemplar, answer] of shown) {
      const node = fromTemplate("exemplar-template");
      node.dataset.video = exemplar.id;
      const video = field(node, "video");
      video.src = exemplar.video_url;
      if (exemplar.poster_url) video.poster = exemplar.poster_url;
      field(node, "prompt").textContent = exemplar.prompt || "";
      field(node, "prompt-line").hidden = !exemplar.prompt;
      field(node, "answer").textContent = t("exemplar_answer", {
        value: answerText(question, answer.value, t),
      });
      field(node, "note").textContent = answer.note ? t("exemplar_why", { note: answer.note }) : "";
      field(node, "note").hidden = !answer.note;
      field(group, "exemplars").append(node);
    }
    groups.push(group);
  }
  return groups;
}

function tutorialPair(pair, dimension, index) {
  const node = fromTemplate("tutorial-pair-template");
  field(node, "label").textContent = pair.label;
  field(node, "caption").textContent = pair.caption;
  field(node, "explanation").textContent = pair.explanation;
  for (const side of ["generated", "real"]) {
    const video = field(node, side);
    video.src = pair[side].video_url;
    if (pair[side].poster_url) video.poster = pair[side].poster_url;
  }
  const expertValue = pair.expert?.[pair.dimension];
  let slider = null;
  if (dimension && state.scale) {
    slider = new Slider(dimension, state.scale, { idPrefix: `tutorial-${index}` });
    field(node, "try").append(slider.node);
  }
  const reveal = $('[data-action="reveal"]', node);
  const expert = field(node, "expert");
  reveal.hidden = expertValue === undefined;
  reveal.onclick = () => {
    const lines = [t("expert_answer", { value: expertValue })];
    if (slider?.value !== null && slider?.value !== undefined) {
      lines.push(t("your_answer", { value: slider.value }));
    }
    expert.textContent = lines.join(" · ");
    expert.hidden = false;
    slider?.markExpert(expertValue);
  };
  return node;
}

// rating (qualification and sessions alike): the design's widget shows the item and
// takes the answer's values; the page adds the envelope (id, times, telemetry).
//
// The window (docs/rater-api.md): the server sends the items the page may answer without
// asking it again, and their media are downloaded ahead (rater_window.js). Within the
// window the page goes on at once after an answer, online or offline; the answers wait
// in the queue and go out in order. At the window's end the server decides what comes
// (more items, a test's verdict, the golden gate), but for a rest break, which the page
// counts down itself so that a rater without a connection rests too.

let rating = null; // the item on screen: {item, kind, widget, shownAt, submitting}
let win = null; // {items, ends, restSeconds, preload, kind, position, length}; items[0] is shown

// The look-ahead's cap (rater_window.js): items and bytes downloaded ahead of the one on
// screen, from the server's settings.
const media = new MediaStore({ onChange: () => showAhead(), budgetBytes: config.ahead.bytes });

/** `#rater[data-ahead]`: "downloaded/held" items of the window after the one on screen,
 * and `data-ahead-bytes` what they hold (for tests and support). */
function showAhead() {
  const ahead = win ? win.items.slice(1) : [];
  const ready = ahead.filter((item) => media.has(mediaUrls(item))).length;
  const rater = $("#rater");
  rater.dataset.ahead = `${ready}/${ahead.length}`;
  rater.dataset.aheadBytes = String(media.aheadBytes);
}

function holdMedia() {
  const [showing, ...ahead] = win ? win.items : [];
  if (win?.preload && ![showing, ...ahead].some((item) => item?.id === win.preload.id)) {
    ahead.push(win.preload);
  }
  media.keep({
    showing: showing ? mediaUrls(showing) : [],
    ahead: ahead.slice(0, config.ahead.items).flatMap(mediaUrls),
  });
  showAhead();
}

/** The video element of a media entry, from its downloaded copy when there is one. */
function takeVideo(entry) {
  const video = makeVideo({
    ...entry,
    video_url: media.source(entry.video_url),
    poster_url: media.source(entry.poster_url),
  });
  // Native size: never scaled. libx264's 4:2:0 needs even sides, so an odd one was padded
  // by a pixel on the right or bottom (media_pipeline.ffmpeg.transcode): the element takes
  // the rendition's own size, so that nothing is resampled, and the pad pixel is clipped.
  const padRight = (entry.width || 0) % 2;
  const padBottom = (entry.height || 0) % 2;
  if (entry.width) video.width = entry.width + padRight;
  if (entry.height) video.height = entry.height + padBottom;
  if (padRight || padBottom) video.style.clipPath = `inset(0 ${padRight}px ${padBottom}px 0)`;
  return video;
}

function showProgress(body) {
  $("#progress").max = Math.max(1, body.length);
  $("#progress").value = body.position;
  $("#progress-text").textContent = t("progress", {
    position: body.position,
    length: body.length,
  });
}

let widgetModule = null; // the design's widget module, imported once

async function loadWidgetModule() {
  if (!widgetModule) widgetModule = await import(state.widget_url);
  return widgetModule;
}

async function loadWidget() {
  return (await loadWidgetModule()).default;
}

/** The server's next/ answer: its window replaces the page's. */
async function showItem(body) {
  if (!body.item) {
    win = null;
    holdMedia();
    const reason = body.step === "qualification" ? "qualification_not_ready" : "nothing_to_rate";
    return showWaiting(reason);
  }
  win = {
    items: body.window?.length ? [...body.window] : [body.item],
    ends: body.window_ends || "end",
    restSeconds: body.rest_seconds || 0,
    preload: body.preload,
    kind: body.step,
    position: body.position,
    length: body.length,
  };
  holdMedia();
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

async function submitRating() {
  if (!canSubmit()) return;
  const { item, kind, widget, shownAt } = rating;
  rating.submitting = true;
  rating.refresh();
  notice("");
  const answeredAt = performance.now();
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

/** Wait for `promise`; when the connection is gone and it takes long, say so. */
async function whileWaiting(promise) {
  const timer = setTimeout(() => {
    if (connectionLost) showWaiting("window_end");
  }, WAITING_AFTER_MS);
  try {
    return await promise;
  } finally {
    clearTimeout(timer);
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

function message(text) {
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

document.addEventListener("keydown", (event) => {
  if (currentStep !== "rating" || !rating || event.altKey || event.ctrlKey || event.metaKey) {
    return;
  }
  // a text field keeps its keys: Space and Enter are the rater's text there
  if (event.target.closest?.("textarea, input[type=text], [contenteditable=true]")) return;
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
});

// break

/** A rest of `seconds` from `from` (a performance.now() value: no change of the
 * computer's clock shortens it); the server still decides when it is over. */
function showBreak(seconds, from = performance.now()) {
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

function showWaiting(reason) {
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

// done, not eligible, screened out

function safeRedirect(url) {
  try {
    const target = new URL(url, window.location.href);
    return target.protocol === "https:" || target.protocol === "http:" ? target.href : null;
  } catch {
    return null;
  }
}

function showFinished(step, completion) {
  showStep("finished");
  const section = $("#step-finished");
  section.dataset.outcome = step;
  field(section, "title").textContent = t(`${step}_title`);
  field(section, "text").textContent = t(`${step}_text`);
  field(section, "completion").hidden = !completion?.code;
  $("#completion-code").textContent = completion?.code || "";
  const url = completion?.redirect_url ? safeRedirect(completion.redirect_url) : null;
  field(section, "redirect").hidden = !url;
  if (!url) return;
  field(section, "redirect-text").textContent = t("redirecting");
  $("#completion-link").href = url;
  const timer = setTimeout(() => window.location.assign(url), config.redirect_delay_ms);
  leaving.push(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- 4. start

async function start() {
  $("#rater").dataset.unsent = String(sender.queue.list().length);
  await sender.flush(); // an answer saved before a reload goes first, or it would be shown again
  await routeSafely(async () => {
    state = await api.get("state");
    return route(state.step, state);
  });
}

start();
