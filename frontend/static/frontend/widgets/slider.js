// The single-stimulus slider widget (GAIA): one video at its native size, then one
// slider per dimension in the study's order; the sliders open once the video has played
// to its end. The page (rater.js and its modules) keeps the envelope, the queue and the steps.

import { Player, Slider } from "../rater_controls.js";
import { field } from "./dom.js";

export default class SliderWidget {
  /** `mount`: the widget's DOM (cloned from its template); `takeVideo(media)`: the
   * page's video element for a media entry, preloaded when it could be. */
  constructor({ mount, item, state, t, takeVideo, onChange, onProblem }) {
    this.t = t;
    field(mount, "action").textContent = item.action || "";
    field(mount, "prompt").textContent = item.prompt || "";
    const video = takeVideo({ ...item.media[0], label: t("video_generated") });
    mount.querySelector("#stage").replaceChildren(video);
    this.sliders = state.dimensions.map(
      (dimension) => new Slider(dimension, state.scale, { idPrefix: "rate", onChange }),
    );
    for (const slider of this.sliders) slider.enabled = false; // until watched once
    mount.querySelector("#sliders").replaceChildren(...this.sliders.map((s) => s.node));
    const replay = mount.querySelector("#replay");
    this.player = new Player(video, {
      onFirstEnd: () => {
        for (const slider of this.sliders) slider.enabled = true;
        replay.textContent = t("replay");
        this.sliders[0]?.input.focus();
        onChange();
      },
      onProblem,
    });
    replay.textContent = t("play");
    replay.onclick = () => this.player.replay();
  }

  get watched() {
    return this.player.endedOnce;
  }

  get ready() {
    return this.watched && this.sliders.every((s) => s.touched);
  }

  get hint() {
    if (!this.watched) return this.t("watch_first");
    return this.t(this.ready ? "ready" : "move_sliders");
  }

  values() {
    return { scores: Object.fromEntries(this.sliders.map((s) => [s.dimension.key, s.value])) };
  }

  telemetry() {
    return this.player.telemetry();
  }

  start() {
    return this.player.play();
  }

  replay() {
    this.player.replay();
  }

  onKey() {
    return false; // the sliders take their own keys; Enter and Space are the page's
  }

  stop() {
    this.player.stop();
  }
}
