"""Local weight files, verified before use; nothing is ever downloaded.

A checkpoint metric reads only the files its registry entry declares, from the weights
directory the caller passes (settings.MOSAIC_WEIGHTS_DIR on a worker), and only after
each file's sha256 equals the pinned value. The pins for the real releases are not in
this repository (they are placeholders, `registry.UNPINNED`): whoever installs the
weights pins them (settings.MOSAIC_WEIGHT_SHA256 -> `weight_sha256`). A missing
directory, file or pin, or a wrong checksum, makes the metric unavailable with a reason;
the other metrics still run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from media_pipeline.metrics.registry import UNPINNED, Metric

# transformers / huggingface_hub must never reach a hub from a worker.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class WeightsUnavailable(Exception):
    """A checkpoint metric cannot run; the message says why."""


_digest_cache: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    """sha256 of a file, remembered per (path, size, mtime) so a worker hashes once."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _digest_cache:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _digest_cache[key] = digest.hexdigest()
    return _digest_cache[key]


def verified_files(
    metric: Metric, *, weights_dir: Path | None, pins: Mapping[str, str] | None = None
) -> dict[str, Path]:
    """{declared name: path} of the metric's weight files, each checked against its pin
    (`pins` overrides the registry's). Raises WeightsUnavailable with the reason."""
    if weights_dir is None:
        raise WeightsUnavailable("no weights directory configured")
    pins = pins or {}
    found = {}
    for weight in metric.weights:
        path = Path(weights_dir) / weight.name
        if not path.is_file():
            raise WeightsUnavailable(f"missing weight file {weight.name} under {weights_dir}")
        expected = pins.get(weight.name, weight.sha256).lower()
        if expected == UNPINNED:
            raise WeightsUnavailable(
                f"no sha256 pinned for {weight.name}: verify the release and pin it "
                "(MOSAIC_WEIGHT_SHA256)"
            )
        actual = sha256_of(path)
        if actual != expected:
            raise WeightsUnavailable(
                f"sha256 mismatch for {weight.name}: expected {expected}, file has {actual}"
            )
        found[weight.name] = path
    return found
