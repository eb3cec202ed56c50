// The ranking widget (VGA-Bench): the videos of one prompt as a grid of posters; any of
// them plays in the viewer at its native size, and a second one beside it to compare
// the two. The rater orders them from best to worst by placing them in turn (a click on
// "Place", or dragging a poster into the order) and reorders by dragging or with the
// arrows. The answer opens once every video has played to its end and all are placed.
//
// Keys: ← → choose a video (the focus goes to its tile, and its state is said in a live
// region); V play it; C play it beside the one in the viewer; P place it next (T: in the
// same place as the last, where ties are allowed); U take back the last placed; [ ] move
// the chosen video up or down in the order. Enter saves and Space plays the viewer again
// (the page's keys). Every tile has the same buttons: each is named with its video.

import { Player } from "../rater_controls.js";
import { button, element, exemplarRow, exemplarTrial, field } from "./dom.js";

const LETTERS = "ABCDEFGHIJKLMNOP";

/** A worked example of the tutorial: its videos in the experts' order, each named by its
 * place (best, in between, worst). */
export function exemplarMedia(video, exemplar, t) {
  exemplarRow(
    video,
    "rank-example",
    exemplar.videos.map((media) => [media.place, media, t(`exemplar_place_${media.place}`)]),
  );
}

/** The order a worked example's videos are tried in: never the experts' (the first shown
 * is never their best), the same for every rater: the i-th shown is the experts'
 * (i * step + 1) mod n-th, step the smallest above 1 prime to n. */
function tryOrder(n) {
  const gcd = (a, b) => (b ? gcd(b, a % b) : a);
  let step = 1;
  for (let s = 2; s < n; s += 1) {
    if (gcd(s, n) === 1) {
      step = s;
      break;
    }
  }
  return [...Array(n).keys()].map((i) => (i * step + 1) % n);
}

/** A worked example is tried before it is told: its videos shown in another order, each
 * named by a letter, and the rater places them from best to worst (Place, or Take back);
 * on Check, they go back to the experts' order, each named by its place and by the
 * rater's, with the rater's order and whether it puts the best above the worst (what
 * the qualification test counts as right). */
export function exemplarTry(node, answer, { t }) {
  const row = node.querySelector(".rank-example");
  if (!row) return;
  const figures = [...row.children]; // in the experts' order
  const captions = figures.map((figure) => figure.querySelector("figcaption").textContent);
  const trial = exemplarTrial(node);
  const letters = new Map();
  const placed = []; // figures, in the rater's order
  const check = button("secondary exemplar-check", t("exemplar_check_order"), () => reveal());
  check.disabled = true;
  const render = () => {
    for (const [figure, letter] of letters) {
      const at = placed.indexOf(figure);
      const name = t("ranking_video", { letter });
      figure.querySelector("figcaption").textContent =
        at < 0 ? name : `${name} · ${t("ranking_in_place", { rank: at + 1 })}`;
      const toggle = figure.querySelector(".rank-place");
      toggle.textContent = t(at < 0 ? "ranking_place" : "ranking_take_back");
      toggle.setAttribute("aria-label", t(at < 0 ? "ranking_place_name" : "ranking_take_back_name", { letter }));
    }
    check.disabled = placed.length < figures.length;
  };
  tryOrder(figures.length).forEach((at, index) => {
    const figure = figures[at];
    const letter = LETTERS[index];
    letters.set(figure, letter);
    figure.querySelector("video").setAttribute("aria-label", t("ranking_video", { letter }));
    const toggle = button("rank-place", "", () => {
      const mine = placed.indexOf(figure);
      if (mine < 0) placed.push(figure);
      else placed.splice(mine, 1);
      render();
    });
    figure.querySelector("figcaption").before(toggle);
    row.append(figure);
  });
  const reveal = () => {
    figures.forEach((figure, at) => {
      const letter = letters.get(figure);
      const rank = placed.indexOf(figure) + 1;
      figure.querySelector(".rank-place").remove();
      figure.querySelector("video").setAttribute("aria-label", captions[at]);
      figure.querySelector("figcaption").textContent = t("exemplar_rank_caption", {
        place: captions[at],
        letter,
        rank,
      });
      row.append(figure);
    });
    check.remove();
    const right = placed.indexOf(figures[0]) < placed.indexOf(figures.at(-1));
    const order = placed.map((figure) => letters.get(figure)).join(", ");
    trial.tell(t(right ? "exemplar_order_right" : "exemplar_order_wrong", { order }), right);
  };
  render();
  trial.show(element("p", "exemplar-try", t("exemplar_try_order")), check);
}

