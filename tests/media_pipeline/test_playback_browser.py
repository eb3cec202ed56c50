"""Every clip shape, transcoded by the pipeline, plays in Chromium at its native size and
frame rate (what a rater's browser gets)."""

from pathlib import Path

import pytest

from media_pipeline.ffmpeg.transcode import transcode
from tests.media_pipeline.conftest import CLIPS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Plays the video to its end and records the media time of every frame Chromium presents.
PLAY = """async () => {
  const video = document.querySelector('video');
  if (video.readyState < 1) {
    await new Promise((loaded, failed) => {
      video.onloadedmetadata = loaded;
      video.onerror = () => failed(new Error('cannot play: ' + video.error.code));
    });
  }
  const times = [];
  const onFrame = (now, frame) => {
    times.push(frame.mediaTime);
    video.requestVideoFrameCallback(onFrame);
  };
  video.requestVideoFrameCallback(onFrame);
  await new Promise((ended) => { video.onended = ended; video.play(); });
  return {width: video.videoWidth, height: video.videoHeight, times};
}"""


@pytest.mark.parametrize("name,width,height,fps,vfr", [c[:4] + c[5:] for c in CLIPS])
def test_every_shape_plays_at_native_size_and_rate(
    browser,
    clips,
    tmp_path,
    name,
    width,
    height,
    fps,
    vfr,
):
    # given: the rendition the rater page serves, on a page of its own
    result = transcode(src=clips[name], out_dir=tmp_path, stem="rendition")
    page_file = tmp_path / "play.html"
    page_file.write_text(f'<video muted src="{Path(result.output).name}"></video>')
    page = browser.new_page()
    try:
        # when
        page.goto(page_file.as_uri())
        played = page.evaluate(PLAY)
    finally:
        page.close()
    # then: the source's pixels (one of padding where a side is odd) ...
    assert (played["width"], played["height"]) == (width + width % 2, height + height % 2)
    # ... and its frames, one frame period apart (the shortest step between two shown
    # frames; the browser may skip frames, never show them closer together)
    times = played["times"]
    assert len(times) >= 2
    if not vfr:
        steps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
        assert min(steps) == pytest.approx(1 / fps, rel=0.05)
