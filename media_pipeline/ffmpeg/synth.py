"""Synthetic clips from ffmpeg's lavfi test sources, for tests, benchmarks and the demo study.

The container and codec follow the file suffix, as AI generators deliver them:
`.mp4` and `.mov` H.264 (4:2:0 for even sizes, 4:4:4 for odd ones, which 4:2:0 cannot
hold), `.webm` VP9, `.gif` palette GIF. Everything uses the fastest encoder settings: the
clips only have to be valid and have the requested shape.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import ffmpeg

FONT_CANDIDATES = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"),
)
CODECS = {
    ".mp4": {"c:v": "libx264", "preset": "ultrafast"},
    ".mov": {"c:v": "libx264", "preset": "ultrafast"},
    ".webm": {"c:v": "libvpx-vp9", "deadline": "realtime", "cpu-used": 8, "b:v": "300k"},
    ".gif": {},
}


@dataclass(frozen=True)
class SynthClip:
    """A generated clip; usable wherever a path is (`os.fspath`, `str`, `Path(clip)`).

    `text_drawn` is False when `text` was asked for but no font file was found (the
    clip is made without it rather than failing); `note` then says why.
    """

    path: Path
    width: int
    height: int
    fps: float
    seconds: float
    vfr: bool
    has_audio: bool
    text_drawn: bool
    note: str = ""

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return os.fspath(self.path)


def find_font() -> Path | None:
    return next((font for font in FONT_CANDIDATES if font.is_file()), None)


def _drawtext_safe(text: str) -> str:
    # drawtext parses ':' '\'' '%' and '\\' itself; labels need none of them.
    return "".join(ch for ch in text if ch not in "\\:'%{}")


def make_clip(
    *,
    path: Path | str,
    width: int,
    height: int,
    fps: float,
    seconds: float,
    text: str | None = None,
    pattern: str = "testsrc2",
    vfr: bool = False,
    audio: bool = False,
    shapes: tuple[tuple[float, float, float, float, str], ...] = (),
) -> SynthClip:
    """Write a clip of exactly `width` x `height` at `fps` for `seconds` to `path`.

    `shapes` are filled boxes drawn on every frame, each (x1, y1, x2, y2, colour) with
    corners as shares of the frame (the "people" of a propose-then-verify demo).

    `pattern` is a lavfi video source (testsrc2, smptebars, mandelbrot, ...). `vfr` drops
    every third frame but keeps the others' timestamps, so frame durations alternate
    (1/fps, 2/fps): a variable frame rate. `audio` adds a 440 Hz tone (not for GIF).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in CODECS:
        raise ValueError(f"unsupported clip type {suffix!r} (one of {', '.join(CODECS)})")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Generate at an even size, then scale to the exact one: some sources round odd sizes.
    even = f"{width + width % 2}x{height + height % 2}"
    video = ffmpeg.input(f"{pattern}=size={even}:rate={fps}", f="lavfi", t=seconds).video
    if even != f"{width}x{height}":
        # scale keeps the picture's shape by making the pixels a little off square
        # (64:65 at 65x33); the clip is meant to be its size in square pixels
        video = video.filter("scale", width, height).filter("setsar", 1)
    for x1, y1, x2, y2, colour in shapes:
        video = video.filter(
            "drawbox",
            x=round(x1 * width),
            y=round(y1 * height),
            w=round((x2 - x1) * width),
            h=round((y2 - y1) * height),
            color=colour,
            t="fill",
        )
    text_drawn, note = False, ""
    if text:
        font = find_font()
        if font is None:
            note = "text not drawn: no font file found (install fonts-dejavu-core)"
        else:
            video = video.filter(
                "drawtext",
                fontfile=str(font),
                text=_drawtext_safe(text),
                fontcolor="white",
                fontsize=max(8, height // 14),
                box=1,
                boxcolor="black@0.6",
                x="(w-text_w)/2",
                y="h-text_h-4",
            )
            text_drawn = True
    args = dict(CODECS[suffix])
    if suffix in (".mp4", ".mov"):
        args["pix_fmt"] = "yuv420p" if width % 2 == 0 and height % 2 == 0 else "yuv444p"
    if vfr:
        video = video.filter("select", "not(eq(mod(n,3),2))")
        args["fps_mode"] = "vfr"
    streams = [video]
    with_audio = audio and suffix != ".gif"
    if with_audio:
        tone = ffmpeg.input(f"sine=frequency=440:sample_rate=48000:duration={seconds}", f="lavfi")
        streams.append(tone.audio)
        args["c:a"] = "libopus" if suffix == ".webm" else "aac"
    (
        ffmpeg.output(*streams, str(path), **args)
        .global_args("-nostdin", "-v", "error")
        .overwrite_output()
        .run(capture_stdout=True, capture_stderr=True)
    )
    return SynthClip(
        path=path,
        width=width,
        height=height,
        fps=fps,
        seconds=seconds,
        vfr=vfr,
        has_audio=with_audio,
        text_drawn=text_drawn,
        note=note,
    )
