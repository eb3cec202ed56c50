// The window the page holds (docs/rater-api.md, "The window"): the items the server sent
// that the page may answer without asking it again, the one on screen first, and their
// media downloaded ahead (rater_window.js), within the look-ahead's cap from the
// server's settings. Also the video element each widget plays, from its downloaded copy.

import { makeVideo } from "./rater_controls.js";
import { MediaStore, mediaUrls } from "./rater_window.js";
import { $, config } from "./rater_page.js";

// {items, ends, restSeconds, preload, kind, position, length}; items[0] is shown
export let win = null;

/** The server's next/ answer: its window replaces the page's (none without an item). */
export function takeWindow(body) {
  win = body.item
    ? {
        items: body.window?.length ? [...body.window] : [body.item],
        ends: body.window_ends || "end",
        restSeconds: body.rest_seconds || 0,
        preload: body.preload,
        kind: body.step,
        position: body.position,
        length: body.length,
      }
    : null;
  holdMedia();
}

// The look-ahead's cap (rater_window.js): items and bytes downloaded ahead of the one on
// screen, from the server's settings.
const media = new MediaStore({ onChange: () => showAhead(), budgetBytes: config.ahead.bytes });

/** `#rater[data-ahead]`: "downloaded/held" items of the window after the one on screen,
 * and `data-ahead-bytes` what they hold (for tests and support). */
function showAhead() {
  const ahead = win ? win.items.slice(1) : [];
  const ready = ahead.filter((item) => media.has(mediaUrls(item))).length;
  const rater = $("#rater");
  rater.dataset.ahead = `${ready}/${ahead.length}`;
  rater.dataset.aheadBytes = String(media.aheadBytes);
}

export function holdMedia() {
  const [showing, ...ahead] = win ? win.items : [];
  if (win?.preload && ![showing, ...ahead].some((item) => item?.id === win.preload.id)) {
    ahead.push(win.preload);
  }
  media.keep({
    showing: showing ? mediaUrls(showing) : [],
    ahead: ahead.slice(0, config.ahead.items).flatMap(mediaUrls),
  });
  showAhead();
}

/** The video element of a media entry, from its downloaded copy when there is one. */
export function takeVideo(entry) {
  const video = makeVideo({
    ...entry,
    video_url: media.source(entry.video_url),
    poster_url: media.source(entry.poster_url),
  });
  // Native size: never scaled. libx264's 4:2:0 needs even sides, so an odd one was padded
  // by a pixel on the right or bottom (media_pipeline.ffmpeg.transcode): the element takes
  // the rendition's own size, so that nothing is resampled, and the pad pixel is clipped.
  const padRight = (entry.width || 0) % 2;
  const padBottom = (entry.height || 0) % 2;
  if (entry.width) video.width = entry.width + padRight;
  if (entry.height) video.height = entry.height + padBottom;
  if (padRight || padBottom) video.style.clipPath = `inset(0 ${padRight}px ${padBottom}px 0)`;
  return video;
}
