// The propose-then-verify widget's second stage (propose_verify.js): the item's candidates
// in the given order, each answered Yes or No; Next opens once every one is answered.
//
// Keys: ↑ ↓ or K J move the focus between the labels, Y and N answer the one in focus
// (said in a live region) and the focus goes on to the next unanswered.

import { button, element, field } from "./dom.js";

const VERIFY_KEYS = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };

export class Verify {
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
