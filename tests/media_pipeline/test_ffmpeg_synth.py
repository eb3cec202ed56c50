"""The clip generator: exact shapes, containers by suffix, text only where a font exists."""

import pytest

from media_pipeline.ffmpeg import probe, synth


@pytest.mark.parametrize(
    ("name", "container", "codec"),
    [
        ("c.mp4", "mov,mp4,m4a,3gp,3g2,mj2", "h264"),
        ("c.mov", "mov,mp4,m4a,3gp,3g2,mj2", "h264"),
        ("c.webm", "matroska,webm", "vp9"),
        ("c.gif", "gif", "gif"),
    ],
)
def test_the_suffix_chooses_container_and_codec(tmp_path, name, container, codec):
    clip = synth.make_clip(path=tmp_path / name, width=65, height=33, fps=5, seconds=1.0)
    result = probe(clip.path)
    assert (result.container, result.codec) == (container, codec)
    assert (result.width, result.height, result.frames) == (65, 33, 5)


def test_vfr_clips_alternate_frame_durations(tmp_path):
    clip = synth.make_clip(
        path=tmp_path / "v.mp4", width=64, height=48, fps=30, seconds=1.0, vfr=True
    )
    result = probe(clip)
    # frames 0,1,3,4,...,27,28 of 30 kept: 20 frames, their average rate 19 intervals over
    # the 28/30 s from the first to the last (the mean interval's inverse)
    assert (result.frames, result.is_vfr, result.fps_exact) == (20, True, "285/14")
    assert result.frame_span == pytest.approx(28 / 30, abs=1e-6)


def test_text_is_skipped_and_said_when_no_font_exists(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "FONT_CANDIDATES", (tmp_path / "missing.ttf",))
    clip = synth.make_clip(
        path=tmp_path / "t.mp4", width=64, height=48, fps=5, seconds=0.4, text="jumping"
    )
    assert clip.text_drawn is False
    assert clip.note == "text not drawn: no font file found (install fonts-dejavu-core)"
    assert probe(clip).frames == 2


def test_text_is_drawn_with_a_debian_font(tmp_path):
    if synth.find_font() is None:
        pytest.skip("no font installed")
    plain = synth.make_clip(path=tmp_path / "p.mp4", width=64, height=48, fps=5, seconds=0.2)
    texted = synth.make_clip(
        path=tmp_path / "t.mp4",
        width=64,
        height=48,
        fps=5,
        seconds=0.2,
        text="jumping: 100% 'quoted'",
    )
    assert (plain.text_drawn, texted.text_drawn, texted.note) == (False, True, "")
    assert plain.path.read_bytes() != texted.path.read_bytes()


def test_an_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unsupported clip type '.avi'"):
        synth.make_clip(path=tmp_path / "c.avi", width=64, height=48, fps=5, seconds=0.2)
