"""The browser rendition: H.264 High, yuv420p 8-bit, +faststart, native size and frame rate.

Raters must see each video exactly as generated, so nothing is scaled (but non-square
pixels, below) and no frame is dropped or duplicated:

- Frame timing: `-fps_mode passthrough` hands every decoded frame to the encoder with its
  own timestamp. Constant-rate sources keep their exact rate; variable-rate sources (GIFs
  with uneven delays, VFR recordings) keep every frame's presentation time, where `-r` or
  `-fps_mode cfr` would duplicate or drop frames to fit a grid. A constant-rate source is
  encoded on its rate's own grid (1/rate: its frames land exactly, whatever coarse time
  base its container used); a variable-rate one counts time in the source's time base,
  so no timestamp is rounded onto a grid.
- Size: libx264 in 4:2:0 needs even dimensions, and an H.264 crop window cannot remove
  an odd pixel in 4:2:0 (crop units are 2 pixels), so an odd width or height is padded by
  exactly one pixel on the right or bottom and the padding is recorded (`pad_right`,
  `pad_bottom`) for the player to hide. The pad pixel copies its neighbour
  (`fillborders=mode=smear`) instead of being black, because in 4:2:0 it shares a chroma
  sample with the last real column or row and black would bleed into it.
- Pixels: a source whose pixels are not square (a 720x576 PAL DV file whose pixels are
  64:45 wide) is scaled to square pixels at the size a player shows it (1024x576: the
  stored width times the sample aspect ratio, to an even number; `ProbeResult.width`) and
  tagged 1:1, as is its poster, so a page that sizes the video by its width and height
  shows it whole instead of letterboxed at a fraction of its size.
- Interlaced sources (`field_order` tt, bb, tb, bt: broadcast, DV) have their fields
  woven into whole frames (bwdif, a frame out per frame in), which a browser does not do:
  shown as stored, every moving edge combs.
- Colour: RGB sources (GIF, PNG-based) are converted with the BT.709 matrix and tagged
  BT.709, so browsers do not guess the matrix; HDR sources (PQ or HLG transfer) are
  tone-mapped to SDR BT.709 and tagged so, which browsers would otherwise show washed
  out; other YUV sources keep their samples as they are.
- Square pixels, woven fields and SDR are made by media_pipeline.ffmpeg.display, for
  the poster too.
- Timeline: the rendition starts at the video's first frame, whatever the container's
  other tracks do, and sound, where kept (AAC), is cut to the video's span, moved with
  it and filled with silence to its length, so an audio track that runs on does not make
  the rendition (and the rater's wait) longer and a track muxed with a delay stays in
  sync (media_pipeline.ffmpeg.timeline, which also places a segment's cut).
- Privacy of the design: container metadata (encoder, title, comments naming the model)
  is not copied, so a rater inspecting the file cannot learn the source model.
- Safety: output goes to a hidden temporary name in `out_dir` and is renamed into place
  after ffmpeg succeeded and the re-probe agrees with the source (size, frame count, first
  to last frame time, the first frame at 0: media_pipeline.ffmpeg.rendition_check), so a
  half-written rendition is never served and a good one is replaced only by a good one.
  A source replaced or rewritten between the probe and the end of the encode (its inode,
  size or time changed) fails the transcode: the rendition might show neither version.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import ffmpeg

from media_pipeline.ffmpeg.build import missing_filters
from media_pipeline.ffmpeg.demux import libav_path
from media_pipeline.ffmpeg.display import filters_needed, hdr_kind, shown
from media_pipeline.ffmpeg.errors import TranscodeFailed
from media_pipeline.ffmpeg.parts import hold_part, remove_stale_parts
from media_pipeline.ffmpeg.probe import ProbeResult, probe, sha256_file
from media_pipeline.ffmpeg.process import run_ffmpeg
from media_pipeline.ffmpeg.rendition_check import (
    check_rendition,
    reprobe_rendition,
    segment_source,
)
from media_pipeline.ffmpeg.timeline import Segment, audio_in, cut_of, video_in
from media_pipeline.ffmpeg.work import check_work

FFMPEG = "ffmpeg"
# The rendition's encoder settings; bench/transcode.py spells the same ones out by hand.
ENCODER = {
    "c:v": "libx264",
    "profile:v": "high",
    "pix_fmt": "yuv420p",
    "preset": "medium",
    "crf": 18,  # visually transparent for raters; AI clips are short, size matters little
    "movflags": "+faststart",  # moov before mdat: playback starts before the download ends
    "fps_mode": "passthrough",
}
AUDIO = {"c:a": "aac", "b:a": "160k"}
BT709_TAGS = {"colorspace": "bt709", "color_primaries": "bt709", "color_trc": "bt709"}
POSTER_QUALITY = 2  # mjpeg -q:v, 2 is the best useful quality
RGB_PREFIXES = ("rgb", "bgr", "argb", "abgr", "gbr", "pal8", "0rgb", "0bgr", "ya")


@dataclass(frozen=True)
class TranscodeResult:
    """A finished rendition. `width`/`height` are the rendition's (source + padding);
    the source's own shape is `source`. `fps`, `frames`, `duration` are re-probed from
    the rendition, `elapsed_s` is the wall time of the whole call."""

    source: ProbeResult
    output: str
    poster: str
    stem: str
    width: int
    height: int
    pad_right: int
    pad_bottom: int
    fps: float
    fps_exact: str
    frames: int
    duration: float
    has_audio: bool
    elapsed_s: float

    def as_dict(self) -> dict:
        data = asdict(self)
        data["source"] = self.source.as_dict()
        return data


def _is_rgb(pix_fmt: str) -> bool:
    return pix_fmt.startswith(RGB_PREFIXES)


def rendition_command(
    *,
    src: Path,
    source: ProbeResult,
    output: Path,
    poster: Path,
    keep_audio: bool,
    progress: bool = True,
    segment: Segment | None = None,
) -> list[str]:
    """The one ffmpeg command line that writes the rendition and the poster.

    One decode feeds two outputs: the H.264 rendition and the poster, the first frame at
    the size the source is shown at (JPEG, before any padding), so the poster costs no
    process.
    With a `segment`, only that part is decoded where the container has an index (input
    seeking, exact since ffmpeg re-encodes), else the source up to its end (`trim`; see
    media_pipeline.ffmpeg.timeline), and the poster is its frame at `poster_at`.
    """
    cut = cut_of(source, segment)
    stream = ffmpeg.input(libav_path(src), **cut.input_options)
    stored = stream["v:0"]
    video = first = shown(video_in(stored, cut), source)
    if video is not stored:
        # The frames as shown feed both outputs: a deinterlacer given the poster's frame
        # alone has no neighbour field to weave it with and passes it through combed.
        branches = video.split()
        video, first = branches[0], branches[1]
    pad_right, pad_bottom = source.width % 2, source.height % 2
    extra: dict = {}
    if hdr_kind(source):  # tone-mapped to BT.709 by `shown`
        extra = dict(BT709_TAGS)
    elif _is_rgb(source.pix_fmt):
        video = video.filter("scale", out_color_matrix="bt709", out_range="tv").filter(
            "format", "yuv444p"
        )
        extra = dict(BT709_TAGS)
    if pad_right or pad_bottom:
        video = video.filter(
            "pad", source.width + pad_right, source.height + pad_bottom, 0, 0
        ).filter("fillborders", right=pad_right, bottom=pad_bottom, mode="smear")
    streams = [video]
    if keep_audio and source.has_audio:
        # Cut to the video's span by filters (media_pipeline.ffmpeg.timeline): -shortest
        # does not cut it in ffmpeg 5.1 (the encoder's delay keeps the video stream open
        # until the input ends).
        streams.append(audio_in(stream["a:0"], cut))
        extra.update(AUDIO)
    else:
        extra["an"] = None
    options = {**ENCODER, **extra}
    if source.is_vfr and source.time_base:
        # ffmpeg 5.1's encoder time base under passthrough is 1/r_frame_rate: exact for a
        # constant rate (a source's coarse 1/1000 base would jitter its frames by a
        # millisecond), too coarse for a variable one (a VFR Matroska's timestamps collapse
        # onto its grid and the mp4 muxer aborts on "Non-monotonous DTS"). Named exactly:
        # `-1` ("the input's") does not reach the outputs of the -filter_complex graph that
        # padding and RGB conversion use. Video only: AAC keeps its sample-rate base.
        options["enc_time_base:v"] = source.time_base
    rendition = ffmpeg.output(
        *streams, libav_path(output), f="mp4", map_metadata=-1, map_chapters=-1, **options
    )
    # With `-frames:v 1` alone, ffmpeg 5.1 still feeds every later decoded frame into the
    # poster's filter graph (6 % more CPU over bench/transcode.py's clips); `trim` closes
    # that branch after the first frame.
    if segment is not None and segment.poster_at > 0:
        first = first.trim(start=segment.poster_at).setpts("PTS-STARTPTS")
    still = ffmpeg.output(
        first.trim(end_frame=1),
        libav_path(poster),
        f="image2",
        update=1,
        vframes=1,
        **{"q:v": POSTER_QUALITY},
    )
    global_args = ["-nostdin", "-hide_banner", "-v", "error", "-xerror"]
    if progress:
        global_args += ["-progress", "pipe:1", "-nostats"]
    return (
        ffmpeg.merge_outputs(rendition, still)
        .global_args(*global_args)
        .overwrite_output()
        .compile(cmd=FFMPEG)
    )


class _Progress:
    """Turns ffmpeg's `-progress` key=value lines into a monotone fraction below 1.0.

    fraction = max(out_time / duration, frame / frames): time is exact for CFR and VFR
    alike, the frame count helps where the container's duration is missing. 1.0 is kept
    for "the rendition is in place", so it is sent only after the rename.
    """

    def __init__(self, *, source: ProbeResult, callback: Callable[[float], None] | None):
        self.duration, self.frames, self.callback = source.duration, source.frames, callback
        self.last = 0.0

    def feed(self, line: str) -> None:
        if self.callback is None:
            return
        key, _, value = line.strip().partition("=")
        if not value.isdigit():
            return  # "N/A" before the first frame
        if key == "out_time_us" and self.duration > 0:
            fraction = int(value) / 1e6 / self.duration
        elif key == "frame" and self.frames > 0:
            fraction = int(value) / self.frames
        else:
            return
        fraction = min(0.99, fraction)
        if fraction > self.last:
            self.last = fraction
            self.callback(fraction)


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """What tells a file replaced or rewritten (device, inode, size, modification time);
    None when it is not there."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _check_stem(stem: str) -> str:
    if not stem or stem.startswith(".") or "/" in stem or "\\" in stem or "\0" in stem:
        raise ValueError(f"stem must be a plain file name, got {stem!r}")
    return stem


