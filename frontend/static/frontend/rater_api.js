// The rater page's calls to the server (docs/rater-api.md): API calls retried through
// rater_queue.js while the connection is gone, and the sender of the unsent-answers
// queue, which never loses or doubles an answer. Trouble shows in the page's banners.

import { AnswerQueue, AnswerSender, browserStorage, request, withRetry } from "./rater_queue.js";
import { $, config, notice, t, trouble } from "./rater_page.js";

export const api = {
  get: (name) =>
    withRetry(() => request("GET", config.api[name]), { onTrouble: trouble }).then(
      (response) => response.body,
    ),
  post: (name, payload) =>
    withRetry(() => request("POST", config.api[name], { csrfToken: config.csrf_token, payload }), {
      onTrouble: trouble,
    }).then((response) => response.body),
};

export const sender = new AnswerSender({
  // Kept per study and per user, so that two people sharing a browser never mix answers.
  queue: new AnswerQueue(browserStorage(), `mosaic:unsent:${config.slug}:${config.user}`),
  url: config.api.answers,
  csrfToken: config.csrf_token,
  onTrouble: trouble,
  onRefused: (outcome) =>
    notice(t("answer_refused", { detail: outcome.body.detail || outcome.body.error })),
  onChange: (unsent) => ($("#rater").dataset.unsent = String(unsent)),
});
