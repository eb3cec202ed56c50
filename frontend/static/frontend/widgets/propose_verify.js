// The propose-then-verify widget (AVA, PROTOCOL.md 3.4): one person in one segment of a
// video. The segment loops beside its keyframe, the person's box drawn on both; answering
// opens once the segment has played to its end.
//
// - propose: the study's vocabulary (the state's `groups`, each with its limit), a search
//   that filters the actions as the rater types, the chosen labels as removable chips,
//   an "other action" text and two flags. A pick beyond a group's limit or beyond
//   `max_labels` is refused with a hint. Next opens once every required group has a label,
//   or a flag is set.
// - verify: the item's candidates in the given order, each answered Yes or No; Next opens
//   once every one is answered.
//
// Keys: propose: / finds an action; in the search, Enter picks its single match and Esc
// leaves it; Enter in a text field leaves it. Verify: ↑ ↓ or K J move the focus between
// the labels, Y and N answer the one in focus (said in a live region) and the focus goes
// on to the next unanswered. Both: Enter saves and Space plays the segment again (the
// page's keys); Space presses a focused button or ticks a focused box.

import { Player } from "../rater_controls.js";

const field = (root, name) => root.querySelector(`[data-field="${name}"]`);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function button(className, text, onClick) {
  const node = element("button", className, text);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}

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

const isTextField = (node) => node instanceof HTMLInputElement && node.type === "text";

// ---------------------------------------------------------------- stage 1: propose

class Propose {
  constructor(root, { state, t, changed }) {
    Object.assign(this, { root, t, changed, maxLabels: state.max_labels });
    this.groups = state.groups;
    this.actions = new Map(); // id -> {id, name, group, button}
    this.chosen = []; // action ids, in the order picked
    this.search = field(root, "search");
    this.other = field(root, "other");
    this.flags = [...root.querySelectorAll("input[data-flag]")];
    this.notice = field(root, "notice");
    this.sections = this.groups.map((group) => this.section(group));
    field(root, "groups").replaceChildren(...this.sections);
    this.search.addEventListener("input", () => this.filter());
    this.search.addEventListener("keydown", (event) => this.searchKey(event));
    this.other.addEventListener("keydown", (event) => this.textKey(event));
    this.other.addEventListener("input", () => changed());
    for (const flag of this.flags) flag.addEventListener("change", () => this.render());
    this.filter();
    this.render();
  }

  section(group) {
    const node = element("section", "pv-group");
    node.dataset.group = group.key;
    let limit = "pv_group_up_to";
    if (group.required) limit = group.limit === 1 ? "pv_group_one" : "pv_group_range";
    // under the step's h1 (the page's "Rating"): h2, as no level may be skipped
    node.append(element("h2", "", this.t(limit, { group: group.label, limit: group.limit })));
    const list = element("div", "pv-actions");
    for (const action of group.actions) {
      const entry = { ...action, group };
      entry.button = button("pv-action", action.name, () => this.toggle(action.id));
      entry.button.dataset.action = String(action.id);
      entry.button.setAttribute("aria-pressed", "false");
      this.actions.set(action.id, entry);
      list.append(entry.button);
    }
    node.append(list);
    return node;
  }

  chosenIn(group) {
    return this.chosen.filter((id) => this.actions.get(id).group === group).length;
  }

  /** Why `id` cannot be picked now, or "" when it can. */
  refusal(id) {
    const { group } = this.actions.get(id);
    if (this.chosenIn(group) >= group.limit) {
      return this.t("pv_group_full", { group: group.label, limit: group.limit });
    }
    if (this.chosen.length >= this.maxLabels) {
      return this.t("pv_max_labels", { max: this.maxLabels });
    }
    return "";
  }

  toggle(id) {
    if (this.chosen.includes(id)) this.unpick(id);
    else this.pick(id);
  }

  pick(id) {
    if (this.chosen.includes(id)) return true;
    const refused = this.refusal(id);
    this.say(refused);
    if (refused) return false;
    this.chosen.push(id);
    this.render();
    return true;
  }

  unpick(id) {
    this.chosen = this.chosen.filter((other) => other !== id);
    this.say("");
    this.render();
  }

  say(text) {
    this.notice.textContent = text;
    this.notice.hidden = !text;
  }

