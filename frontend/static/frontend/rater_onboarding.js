// Before the first item: the consent (with the browser's viewport, which the server may
// find too small) and the tutorial (the design's intro, the experts' example pairs to try
// a slider on, a questionnaire's exemplars). Qualification items are rated as any item
// (rater_item.js); the server decides when the rater is qualified.

import { ApiError } from "./rater_queue.js";
import { Slider } from "./rater_controls.js";
import {
  $,
  asSentence,
  field,
  fromTemplate,
  keepState,
  loadWidgetModule,
  showStep,
  state,
  t,
} from "./rater_page.js";
import { api } from "./rater_api.js";
import { route, routeSafely } from "./rater_flow.js";

// consent

function fillConsent(section) {
  field(section, "study-name").textContent = state.study.name;
  field(section, "instructions").textContent = state.study.instructions;
  field(section, "consent-text").textContent = state.study.consent_text;
}

export function showConsent() {
  showStep("consent");
  const section = $("#step-consent");
  fillConsent(section);
  const button = $("#consent-accept");
  button.disabled = false;
  button.onclick = async () => {
    button.disabled = true;
    const box = $("#consent-error");
    box.hidden = true;
    try {
      keepState(
        await api.post("consent", {
          accept: true,
          viewport_width: window.innerWidth,
          viewport_height: window.innerHeight,
          pixel_ratio: window.devicePixelRatio || 1,
          screen_width: window.screen?.width || 0,
          screen_height: window.screen?.height || 0,
          user_agent: navigator.userAgent,
          // the text as this page shows it: one edited meanwhile is shown again, not agreed to
          consent_version: state.study.consent_version,
        }),
      );
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const changed = error.body.error === "consent_changed";
      if (changed) {
        keepState(await api.get("state"));
        fillConsent(section);
      }
      const small =
        error.body.error === "viewport_too_small" || error.body.reason === "viewport_too_small";
      field(box, "title").textContent = changed
        ? t("consent_changed")
        : t(small ? "viewport_too_small" : "consent_failed");
      field(box, "detail").textContent = asSentence(error.message);
      field(box, "hint").textContent = small ? t("viewport_hint") : "";
      box.dataset.reason = error.body.reason || error.body.error || "";
      box.hidden = false;
      button.disabled = false;
      return;
    }
    await routeSafely(() => route(state.step, state));
  };
}

// tutorial

export async function showTutorial() {
  showStep("tutorial");
  // the design's intro, every paragraph of it
  const intro = document.getElementById("tutorial-intro-template").content.cloneNode(true);
  // what speaks of the examples waits for them (none may come: said below)
  for (const node of intro.querySelectorAll(".if-examples")) node.hidden = true;
  $("#tutorial-intro").replaceChildren(intro);
  const { pairs, exemplars = [], questions: named = [] } = await api.get("tutorial");
  const groups = $("#tutorial-groups");
  groups.replaceChildren(...(exemplars.length ? await exemplarGroups(exemplars, named) : []));
  const dimensions = new Map((state.dimensions || []).map((d) => [d.key, d]));
  // a design that asks questions (a preference study) names a pair's group by its question
  const questions = new Map((state.questions || []).map((q) => [q.key, q]));
  let group = null;
  pairs.forEach((pair, index) => {
    const dimension = dimensions.get(pair.dimension);
    const question = questions.get(pair.dimension);
    if (!group || group.dataset.dimension !== pair.dimension) {
      group = fromTemplate("tutorial-group-template");
      group.dataset.dimension = pair.dimension;
      field(group, "label").textContent = dimension?.label || question?.label || pair.dimension;
      field(group, "help").textContent = dimension?.help_text || question?.text || "";
      groups.append(group);
    }
    field(group, "pairs").append(tutorialPair(pair, dimension, index));
  });
  const examples = pairs.length + exemplars.length > 0;
  for (const node of $("#tutorial-intro").querySelectorAll(".if-examples")) {
    node.hidden = !examples; // the intro speaks of examples only where there are some
  }
  const empty = $("#tutorial-empty");
  empty.textContent = t("no_tutorial");
  empty.hidden = examples;
  const done = $("#tutorial-done");
  // the button names what comes next: the test, or (a study without one) the rating
  if (state.study?.qualification === false) done.textContent = t("tutorial_done_rate");
  done.disabled = false;
  done.onclick = () => {
    done.disabled = true;
    return routeSafely(async () => {
      keepState(await api.post("tutorial_done"));
      return route(state.step, state);
    });
  };
}
/** The experts' exemplars (questionnaire; the worked examples of propose-then-verify,
 * side-by-side preference and ranking):
 * question by question (the study's, or those the tutorial names), each video asked it
 * with its prompt, the experts' answer in the question's terms (the widget module's
 * `answerText`) and why; the widget module's `exemplarMedia`, if any, dresses the video
 * (a person's box drawn over it; the other videos around it), and its `exemplarTry`, if
 * any, lets the rater answer first (the answer and why hidden until then). */
