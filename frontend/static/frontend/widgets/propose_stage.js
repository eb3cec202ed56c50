// The propose-then-verify widget's first stage (propose_verify.js): the study's
// vocabulary (the state's `groups`, each with its limit), a search that filters the
// actions as the rater types, the chosen labels as removable chips, an "other action"
// text and two flags. A pick beyond a group's limit or beyond `max_labels` is refused with
// a hint. Next opens once every required group has a label, or a flag is set.
//
// Keys: / finds an action; in the search, Enter picks its single match and Esc leaves it;
// Enter in a text field leaves it.

import { button, element, field } from "./dom.js";

export class Propose {
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
