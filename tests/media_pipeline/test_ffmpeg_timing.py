"""Sources whose container misstates what plays: VFR Matroska, WebM and GIF (a declared
rate that is a guess), MP4 trimmed by an edit list (a frame count that counts hidden
packets). ffprobe decoding every frame is the oracle."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from media_pipeline.ffmpeg import TranscodeFailed, probe, transcode
from tests.media_pipeline.test_ffmpeg import decoded_stream, ffprobe_json

# Ten frames 0.1 s apart, then ten 1/30 s apart: no single rate fits, and the first
# frames suggest one (10 fps) that the rest contradict.
VFR_PTS = "if(lt(N,10),N/10,1+(N-10)/30)/TB"
VFR_TIMES = [round(n / 10, 4) for n in range(10)] + [round(1 + n / 30, 4) for n in range(10)]
CODECS = {
    ".mp4": ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p"],
    ".webm": ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"],
    ".gif": [],
}


def frame_times(path: Path) -> list[float]:
    """Presentation times of the decoded video frames (what plays), from the first one."""
    frames = ffprobe_json(path, "-select_streams", "v:0", "-show_entries", "frame=pts_time")
    times = [float(frame["pts_time"]) for frame in frames["frames"]]
    return [round(t - times[0], 4) for t in times]


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def vfr_clip(path: Path, *, size: str = "160x120") -> Path:
    """A VFR clip; a Matroska one is remuxed from MP4, as recordings are (libav then
    guesses its r_frame_rate, 15 fps, from the first frames: a grid too coarse for the
    rest)."""
    width, height = size.split("x")
    encoded = path.with_suffix(".mp4") if path.suffix == ".mkv" else path
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-frames:v", "20",
        "-vf", f"scale={width}:{height},setpts='{VFR_PTS}'", "-fps_mode", "passthrough",
        *CODECS[encoded.suffix], str(encoded),
    )  # fmt: skip
    if encoded != path:
        ffmpeg("-i", str(encoded), "-c", "copy", str(path))
    return path


@pytest.mark.parametrize(
    ("name", "size"),
    [("vfr.mkv", "160x120"), ("odd.mkv", "97x73"), ("vfr.webm", "160x120"), ("vfr.gif", "96x72")],
)
def test_a_vfr_source_keeps_every_frame_at_its_own_time(tmp_path, name, size):
    # given: a variable-rate source (97x73 goes through the padding filter graph)
    src = vfr_clip(tmp_path / name, size=size)
    assert frame_times(src) == pytest.approx(VFR_TIMES, abs=0.005)  # ms, or 1/100 s in GIF
    # when
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r")
    # then: every frame, each at exactly the source's time (GIF counts in 1/100 s)
    assert frame_times(Path(result.output)) == frame_times(src)
    assert int(decoded_stream(Path(result.output))["nb_read_frames"]) == result.frames == 20
    # the stored rate is the frames' own: 19 intervals over 1.3 s (a declared one within
    # 0.5 % of it is kept), not the 30 fps the WebM declares
    source = result.source
    assert (source.frames, source.is_vfr) == (20, True)
    assert source.fps == pytest.approx(19 / 1.3, rel=0.005)
    assert source.frame_span == 1.3


@pytest.mark.parametrize(
    ("name", "codec", "audio"), [("a.webm", "libvpx-vp9", "libopus"), ("a.mkv", "libx264", "aac")]
)
def test_a_cfr_source_whose_audio_runs_longer_keeps_its_rate(tmp_path, name, codec, audio):
    # given: 2 s of 24 fps video beside 2.5 s of sound (the container lasts 2.5 s)
    src = tmp_path / name
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=24", "-f", "lavfi",
        "-i", "sine=frequency=440:duration=2.5", "-t", "2.5", "-frames:v", "48",
        "-c:v", codec, "-c:a", audio, str(src),
    )  # fmt: skip
    # when
    source = probe(src)
    # then
    assert (source.frames, source.is_vfr, source.fps) == (48, False, 24.0)


def test_probe_counts_the_frames_an_edit_list_shows(tmp_path):
    # given: a stream-copied trim, which keeps the packets from the keyframe before 1.5 s
    # and hides them with an edit list; the container still counts them
    long = tmp_path / "long.mp4"
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-t", "3", "-g", "10",
        "-c:v", "libx264", "-preset", "ultrafast", str(long),
    )  # fmt: skip
    trimmed = tmp_path / "editlist.mp4"
    ffmpeg("-ss", "1.5", "-i", str(long), "-c", "copy", str(trimmed))
    listed = decoded_stream(trimmed)
    assert int(listed["nb_read_frames"]) == 15
    # when
    source = probe(trimmed)
    result = transcode(src=trimmed, out_dir=tmp_path / "out", stem="r")
    # then: 15 frames, as decoded, in the source and the rendition alike
    assert (source.frames, source.fps, source.duration) == (15, 10.0, 1.5)
    assert result.frames == int(decoded_stream(Path(result.output))["nb_read_frames"]) == 15
    assert frame_times(Path(result.output)) == frame_times(trimmed)


def test_a_rendition_whose_frame_times_moved_is_refused(clips, tmp_path, monkeypatch):
    # given: a rendition that has every frame but, say, its timestamps squashed
    module = sys.modules["media_pipeline.ffmpeg.transcode"]
    real = module.reprobe_rendition

    def squashed(path):
        rendition = real(path)
        return dataclasses.replace(rendition, frame_span=rendition.frame_span * 0.9)

    monkeypatch.setattr(module, "reprobe_rendition", squashed)
    # when / then
    with pytest.raises(TranscodeFailed) as caught:
        transcode(src=clips["slow.mp4"], out_dir=tmp_path, stem="r")
    assert str(caught.value) == (
        "transcode failed: the rendition differs: first to last frame 1.575 s, in the source 1.75 s"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_cfr_source_keeps_its_exact_declared_rate(tmp_path):
    # given: NTSC's 30000/1001, which frames / duration only approximates
    ntsc = tmp_path / "ntsc.mp4"
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30000/1001", "-frames:v", "12",
        "-c:v", "libx264", "-preset", "ultrafast", str(ntsc),
    )  # fmt: skip
    # when
    source = probe(ntsc)
    # then
    assert (source.fps_exact, source.fps, source.is_vfr) == ("30000/1001", 29.97003, False)


@pytest.mark.parametrize(("name", "codec"), [("c.webm", "libvpx-vp9"), ("c.mkv", "libx264")])
def test_a_cfr_source_in_a_millisecond_time_base_keeps_its_exact_rate(tmp_path, name, codec):
    # given: 30 fps in a container counting milliseconds (frames at 0, 33, 67, 100... ms)
    src = tmp_path / name
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-frames:v", "30",
        "-c:v", codec, str(src),
    )  # fmt: skip
    # when
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r")
    # then: the rendition's frames are exactly 1/30 s apart, not 33/34 ms
    rendition = probe(Path(result.output))
    assert (rendition.fps_exact, rendition.frames, rendition.is_vfr) == ("30/1", 30, False)
    assert frame_times(Path(result.output)) == [round(n / 30, 4) for n in range(30)]


@pytest.mark.parametrize(
    ("name", "codec", "audio"),
    [("b.mp4", "libx264", "aac"), ("b.webm", "libvpx-vp9", "libopus"), ("b.mkv", "libx264", "aac")],
)
def test_sound_that_runs_on_after_the_video_is_cut_at_the_videos_end(tmp_path, name, codec, audio):
    # given: 1 s of video (25 frames) beside 3 s of sound
    src = tmp_path / name
    ffmpeg(
        "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1", "-f", "lavfi",
        "-i", "sine=frequency=440:duration=3", "-c:v", codec, "-c:a", audio, str(src),
    )  # fmt: skip
    assert float(ffprobe_json(src, "-show_format")["format"]["duration"]) >= 2.99
    # when
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r", keep_audio=True)
    # then: the video's length, its sound included (a Matroska video stored from 23 ms
    # on ends a frame later); every frame kept
    assert result.source.duration == 1.0
    streams = ffprobe_json(Path(result.output), "-show_format", "-show_streams")
    assert float(streams["format"]["duration"]) == pytest.approx(1.0, abs=0.041)
    (sound,) = [s for s in streams["streams"] if s["codec_type"] == "audio"]
    assert float(sound["duration"]) == pytest.approx(1.0, abs=0.03)
    assert (result.frames, result.duration, result.has_audio) == (25, 1.0, True)
