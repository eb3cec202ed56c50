// The propose-then-verify widget (AVA, PROTOCOL.md 3.4): one person in one segment of a
// video. The segment loops beside its keyframe, the person's box drawn on both; answering
// opens once the segment has played to its end, in the item's stage:
//
// - propose (propose_stage.js): the rater picks the person's actions from the study's
//   vocabulary, or sets a flag;
// - verify (verify_stage.js): the rater answers each of the item's candidate labels Yes
//   or No.
//
// Keys: each stage's own (in its module); in both, Enter saves and Space plays the
// segment again (the page's keys); Space presses a focused button or ticks a focused box.

import { Player } from "../rater_controls.js";
import { button, element, exemplarTrial, field } from "./dom.js";
import { Propose } from "./propose_stage.js";
import { Verify } from "./verify_stage.js";

/** The person's box as an outline over its frame (corners are shares of the frame). */
function boxOutline([x1, y1, x2, y2], className) {
  const box = element("span", `pv-box ${className}`);
  Object.assign(box.style, {
    left: `${x1 * 100}%`,
    top: `${y1 * 100}%`,
    width: `${(x2 - x1) * 100}%`,
    height: `${(y2 - y1) * 100}%`,
  });
  box.setAttribute("aria-hidden", "true");
  return box;
}

/** A worked example of the tutorial: the person's box drawn over its segment. */
export function exemplarMedia(video, exemplar) {
  const frame = element("span", "pv-frame");
  video.replaceWith(frame);
  frame.append(video, boxOutline(exemplar.box || [0, 0, 1, 1], "pv-box-keyframe"));
}

/** The experts' labels of a worked example, each with its group: "sit (Pose) · ...". */
export function answerText(question, actions) {
  return actions.map((action) => `${action.name} (${action.group})`).join(" · ");
}

let tries = 0; // each example's picker apart (its own ids)

/** A worked example is tried before it is told: the rater picks the person's actions
 * with the propose stage's own picker (the vocabulary, its search and its limits; no
 * "other action" or flags, which no test compares), then checks; then the experts'
 * labels and why are shown, with the rater's recall of them (what the qualification
 * test counts for a proposer) and the labels the experts did not give. */
export function exemplarTry(node, answer, { t, state }) {
  const template = document.getElementById("widget-template");
  const picker = template?.content.querySelector(".pv-propose")?.cloneNode(true);
  if (!picker || !state?.groups) return;
  tries += 1;
  for (const named of picker.querySelectorAll("[id]")) {
    const label = picker.querySelector(`label[for="${named.id}"]`);
    named.id = `${named.id}-try${tries}`;
    if (label) label.htmlFor = named.id;
  }
  for (const left of picker.querySelectorAll(".pv-other, .pv-flags, .keys")) left.hidden = true;
  picker.hidden = false;
  picker.classList.add("pv-try");
  const trial = exemplarTrial(node);
  const check = button("secondary exemplar-check", t("exemplar_check_labels"), () => {
    const experts = new Set(answer.value.map((action) => action.id));
    const found = propose.chosen.filter((id) => experts.has(id)).length;
    const extra = propose.chosen.filter((id) => !experts.has(id));
    const named = extra.map((id) => {
      const { name, group } = propose.actions.get(id);
      return answerText(null, [{ name, group: group.label }]);
    });
    const recall = Math.round((100 * found) / Math.max(experts.size, 1));
    const said = [t("exemplar_recall", { found, total: experts.size, recall })];
    if (named.length) said.push(t("exemplar_extra", { labels: named.join(" · ") }));
    trial.tell(said.join(" "), found === experts.size && !extra.length);
  });
  check.disabled = true;
  let propose = null; // its first render calls `changed`
  propose = new Propose(picker, {
    state,
    t,
    changed: () => (check.disabled = !propose?.chosen.length || !propose.ready),
  });
  // under the tutorial's question (h2), the vocabulary's groups are h3
  for (const heading of picker.querySelectorAll("h2")) {
    heading.replaceWith(element("h3", heading.className, heading.textContent));
  }
  trial.show(element("p", "exemplar-try", t("exemplar_try_labels")), picker, check);
}

const isTextField = (node) => node instanceof HTMLInputElement && node.type === "text";

export default class ProposeVerifyWidget {
  constructor({ mount, item, state, t, takeVideo, onChange, onProblem }) {
    Object.assign(this, { t, onChange, mount });
    mount.dataset.stage = item.stage;
    const question = typeof item.question === "string" ? item.question : item.question?.text;
    field(mount, "question").textContent = question || "";
    const media = item.media[0];
    const box = item.box || [0, 0, 1, 1];
    const video = takeVideo({ ...media, label: t("pv_segment") });
    field(mount, "segment").replaceChildren(video, boxOutline(box, "pv-box-video"));
    const keyframe = field(mount, "keyframe-image");
    const poster = video.poster || media.poster_url; // the downloaded copy when there is one
    if (poster) keyframe.src = poster;
    keyframe.closest("figure").hidden = !poster;
    if (media.width) keyframe.width = media.width; // native size, as the video
    if (media.height) keyframe.height = media.height;
    field(mount, "keyframe").append(boxOutline(box, "pv-box-keyframe"));
    this.player = new Player(video, { onFirstEnd: () => this.opened(), onProblem });
    // loops while the rater answers (the Player counts each play from the start)
    video.addEventListener("ended", () => this.stopped || this.player.play().catch(() => {}));
    this.replayButton = field(mount, "replay");
    this.replayButton.textContent = t("play");
    this.replayButton.onclick = () => this.replay();
    this.answers = field(mount, "answers"); // a fieldset, disabled until watched
    const root = field(mount, item.stage === "verify" ? "verify" : "propose");
    root.hidden = false;
    const changed = () => this.onChange();
    this.stage =
      item.stage === "verify"
        ? new Verify(root, { item, state, t, changed })
        : new Propose(root, { state, t, changed });
  }

  opened() {
    this.answers.disabled = false;
    this.player.video.controls = true; // watched once: now it may be paused and scrubbed
    this.replayButton.textContent = this.t("replay");
    this.stage.opened();
    this.onChange();
  }

  get watched() {
    return this.player.endedOnce;
  }

  get ready() {
    return this.watched && this.stage.ready;
  }

  get hint() {
    return this.watched ? this.stage.hint : this.t("pv_watch_first");
  }

  values() {
    return this.stage.values();
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

  onKey(event) {
    const target = event.target;
    if (isTextField(target) || target instanceof HTMLTextAreaElement) return false;
    // Space presses the focused button or ticks the focused box (the page would replay)
    const pressable = target instanceof HTMLButtonElement || target?.type === "checkbox";
    if (event.key === " " && pressable && this.mount.contains(target)) {
      if (target === this.replayButton) return false;
      target.click();
      return true;
    }
    return this.stage.onKey(event);
  }

  stop() {
    this.stopped = true;
    this.player.stop();
  }
}
