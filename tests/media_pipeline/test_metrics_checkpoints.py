"""Checkpoint metrics through the production loader, on tiny random checkpoints written
here the way real releases are laid out. Oracles: transformers' own from_pretrained and
PIL-based CLIP image processor, the VBench formula written out in Python, frames decoded
by the ffmpeg command line, checksums computed with hashlib."""

import os
import shutil

import numpy as np
import pytest
import torch
from PIL import Image

from media_pipeline.metrics import preprocess
from media_pipeline.metrics.registry import CLIP_DIR, DINO_DIR
from media_pipeline.metrics.scoring import score_video
from tests.media_pipeline.metrics_fixtures import (
    ffmpeg_frames,
    make_clip,
    planar,
    tiny_weights,
)

PROMPT = "a person waves hand"


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    return tiny_weights(tmp_path_factory.mktemp("weights"))


@pytest.fixture(scope="module")
def clip_video(tmp_path_factory):
    # 20 frames: the 8 uniform frames are 0, 3, 5, 8, 11, 14, 16, 19
    return make_clip(tmp_path_factory.mktemp("ck") / "wave.mp4", size="80x60", rate=10, frames=20)


@pytest.fixture(scope="module")
def dino_video(tmp_path_factory):
    # shortest side already 224: VBench's resize leaves it as it is
    return make_clip(tmp_path_factory.mktemp("dk") / "dino.mp4", size="256x224", rate=8, frames=6)


def test_nothing_can_reach_a_hub():
    import media_pipeline.metrics.weights  # noqa: F401

    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_clip_preprocessing_matches_the_pil_clip_processor():
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    rgb = np.random.default_rng(3).integers(0, 256, size=(1, 90, 160, 3), dtype=np.uint8)
    rgb = np.asarray(Image.fromarray(rgb[0]).resize((40, 24))).repeat(4, 0).repeat(4, 1)[None]
    ours = preprocess.clip_pixels(planar(rgb), image_size=224)
    tall = Image.fromarray(rgb[0]).resize((round(160 * 520 / 96), 520), Image.BICUBIC)
    processor = CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size=224)
    reference = processor(images=[tall], return_tensors="pt")["pixel_values"]
    assert ours.shape == reference.shape == (1, 3, 224, 224)
    # torch's antialiased bicubic and PIL's differ by an 8-bit step here and there
    assert (ours - reference).abs().mean() < 0.01
    assert (ours - reference).abs().max() < 0.1


def test_dino_resize_is_half_pixel_bilinear_without_antialiasing():
    image = np.random.default_rng(4).integers(0, 256, size=(1, 6, 9, 3)).astype(np.float64)
    ours = preprocess.dino_resize(planar(image), side=4).numpy()  # -> 4 x 6
    assert ours.shape == (1, 3, 4, 6)

    def taps(out: int, size: int):
        src = np.clip((np.arange(out) + 0.5) * size / out - 0.5, 0, None)
        low = np.floor(src).astype(int)
        return low, np.minimum(low + 1, size - 1), src - low

    y0, y1, wy = taps(4, 6)
    x0, x1, wx = taps(6, 9)
    im = image[0]
    top = im[y0][:, x0] * (1 - wx)[None, :, None] + im[y0][:, x1] * wx[None, :, None]
    bottom = im[y1][:, x0] * (1 - wx)[None, :, None] + im[y1][:, x1] * wx[None, :, None]
    expected = np.round(top * (1 - wy)[:, None, None] + bottom * wy[:, None, None])
    np.testing.assert_array_equal(ours[0], expected.transpose(2, 0, 1))


def reference_clip_cosines(folder, video) -> np.ndarray:
    """transformers' own loading and PIL processing on ffmpeg-decoded frames."""
    import json

    from transformers import CLIPModel
    from transformers.models.clip.image_processing_pil_clip import CLIPImageProcessorPil

    frames = ffmpeg_frames(video, 80, 60).astype(np.uint8)
    picked = np.linspace(0, len(frames) - 1, 8).round().astype(int)
    images = [
        Image.fromarray(f).resize((round(80 * 520 / 60), 520), Image.BICUBIC)
        for f in frames[picked]
    ]
    pixels = CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size=32)(
        images=images, return_tensors="pt"
    )["pixel_values"]
    vocab = json.loads((folder / "vocab.json").read_text())
    ids = [vocab[t] for t in ("<|startoftext|>", "a</w>", "person</w>", "waves</w>", "hand</w>")]
    ids.append(vocab["<|endoftext|>"])
    model = CLIPModel.from_pretrained(folder, local_files_only=True).eval()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), pixel_values=pixels)
        return (out.logits_per_image[:, 0] / model.logit_scale.exp()).numpy()


