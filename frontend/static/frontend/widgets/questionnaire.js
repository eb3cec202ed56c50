// The questionnaire widget (VGA-Bench labelling): one video, looping, beside the questions
// its prompt is about (the item's `questions`, in the study's order under their group
// headings), each answered in its kind: a score (a button per step, or a slider where
// the scale has more steps), an ordinal level or "Invalid question", tags (one or
// several; "None of these" says so explicitly) and an optional comment. The questions
// open once the video has played to its end; Next, once every question but the comment
// is answered. The questions themselves: questionnaire_questions.js.
//
// Keys: Tab moves between the questions (and the tags of several), the arrows between a
// question's answers, Space presses the focused one, Enter saves and Space elsewhere
// plays the video again (the page's keys); the comment box keeps its keys.

import { Player } from "../rater_controls.js";
import { element, field } from "./dom.js";
import { kindOf } from "./questionnaire_questions.js";

// the tutorial shows the experts' answers with it (rater_onboarding.js, from this module)
export { answerText, exemplarTry } from "./questionnaire_questions.js";

// A video at most this wide leaves room for the questions beside it (the page is 1100px);
// a wider one keeps its native size above them.
const BESIDE_MAX_WIDTH = 640;
const NAMES_IN_HINT = 3;

export default class QuestionnaireWidget {
  constructor({ mount, item, state, t, takeVideo, onChange, onProblem }) {
    Object.assign(this, { t, onChange, mount });
    const media = item.media[0];
    mount.classList.toggle("q-beside", !media.width || media.width <= BESIDE_MAX_WIDTH);
    field(mount, "prompt").textContent = item.prompt || "";
    field(mount, "prompt-line").hidden = !item.prompt;
    const video = takeVideo({ ...media, label: t("video_generated") });
    field(mount, "stage").replaceChildren(video);
    this.counter = field(mount, "answered");
    this.replayButton = field(mount, "replay");
    this.replayButton.textContent = t("play");
    this.replayButton.onclick = () => this.replay();
    this.player = new Player(video, { onFirstEnd: () => this.opened(), onProblem });
    // loops while the rater answers (the Player counts each play from the start)
    video.addEventListener("ended", () => this.stopped || this.player.play().catch(() => {}));

    const asked = new Set(item.questions ?? state.questions.map((question) => question.key));
    const changed = () => this.changed();
    this.questions = state.questions
      .filter((question) => asked.has(question.key) && kindOf(question))
      .map((question) => new (kindOf(question))(question, { t, changed }));
    const sections = [];
    for (const entry of this.questions) {
      const group = entry.question.group || "";
      if (!sections.length || sections.at(-1).dataset.group !== group) {
        const section = element("section", "q-group");
        section.dataset.group = group;
        if (group) section.append(element("h2", "", group));
        sections.push(section);
      }
      entry.node.disabled = true; // until the video has played to its end
      sections.at(-1).append(entry.node);
    }
    field(mount, "questions").replaceChildren(...sections);
    this.render();
  }

  opened() {
    for (const entry of this.questions) entry.node.disabled = false;
    this.player.video.controls = true; // watched once: now it may be paused and scrubbed
    this.replayButton.textContent = this.t("replay");
    const first = this.questions[0]?.node.querySelector("button, input, textarea");
    first?.focus({ preventScroll: true });
    this.onChange();
  }

  changed() {
    this.render();
    this.onChange();
  }

  render() {
    const required = this.questions.filter((entry) => entry.question.kind !== "comment");
    for (const entry of required) entry.node.dataset.answered = entry.answered ? "yes" : "no";
    const answered = required.filter((entry) => entry.answered).length;
    const total = required.length;
    this.counter.textContent = this.t("questionnaire_answered", { answered, total });
  }

  get left() {
    return this.questions.filter((entry) => !entry.answered);
  }

  get watched() {
    return this.player.endedOnce;
  }

  get ready() {
    return this.watched && this.left.length === 0;
  }

  get hint() {
    if (!this.watched) return this.t("questionnaire_watch_first");
    const left = this.left;
    if (!left.length) return this.t("questionnaire_ready");
    const names = left.slice(0, NAMES_IN_HINT).map((entry) => entry.question.label);
    const more = left.length - NAMES_IN_HINT;
    if (more > 0) names.push(this.t("questionnaire_more", { count: more }));
    return this.t("questionnaire_left", { left: left.length, names: names.join(", ") });
  }

  values() {
    const answers = {};
    for (const entry of this.questions) {
      if (entry.value !== undefined) answers[entry.question.key] = entry.value;
    }
    return { answers };
  }

  telemetry() {
    return this.player.telemetry();
  }

  start() {
    this.stopped = false;
    return this.player.play();
  }

  replay() {
    this.stopped = false;
    this.player.replay();
  }

  /** Space presses the focused toggle button (the page would take it to replay the video;
   * a radio button's Space is the browser's own). */
  onKey(event) {
    const target = event.target;
    if (event.key !== " " || !(target instanceof HTMLButtonElement)) return false;
    if (!this.mount.contains(target) || target === this.replayButton) return false;
    target.click();
    return true;
  }

  stop() {
    this.stopped = true;
    this.player.stop();
  }
}
