// The questionnaire's questions, one class per kind (a score, an ordinal level, one tag or
// several, a comment), each building its fieldset and keeping its answer for the widget
// (questionnaire.js); and an answer shown in its question's terms (`answerText`).
//
// A question of one answer (a score, a level, one tag) is a group of radio buttons: one
// Tab stop, the arrows move between its answers and choose; a question of several tags
// is toggle buttons.

import { element, exemplarTrial } from "./dom.js";

const INVALID = "invalid";
const MAX_STEP_BUTTONS = 11; // 0-10: a button per step; a finer scale gets a slider
const TEXT_LIMIT = 2000; // annotation/designs/questionnaire_answers.py TEXT_LIMIT

function optionButton(className, value, onClick) {
  const button = element("button", `q-option ${className}`);
  button.type = "button";
  button.dataset.value = String(value);
  button.setAttribute("aria-pressed", "false");
  button.addEventListener("click", onClick);
  return button;
}

/** One answer of a one-answer question: a radio button inside its label, which shows it
 * as the toggle buttons are shown (rater.css); `onChoose` when it is chosen. */
function radioOption(question, className, value, onChoose) {
  const option = element("label", `q-option ${className}`);
  option.dataset.value = String(value);
  const radio = element("input", "visually-hidden");
  Object.assign(radio, { type: "radio", name: `q-${question.key}`, value: String(value) });
  radio.addEventListener("change", () => radio.checked && onChoose());
  option.append(radio);
  return option;
}

/** A question box of one answer: a radio group, named by its legend. */
function oneAnswer(box) {
  box.setAttribute("role", "radiogroup");
  return box;
}

function press(buttons, pressed) {
  for (const button of buttons) button.setAttribute("aria-pressed", String(pressed(button)));
}

function decimalsOf(step) {
  const [mantissa, exponent = "0"] = String(step).split("e"); // 0.5, or 1e-7
  return Math.max(0, (mantissa.split(".")[1] || "").length - Number(exponent));
}

function optionLabel(question, value) {
  return question.options?.find((option) => option.value === value)?.label ?? String(value);
}

/** An answer in its question's terms (the tutorial shows the experts' this way too). */
export function answerText(question, value, t) {
  if (!question) return Array.isArray(value) ? value.join(", ") : String(value);
  switch (question.kind) {
    case "score":
      return t("questionnaire_score", { value, min: question.min, max: question.max });
    case "ordinal": {
      if (value === INVALID) return t("questionnaire_invalid");
      // the level with its name, as the audit page shows it ("3 · None" is a level, not
      // a missing answer)
      const label = optionLabel(question, value);
      return label === String(value) ? label : `${value} · ${label}`;
    }
    case "tags":
      return value.length
        ? value.map((tag) => optionLabel(question, tag)).join(", ")
        : t("questionnaire_none");
    default:
      return String(value);
  }
}

/** Whether `value` is among the answers the test counts as agreeing with the experts'
 * (`agrees`, from quality.stats.labels.exemplars.agreeing: a score from `low` to
 * `high`, a level among `levels`, tags whose Jaccard index with the experts' is at least
 * `jaccard`). */
function agreesWith(question, value, expert, agrees) {
  switch (question.kind) {
    case "score":
      return value >= agrees.low - 1e-9 && value <= agrees.high + 1e-9;
    case "ordinal":
      return agrees.levels.some((level) =>
        level === INVALID || value === INVALID ? level === value : Number(value) === level,
      );
    case "tags": {
      const union = new Set([...value, ...expert]);
      const shared = value.filter((tag) => expert.includes(tag)).length;
      return (union.size ? shared / union.size : 1) >= agrees.jaccard - 1e-12;
    }
    default:
      return false;
  }
}

/** What the test counts as agreeing with the experts' answer, in the question's terms. */
function agreementRule(question, agrees, t) {
  switch (question.kind) {
    case "score":
      return t("exemplar_rule_score", {
        low: Math.max(agrees.low, question.min),
        high: Math.min(agrees.high, question.max),
      });
    case "ordinal":
      return t("exemplar_rule_levels", {
        levels: agrees.levels.map((level) => answerText(question, level, t)).join("; "),
      });
    default:
      return t("exemplar_rule_tags", { share: Math.round(agrees.jaccard * 100) });
  }
}