def test_clip_score_equals_transformers_on_the_same_frames(weights, clip_video):
    folder, pins = weights
    # when
    report = score_video(
        path=clip_video,
        prompt=PROMPT,
        metric_names=["clip_cosine", "clip_score", "brightness"],
        weights_dir=folder,
        weight_sha256=pins,
        device="cpu",
    )
    # then
    cosines = reference_clip_cosines(folder / CLIP_DIR, clip_video)
    assert report.unavailable == {}
    assert report.values["clip_cosine"] == pytest.approx(cosines.mean(), abs=2e-3)
    assert report.values["clip_score"] == pytest.approx(
        (100 * np.maximum(cosines, 0)).mean(), abs=0.2
    )
    assert report.runtimes["clip_score"] > 0


def test_subject_consistency_equals_the_vbench_formula(weights, dino_video):
    from transformers import ViTModel

    folder, pins = weights
    report = score_video(
        path=dino_video,
        metric_names=["subject_consistency"],
        weights_dir=folder,
        weight_sha256=pins,
        batch_size=4,  # two chunks: features must join across them
    )
    frames = ffmpeg_frames(dino_video, 256, 224) / 255.0
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    pixels = torch.from_numpy(((frames - mean) / std).transpose(0, 3, 1, 2)).float()
    model = ViTModel.from_pretrained(folder / DINO_DIR, local_files_only=True).eval()
    with torch.no_grad():
        cls = model(pixel_values=pixels, interpolate_pos_encoding=True).last_hidden_state[:, 0]
    f = torch.nn.functional.normalize(cls, dim=-1)
    total = 0.0
    for t in range(1, len(f)):
        sim_previous = max(0.0, float(torch.dot(f[t - 1], f[t])))
        sim_first = max(0.0, float(torch.dot(f[0], f[t])))
        total += (sim_previous + sim_first) / 2
    assert report.values["subject_consistency"] == pytest.approx(total / (len(f) - 1), abs=1e-4)


def test_a_wrong_checksum_makes_the_metric_unavailable_and_the_rest_run(weights, clip_video):
    folder, pins = weights
    name = f"{CLIP_DIR}/model.safetensors"
    wrong = dict(pins, **{name: "0" * 64})
    report = score_video(
        path=clip_video,
        prompt=PROMPT,
        metric_names=["clip_score", "clip_cosine", "subject_consistency", "brightness"],
        weights_dir=folder,
        weight_sha256=wrong,
    )
    reason = f"sha256 mismatch for {name}: expected {'0' * 64}, file has {pins[name]}"
    assert report.unavailable == {"clip_score": reason, "clip_cosine": reason}
    assert sorted(report.values) == ["brightness", "subject_consistency"]


def test_a_missing_or_unpinned_file_makes_the_metric_unavailable(weights, clip_video, tmp_path):
    folder, pins = weights
    shutil.copytree(folder, tmp_path / "w")
    (tmp_path / "w" / CLIP_DIR / "merges.txt").unlink()
    missing = score_video(
        path=clip_video,
        prompt=PROMPT,
        metric_names=["clip_score", "subject_consistency"],
        weights_dir=tmp_path / "w",
        weight_sha256=pins,
    )
    assert missing.unavailable == {
        "clip_score": f"missing weight file {CLIP_DIR}/merges.txt under {tmp_path / 'w'}"
    }
    assert list(missing.values) == ["subject_consistency"]
    unpinned = score_video(
        path=clip_video, metric_names=["subject_consistency"], weights_dir=folder
    )
    assert unpinned.unavailable["subject_consistency"].startswith(
        f"no sha256 pinned for {DINO_DIR}/config.json"
    )
    nowhere = score_video(path=clip_video, prompt=PROMPT, metric_names=["clip_score"])
    assert nowhere.unavailable == {"clip_score": "no weights directory configured"}
    assert nowhere.values == {} and nowhere.frames_decoded == 0


def test_clip_without_a_prompt_is_unavailable(weights, clip_video):
    folder, pins = weights
    report = score_video(
        path=clip_video,
        prompt="  ",
        metric_names=["clip_score"],
        weights_dir=folder,
        weight_sha256=pins,
    )
    assert report.unavailable == {"clip_score": "needs a prompt"}


def test_the_score_cli_loads_checkpoints_with_the_workers_pins(weights, clip_video):
    import json
    import subprocess
    import sys

    # given: the weights folder and its pins in the environment, as on a worker (before,
    # the command line read neither, and said every checkpoint metric was unpinned)
    folder, pins = weights
    env = {
        **os.environ,
        "MOSAIC_WEIGHTS_DIR": str(folder),
        "MOSAIC_WEIGHT_SHA256": ",".join(f"{name}={digest}" for name, digest in pins.items()),
    }
    # when
    result = subprocess.run(
        [sys.executable, "-m", "media_pipeline", "score", str(clip_video), "--prompt", PROMPT,
         "--metrics", "clip_score,subject_consistency", "--device", "cpu"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    # then: the values the library gives with the same weights and pins
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    direct = score_video(
        path=clip_video,
        prompt=PROMPT,
        metric_names=["clip_score", "subject_consistency"],
        weights_dir=folder,
        weight_sha256=pins,
    )
    assert body["unavailable"] == {}
    assert body["metrics"] == pytest.approx(direct.values, abs=1e-6)
