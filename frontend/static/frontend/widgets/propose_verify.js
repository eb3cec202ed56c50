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
import { element, field } from "./dom.js";
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
