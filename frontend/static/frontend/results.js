// The results page: "Run a new analysis" (queue a run, follow it, then show it) and
// "Prepare file" (queue an export job, poll it, then offer its download link).

const POLL_MS = 1500;

function csrfToken() {
  return document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";
}

/** Polls a job (an export or an analysis run) until it is done or failed; resolves the
 * finished job, or null when the server refused (signed out) and the poll stopped. A
 * network error or a server error is tried again. */
async function follow(url, status) {
  for (;;) {
    let job = null;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      job = await response.json().catch(() => null);
      if (response.status >= 400 && response.status < 500) {
        status.textContent = job?.detail || `refused (${response.status})`;
        return null;
      }
      if (!response.ok) job = null;
    } catch {
      job = null;
    }
    if (job?.status === "done") return job;
    if (job?.status === "failed") {
      status.textContent = `failed: ${job.error}`;
      return null;
    }
    status.textContent = job ? `${job.status}…` : "waiting for the server…";
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function poll(url, status) {
  const job = await follow(url, status);
  if (job === null) return;
  const link = document.createElement("a");
  link.href = job.download_url;
  link.textContent = `download (${Math.ceil(job.size_bytes / 1024)} KiB)`;
  status.replaceChildren(link);
}

async function runAnalysis(form) {
  const status = form.querySelector(".job");
  const button = form.querySelector("button");
  button.disabled = true;
  status.textContent = "queued…";
  const response = await fetch(form.action, {
    method: "POST",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
  });
  const run = await response.json().catch(() => ({}));
  if (!response.ok) {
    status.textContent = run.detail || `refused (${response.status})`;
    button.disabled = false;
    return;
  }
  const finished = await follow(`/api/analysis-runs/${run.id}/`, status);
  if (finished === null) {
    button.disabled = false;
    return;
  }
  status.textContent = "done: showing it…";
  window.location.reload(); // the page shows the newest finished run
}

async function prepare(section, row) {
  const status = row.querySelector(".job");
  const body = { name: row.dataset.export };
  if (section.dataset.run) body.run = Number(section.dataset.run);
  status.textContent = "queued…";
  const response = await fetch(`/api/studies/${section.dataset.study}/export-jobs/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
    body: JSON.stringify(body),
  });
  const job = await response.json().catch(() => ({}));
  if (!response.ok) {
    status.textContent = job.detail || `refused (${response.status})`;
    return;
  }
  await poll(`/api/export-jobs/${job.id}/`, status);
}

const newRun = document.getElementById("new-run");
newRun?.addEventListener("submit", (event) => {
  event.preventDefault();
  runAnalysis(newRun);
});

const section = document.getElementById("downloads");
for (const row of section?.querySelectorAll("tr[data-export]") ?? []) {
  row.querySelector(".prepare").addEventListener("click", () => prepare(section, row));
}
