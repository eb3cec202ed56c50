"""Sound and picture of sources whose tracks do not start together (MPEG-TS, a track muxed
with a delay): the rendition starts at the video's first frame, its sound is cut to the
video's span and stays in sync, both tracks from 0 to the video's end. A beep at a known
moment of the video is the sync mark; PyAV decoding the rendition is the oracle."""

import subprocess
from pathlib import Path

import av
import numpy as np
import pytest

from media_pipeline.ffmpeg import TranscodeFailed, probe, timeline, transcode

RATE = 25  # frames a second; 2 s of video: 50 frames
BEEP_S = 0.2


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def source(path: Path, *, video_at: float, audio_at: float, audio_s: float, beep_at: float) -> Path:
    """2 s of video from `video_at` s and `audio_s` s of silence from `audio_at` s, with a
    440 Hz beep `beep_at` s into the video; a keyframe every second."""
    start = beep_at + video_at - audio_at  # the beep, on the sound's own clock
    beep = f"0.5*sin(2*PI*440*t)*between(t,{start:g},{start + BEEP_S:g})"
    picture = f"testsrc2=size=160x120:rate={RATE}:duration=2"
    sound = f"aevalsrc='{beep}':s=48000:d={audio_s:g}"
    ffmpeg(
        "-itsoffset", f"{video_at:g}", "-f", "lavfi", "-i", picture,
        "-itsoffset", f"{audio_at:g}", "-f", "lavfi", "-i", sound,
        "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "ultrafast", "-g", str(RATE),
        "-fps_mode", "passthrough", "-c:a", "aac", str(path),
    )  # fmt: skip
    return path


def mpeg_ts(path: Path) -> Path:
    """4 s of video in MPEG-TS, a keyframe every second, no sound."""
    ffmpeg(
        "-f", "lavfi", "-i", f"testsrc2=size=160x120:rate={RATE}:duration=4",
        "-c:v", "libx264", "-preset", "ultrafast", "-g", str(RATE), str(path),
    )  # fmt: skip
    return path


def tracks(path: Path) -> dict[str, float]:
    """Where each track of `path` starts and ends (s), and where its sound first passes
    half its loudest."""
    with av.open(str(path)) as container:
        video = [frame.time for frame in container.decode(video=0)]
    with av.open(str(path)) as container:
        frames = list(container.decode(audio=0))
    samples = np.concatenate([frame.to_ndarray()[0] for frame in frames])
    rate = frames[0].sample_rate
    audio_start = frames[0].time
    loud = np.flatnonzero(np.abs(samples) > 0.5 * np.abs(samples).max())
    return {
        "video_start": video[0],
        "video_end": video[-1] + 1 / RATE,
        "frames": len(video),
        "audio_start": round(audio_start, 4),
        "audio_end": round(audio_start + len(samples) / rate, 3),
        "beep": round(audio_start + loud[0] / rate, 3),
    }


def source_frames(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24").astype(np.int16) for f in container.decode(video=0)]


def nearest_frame(frame: np.ndarray, frames: list[np.ndarray]) -> int:
    return int(np.argmin([np.abs(frame - other).mean() for other in frames]))


@pytest.mark.parametrize(
    ("name", "video_at", "audio_at", "audio_s"),
    [
        ("together.ts", 0, 0, 4),  # MPEG-TS: the video a few ms after the sound
        ("video_late.mp4", 1.4, 0, 4),  # a video track muxed 1.4 s after the sound
        ("video_late.ts", 1.4, 0, 4),
        ("audio_late.mp4", 0, 0.5, 1),  # sound from 0.5 s to 1.5 s of a 2 s video
    ],
)
def test_sound_is_cut_to_the_videos_span_in_sync_both_from_zero(
    tmp_path, name, video_at, audio_at, audio_s
):
    # given: a 2 s video whose tracks start apart, with a beep 0.8 s into the video
    src = source(tmp_path / name, video_at=video_at, audio_at=audio_at, audio_s=audio_s,
                 beep_at=0.8)  # fmt: skip
    assert probe(src).duration == 2.0
    # when
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r", keep_audio=True)
    # then: picture and sound from 0 to the video's end, the beep 0.8 s in (AAC's own
    # frame of delay aside)
    got = tracks(Path(result.output))
    assert got["video_start"] == 0 and got["frames"] == 50
    assert got["video_end"] == pytest.approx(2.0, abs=0.001)
    assert got["audio_start"] == pytest.approx(0, abs=0.001)
    assert got["audio_end"] == pytest.approx(2.0, abs=0.025)
    assert got["beep"] == pytest.approx(0.8, abs=0.01)
    assert (result.duration, result.frames) == (2.0, 50)


@pytest.mark.parametrize("name", ["video_late.mp4", "video_late.ts"])
def test_a_segment_is_cut_on_the_videos_clock_with_its_sound_in_sync(tmp_path, name):
    # given: the video 1.4 s after the sound, a beep 1.0 s into the video
    src = source(tmp_path / name, video_at=1.4, audio_at=0, audio_s=4, beep_at=1.0)
    # when: 1.2 s around the video's 1.0 s, i.e. its 0.4 s to 1.6 s
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r", keep_audio=True,
                       around=(1.0, 1.2))  # fmt: skip
    # then: the rendition starts on the video's frame at 0.4 s (its 11th), the beep 0.6 s
    # in, the sound as long as the picture
    rendition = Path(result.output)
    first = source_frames(rendition)[0]
    assert abs(nearest_frame(first, source_frames(src)) - 10) <= 1
    got = tracks(rendition)
    assert abs(got["frames"] - 30) <= 1
    assert got["audio_start"] == pytest.approx(0, abs=0.001)
    assert got["audio_end"] == pytest.approx(1.2, abs=0.025)
    assert got["beep"] == pytest.approx(0.6, abs=0.01)