/** The experts' order in a worked example: best first, as shown. */
export function answerText(question, places, t) {
  return t(places.includes("between") ? "exemplar_order_between" : "exemplar_order");
}

export default class RankingWidget {
  constructor({ mount, item, state, t, takeVideo, onChange, onProblem }) {
    Object.assign(this, { t, onChange, ties: Boolean(state.ties_allowed) });
    field(mount, "question").textContent = item.question.text;
    field(mount, "prompt").textContent = item.prompt || "";
    this.grid = field(mount, "grid");
    this.orderList = field(mount, "order");
    this.said = field(mount, "said");
    this.slots = [...mount.querySelectorAll(".viewer-slot")];
    this.places = []; // [[video id, ...], ...], best first
    this.focus = 0;
    this.showing = [];
    this.videos = item.media.map((media, index) => {
      const label = this.t("ranking_video", { letter: LETTERS[index] });
      const video = takeVideo({ ...media, label });
      const entry = { id: media.id, index, letter: LETTERS[index], video };
      entry.player = new Player(video, { onFirstEnd: () => this.played(entry), onProblem });
      return entry;
    });
    for (const entry of this.videos) this.grid.append(this.tile(entry));
    this.orderList.addEventListener("dragover", (event) => event.preventDefault());
    this.orderList.addEventListener("drop", (event) => this.dropped(event, null));
    this.render();
  }

  tile(entry) {
    const tile = document.createElement("li");
    tile.className = "rank-tile";
    tile.dataset.video = entry.id;
    tile.tabIndex = -1; // where ← → take the focus
    tile.draggable = true;
    // a tile reached by Tab or a click is the one the keys act on
    tile.addEventListener("focusin", () => {
      if (this.focus === entry.index) return;
      this.focus = entry.index;
      this.render();
    });
    tile.addEventListener("dragstart", (event) => event.dataTransfer.setData("text/plain", entry.id));
    const show = document.createElement("button");
    show.type = "button";
    show.className = "rank-poster";
    const poster = document.createElement("img");
    poster.alt = "";
    poster.src = entry.video.poster || "";
    const label = document.createElement("span");
    label.className = "rank-label";
    label.textContent = this.t("ranking_video", { letter: entry.letter });
    show.append(poster, label);
    show.addEventListener("click", () => this.view(entry.index));
    const { letter } = entry;
    const compare = this.button("secondary rank-compare", this.t("ranking_compare"), () =>
      this.view(entry.index, { beside: true }),
    );
    compare.setAttribute("aria-label", this.t("ranking_compare_name", { letter }));
    const place = this.button("rank-place", "", () => this.place(entry.id));
    const status = document.createElement("span");
    status.className = "rank-status muted";
    tile.append(show, status, compare, place);
    let tie = null;
    if (this.ties) {
      tie = this.button("secondary rank-tie", this.t("ranking_tie"), () =>
        this.place(entry.id, { tie: true }),
      );
      tie.setAttribute("aria-label", this.t("ranking_tie_name", { letter }));
      tile.append(tie);
    }
    entry.tile = { tile, place, status, tie };
    return tile;
  }

