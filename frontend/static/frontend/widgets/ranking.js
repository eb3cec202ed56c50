// The ranking widget (VGA-Bench): the videos of one prompt as a grid of posters; any of
// them plays in the viewer at its native size, and a second one beside it to compare
// the two. The rater orders them from best to worst by placing them in turn (a click on
// "Place", or dragging a poster into the order) and reorders by dragging or with the
// arrows. The answer opens once every video has played to its end and all are placed.
//
// Keys: ← → choose a video; V play it; C play it beside the one in the viewer; P place
// it next (T: in the same place as the last, where ties are allowed); U take back the
// last placed; [ ] move the chosen video up or down in the order. Enter saves and
// Space plays the viewer again (the page's keys).

import { Player } from "../rater_controls.js";

const field = (root, name) => root.querySelector(`[data-field="${name}"]`);
const LETTERS = "ABCDEFGHIJKLMNOP";

export default class RankingWidget {
  constructor({ mount, item, state, t, takeVideo, onChange, onProblem }) {
    Object.assign(this, { t, onChange, ties: Boolean(state.ties_allowed) });
    field(mount, "question").textContent = item.question.text;
    field(mount, "prompt").textContent = item.prompt || "";
    this.grid = field(mount, "grid");
    this.orderList = field(mount, "order");
    this.slots = [...mount.querySelectorAll(".viewer-slot")];
    this.places = []; // [[video id, ...], ...], best first
    this.focus = 0;
    this.showing = [];
    this.videos = item.media.map((media, index) => {
      const video = takeVideo(media);
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
    tile.draggable = true;
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
    const compare = document.createElement("button");
    compare.type = "button";
    compare.className = "secondary rank-compare";
    compare.textContent = this.t("ranking_compare");
    compare.addEventListener("click", () => this.view(entry.index, { beside: true }));
    const place = document.createElement("button");
    place.type = "button";
    place.className = "rank-place";
    place.addEventListener("click", () => this.place(entry.id));
    const status = document.createElement("span");
    status.className = "rank-status muted";
    tile.append(show, status, compare, place);
    let tie = null;
    if (this.ties) {
      tie = document.createElement("button");
      tie.type = "button";
      tie.className = "secondary rank-tie";
      tie.textContent = this.t("ranking_tie");
      tie.addEventListener("click", () => this.place(entry.id, { tie: true }));
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
    this.changed();
  }

  unplace(id) {
    if (this.takeOut(id)) this.changed();
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
    this.changed();
  }

  dropped(event, before) {
    event.preventDefault();
    event.stopPropagation();
    const id = event.dataTransfer.getData("text/plain");
    if (!this.videos.some((entry) => entry.id === id)) return;
    this.takeOut(id);
    const at = before === null ? this.places.length : this.placeOf(before);
    this.places.splice(at < 0 ? this.places.length : at, 0, [id]);
    this.changed();
  }

  changed() {
    this.render();
    this.onChange();
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
      place.textContent = placed ? this.t("ranking_placed", { rank: placed }) : this.t("ranking_place");
      status.textContent = entry.played ? this.t("ranking_played") : this.t("ranking_not_played");
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
          chip.textContent = this.t("ranking_video", { letter: byId.get(id).letter });
          chip.addEventListener("dragstart", (event) => event.dataTransfer.setData("text/plain", id));
          const up = this.button("↑", () => this.move(id, -1), this.t("ranking_up"));
          const down = this.button("↓", () => this.move(id, 1), this.t("ranking_down"));
          const remove = this.button("✕", () => this.unplace(id), this.t("ranking_remove"));
          for (const [button, action] of [[up, "up"], [down, "down"], [remove, "remove"]]) {
            Object.assign(button.dataset, { video: id, action });
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

  button(text, action, label) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link";
    button.textContent = text;
    button.setAttribute("aria-label", label);
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
      ArrowRight: () => ((this.focus = (this.focus + 1) % count), this.render()),
      ArrowLeft: () => ((this.focus = (this.focus + count - 1) % count), this.render()),
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
