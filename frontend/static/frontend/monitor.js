// The admin's live monitor: polls the monitor API and redraws the table; actions post
// to the API with a reason. No state is kept here beyond the filters.

import { setText } from "./live_text.js";

const POLL_MS = 3000;
// readiness is a dozen queries: looked at again every 20 s, not on every poll
const PROBLEMS_POLL_MS = 20000;

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text ?? "–";
  return td;
}

/** A moment as every staff page writes it: "2026-11-27 22:26 UTC". */
function formatMoment(iso) {
  return `${new Date(iso).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function formatAgo(iso) {
  if (!iso) return "–";
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  return seconds < 90 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

function stateText(row) {
  return row.state === "on_break" ? `on break (${row.break_seconds_left} s)` : row.state;
}

// A finished session whose golden agreement is undefined (PLCC of constant scores: the
// same score for every golden video, as a line clicker gives) failed the gate for that.
function agreementUndefined(row) {
  return row.golden_agreement === null && row.eligible_for_next === false;
}

function undefinedWhy(row) {
  return agreementUndefined(row) ? " (agreement undefined: constant scores, or under 3 golden answers)" : "";
}

// The rater's exclusion from the study (or withdrawal), which outlives a finished assignment.
function flagsText(row) {
  const flags = [];
  if (row.rater_withdrew) flags.push("rater withdrew from the study");
  else if (row.rater_excluded) flags.push(`rater excluded: ${row.rater_excluded_reason}`);
  else if (row.state === "excluded") flags.push(`session excluded: ${row.admin_note}`);
  else if (row.state === "paused") flags.push(`paused: ${row.admin_note}`);
  else if (row.eligible_for_next === false) flags.push(`failed the golden gate${undefinedWhy(row)}`);
  if (row.place_released) flags.push("idle: its place is open to another rater");
  if (row.flagged_line_clicker) flags.push(`line clicker: ${row.flag_reason}`);
  return flags.join("; ");
}

async function act(url, csrf, reason) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
    body: JSON.stringify({ reason }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    alert(body.detail || `Refused (${response.status})`);
  }
}

/** The actions open to a row's session: [path, label], in the order shown. */
function actionsOf(row) {
  const actions = [];
  if (row.state === "active" || row.state === "on_break") actions.push(["pause", "Pause"]);
  // a rater who withdrew decided for themselves, and a batch rejected in its audit was
  // decided there: neither is reopened
  const decided = row.rater_withdrew || row.rejected_in_audit;
  if ((row.state === "paused" || row.state === "excluded") && !decided) {
    actions.push(["reopen", "Reopen"]);
  }
  if (row.state !== "excluded" && !row.rater_excluded) {
    actions.push(["exclude", "Exclude session"]);
    actions.push(["exclude-rater", "Exclude rater"]);
  }
  return actions;
}

function actionButton(row, [path, label], options, refresh) {
  const button = document.createElement("button");
  button.className = "small";
  button.textContent = label;
  button.dataset.action = path;
  // every row has the same buttons: the name says whose session each acts on
  button.setAttribute("aria-label", `${label}: ${row.rater}, session ${row.session}`);
  button.addEventListener("click", async () => {
    const reason = prompt(`${label}: reason?`);
    if (!reason) return;
    await act(`/api/assignments/${row.id}/${path}/`, options.csrf, reason);
    refresh();
  });
  return button;
}

/** The row's action buttons, changed only where its actions changed: a button that stays
 * is the same element, so the keyboard focus on it outlives the poll. */
function updateActions(td, row, options, refresh) {
  const wanted = actionsOf(row);
  const kept = new Map([...td.children].map((button) => [button.dataset.action, button]));
  const buttons = wanted.map(
    (action) => kept.get(action[0]) || actionButton(row, action, options, refresh),
  );
  const shown = [...td.children];
  const same = buttons.length === shown.length && buttons.every((button, at) => shown[at] === button);
  if (!same) td.replaceChildren(...buttons);
}

// Adaptive collection (annotation.services.adaptive_summary): the saving against
// the fixed design, in the server's own sentence, and the widest intervals left.
function figure(list, term, value) {
  const dt = document.createElement("dt");
  const dd = document.createElement("dd");
  dt.textContent = term;
  dd.textContent = value;
  list.append(dt, dd);
}

function renderAdaptive(a) {
  const section = document.getElementById("adaptive");
  section.hidden = !a;
  if (!a) return;
  const verdict = document.getElementById("adaptive-verdict");
  verdict.dataset.verdict = a.verdict;
  verdict.textContent = a.sentence;
  const list = document.getElementById("adaptive-figures");
  list.replaceChildren();
  figure(list, "Ratings collected", `${a.ratings_collected} kept (${a.ratings_awaiting_gate} more in sessions still open)`);
  figure(list, "Fixed design", `${a.fixed_design_ratings} (${a.videos} videos × ${a.fixed_ratings})`);
  figure(list, "Projected", `${a.projected_ratings} (open videos counted at the cap)`);
  const reasons = a.settled_by_reason;
  figure(
    list,
    "Videos settled",
    `${a.videos_settled} of ${a.videos} (narrow enough ${reasons.precise}, last look ${reasons.plan_complete}, cap ${reasons.cap}); ${a.videos_open} open`,
  );
  figure(list, "Saving", `${a.saving} ratings (${(a.saving_share * 100).toFixed(1)} % of the fixed design)`);
  figure(list, "Sessions", a.sessions_note);
  const tbody = document.querySelector("#adaptive-widest tbody");
  tbody.replaceChildren(
    ...a.widest_open.map((row) => {
      const tr = document.createElement("tr");
      tr.append(
        cell(row.name ?? row.video_id),
        cell(row.dimension),
        cell(row.n),
        cell(row.mean.toFixed(1)),
        cell(`${row.low.toFixed(1)} – ${row.high.toFixed(1)}`),
        cell(`±${row.half_width.toFixed(1)}`),
      );
      return tr;
    }),
  );
  const reviewed = a.reviewed_at ? `reviewed ${formatAgo(a.reviewed_at)}` : "not reviewed yet";
  document.getElementById("adaptive-rule").textContent =
    `Plan ${a.plan.replace("_", "-")}: a video settles at ±${a.target_half_width} on every dimension ` +
    `(${Math.round((1 - a.alpha) * 100)} % intervals), after at least ${a.min_ratings} kept ratings, ` +
    `at most ${a.max_ratings}; ${a.open_rated} open videos have kept ratings; ${reviewed}.`;
}

function cellTexts(row) {
  return [
    row.rater,
    row.session,
    `${row.position} / ${row.length}`,
    stateText(row),
    row.seconds_per_stimulus,
    formatAgo(row.last_activity_at),
    agreementUndefined(row)
      ? "undefined"
      : row.golden_agreement === null
        ? "–"
        : row.golden_agreement.toFixed(3),
    flagsText(row),
    row.stalls,
  ].map((text) => String(text ?? "–"));
}

function newRow(row, texts) {
  const tr = document.createElement("tr");
  tr.dataset.assignment = row.id;
  tr.append(...texts.map(cell), document.createElement("td"));
  return tr;
}

/** Update the table's rows in place (a row is its assignment's, kept across polls):
 * a button in focus stays the same element, and is never taken out and put back. */
function renderRows(tbody, rows, options, refresh) {
  const existing = new Map([...tbody.children].map((tr) => [tr.dataset.assignment, tr]));
  const active = document.activeElement;
  const focused = tbody.contains(active)
    ? { assignment: active.closest("tr")?.dataset.assignment, action: active.dataset.action }
    : null;
  const wanted = rows.map((row) => {
    const texts = cellTexts(row);
    const tr = existing.get(String(row.id)) || newRow(row, texts);
    const cells = tr.children;
    texts.forEach((text, at) => setText(cells[at], text));
    updateActions(cells[texts.length], row, options, refresh);
    return tr;
  });
  const keep = new Set(wanted);
  for (const tr of [...tbody.children]) if (!keep.has(tr)) tr.remove();
  // insert only the rows out of place: the others (the focused one too) are not moved
  wanted.forEach((tr, at) => {
    if (tbody.children[at] !== tr) tbody.insertBefore(tr, tbody.children[at] || null);
  });
  // the focused button went (Pause became Reopen, or the row was filtered out): the
  // focus goes to the row's first button, else to the table, not to the page's top
  if (focused && !tbody.contains(document.activeElement)) {
    const row = wanted.find((tr) => tr.dataset.assignment === focused.assignment);
    const again =
      row?.querySelector(`button[data-action="${focused.action}"]`) || row?.querySelector("button");
    (again || document.getElementById("assignments")).focus();
  }
}

function render(body, options, refresh) {
  const p = body.progress;
  renderAdaptive(body.adaptive);
  // a live region: written only when its words change, so that it is read out then only
  setText(
    document.getElementById("progress"),
    `${p.answers} answers · ${p.answers_per_stimulus} of ` +
      `${p.target_is_cap ? "at most " : ""}${p.target_per_stimulus} per stimulus · ` +
      `${p.answers_last_hour} in the last hour · expected finish: ` +
      (p.expected_finish ? formatMoment(p.expected_finish) : "–"),
  );
  const state = document.getElementById("filter-state").value;
  const flaggedOnly = document.getElementById("filter-flagged").checked;
  const rows = body.assignments.filter(
    (row) =>
      (!state || row.state === state || (state === "excluded" && row.rater_excluded)) &&
      (!flaggedOnly || row.flagged_line_clicker || row.rater_excluded),
  );
  renderRows(document.querySelector("#assignments tbody"), rows, options, refresh);
  // as every moment on the page: UTC, 24 hours (the browser's locale would say 1:38:03 AM)
  document.getElementById("updated").textContent = `updated ${new Date().toISOString().slice(11, 19)} UTC`;
}

/** What the study still lacks (annotation.readiness), checked again every
 * PROBLEMS_POLL_MS: videos still being transcoded become ready, an admin mends the
 * setup in another tab; the card goes once nothing is lacking, and comes back if
 * something is again. A failed check leaves the card as it was. */
function watchProblems(slug) {
  const card = document.getElementById("problems");
  const check = async () => {
    try {
      const response = await fetch(`/api/studies/${slug}/problems/`, {
        headers: { Accept: "application/json" },
      });
      if (!response.ok) return;
      const problems = await response.json();
      card.querySelector("ul").replaceChildren(
        ...problems.map((problem) => {
          const li = document.createElement("li");
          li.className = problem.blocks ? "problem-blocks" : "problem";
          li.textContent = problem.text.charAt(0).toUpperCase() + problem.text.slice(1);
          return li;
        }),
      );
      card.hidden = problems.length === 0;
      document.getElementById("problems-checked").textContent =
        `(checked ${new Date().toISOString().slice(11, 19)} UTC)`;
    } catch (error) {
      // the connection is lost: the monitor's own line says so; the card stays
    }
  };
  setInterval(check, PROBLEMS_POLL_MS);
}

export function startMonitor(options) {
  let last = null;
  const refresh = async () => {
    try {
      const response = await fetch(`/api/studies/${options.slug}/monitor/`, {
        headers: { Accept: "application/json" },
      });
      if (response.ok) {
        last = await response.json();
        render(last, options, refresh);
      } else {
        // signed out, or the server failing: the rows shown are stale, and say since when
        const since = last ? "" : " (nothing loaded yet)";
        document.getElementById("updated").textContent =
          `not updated: the server answered ${response.status}${since}, retrying`;
      }
    } catch (error) {
      document.getElementById("updated").textContent = "connection lost, retrying";
    }
  };
  for (const id of ["filter-state", "filter-flagged"]) {
    document.getElementById(id).addEventListener("change", () => last && render(last, options, refresh));
  }
  refresh();
  setInterval(refresh, POLL_MS);
  watchProblems(options.slug);
}
