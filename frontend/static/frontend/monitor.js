// The admin's live monitor: polls the monitor API and redraws the table; actions post
// to the API with a reason. No state is kept here beyond the filters.

const POLL_MS = 3000;

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text ?? "–";
  return td;
}

function formatAgo(iso) {
  if (!iso) return "–";
  const seconds = Math.round((Date.now() - Date.parse(iso)) / 1000);
  return seconds < 90 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

function stateText(row) {
  return row.state === "on_break" ? `on break (${row.break_seconds_left} s)` : row.state;
}

// The rater's exclusion from the study, which outlives a finished assignment.
function flagsText(row) {
  const flags = [];
  if (row.rater_excluded) flags.push(`rater excluded: ${row.rater_excluded_reason}`);
  else if (row.state === "excluded") flags.push(`session excluded: ${row.admin_note}`);
  else if (row.eligible_for_next === false) flags.push("failed the golden gate");
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

function actionButtons(row, options, refresh) {
  const td = document.createElement("td");
  const actions = [];
  if (row.state === "active" || row.state === "on_break") actions.push(["pause", "Pause"]);
  if (row.state === "paused" || row.state === "excluded") actions.push(["reopen", "Reopen"]);
  if (row.state !== "excluded" && !row.rater_excluded) {
    actions.push(["exclude", "Exclude session"]);
    actions.push(["exclude-rater", "Exclude rater"]);
  }
  for (const [path, label] of actions) {
    const button = document.createElement("button");
    button.className = "small";
    button.textContent = label;
    button.dataset.action = path;
    button.addEventListener("click", async () => {
      const reason = prompt(`${label}: reason?`);
      if (!reason) return;
      await act(`/api/assignments/${row.id}/${path}/`, options.csrf, reason);
      refresh();
    });
    td.append(button);
  }
  return td;
}

function render(body, options, refresh) {
  const p = body.progress;
  document.getElementById("progress").textContent =
    `${p.answers} answers · ${p.answers_per_stimulus} of ${p.target_per_stimulus} per stimulus · ` +
    `${p.answers_last_hour} in the last hour · expected finish: ${p.expected_finish ?? "–"}`;
  const state = document.getElementById("filter-state").value;
  const flaggedOnly = document.getElementById("filter-flagged").checked;
  const tbody = document.querySelector("#assignments tbody");
  const rows = body.assignments.filter(
    (row) =>
      (!state || row.state === state || (state === "excluded" && row.rater_excluded)) &&
      (!flaggedOnly || row.flagged_line_clicker || row.rater_excluded),
  );
  tbody.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.assignment = row.id;
      tr.append(
        cell(row.rater),
        cell(row.session),
        cell(`${row.position} / ${row.length}`),
        cell(stateText(row)),
        cell(row.seconds_per_stimulus),
        cell(formatAgo(row.last_activity_at)),
        cell(row.golden_agreement === null ? "–" : row.golden_agreement.toFixed(3)),
        cell(flagsText(row)),
        cell(row.stalls),
        actionButtons(row, options, refresh),
      );
      return tr;
    }),
  );
  document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
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
}
