// The rater page's controls: sliders that hold no value until the rater moves them, and a
// player that measures what the rater actually watched (for the answer's telemetry).

const $ = (selector, root = document) => root.querySelector(selector);

function field(root, name) {
  return root.querySelector(`[data-field="${name}"]`);
}

// ---------------------------------------------------------------- sliders

/** One slider per dimension; it has no value until the rater moves it. */
export class Slider {
  constructor(dimension, scale, { idPrefix, onChange = () => {} }) {
    this.dimension = dimension;
    const template = document.getElementById("slider-template");
    this.node = template.content.firstElementChild.cloneNode(true);
    this.input = $("input", this.node);
    const id = `${idPrefix}-${dimension.key}`;
    this.input.id = id;
    $("label", this.node).htmlFor = id;
    field(this.node, "label").textContent = dimension.label;
    field(this.node, "help").textContent = dimension.help_text || "";
    field(this.node, "low").textContent = dimension.anchor_low;
    field(this.node, "high").textContent = dimension.anchor_high;
    // the scale's ends ("Bad", "Excellent") and the help describe the slider: read with
    // it, not only where they stand
    const described = ["low", "high", ...(dimension.help_text ? ["help"] : [])];
    for (const name of described) field(this.node, name).id = `${id}-${name}`;
    this.input.setAttribute("aria-describedby", described.map((name) => `${id}-${name}`).join(" "));
    Object.assign(this.input, { min: scale.min, max: scale.max, step: scale.step });
    this.input.value = (scale.min + scale.max) / 2; // hidden: the thumb shows only once moved
    this.input.dataset.dimension = dimension.key;
    this.input.setAttribute("aria-valuetext", "—");
    this.scale = scale;
    this.touched = false;
    const touch = () => {
      if (this.input.disabled) return;
      if (!this.touched) {
        this.touched = true;
        this.input.removeAttribute("data-untouched");
      }
      this.input.setAttribute("aria-valuetext", String(this.input.valueAsNumber));
      onChange(this);
    };
    this.input.addEventListener("input", touch);
    this.input.addEventListener("change", touch);
    // A click on the very middle changes nothing, so no input event: it still counts.
    this.input.addEventListener("pointerdown", touch);
  }

  get value() {
    return this.touched ? this.input.valueAsNumber : null;
  }

  set enabled(on) {
    this.input.disabled = !on;
  }

  markExpert(value) {
    const mark = $(".expert-mark", this.node);
    const share = (value - this.scale.min) / (this.scale.max - this.scale.min);
    mark.style.left = `${Math.min(1, Math.max(0, share)) * 100}%`;
    mark.hidden = false;
  }
}

// ---------------------------------------------------------------- player

/** The video element of a media entry; `item.label` names it ("Left video", "Video A"),
 * as the widget that asks for it shows it. */
export function makeVideo(item) {
  const video = document.createElement("video");
  if (item.label) video.setAttribute("aria-label", item.label);
  video.muted = true;
  video.defaultMuted = true;
  video.setAttribute("muted", "");
  video.playsInline = true;
  video.setAttribute("playsinline", "");
  video.preload = "auto";
  video.disablePictureInPicture = true;
  if (item.poster_url) video.poster = item.poster_url;
  video.dataset.item = item.id;
  video.src = item.video_url;
  return video;
}

/** Watches one video: plays from the start, time actually playing, buffering stalls. */
export class Player {
  constructor(video, { onFirstEnd, onProblem }) {
    this.video = video;
    this.plays = 0;
    this.stalls = 0;
    this.watchedMs = 0;
    this.playingSince = null;
    this.atStart = true;
    this.endedOnce = false;
    const on = (type, handler) => video.addEventListener(type, handler);
    on("play", () => {
      if (this.atStart) this.plays += 1;
      this.atStart = false;
    });
    on("playing", () => (this.playingSince = performance.now()));
    on("waiting", () => {
      if (this.playingSince !== null) this.stalls += 1; // starved while playing
      this.stopClock();
    });
    on("pause", () => this.stopClock());
    on("ended", () => {
      this.stopClock();
      this.atStart = true;
      if (!this.endedOnce) {
        this.endedOnce = true;
        onFirstEnd();
      }
    });
    on("error", () => onProblem(video.error));
  }

  stopClock() {
    if (this.playingSince !== null) {
      this.watchedMs += performance.now() - this.playingSince;
      this.playingSince = null;
    }
  }

  get watchTimeMs() {
    const running = this.playingSince === null ? 0 : performance.now() - this.playingSince;
    return Math.round(this.watchedMs + running);
  }

  /** What a one-video widget reports with each answer. */
  telemetry() {
    return { watch_time_ms: this.watchTimeMs, plays: this.plays, stalls: this.stalls };
  }

  play() {
    if (this.video.ended || this.atStart) {
      this.atStart = true;
      this.video.currentTime = 0;
    }
    return this.video.play();
  }

  replay() {
    this.atStart = true;
    this.video.currentTime = 0;
    return this.video.play().catch(() => {});
  }

  stop() {
    this.video.pause();
  }
}