  /** Play a video in the viewer, or beside the one there. */
  view(index, { beside = false } = {}) {
    this.focus = index;
    const entry = this.videos[index];
    const first = this.showing[0];
    this.showing = beside && first && first !== entry ? [first, entry] : [entry];
    for (const player of this.videos.map((v) => v.player)) player.stop();
    this.slots.forEach((slot, position) => {
      const shown = this.showing[position];
      slot.hidden = !shown;
      slot.querySelector(".frame").replaceChildren(...(shown ? [shown.video] : []));
      slot.querySelector("figcaption").textContent = shown
        ? this.t("ranking_video", { letter: shown.letter })
        : "";
    });
    this.render();
    return Promise.all(this.showing.map((shown) => shown.player.replay()));
  }

  played(entry) {
    entry.played = true;
    this.render();
    this.onChange();
  }

  placeOf(id) {
    return this.places.findIndex((place) => place.includes(id));
  }

  place(id, { tie = false } = {}) {
    if (this.placeOf(id) >= 0) return this.unplace(id);
    if (tie && this.ties && this.places.length) this.places.at(-1).push(id);
    else this.places.push([id]);
    this.changed(id);
  }

  unplace(id) {
    if (this.takeOut(id)) this.changed(id);
  }

  /** Take the video out of its place (no render); false when it had none. */
  takeOut(id) {
    const at = this.placeOf(id);
    if (at < 0) return false;
    this.places[at] = this.places[at].filter((other) => other !== id);
    if (!this.places[at].length) this.places.splice(at, 1);
    return true;
  }

  /** Move a placed video one place up (-1) or down (+1). */
  move(id, step) {
    const at = this.placeOf(id);
    const to = at + step;
    if (at < 0 || to < 0 || to >= this.places.length) return;
    this.takeOut(id);
    const target = Math.min(Math.max(0, to), this.places.length);
    this.places.splice(target, 0, [id]);
    this.changed(id);
  }

  dropped(event, before) {
    event.preventDefault();
    event.stopPropagation();
    const id = event.dataTransfer.getData("text/plain");
    if (!this.videos.some((entry) => entry.id === id)) return;
    this.takeOut(id);
    const at = before === null ? this.places.length : this.placeOf(before);
    this.places.splice(at < 0 ? this.places.length : at, 0, [id]);
    this.changed(id);
  }

  /** After a change to the video `id`'s place: show it, and say it. */
  changed(id) {
    this.render();
    this.say(this.videos.find((entry) => entry.id === id));
    this.onChange();
  }

  /** "Video C: Played · in place 2", in the live region. */
  say(entry) {
    if (!entry) return;
    const video = this.t("ranking_video", { letter: entry.letter });
    const status = entry.tile.status.textContent;
    this.said.textContent = this.t("ranking_said", { video, status });
  }

  /** ← →: the focus to the next or previous video's tile, its state said. */
  choose(index) {
    this.focus = index;
    this.render();
    const entry = this.videos[index];
    entry.tile.tile.focus({ preventScroll: true });
    entry.tile.tile.scrollIntoView({ block: "nearest" });
    this.say(entry);
  }

