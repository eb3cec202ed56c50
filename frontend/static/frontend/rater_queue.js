// Never losing an answer: the rater's unsent-answers queue and the calls to the rater API.
//
// Every answer carries a client_uuid and is written to localStorage BEFORE it is sent; it
// leaves the queue only when the server has answered for good:
//   201/200 stored (a repeat of the same client_uuid answers 200: nothing is doubled);
//   409 out_of_order: the server waits for an earlier item; when the queue holds its
//     answer, that one goes first and the rest follow in order; otherwise final;
//   409 and other 4xx API refusals: final, dropped, the server's message shown;
//   423 (on_break, paused, study_not_running): held back for now, not refused: kept, and
//   sent again later (after the break, when the team resumes the session or the study).
// A network error, a 5xx, or a lost sign-in (a bare 401/403 without an API error code) is
// transient: retried with exponential backoff (1 s doubling to 30 s) and at once when the
// browser comes back online. Answers are sent one at a time, oldest first, because the
// server accepts only the item it is waiting for; with the offline window the queue may
// hold several.
//
// No DOM here: the page passes callbacks for what the rater should see.

export const RETRY_FIRST_MS = 1000;
export const RETRY_MAX_MS = 30000;
const SIGNED_OUT = new Set(["not_authenticated", "authentication_failed", "csrf_failed"]);

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
  const sent = performance.now();
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
  clock.observe(response.headers.get("Date"), sent, performance.now());
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
  // A 401/403 that says the sign-in or the CSRF cookie is gone (or says nothing: not the
  // API's answer) is repaired by signing in again, without losing what is queued.
  if (
    (response.status === 401 || response.status === 403) &&
    (typeof body?.error !== "string" || SIGNED_OUT.has(body.error))
  ) {
    throw new TransientError(`HTTP ${response.status}`, { signedOut: true });
  }
  throw new ApiError(response.status, body);
}

/** The server's clock as the page knows it, for the times an answer carries (rest breaks
 * run from them: docs/rater-api.md). Monotonic, from performance.now(), which no change
 * of the computer's clock moves, plus the offset to the server's Date header. */
export const clock = {
  offset: 0,

  /** A response's Date header (whole seconds, cut down) read between `sent` and
   * `received` (performance.now() values). */
  observe(dateHeader, sent, received) {
    const server = Date.parse(dateHeader || "");
    if (Number.isNaN(server)) return;
    this.offset = server + 500 - (performance.timeOrigin + (sent + received) / 2);
  },

  now() {
    return performance.timeOrigin + performance.now() + this.offset;
  },

  iso() {
    return new Date(this.now()).toISOString();
  },
};

const RETRY_NOW = "mosaic:retry-now";

/** Ends every wait for a retry at once: the rater pressed "Try again" (a 5xx can have
 * pushed the next try of a queued answer 30 s away). */
export function retryNow() {
  window.dispatchEvent(new Event(RETRY_NOW));
}

/** Resolves after `ms`, or earlier when the browser comes back online or `retryNow()`. */
export function waitForRetry(ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener("online", done);
      window.removeEventListener(RETRY_NOW, done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener("online", done);
    window.addEventListener(RETRY_NOW, done);
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

  /** Move the answer to `item` to the front; false when none is queued. */
  first(item) {
    const items = this.list();
    const index = items.findIndex((answer) => answer.item === item);
    if (index < 0) return false;
    items.unshift(...items.splice(index, 1));
    this.save(items);
    return true;
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
 * `{kind: "stored" | "refused" | "held" | "reordered", answer, body}`. */
export class AnswerSender {
  /** `onChange(unsent)` is called whenever the queue grows or shrinks. */
  constructor({
    queue,
    url,
    csrfToken,
    onTrouble = () => {},
    onRefused = () => {},
    onChange = () => {},
  }) {
    Object.assign(this, { queue, url, csrfToken, onTrouble, onRefused, onChange });
    this.draining = null;
    window.addEventListener("online", () => {
      if (this.queue.list().length) this.flush();
    });
  }

  /** Queue `answer` (before anything is sent) and send everything queued. */
  submit(answer) {
    this.queue.add(answer);
    this.onChange(this.queue.list().length);
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
      this.onChange(this.queue.list().length);
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
      if (error.body.error === "out_of_order" && this.queue.first(error.body.expected)) {
        return { kind: "reordered", answer, body: error.body };
      }
      this.queue.remove(answer.client_uuid);
      return { kind: "refused", answer, body: error.body };
    }
  }
}
