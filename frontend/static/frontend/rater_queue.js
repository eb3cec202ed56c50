// Never losing an answer: the rater's unsent-answers queue and the calls to the rater API.
//
// Every answer carries a client_uuid and is written to localStorage BEFORE it is sent; it
// leaves the queue only when the server has answered for good:
//   201/200 stored (a repeat of the same client_uuid answers 200: nothing is doubled);
//   409 and other 4xx API refusals: final, dropped, the server's message shown;
//   423 (on_break, paused, study_not_running): held back for now, not refused: kept, and
//   sent again later (after the break, when the team resumes the session or the study).
// A network error, a 5xx, or a lost sign-in (a bare 401/403 without an API error code) is
// transient: retried with exponential backoff (1 s doubling to 30 s) and at once when the
// browser comes back online. Answers are sent one at a time, oldest first, because the
// server accepts only the item it is waiting for.
//
// No DOM here: the page passes callbacks for what the rater should see.

export const RETRY_FIRST_MS = 1000;
export const RETRY_MAX_MS = 30000;

/** A final refusal by the server: `{error, detail}` with a 4xx status. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.detail || body?.error || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
  }
}

/** Worth trying again later: no network, a server error, or a lost sign-in. */
export class TransientError extends Error {
  constructor(message, { signedOut = false } = {}) {
    super(message);
    this.signedOut = signedOut;
  }
}

/** One JSON call; resolves `{status, body}` for 2xx, throws ApiError or TransientError. */
export async function request(method, url, { csrfToken, payload } = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      cache: "no-store",
      headers: {
        Accept: "application/json",
        "Content-Type": "application/json",
        "X-CSRFToken": csrfToken || "",
      },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
  } catch (error) {
    throw new TransientError(String(error));
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (response.ok) return { status: response.status, body };
  if (response.status >= 500 || response.status === 408 || response.status === 429) {
    throw new TransientError(`HTTP ${response.status}`);
  }
  // API refusals carry an `error` code; a bare 401/403 is the sign-in or the CSRF cookie
  // gone, which the rater can repair without losing what is queued.
  if (typeof body?.error !== "string" && (response.status === 401 || response.status === 403)) {
    throw new TransientError(`HTTP ${response.status}`, { signedOut: true });
  }
  throw new ApiError(response.status, body);
}

/** Resolves after `ms`, or earlier when the browser comes back online. */
function waitForRetry(ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener("online", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener("online", done);
  });
}

/** Run `operation` until it succeeds or fails for good, with exponential backoff.
 *
 * `onTrouble(error)` is called on each transient failure, `onTrouble(null)` on success. */
export async function withRetry(operation, { onTrouble = () => {} } = {}) {
  let delay = RETRY_FIRST_MS;
  for (;;) {
    try {
      const result = await operation();
      onTrouble(null);
      return result;
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      onTrouble(error);
      await waitForRetry(delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  }
}

/** A random (version 4) UUID; crypto.randomUUID exists only on HTTPS and localhost. */
export function newUuid() {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function memoryStorage() {
  const items = new Map();
  return {
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem: (key, value) => items.set(key, String(value)),
    removeItem: (key) => items.delete(key),
  };
}

/** localStorage, or (when the browser refuses it) memory that lasts until the page closes. */
export function browserStorage() {
  try {
    const probe = "mosaic:probe";
    window.localStorage.setItem(probe, "1");
    window.localStorage.removeItem(probe);
    return window.localStorage;
  } catch {
    return memoryStorage();
  }
}

/** Answers not yet confirmed by the server, oldest first, kept across reloads. */
export class AnswerQueue {
  constructor(storage, key) {
    this.storage = storage;
    this.key = key;
  }

  list() {
    try {
      const items = JSON.parse(this.storage.getItem(this.key) || "[]");
      return Array.isArray(items) ? items : [];
    } catch {
      return [];
    }
  }

  add(answer) {
    const items = this.list();
    if (!items.some((item) => item.client_uuid === answer.client_uuid)) items.push(answer);
    this.save(items);
  }

  remove(clientUuid) {
    this.save(this.list().filter((item) => item.client_uuid !== clientUuid));
  }

  save(items) {
    if (items.length) this.storage.setItem(this.key, JSON.stringify(items));
    else this.storage.removeItem(this.key);
  }
}

/** Sends the queue's answers; `flush()` resolves with one outcome per answer it handled:
 * `{kind: "stored" | "refused" | "held", answer, body}`. */
export class AnswerSender {
  constructor({ queue, url, csrfToken, onTrouble = () => {}, onRefused = () => {} }) {
    Object.assign(this, { queue, url, csrfToken, onTrouble, onRefused });
    this.draining = null;
    window.addEventListener("online", () => {
      if (this.queue.list().length) this.flush();
    });
  }

  /** Queue `answer` (before anything is sent) and send everything queued. */
  submit(answer) {
    this.queue.add(answer);
    return this.flush();
  }

  /** Send every queued answer in order; one drain at a time, whoever asks. */
  flush() {
    if (!this.draining) this.draining = this.drain().finally(() => (this.draining = null));
    return this.draining;
  }

  async drain() {
    const outcomes = [];
    for (;;) {
      const [answer] = this.queue.list();
      if (!answer) return outcomes;
      const outcome = await withRetry(() => this.deliver(answer), { onTrouble: this.onTrouble });
      outcomes.push(outcome);
      if (outcome.kind === "refused") this.onRefused(outcome);
      if (outcome.kind === "held") return outcomes; // kept, with those after it, for later
    }
  }

  async deliver(answer) {
    try {
      const { body } = await request("POST", this.url, {
        csrfToken: this.csrfToken,
        payload: answer,
      });
      this.queue.remove(answer.client_uuid);
      return { kind: "stored", answer, body };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 423) return { kind: "held", answer, body: error.body };
      this.queue.remove(answer.client_uuid);
      return { kind: "refused", answer, body: error.body };
    }
  }
}