let tries = 0; // each exemplar's question answered apart (its own radio group name)

/** An exemplar is tried before it is told: the rater answers its question as in an item
 * and checks; then the experts' answer and why are shown, with whether the test would
 * count the rater's answer as agreeing with it, and the rule it counts by. A question
 * the test does not compare (a comment) is told at once. */
export function exemplarTry(node, answer, { t, question }) {
  const Kind = question && answer.agrees ? kindOf(question) : undefined;
  if (!Kind) return;
  const trial = exemplarTrial(node);
  tries += 1;
  const check = element("button", "secondary exemplar-check", t("exemplar_check"));
  check.type = "button";
  check.disabled = true;
  const asked = new Kind({ ...question, key: `${question.key}-try${tries}` }, {
    t,
    changed: () => (check.disabled = !asked.answered),
  });
  asked.node.classList.add("exemplar-question");
  asked.node.querySelector("legend").className = "visually-hidden"; // the group says it
  asked.node.querySelector(`#q-${question.key}-try${tries}-text`)?.remove();
  asked.node.removeAttribute("aria-describedby");
  asked.node.setAttribute("aria-label", t("exemplar_try_question", { question: question.label }));
  check.addEventListener("click", () => {
    const value = asked.value;
    const agree = agreesWith(question, value, answer.value, answer.agrees);
    const said = t(agree ? "exemplar_agrees" : "exemplar_disagrees", {
      value: answerText(question, value, t),
    });
    trial.tell(`${said} ${agreementRule(question, answer.agrees, t)}`, agree);
  });
  trial.show(element("p", "exemplar-try", t("exemplar_try_answer")), asked.node, check);
}

// ---------------------------------------------------------------- one question each kind
// Each has `node` (its fieldset), `answered` and `value` (undefined: nothing to send).

function questionBox(question, t) {
  const box = element("fieldset", "q-question");
  Object.assign(box.dataset, { question: question.key, kind: question.kind, answered: "no" });
  const legend = element("legend", "q-label", question.label);
  if (question.kind === "comment") {
    legend.append(element("span", "muted", ` ${t("questionnaire_optional")}`));
  }
  box.append(legend);
  if (question.text) {
    const text = element("p", "q-text muted", question.text);
    text.id = `q-${question.key}-text`;
    box.setAttribute("aria-describedby", text.id);
    box.append(text);
  }
  return box;
}

class Score {
  constructor(question, { t, changed }) {
    Object.assign(this, { question, changed, value: undefined });
    this.node = questionBox(question, t);
    const { min, max, step } = question;
    const decimals = decimalsOf(step);
    const count = Math.floor((max - min) / step + 1e-6) + 1; // the steps within the scale
    this.onStep = (index) => Number((min + index * step).toFixed(decimals));
    if (count <= MAX_STEP_BUTTONS) {
      oneAnswer(this.node);
      const row = element("div", "q-options q-steps");
      for (let index = 0; index < count; index += 1) {
        const value = this.onStep(index);
        const option = radioOption(question, "q-step", value, () => this.choose(value));
        option.append(String(value));
        row.append(option);
      }
      this.node.append(row);
      return;
    }
    const row = element("div", "q-range");
    const input = Object.assign(element("input", "slider"), { type: "range", min, max, step });
    input.value = String((min + max) / 2); // no thumb until moved: it suggests no value
    input.dataset.untouched = "";
    input.setAttribute("aria-label", question.label);
    const shown = element("output", "q-range-value", "—");
    const touch = () => {
      if (input.matches(":disabled")) return; // the question is closed (its fieldset)
      delete input.dataset.untouched;
      this.choose(this.onStep(Math.round((input.valueAsNumber - min) / step)), shown);
    };
    for (const type of ["input", "change", "pointerdown"]) input.addEventListener(type, touch);
    const end = (value) => element("span", "muted", String(value));
    row.append(end(min), input, end(max), shown);
    this.node.append(row);
  }

  choose(value, shown) {
    this.value = value;
    if (shown) shown.textContent = String(value);
    this.changed();
  }

  get answered() {
    return this.value !== undefined;
  }
}

