// The side-by-side preference widget (WYD): two videos (and the reference between them,
// when the question asks about one) that play together from one control and loop
// together; the choice (left, right, or equally good/bad) opens once every video has
// played to its end. Clicks or keys: 1 / ← left, 2 / ↓ equally good/bad, 3 / → right.

import { Player } from "../rater_controls.js";
import { button, element, exemplarRow, exemplarTrial } from "./dom.js";

// the number keys in the buttons' order (Left, Equally good/bad, Right), the arrows by side
const KEYS = { 1: "left", ArrowLeft: "left", 2: "equal", ArrowDown: "equal", 3: "right", ArrowRight: "right" };

/** A worked example of the tutorial: the pair as an item shows it (the left video, the
 * reference between, when the example has one, then the right), each named, and played
 * together from the start by "Play both", as an item plays them. */
export function exemplarMedia(video, exemplar, t) {
  const sides = [
    ["left", exemplar],
    ["reference", exemplar.reference],
    ["right", exemplar.right],
  ].filter(([, media]) => media);
  const row = exemplarRow(
    video,
    "pref-example",
    sides.map(([side, media]) => [side, media, t(`video_${side}`)]),
  );
  const together = button("secondary play-both", t("play_both"), () => {
    for (const each of row.querySelectorAll("video")) {
      each.currentTime = 0;
      each.play().catch(() => {}); // a play cut short (the page left) is no error
    }
  });
  row.after(together);
}

const TRY_CHOICES = ["left", "equal", "right"]; // in the item's order

/** A worked example is tried before it is told: the rater chooses as in an item, then
 * sees the experts' choice, whether theirs was the same, and why. */
export function exemplarTry(node, answer, { t }) {
  const trial = exemplarTrial(node);
  const ask = element("p", "exemplar-try", t("exemplar_try"));
  const choices = element("div", "choices");
  choices.setAttribute("role", "group");
  choices.setAttribute("aria-label", t("exemplar_try"));
  for (const choice of TRY_CHOICES) {
    const pressed = button("choice", t(`choice_${choice}`), () => {
      for (const other of choices.children) {
        other.setAttribute("aria-pressed", String(other === pressed));
      }
      const same = choice === answer.value;
      trial.tell(
        t(same ? "exemplar_yours_same" : "exemplar_yours_other", {
          value: t(`choice_${choice}`),
        }),
      );
    });
    pressed.setAttribute("aria-pressed", "false");
    choices.append(pressed);
  }
  trial.show(ask, choices);
}

/** The experts' choice in a worked example: "the left video is better". */
export function answerText(question, choice, t) {
  return t(`exemplar_${choice}_better`);
}

export default class PreferenceWidget {
  constructor({ mount, item, t, takeVideo, onChange, onProblem }) {
    this.t = t;
    this.onChange = onChange;
    this.choice = null;
    mount.querySelector('[data-field="question"]').textContent = item.question.text;
    if (item.prompt) {
      mount.querySelector('[data-field="prompt"]').textContent = item.prompt;
      mount.querySelector('[data-field="prompt-line"]').hidden = false;
    }
    const sides = { left: item.left, right: item.right, reference: item.reference };
    const names = {
      left: t("video_left"),
      right: t("video_right"),
      reference: t("video_reference"),
    };
    this.players = [];
    this.plays = 0;
    for (const [side, media] of Object.entries(sides)) {
      const figure = mount.querySelector(`[data-side="${side}"]`);
      if (!media) continue;
      figure.hidden = false;
      const video = takeVideo({ ...media, label: names[side] });
      figure.querySelector(".frame").replaceChildren(video);
      const player = new Player(video, {
        onFirstEnd: () => this.opened(),
        onProblem,
      });
      video.addEventListener("ended", () => this.restartWhenAllEnded());
      this.players.push(player);
    }
    this.buttons = [...mount.querySelectorAll("button.choice")];
    for (const button of this.buttons) {
      button.addEventListener("click", () => this.choose(button.dataset.choice));
    }
    this.replayButton = mount.querySelector("#replay");
    this.replayButton.textContent = t("play_both");
    this.replayButton.onclick = () => this.replay();
  }

  get watched() {
    return this.players.every((player) => player.endedOnce);
  }

  get ready() {
    return this.watched && this.choice !== null;
  }

  get hint() {
    if (!this.watched) return this.t("watch_both_first");
    return this.t(this.ready ? "ready" : "choose_one");
  }

  opened() {
    if (!this.watched) return;
    for (const button of this.buttons) button.disabled = false;
    this.replayButton.textContent = this.t("replay_both");
    this.buttons[0].focus();
    this.onChange();
  }

  choose(choice) {
    if (!this.watched) return;
    this.choice = choice;
    for (const button of this.buttons) {
      button.setAttribute("aria-pressed", String(button.dataset.choice === choice));
    }
    // the focus follows a choice made by its key, so that Enter then saves it (Enter on
    // another, unchosen button presses that one: the page's keydown)
    if (this.buttons.includes(document.activeElement)) {
      this.buttons.find((button) => button.dataset.choice === choice).focus();
    }
    this.onChange();
  }

  /** Loop together: once every video has ended, all start again from the start. */
  restartWhenAllEnded() {
    // a restart cut short (the answer was saved meanwhile, which pauses them) is no error
    if (this.players.every((player) => player.video.ended)) this.playAll().catch(() => {});
  }

  playAll() {
    this.plays += 1;
    return Promise.all(this.players.map((player) => player.play()));
  }

  values() {
    return { choice: this.choice };
  }

  telemetry() {
    return {
      watch_time_ms: Math.max(...this.players.map((player) => player.watchTimeMs)),
      plays: this.plays,
      stalls: this.players.reduce((total, player) => total + player.stalls, 0),
    };
  }

  start() {
    return this.playAll();
  }

  replay() {
    for (const player of this.players) player.atStart = true;
    this.playAll().catch(() => {});
  }

  onKey(event) {
    const choice = KEYS[event.key];
    if (!choice) return false;
    this.choose(choice);
    return true;
  }

  stop() {
    for (const player of this.players) player.stop();
  }
}
