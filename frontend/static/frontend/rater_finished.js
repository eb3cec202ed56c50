// The study's end for this rater (done, full, not eligible, screened out): what the
// server says, the completion code, and the marketplace's redirect, http(s) only.

import { $, config, field, leaving, showStep, t } from "./rater_page.js";

function safeRedirect(url) {
  try {
    const target = new URL(url, window.location.href);
    return target.protocol === "https:" || target.protocol === "http:" ? target.href : null;
  } catch {
    return null;
  }
}

export function showFinished(step, completion) {
  showStep("finished");
  const section = $("#step-finished");
  section.dataset.outcome = step;
  field(section, "title").textContent = t(`${step}_title`);
  field(section, "text").textContent = t(`${step}_text`);
  field(section, "completion").hidden = !completion?.code;
  $("#completion-code").textContent = completion?.code || "";
  const url = completion?.redirect_url ? safeRedirect(completion.redirect_url) : null;
  field(section, "redirect").hidden = !url;
  if (!url) return;
  field(section, "redirect-text").textContent = t("redirecting");
  $("#completion-link").href = url;
  const timer = setTimeout(() => window.location.assign(url), config.redirect_delay_ms);
  leaving.push(() => clearTimeout(timer));
}
