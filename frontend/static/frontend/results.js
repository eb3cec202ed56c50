// "Prepare file": queue an export job, poll it, then offer its download link.

const POLL_MS = 1500;

function csrfToken() {
  return document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";
}

async function poll(url, status) {
  for (;;) {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    const job = await response.json();
    if (job.status === "done") {
      const link = document.createElement("a");
      link.href = job.download_url;
      link.textContent = `download (${Math.ceil(job.size_bytes / 1024)} KiB)`;
      status.replaceChildren(link);
      return;
    }
    if (job.status === "failed") {
      status.textContent = `failed: ${job.error}`;
      return;
    }
    status.textContent = `${job.status}…`;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
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

const section = document.getElementById("downloads");
for (const row of section?.querySelectorAll("tr[data-export]") ?? []) {
  row.querySelector(".prepare").addEventListener("click", () => prepare(section, row));
}