def _refuse_the_source(src: Path, *outputs: Path) -> None:
    """ValueError when an output would replace the source (by name, a link or a hard
    link): ``--stem`` naming it, or a source in ``--out`` named as its own checksum."""
    for output in outputs:
        if output.exists() and os.path.samefile(src, output):
            raise ValueError(
                f"{output} is the source video itself: the rendition would replace it "
                "(write into another folder, or give another --stem)"
            )


def transcode(
    *,
    src: Path | str,
    out_dir: Path | str,
    keep_audio: bool = False,
    on_progress: Callable[[float], None] | None = None,
    timeout_s: float | None = None,
    stem: str | None = None,
    around: tuple[float, float] | None = None,
    max_pixels: int | None = None,
) -> TranscodeResult:
    """Write `<stem>.mp4` (the rendition) and `<stem>.jpg` (the poster) into `out_dir`.

    `stem` defaults to the SHA-256 of the source bytes, so a re-run for the same content
    lands on the same names. Raises `NotAVideo`/`CorruptVideo` for bad input,
    `TranscodeFailed` when ffmpeg fails on input that probed fine, lacks a filter the
    source needs (zscale, for HDR) or the rendition does not match the source (all
    `MediaError`: final), `TranscodeTimeout` after `timeout_s` and
    `DiskFull` when ffmpeg cannot write (both `TransientMediaError`: worth a retry). On any
    error nothing new is left in `out_dir` and an earlier good rendition with the same
    stem is untouched. Part files of the stem that a killed run left behind are removed
    first; those of a run going on beside this one are kept. `on_progress` gets fractions
    in [0, 1], non-decreasing, the last one 1.0 once the files are in place. `around` =
    (keyframe, seconds) cuts `Segment.around` the keyframe, placed once the source's
    length is known (a keyframe past the end: `TranscodeFailed` naming it): the
    rendition is that part of the source, the poster its frame at the keyframe, and the
    result's `source` the segment's expectation. A video (or segment) of more than
    `max_pixels` pixels to encode (width x height x frames) is refused with `TooLarge`
    before ffmpeg starts.
    """
    started = time.monotonic()
    src, out_dir = Path(src), Path(out_dir)
    if stem is not None:
        _check_stem(stem)
        _refuse_the_source(src, out_dir / f"{stem}.mp4", out_dir / f"{stem}.jpg")
    # A segment needs the film's size, rate and length, not a count of all its packets
    # (a 15-minute AVA film is read once per person and keyframe otherwise).
    unchanged = _identity(src)  # the file probed must be the file encoded
    source = probe(src, count_packets=around is None)
    segment = None
    if around is not None:
        try:
            segment = Segment.around(keyframe=around[0], seconds=around[1], length=source.duration)
        except ValueError as exc:
            raise TranscodeFailed(f"cannot cut the segment: {exc}") from None
    check_work(
        source,
        name=src.name,
        max_pixels=max_pixels,
        seconds=segment.duration if segment is not None else None,
    )
    if missing := missing_filters(FFMPEG, filters_needed(source)):
        # Said before ffmpeg starts: its own message is a bare "No such filter".
        raise TranscodeFailed(
            f"transcode failed: {src.name} is HDR ({hdr_kind(source)}) and its tone mapping "
            f"to SDR needs ffmpeg's filter {' and '.join(missing)}, which this ffmpeg "
            f"({FFMPEG}) lacks: install an ffmpeg that has it (Debian's and Ubuntu's do), "
            "then process the video again"
        )
    if segment is not None:
        source = segment_source(source, segment)
    out_dir.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
    if stem is not None:
        remove_stale_parts(out_dir, stem)
        token = f"{stem}.{token}"
    tmp_output, tmp_poster = out_dir / f".{token}.part.mp4", out_dir / f".{token}.part.jpg"
    pad = (source.width % 2, source.height % 2)
    args = rendition_command(
        src=src,
        source=source,
        output=tmp_output,
        poster=tmp_poster,
        keep_audio=keep_audio,
        segment=segment,
    )
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The checksum is read while ffmpeg encodes: it costs no wall time.
        checksum = pool.submit(sha256_file, src) if stem is None else None
        lock = hold_part(tmp_output)
        try:
            progress = _Progress(source=source, callback=on_progress)
            run_ffmpeg(args, on_line=progress.feed, timeout_s=timeout_s)
            if _identity(src) != unchanged:
                raise TranscodeFailed(
                    f"transcode failed: {src.name} was replaced or changed while it was "
                    "being transcoded; nothing was kept"
                )
            rendition = reprobe_rendition(tmp_output)
            check_rendition(source, rendition, pad, frames_off=1 if segment else 0)
            if not tmp_poster.is_file() or tmp_poster.stat().st_size == 0:
                raise TranscodeFailed("transcode failed: ffmpeg wrote no poster frame")
            stem = stem if checksum is None else checksum.result()
            output, poster = out_dir / f"{stem}.mp4", out_dir / f"{stem}.jpg"
            _refuse_the_source(src, output, poster)  # a source named as its own checksum
            for path in (tmp_output, tmp_poster):
                _fsync(path)
            os.replace(tmp_poster, poster)
            os.replace(tmp_output, output)
        finally:
            try:
                for leftover in (tmp_output, tmp_poster):
                    with contextlib.suppress(FileNotFoundError):
                        leftover.unlink()
            finally:
                os.close(lock)  # whatever the clean-up met (EACCES, EIO): no leaked lock
    if on_progress:
        on_progress(1.0)
    return TranscodeResult(
        source=source,
        output=str(output),
        poster=str(poster),
        stem=stem,
        width=rendition.width,
        height=rendition.height,
        pad_right=pad[0],
        pad_bottom=pad[1],
        fps=rendition.fps,
        fps_exact=rendition.fps_exact,
        frames=rendition.frames,
        duration=rendition.duration,
        has_audio=rendition.has_audio,
        elapsed_s=round(time.monotonic() - started, 3),
    )