  /** Show the actions whose name holds every word typed (any case). */
  filter() {
    const words = this.search.value.toLowerCase().split(/\s+/).filter(Boolean);
    this.matches = [];
    for (const entry of this.actions.values()) {
      const shown = words.every((word) => entry.name.toLowerCase().includes(word));
      entry.button.hidden = !shown;
      entry.button.classList.remove("pv-only");
      if (shown) this.matches.push(entry);
    }
    this.sections.forEach((node, index) => {
      node.hidden = !this.groups[index].actions.some((a) => !this.actions.get(a.id).button.hidden);
    });
    const hint = field(this.root, "search-hint");
    if (!words.length) hint.textContent = "";
    else if (!this.matches.length) hint.textContent = this.t("pv_no_match");
    else if (this.matches.length > 1) {
      hint.textContent = this.t("pv_matches", { count: this.matches.length });
    } else {
      this.matches[0].button.classList.add("pv-only");
      hint.textContent = this.t("pv_enter_picks", { name: this.matches[0].name });
    }
  }

  // A text field keeps its keys from the page's shortcuts; Enter would send the form.
  searchKey(event) {
    event.stopPropagation();
    // "/" is the key that brings the rater here: pressed again in the empty box, it is
    // not the start of a name
    if (event.key === "/" && !this.search.value) {
      event.preventDefault();
    } else if (event.key === "Escape") {
      this.search.value = "";
      this.filter();
      this.search.blur();
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (!this.search.value.trim()) return this.search.blur();
      if (this.matches.length === 1 && this.pick(this.matches[0].id)) {
        this.search.value = "";
        this.filter();
      }
    }
  }

  textKey(event) {
    event.stopPropagation();
    if (event.key === "Enter" || event.key === "Escape") {
      event.preventDefault();
      event.target.blur();
    }
  }

  render() {
    const chips = this.chosen.map((id) => {
      const { name, group } = this.actions.get(id);
      const chip = element("li", "pv-chip");
      chip.dataset.action = String(id);
      chip.append(
        element("span", "pv-chip-name", name),
        element("span", "pv-chip-group", group.label),
      );
      const remove = button("pv-chip-remove", "✕", () => this.unpick(id));
      remove.setAttribute("aria-label", this.t("pv_remove", { name }));
      chip.append(remove);
      return chip;
    });
    field(this.root, "chips").replaceChildren(...chips);
    field(this.root, "none-chosen").hidden = chips.length > 0;
    field(this.root, "count").textContent = this.t("pv_count", {
      count: this.chosen.length,
      max: this.maxLabels,
    });
    for (const entry of this.actions.values()) {
      const chosen = this.chosen.includes(entry.id);
      entry.button.setAttribute("aria-pressed", String(chosen));
      // still clickable: a click on a refused action says why
      const refused = !chosen && Boolean(this.refusal(entry.id));
      entry.button.setAttribute("aria-disabled", String(refused));
    }
    this.changed();
  }

  get missing() {
    return this.groups.filter((group) => group.required && !this.chosenIn(group));
  }

  get flagged() {
    return this.flags.some((flag) => flag.checked);
  }

  get ready() {
    return this.flagged || this.missing.length === 0;
  }

  get hint() {
    if (this.ready) return this.t("pv_ready");
    return this.t("pv_choose_required", {
      groups: this.missing.map((group) => group.label).join(", "),
    });
  }

  values() {
    return {
      labels: [...this.chosen],
      other_action: this.other.value.trim(),
      flags: Object.fromEntries(this.flags.map((flag) => [flag.dataset.flag, flag.checked])),
    };
  }

  opened() {
    this.search.focus({ preventScroll: true });
  }

  onKey(event) {
    if (event.key !== "/") return false;
    this.search.focus();
    return true;
  }
}

// ---------------------------------------------------------------- stage 2: verify

const VERIFY_KEYS = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };

