from pathlib import Path

import pytest

from media_pipeline.ffmpeg.synth import make_clip


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fault-clips")
    clip = make_clip(path=folder / "square.mp4", width=64, height=48, fps=8, seconds=1.0)
    return {"square.mp4": Path(clip)}
