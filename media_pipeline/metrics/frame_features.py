"""The per-frame features of one video's content metrics, each computed once per frame.

Content metrics read features (registry.FEATURES): si and si_p910 both read a frame's SI,
ti and ti_p910 its TI. A feature is computed once for a frame whichever metrics read it,
in one of two ways:
- dense: some selected metric reads it on every frame (P.910's SI/TI). It is
  computed over every frame of each decoded chunk, and the metrics that read it at
  every k-th frame only take those frames' values;
- sparse: only every-k-th metrics read it. It is computed on those frames alone (and, for
  frame pairs, the frame just before each), gathered from the chunks into batches of
  `batch_size` frames. A decoded chunk holds `batch_size` wanted frames; when every frame
  is wanted, only one in k of them is sampled, and computing per chunk would call each
  sparse feature on a fraction of a frame at a time, where the calls' own cost outweighed
  the arithmetic (bench/metrics.py).
A batch that runs out of memory is computed again in halves (`FrameBatches`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from media_pipeline.metrics.batching import FrameBatches
from media_pipeline.metrics.content import LumaRange
from media_pipeline.metrics.decode import DecodedChunk
from media_pipeline.metrics.registry import FEATURES, Feature, Metric, take_rows


@dataclass
class _Gathered:
    """Sampled frames of one size and luma range waiting for a batch: luma (and, with
    its numbers, the pairs' current and previous frames) and RGB."""

    luma_range: LumaRange | None = None
    shape: tuple[int, ...] = ()
    luma: list[torch.Tensor] = field(default_factory=list)
    luma_index: list[np.ndarray] = field(default_factory=list)
    current: list[torch.Tensor] = field(default_factory=list)
    previous: list[torch.Tensor] = field(default_factory=list)
    pair_index: list[np.ndarray] = field(default_factory=list)
    rgb: list[torch.Tensor] = field(default_factory=list)
    rgb_index: list[np.ndarray] = field(default_factory=list)

    @property
    def frames(self) -> int:
        kinds = (self.luma_index, self.pair_index, self.rgb_index)
        return max(sum(len(i) for i in index) for index in kinds)


class FrameFeatures:
    """Feed the decoded chunks of one video in order (`feed`), then read each content
    metric's per-frame values (`values`). `batches` sets the frames per batch, `clock` times
    each feature by its name."""

    def __init__(
        self, metrics: list[Metric], *, batches: FrameBatches, every_kth: int, clock
    ) -> None:
        wanted = dict.fromkeys(m.feature for m in metrics if m.feature)
        every_frame = {m.feature for m in metrics if m.feature and m.sampling.all_frames}
        self.dense = [FEATURES[name] for name in wanted if name in every_frame]
        self.sparse = [FEATURES[name] for name in wanted if name not in every_frame]
        self.sparse_reads = {f.reads for f in self.sparse}
        self.batches, self.every_kth, self.clock = batches, every_kth, clock
        self._index: dict[str, list[np.ndarray]] = {name: [] for name in wanted}
        self._values: dict[str, list[torch.Tensor]] = {name: [] for name in wanted}
        self._gathered = _Gathered()
        self._last: tuple[torch.Tensor, int, LumaRange] | None = None  # the last luma frame

    def feed(self, decoded: DecodedChunk, *, luma: torch.Tensor, rgb: torch.Tensor) -> None:
        """One decoded chunk, its luma and RGB already on the compute device."""
        previous = self._previous(decoded, luma)
        for feature in self.dense:
            self._dense(feature, decoded, luma, rgb, previous)
        if self.sparse:
            self._gather(decoded, luma, rgb, previous)
        self._last = (luma[-1], int(decoded.index[-1]), decoded.luma_range)

    def values(self, metric: Metric) -> torch.Tensor:
        """The metric's per-frame values in frame order (every frame's, or the every-k-th
        frames' for a metric that samples those), once the video's last chunk is fed and
        `flush` has computed what was still gathered."""
        name = metric.feature
        if not self._values[name]:
            return torch.zeros(0)
        values = torch.cat(self._values[name])
        if metric.sampling.all_frames or FEATURES[name] in self.sparse:
            return values
        index = np.concatenate(self._index[name])
        return take_rows(values, np.flatnonzero(index % self.every_kth == 0))

    def _previous(self, decoded: DecodedChunk, luma: torch.Tensor) -> torch.Tensor | None:
        """The frame just before the chunk's first, if the previous chunk ended with it."""
        if self._last is None:
            return None
        frame, index, luma_range = self._last
        follows = index == decoded.index[0] - 1 and luma_range == decoded.luma_range
        return frame if follows and frame.shape == luma.shape[1:] else None

    def _dense(self, feature: Feature, decoded, luma, rgb, previous) -> None:
        """Every frame of the chunk: a dense feature's metric reads every frame, so the
        chunk holds consecutive frames."""
        luma_range = decoded.luma_range
        if feature.reads == "luma":
            index, values = decoded.index, self._timed(feature, luma, luma_range)
        elif feature.reads == "pairs":
            index = decoded.index
            if previous is not None:
                luma = torch.cat([previous.unsqueeze(0), luma])
            else:
                index = index[1:]
            values = self._timed(feature, luma[1:], luma[:-1], luma_range)
        else:
            index, values = decoded.rgb_index, self._timed(feature, rgb)
        self._add(feature, index, values)

    def _gather(self, decoded: DecodedChunk, luma, rgb, previous) -> None:
        """Keeps (copies of) the chunk's every-k-th frames for the sparse features, and
        computes them once a batch is gathered."""
        gathered, k, index = self._batch_for(decoded, luma), self.every_kth, decoded.index
        rows = np.flatnonzero(index % k == 0)
        if "luma" in self.sparse_reads and len(rows):
            gathered.luma.append(take_rows(luma, rows).clone())
            gathered.luma_index.append(index[rows])
        if "pairs" in self.sparse_reads:
            for row in rows:
                if row > 0 and index[row - 1] == index[row] - 1:
                    before = luma[row - 1]
                elif row == 0 and previous is not None:
                    before = previous
                else:
                    continue  # the first frame, or its previous frame was not decoded
                gathered.current.append(luma[row].clone())
                gathered.previous.append(before.clone())
                gathered.pair_index.append(index[row : row + 1])
        if "rgb" in self.sparse_reads:
            rgb_rows = np.flatnonzero(decoded.rgb_index % k == 0)
            if len(rgb_rows):
                gathered.rgb.append(take_rows(rgb, rgb_rows).clone())
                gathered.rgb_index.append(decoded.rgb_index[rgb_rows])
        if gathered.frames >= self.batches.size:
            self.flush()

    def _batch_for(self, decoded: DecodedChunk, luma: torch.Tensor) -> _Gathered:
        """The batch the chunk's sampled frames join: a batch holds frames of one size and
        range, so a change mid-stream computes what was gathered before it first."""
        gathered = self._gathered
        if gathered.frames and (
            gathered.luma_range != decoded.luma_range or gathered.shape != luma.shape[1:]
        ):
            self.flush()
            gathered = self._gathered
        gathered.luma_range, gathered.shape = decoded.luma_range, luma.shape[1:]
        return gathered

    def flush(self) -> None:
        """Computes the sparse features of the frames gathered so far."""
        gathered = self._gathered
        if not gathered.frames:
            return
        luma_range = gathered.luma_range
        luma = torch.cat(gathered.luma) if gathered.luma else None
        pairs = None
        if gathered.current:
            pairs = (torch.stack(gathered.current), torch.stack(gathered.previous), luma_range)
        rgb = torch.cat(gathered.rgb) if gathered.rgb else None
        for feature in self.sparse:
            if feature.reads == "luma" and luma is not None:
                values = self._timed(feature, luma, luma_range)
                self._add(feature, np.concatenate(gathered.luma_index), values)
            elif feature.reads == "pairs" and pairs is not None:
                values = self._timed(feature, *pairs)
                self._add(feature, np.concatenate(gathered.pair_index), values)
            elif feature.reads == "rgb" and rgb is not None:
                values = self._timed(feature, rgb)
                self._add(feature, np.concatenate(gathered.rgb_index), values)
        self._gathered = _Gathered()

    def _timed(self, feature: Feature, *args) -> torch.Tensor:
        return self.clock.timed(feature.name, self.batches.compute, feature.compute, *args)

    def _add(self, feature: Feature, index: np.ndarray, values: torch.Tensor) -> None:
        self._index[feature.name].append(np.asarray(index))
        self._values[feature.name].append(values)