  render() {
    const rankOf = new Map();
    let rank = 1;
    for (const place of this.places) {
      for (const id of place) rankOf.set(id, rank);
      rank += place.length;
    }
    for (const entry of this.videos) {
      const { tile, place, status } = entry.tile;
      tile.classList.toggle("focused", entry.index === this.focus);
      tile.classList.toggle("showing", this.showing.includes(entry));
      tile.dataset.played = entry.played ? "yes" : "no";
      const placed = rankOf.get(entry.id);
      if (entry.tile.tie) entry.tile.tie.hidden = Boolean(placed) || !this.places.length;
      const { letter } = entry;
      place.textContent = this.t(placed ? "ranking_take_back" : "ranking_place");
      const name = placed ? "ranking_take_back_name" : "ranking_place_name";
      place.setAttribute("aria-label", this.t(name, { letter }));
      const played = this.t(entry.played ? "ranking_played" : "ranking_not_played");
      status.textContent = placed
        ? `${played} · ${this.t("ranking_in_place", { rank: placed })}`
        : played;
    }
    const byId = new Map(this.videos.map((entry) => [entry.id, entry]));
    // the order's buttons are made anew: a focused one (pressed by its key) keeps the focus
    const active = this.orderList.contains(document.activeElement) ? document.activeElement : null;
    this.orderList.replaceChildren(
      ...this.places.map((place, at) => {
        const row = document.createElement("li");
        row.className = "rank-row";
        row.dataset.place = String(at + 1);
        row.addEventListener("dragover", (event) => event.preventDefault());
        row.addEventListener("drop", (event) => this.dropped(event, place[0]));
        for (const id of place) {
          const chip = document.createElement("span");
          chip.className = "rank-chip";
          chip.draggable = true;
          chip.dataset.video = id;
          const { letter } = byId.get(id);
          chip.textContent = this.t("ranking_video", { letter });
          chip.addEventListener("dragstart", (event) => event.dataTransfer.setData("text/plain", id));
          const up = this.button("link", "↑", () => this.move(id, -1));
          const down = this.button("link", "↓", () => this.move(id, 1));
          const remove = this.button("link", "✕", () => this.unplace(id));
          for (const [button, action, name] of [
            [up, "up", "ranking_up"],
            [down, "down", "ranking_down"],
            [remove, "remove", "ranking_take_back_name"],
          ]) {
            Object.assign(button.dataset, { video: id, action });
            button.setAttribute("aria-label", this.t(name, { letter }));
          }
          chip.append(up, down, remove);
          row.append(chip);
        }
        return row;
      }),
    );
    if (active) {
      const { video, action } = active.dataset;
      const again = [...this.orderList.querySelectorAll("button")].find(
        (button) => button.dataset.video === video && button.dataset.action === action,
      );
      (again || this.videos.find((entry) => entry.id === video)?.tile.place)?.focus();
    }
  }

  button(className, text, action) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = className;
    button.textContent = text;
    button.addEventListener("click", action);
    return button;
  }

  get placedCount() {
    return this.places.reduce((count, place) => count + place.length, 0);
  }

  get watched() {
    return this.videos.every((entry) => entry.played);
  }

  get ready() {
    return this.watched && this.placedCount === this.videos.length;
  }

  get hint() {
    if (!this.watched) {
      const left = this.videos.filter((entry) => !entry.played).length;
      return this.t("ranking_watch_all", { left });
    }
    return this.ready ? this.t("ready") : this.t("ranking_place_all");
  }

  values() {
    return {
      ranking: this.places.map((place) => (place.length === 1 ? place[0] : [...place])),
      played: this.videos.filter((entry) => entry.played).map((entry) => entry.id),
    };
  }

  telemetry() {
    const players = this.videos.map((entry) => entry.player);
    return {
      watch_time_ms: players.reduce((total, player) => total + player.watchTimeMs, 0),
      plays: players.reduce((total, player) => total + player.plays, 0),
      stalls: players.reduce((total, player) => total + player.stalls, 0),
    };
  }

  start() {
    // The keys start in the videos (their label and the keys are read out), not at the
    // top of the page; Tab goes on to the first video's buttons. A control the rater is
    // on keeps the focus.
    const active = document.activeElement;
    const onControl = active?.matches("button:enabled, input:enabled, textarea, select, a[href]");
    if (!onControl) this.grid.focus({ preventScroll: true });
    return this.view(0);
  }

  replay() {
    for (const shown of this.showing) shown.player.replay();
  }

  onKey(event) {
    const count = this.videos.length;
    const focused = this.videos[this.focus];
    const actions = {
      ArrowRight: () => this.choose((this.focus + 1) % count),
      ArrowLeft: () => this.choose((this.focus + count - 1) % count),
      v: () => this.view(this.focus),
      c: () => this.view(this.focus, { beside: true }),
      p: () => this.place(focused.id),
      t: () => this.place(focused.id, { tie: true }),
      u: () => this.places.length && this.unplace(this.places.at(-1).at(-1)),
      "[": () => this.move(focused.id, -1),
      "]": () => this.move(focused.id, 1),
    };
    const action = actions[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (!action) return false;
    action();
    return true;
  }

  stop() {
    for (const entry of this.videos) entry.player.stop();
  }
}
