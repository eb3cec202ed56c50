// The offline window's media: the videos and posters of the items the page holds ahead
// (docs/rater-api.md, "The window"), downloaded in full, one at a time in the order they
// will be needed, and kept as blobs, so the next video starts at once after an answer,
// with or without a connection. A download cut by a lost connection starts again when
// the browser is back online. No DOM here.
//
// What is downloaded ahead is capped (the page's config, MOSAIC_RATER_AHEAD_BYTES and
// _ITEMS): a rater on a slow or metered connection is not made to download large files
// long before they are shown, and the page's memory stays bounded. At most `budgetBytes`
// are held for the items after the one on screen; a download that does not fit in what
// is left waits until an item is shown (its copy then leaves the budget), and a file
// larger than the whole budget is never downloaded: it streams from its URL when shown.
// The item on screen keeps the copy it is shown from until it is answered; one shown
// before its download finished streams from its URL and is not downloaded beside it,
// unless an item ahead shows it too (a ranking's other criterion, a pair's other order):
// that item needs its own copy to be shown without a connection.

import { RETRY_FIRST_MS, RETRY_MAX_MS, waitForRetry } from "./rater_queue.js";

export class MediaStore {
  /** `onChange()` is called whenever a download completes. */
  constructor({ onChange = () => {}, budgetBytes = Infinity } = {}) {
    this.onChange = onChange;
    this.budgetBytes = budgetBytes;
    // URL -> {state: waiting | loading | held | streams, objectUrl, size, needs, controller}
    this.entries = new Map();
    this.ahead = []; // the URLs downloaded ahead, in the order they will be needed
    this.loading = null; // the download under way (one at a time)
  }

  /** Keep the copies of `showing` (the item on screen's URLs) already downloaded, and
   * download `ahead` (the next items' URLs, in the order they will be needed, some of
   * them maybe on screen too) as the budget allows; let go of every other. */
  keep({ showing = [], ahead = [] } = {}) {
    const onScreen = new Set(showing.filter(Boolean));
    this.ahead = [...new Set(ahead.filter(Boolean))];
    const wanted = new Set(this.ahead);
    for (const [url, entry] of this.entries) {
      if (wanted.has(url) || (onScreen.has(url) && entry.objectUrl)) continue;
      entry.controller?.abort();
      if (entry.objectUrl) URL.revokeObjectURL(entry.objectUrl);
      this.entries.delete(url);
    }
    for (const url of this.ahead) {
      if (!this.entries.has(url)) {
        this.entries.set(url, { state: "waiting", objectUrl: null, size: 0, needs: 0 });
      }
    }
    this.next();
  }

  /** Bytes held, or reserved by the download under way, for the items ahead. */
  get aheadBytes() {
    return this.ahead.reduce((sum, url) => sum + (this.entries.get(url)?.size || 0), 0);
  }

  /** Start the first waiting download, unless one is under way or it waits for room. */
  next() {
    if (this.loading) return;
    const url = this.ahead.find((each) => this.entries.get(each).state === "waiting");
    if (!url) return;
    const entry = this.entries.get(url);
    if (entry.needs > this.budgetBytes - this.aheadBytes) return; // until an item is shown
    this.loading = this.download(url, entry).finally(() => {
      this.loading = null;
      this.next();
    });
  }

  /** Whether `entry` may hold `bytes`; if not, it waits for room, or streams when shown
   * if the whole budget is too small for it. */
  reserve(entry, bytes) {
    const others = this.aheadBytes - entry.size;
    if (bytes <= this.budgetBytes - others) {
      entry.size = Math.max(entry.size, bytes);
      return true;
    }
    Object.assign(entry, { size: 0, needs: bytes });
    entry.state = bytes > this.budgetBytes ? "streams" : "waiting";
    return false;
  }

  async download(url, entry) {
    const wanted = () => this.entries.get(url) === entry && entry.state === "loading";
    entry.state = "loading";
    for (let delay = RETRY_FIRST_MS; wanted(); ) {
      const controller = new AbortController();
      entry.controller = controller;
      try {
        const response = await fetch(url, { credentials: "same-origin", signal: controller.signal });
        if (!response.ok || !response.body) {
          entry.state = "streams"; // gone or not ready: the page falls back to the URL
          return;
        }
        // The server says the size first (Content-Length): a file that cannot fit is not
        // read; one whose size is not said is counted as it comes.
        const declared = Number(response.headers.get("Content-Length")) || 0;
        const blob = declared
          ? this.reserve(entry, declared) && (await response.blob())
          : await this.readWithin(response, entry);
        if (!blob || !wanted()) {
          controller.abort();
          return; // over the budget, or let go of meanwhile
        }
        entry.objectUrl = URL.createObjectURL(blob);
        entry.state = "held";
        this.onChange();
        return;
      } catch {
        if (!wanted()) return; // let go of meanwhile (the abort ends the fetch)
        entry.size = 0;
        await waitForRetry(delay); // offline: again when the connection is back
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      } finally {
        entry.controller = null;
      }
    }
  }

  /** The body of a response that does not say its size, read while it fits the budget;
   * null when it does not. */
  async readWithin(response, entry) {
    const reader = response.body.getReader();
    const chunks = [];
    for (let size = 0; ; ) {
      const { done, value } = await reader.read();
      if (done) return new Blob(chunks, { type: response.headers.get("Content-Type") || "" });
      size += value.byteLength;
      if (!this.reserve(entry, size)) return null;
      chunks.push(value);
    }
  }

  /** The downloaded copy of `url`, or `url` itself while it is not downloaded. */
  source(url) {
    return (url && this.entries.get(url)?.objectUrl) || url;
  }

  /** Whether every one of `urls` is downloaded. */
  has(urls) {
    return urls.filter(Boolean).every((url) => this.entries.get(url)?.objectUrl);
  }
}

/** The URLs an item's media need: each video, and its poster. */
export function mediaUrls(item) {
  return item.media.flatMap((media) => [media.video_url, media.poster_url]).filter(Boolean);
}
