"""Errors of the ffmpeg core, worded for the admin who reads them in the job list."""


class MediaError(Exception):
    """The file cannot become a browser rendition: final, retrying will not help."""


class NotAVideo(MediaError):
    """Empty, not a media file at all, or a media file without a video stream."""


class CorruptVideo(MediaError):
    """A video container that cannot be decoded to the end (truncated, damaged)."""


class TooLarge(MediaError):
    """A video whose frames are larger than any H.264 level allows (no browser plays it)."""


class TranscodeFailed(MediaError):
    """ffmpeg stopped with an error on a file that probed fine."""


class TransientMediaError(Exception):
    """The machine, not the file, stopped the transcode: worth a retry."""


class TranscodeTimeout(TransientMediaError):
    """ffmpeg ran past its time limit: transient (a busy machine), worth a retry."""


class DiskFull(TransientMediaError):
    """ffmpeg could not write the rendition: no space left on the device (or quota)."""