class Verify {
  constructor(root, { item, state, t, changed }) {
    Object.assign(this, { t, changed, focus: 0, watched: false });
    this.said = field(root, "said");
    const groups = new Map(state.groups.map((group) => [group.key, group.label]));
    this.rows = item.candidates.map((candidate, index) => {
      const node = element("li", "pv-candidate");
      node.dataset.action = String(candidate.id);
      const name = element("span", "pv-name", candidate.name);
      name.id = `pv-candidate-${candidate.id}`;
      node.append(name, element("span", "pv-group-label", groups.get(candidate.group) || ""));
      const answer = (verdict) => () => this.answer(index, verdict);
      const yes = this.verdictButton("pv-yes", "pv_yes", "Y", candidate.name, answer(true));
      const no = this.verdictButton("pv-no", "pv_no", "N", candidate.name, answer(false));
      // the row's Yes and No as a group named by its label: what the keys move the focus to
      const choices = element("span", "pv-verdict");
      choices.tabIndex = -1;
      choices.setAttribute("role", "group");
      choices.setAttribute("aria-labelledby", name.id);
      choices.append(yes, no);
      node.append(choices);
      // a row reached by Tab or a click is the one the keys answer
      node.addEventListener("focusin", () => this.focus !== index && this.mark(index));
      return { ...candidate, node, choices, yes, no, verdict: null };
    });
    field(root, "candidates").replaceChildren(...this.rows.map((row) => row.node));
    this.render();
  }

  /** "Yes", named with the label it answers ("Yes: walk"), as every row has one; its key
   * is shown by the style sheet (so that the name holds all the button's text) and named
   * in aria-keyshortcuts. */
  verdictButton(className, text, key, name, onClick) {
    const node = button(className, this.t(text), onClick);
    node.setAttribute("aria-label", `${this.t(text)}: ${name}`);
    node.setAttribute("aria-keyshortcuts", key);
    return node;
  }

  mark(index) {
    this.focus = index;
    this.render();
  }

  answer(index, verdict) {
    const row = this.rows[index];
    row.verdict = verdict;
    this.said.textContent = this.t("pv_said", {
      name: row.name,
      verdict: this.t(verdict ? "pv_yes" : "pv_no"),
    });
    // on to the next unanswered label (after this one, then from the top), as a fast
    // review tool does; stay when every one is answered
    const order = [...this.rows.keys()].map((step) => (index + 1 + step) % this.rows.length);
    const next = order.find((at) => this.rows[at].verdict === null);
    this.focus = next ?? index;
    this.render();
    this.focusMarked();
  }

  move(step) {
    this.focus = Math.min(this.rows.length - 1, Math.max(0, this.focus + step));
    this.render();
    this.focusMarked();
  }

  /** The keyboard's focus to the marked label's Yes and No, kept in view. */
  focusMarked() {
    const row = this.rows[this.focus];
    if (!row) return;
    row.choices.focus({ preventScroll: true });
    row.node.scrollIntoView({ block: "nearest" });
  }

  render() {
    this.rows.forEach((row, index) => {
      const focused = index === this.focus;
      row.node.classList.toggle("focused", focused);
      if (focused) row.node.setAttribute("aria-current", "true");
      else row.node.removeAttribute("aria-current");
      row.node.dataset.verdict = row.verdict === null ? "" : row.verdict ? "yes" : "no";
      row.yes.setAttribute("aria-pressed", String(row.verdict === true));
      row.no.setAttribute("aria-pressed", String(row.verdict === false));
    });
    this.changed();
  }

  get left() {
    return this.rows.filter((row) => row.verdict === null).length;
  }

  get ready() {
    return this.left === 0;
  }

  get hint() {
    return this.ready ? this.t("pv_ready") : this.t("pv_verify_left", { left: this.left });
  }

  values() {
    return { verdicts: Object.fromEntries(this.rows.map((row) => [String(row.id), row.verdict])) };
  }

  opened() {
    this.watched = true;
    // the keys start at the first label, as the propose stage's start in its search
    const active = document.activeElement;
    const onControl = active?.matches("button:enabled, input:enabled, textarea, select, a[href]");
    if (!onControl) this.focusMarked();
  }

  onKey(event) {
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key in VERIFY_KEYS) {
      this.move(VERIFY_KEYS[key]);
    } else if ((key === "y" || key === "n") && this.watched && this.rows.length) {
      this.answer(this.focus, key === "y");
    } else {
      return false;
    }
    return true;
  }
}

// ---------------------------------------------------------------- the widget

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
