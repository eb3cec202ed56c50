// The offline window's media: the videos and posters of the items the page holds ahead
// (docs/rater-api.md, "The window"), downloaded in full, one at a time in the order they
// will be needed, and kept as blobs, so the next video starts at once after an answer,
// with or without a connection. A download cut by a lost connection starts again when
// the browser is back online. No DOM here.

import { RETRY_FIRST_MS, RETRY_MAX_MS, waitForRetry } from "./rater_queue.js";

export class MediaStore {
  /** `onChange()` is called whenever a download completes. */
  constructor({ onChange = () => {} } = {}) {
    this.onChange = onChange;
    this.entries = new Map(); // URL -> {objectUrl, size}
    this.chain = Promise.resolve();
  }

  /** Keep exactly these URLs (in the order they will be needed): download the new
   * ones, let go of the others. */
  keep(urls) {
    const wanted = new Set(urls.filter(Boolean));
    for (const [url, entry] of this.entries) {
      if (wanted.has(url)) continue;
      if (entry.objectUrl) URL.revokeObjectURL(entry.objectUrl);
      this.entries.delete(url);
    }
    for (const url of wanted) {
      if (!this.entries.has(url)) this.download(url);
    }
  }

  download(url) {
    const entry = { objectUrl: null, size: 0 };
    this.entries.set(url, entry);
    this.chain = this.chain.then(async () => {
      for (let delay = RETRY_FIRST_MS; this.entries.get(url) === entry; ) {
        try {
          const response = await fetch(url, { credentials: "same-origin" });
          if (!response.ok) return; // gone or not ready: the page falls back to the URL
          const blob = await response.blob();
          if (this.entries.get(url) !== entry) return; // let go of meanwhile
          entry.size = blob.size;
          entry.objectUrl = URL.createObjectURL(blob);
          this.onChange();
          return;
        } catch {
          await waitForRetry(delay); // offline: again when the connection is back
          delay = Math.min(delay * 2, RETRY_MAX_MS);
        }
      }
    });
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
