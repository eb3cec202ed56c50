// Leaving the study (docs/rater-api.md, "Withdrawing"): the link under every step, or "I
// do not agree" on the consent form, asks once more in a dialog. What is still unsent goes
// first, so nothing answered is lost (the server keeps it, unused); then the server
// records the withdrawal and the page shows the end it names.

import { ApiError } from "./rater_queue.js";
import { $, asSentence, keepState, state } from "./rater_page.js";
import { api, sender } from "./rater_api.js";
import { route } from "./rater_flow.js";

export function listenForWithdrawal() {
  const dialog = $("#withdraw-dialog");
  const confirm = $("#withdraw-confirm");
  const error = $("#withdraw-error");
  const open = () => {
    error.hidden = true;
    confirm.disabled = false;
    dialog.showModal();
    $("#withdraw-cancel").focus(); // staying is the choice a stray Enter makes
  };
  $("#withdraw-open").addEventListener("click", open);
  $("#consent-decline").addEventListener("click", open);
  $("#withdraw-cancel").addEventListener("click", () => dialog.close());
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    error.hidden = true;
    try {
      await sender.flush();
      keepState(await api.post("withdraw", { withdraw: true }));
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      error.textContent = asSentence(failure.message);
      error.hidden = false;
      confirm.disabled = false;
      return;
    }
    dialog.close();
    await route(state.step, state);
  });
}