/** A question of one answer as a radio group: `option` adds each answer, `value` is the
 * one chosen. */
class OneAnswer {
  constructor(question, { t, changed }, rowClass) {
    Object.assign(this, { question, t, changed, value: undefined });
    this.node = oneAnswer(questionBox(question, t));
    this.row = element("div", `q-options ${rowClass}`);
  }

  /** An answer: its radio button's `key`, the `answer` it gives, what its label shows. */
  option(className, key, answer, ...content) {
    const option = radioOption(this.question, className, key, () => this.choose(answer));
    option.append(...content);
    this.row.append(option);
  }

  choose(value) {
    this.value = value;
    this.changed();
  }

  get answered() {
    return this.value !== undefined;
  }
}

class Ordinal extends OneAnswer {
  constructor(question, options) {
    super(question, options, "q-levels");
    for (const level of question.options) {
      const label = element("strong", "", level.label);
      const description = level.description
        ? [element("span", "q-description", level.description)]
        : [];
      this.option("q-level", level.value, level.value, label, ...description);
    }
    if (question.invalid_option) {
      this.option("q-invalid", INVALID, INVALID, this.t("questionnaire_invalid"));
    }
    this.node.append(this.row);
  }
}

/** Tags of one answer: the tag that applies, or "None of these" (an empty list). */
class OneTag extends OneAnswer {
  constructor(question, options) {
    super(question, options, "q-tags");
    this.node.append(element("p", "q-text muted", this.t("questionnaire_one")));
    for (const tag of question.options) this.option("q-tag", tag.value, [tag.value], tag.label);
    this.option("q-none", "", [], this.t("questionnaire_none"));
    this.node.append(this.row);
  }
}

/** Tags of several answers: a toggle button each, and "None of these". */
class Tags {
  constructor(question, { t, changed }) {
    Object.assign(this, { question, changed, chosen: new Set(), none: false });
    this.node = questionBox(question, t);
    const row = element("div", "q-options q-tags");
    this.buttons = question.options.map((option) => {
      const button = optionButton("q-tag", option.value, () => this.toggle(option.value));
      button.textContent = option.label;
      return button;
    });
    this.noneButton = optionButton("q-none", "", () => this.chooseNone());
    this.noneButton.textContent = t("questionnaire_none");
    row.append(...this.buttons, this.noneButton);
    this.node.append(element("p", "q-text muted", t("questionnaire_several")));
    this.node.append(row);
  }

  toggle(tag) {
    const had = this.chosen.has(tag);
    if (had) this.chosen.delete(tag);
    else this.chosen.add(tag);
    this.none = false;
    this.render();
  }

  chooseNone() {
    this.none = !this.none;
    this.chosen.clear();
    this.render();
  }

  render() {
    press(this.buttons, (button) => this.chosen.has(button.dataset.value));
    this.noneButton.setAttribute("aria-pressed", String(this.none));
    this.changed();
  }

  get answered() {
    return this.none || this.chosen.size > 0;
  }

  get value() {
    if (!this.answered) return undefined;
    const tags = this.question.options.map((option) => option.value);
    return tags.filter((tag) => this.chosen.has(tag)); // in the question's order
  }
}

class Comment {
  constructor(question, { t, changed }) {
    Object.assign(this, { question, answered: true });
    this.node = questionBox(question, t);
    this.input = element("textarea", "q-comment");
    Object.assign(this.input, { rows: 3, maxLength: TEXT_LIMIT });
    this.input.setAttribute("aria-label", question.label);
    const count = element("span", "q-count muted");
    const counted = () => {
      const length = this.input.value.length;
      count.textContent = t("questionnaire_count", { count: length, limit: TEXT_LIMIT });
    };
    this.input.addEventListener("input", () => {
      counted();
      changed();
    });
    counted();
    this.node.append(this.input, count);
  }

  get value() {
    const text = this.input.value.trim();
    return text ? text : undefined;
  }
}

const KINDS = { score: Score, ordinal: Ordinal, tags: Tags, comment: Comment };

/** The class that asks `question` (undefined: a kind this page does not know). */
export function kindOf(question) {
  return question.kind === "tags" && !question.multiple ? OneTag : KINDS[question.kind];
}
