"""The ffmpeg core: probe and transcode files; no ORM, no Django."""

from media_pipeline.ffmpeg.errors import (
    CorruptVideo,
    DiskFull,
    MediaError,
    NotAVideo,
    TooLarge,
    TranscodeFailed,
    TranscodeTimeout,
    TransientMediaError,
)
from media_pipeline.ffmpeg.probe import ProbeResult, probe, sha256_file
from media_pipeline.ffmpeg.transcode import Segment, TranscodeResult, transcode
from media_pipeline.ffmpeg.work import check_work

__all__ = [
    "CorruptVideo",
    "DiskFull",
    "MediaError",
    "NotAVideo",
    "ProbeResult",
    "Segment",
    "TooLarge",
    "TranscodeFailed",
    "TranscodeResult",
    "TranscodeTimeout",
    "TransientMediaError",
    "check_work",
    "probe",
    "sha256_file",
    "transcode",
]