async function exemplarGroups(exemplars, named) {
  const { answerText = (question, value) => String(value), exemplarMedia, exemplarTry } =
    await loadWidgetModule();
  const questions = new Map([...(state.questions || []), ...named].map((q) => [q.key, q]));
  const keys = new Set(questions.keys());
  for (const answer of exemplars.flatMap((exemplar) => exemplar.answers)) keys.add(answer.question);
  const groups = [];
  for (const key of keys) {
    const question = questions.get(key);
    const shown = exemplars.flatMap((exemplar) =>
      exemplar.answers.filter((a) => a.question === key).map((answer) => [exemplar, answer]),
    );
    if (!shown.length) continue;
    const group = fromTemplate("exemplar-group-template");
    group.dataset.question = key;
    field(group, "label").textContent = question?.label || key;
    field(group, "help").textContent = question?.text || "";
    for (const [exemplar, answer] of shown) {
      const node = fromTemplate("exemplar-template");
      node.dataset.video = exemplar.id;
      const video = field(node, "video");
      video.src = exemplar.video_url;
      if (exemplar.poster_url) video.poster = exemplar.poster_url;
      exemplarMedia?.(video, exemplar, t);
      field(node, "prompt").textContent = exemplar.prompt || "";
      field(node, "prompt-line").hidden = !exemplar.prompt;
      field(node, "answer").textContent = t("exemplar_answer", {
        value: answerText(question, answer.value, t),
      });
      field(node, "note").textContent = answer.note ? t("exemplar_why", { note: answer.note }) : "";
      field(node, "note").hidden = !answer.note;
      exemplarTry?.(node, answer, { t, question, state });
      field(group, "exemplars").append(node);
    }
    groups.push(group);
  }
  return groups;
}

function tutorialPair(pair, dimension, index) {
  const node = fromTemplate("tutorial-pair-template");
  field(node, "label").textContent = pair.label;
  field(node, "caption").textContent = pair.caption;
  field(node, "explanation").textContent = pair.explanation;
  for (const side of ["generated", "real"]) {
    const video = field(node, side);
    video.src = pair[side].video_url;
    if (pair[side].poster_url) video.poster = pair[side].poster_url;
  }
  const expertValue = pair.expert?.[pair.dimension];
  let slider = null;
  if (dimension && state.scale) {
    slider = new Slider(dimension, state.scale, { idPrefix: `tutorial-${index}` });
    field(node, "try").append(slider.node);
  }
  const reveal = $('[data-action="reveal"]', node);
  const expert = field(node, "expert");
  reveal.hidden = expertValue === undefined;
  reveal.onclick = () => {
    const lines = [t("expert_answer", { value: expertValue })];
    if (slider?.value !== null && slider?.value !== undefined) {
      lines.push(t("your_answer", { value: slider.value }));
    }
    expert.textContent = lines.join(" · ");
    expert.hidden = false;
    slider?.markExpert(expertValue);
  };
  return node;
}