def test_a_segment_of_an_mpeg_ts_holds_its_own_frames(tmp_path):
    # given: an MPEG-TS of 4 s with a keyframe every second: libav's seek in a TS lands
    # past the keyframe before 1.4 s, and the frames up to the next one (2 s) were lost
    src = mpeg_ts(tmp_path / "film.ts")
    # when: 1.2 s around 2.0 s, i.e. 1.4 s to 2.6 s
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r", around=(2.0, 1.2))
    # then: the frames from 1.4 s (the 36th) on, the first at 0, the poster at 2.0 s
    frames = source_frames(src)
    rendition = source_frames(Path(result.output))
    assert abs(len(rendition) - 30) <= 1
    assert abs(nearest_frame(rendition[0], frames) - 35) <= 1
    with av.open(result.output) as container:
        assert next(container.decode(video=0)).time == pytest.approx(0, abs=1 / RATE)
    (poster,) = source_frames(Path(result.poster))
    assert abs(nearest_frame(poster, frames) - 50) <= 1


def test_a_cut_whose_seek_missed_its_first_frames_is_refused(tmp_path, monkeypatch):
    # given: the TS above, sought into as if its container had an index
    src = mpeg_ts(tmp_path / "film.ts")
    monkeypatch.setattr(timeline, "INDEXED_CONTAINERS", {*timeline.INDEXED_CONTAINERS, "mpegts"})
    # when / then: the frames from 2.0 s on, placed from 0.6 s, are not kept as the segment
    with pytest.raises(TranscodeFailed, match=r"first frame at 0\.6 s, expected at 0"):
        transcode(src=src, out_dir=tmp_path / "out", stem="r", around=(2.0, 1.2))
    assert list((tmp_path / "out").iterdir()) == []


def test_an_mpeg_ts_cut_mid_gop_starts_at_its_first_keyframe_in_sync(tmp_path):
    # given: a TS recording cut a third of the way in (on a TS packet): its first video
    # frames refer to frames before the cut, so nothing shows them; the first that plays
    # is the keyframe at 2 s of the 4 s video, and a beep 2.5 s into the video
    whole = tmp_path / "whole.ts"
    picture = f"testsrc2=size=160x120:rate={RATE}:duration=4"
    sound = "aevalsrc='0.5*sin(2*PI*440*t)*between(t,2.5,2.7)':s=48000:d=4"
    ffmpeg(
        "-f", "lavfi", "-i", picture, "-f", "lavfi", "-i", sound, "-c:v", "libx264",
        "-preset", "ultrafast", "-g", str(RATE), "-c:a", "aac", str(whole),
    )  # fmt: skip
    data = whole.read_bytes()
    src = tmp_path / "cut.ts"
    src.write_bytes(data[len(data) // 188 // 3 * 188 :])
    # when
    source = probe(src)
    result = transcode(src=src, out_dir=tmp_path / "out", stem="r", keep_audio=True)
    # then: the 50 frames from the keyframe on, the sound with them, the beep 0.5 s in
    assert (source.frames, source.duration) == (50, 2.0)
    rendition = Path(result.output)
    assert nearest_frame(source_frames(rendition)[0], source_frames(whole)) == 50
    got = tracks(rendition)
    assert got["video_start"] == 0 and got["frames"] == 50
    assert got["audio_start"] == pytest.approx(0, abs=0.001)
    assert got["audio_end"] == pytest.approx(2.0, abs=0.025)
    assert got["beep"] == pytest.approx(0.5, abs=0.01)
