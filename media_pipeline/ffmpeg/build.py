"""What the installed ffmpeg was built with: some filters the rendition needs come from
optional libraries (zscale, for HDR tone mapping, from libzimg), and an ffmpeg built
without one fails the transcode with no more than "No such filter". Asked once per
binary (`ffmpeg -filters`), and only for a source that needs such a filter."""

from __future__ import annotations

import functools
import subprocess
from collections.abc import Iterable

# Where each optional filter comes from, for the admin's message.
FILTER_LIBRARIES = {"zscale": "libzimg, --enable-libzimg"}
FILTER_FLAGS = set("TSC.")  # the columns before a name: timeline, slice threads, commands


@functools.cache
def available_filters(ffmpeg: str) -> frozenset[str] | None:
    """The names of the filters `ffmpeg` has; None where it cannot be asked (the
    transcode then fails with ffmpeg's own message)."""
    try:
        listing = subprocess.run(
            [ffmpeg, "-hide_banner", "-nostdin", "-filters"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = set()
    for line in listing.splitlines():
        # " TS. colorspace        V->V       Convert between colorspaces."
        parts = line.split()
        if len(parts) >= 3 and set(parts[0]) <= FILTER_FLAGS and parts[1] != "=":
            names.add(parts[1])
    return frozenset(names) or None


def missing_filters(ffmpeg: str, names: Iterable[str]) -> list[str]:
    """Those of `names` that `ffmpeg` lacks, each with the library it comes from."""
    available = available_filters(ffmpeg)
    if available is None:
        return []
    return [
        f"{name} ({FILTER_LIBRARIES[name]})" if name in FILTER_LIBRARIES else name
        for name in names
        if name not in available
    ]
