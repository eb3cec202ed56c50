"""What a player does to a stored frame before it shows it, done once in the transcode:
square pixels, interlaced fields woven into whole frames, HDR brought to SDR. A browser
shows the rendition as it is stored (its page sizes it by width and height, and an HDR
signal shown as SDR looks washed out), so the rendition must already be what is seen.

The names are libav's (ffprobe's `field_order`, `color_transfer`, `color_primaries`,
`color_space`, `color_range`), from the numbers of libavutil/pixfmt.h and
libavcodec/codec_par.h, which are part of libav's stable interface.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ffmpeg.nodes import FilterableStream

    from media_pipeline.ffmpeg.probe import ProbeResult

FIELD_ORDERS = {0: "unknown", 1: "progressive", 2: "tt", 3: "bb", 4: "tb", 5: "bt"}
# Field order as coded, then as displayed (tb: top coded first, bottom shown first): the
# field shown first is what the deinterlacer's parity means.
TOP_FIELD_SHOWN_FIRST = {"tt": True, "bt": True, "bb": False, "tb": False}
TRANSFERS = {
    1: "bt709",
    4: "gamma22",
    5: "gamma28",
    6: "smpte170m",
    7: "smpte240m",
    8: "linear",
    13: "iec61966-2-1",
    14: "bt2020-10",
    15: "bt2020-12",
    16: "smpte2084",
    18: "arib-std-b67",
}
PRIMARIES = {1: "bt709", 4: "bt470m", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 9: "bt2020",
             11: "smpte431", 12: "smpte432"}  # fmt: skip
MATRICES = {1: "bt709", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 9: "bt2020nc",
            10: "bt2020c"}  # fmt: skip
RANGES = {1: "tv", 2: "pc"}
# Transfers of high dynamic range: PQ (HDR10, Dolby Vision's base) and HLG.
HDR_TRANSFERS = {"smpte2084": "PQ", "arib-std-b67": "HLG"}
# Tone mapping to SDR: the signal to linear light with 100 cd/m2 as SDR's white (npl),
# BT.2020 to BT.709 primaries, Hable's curve to fold the highlights into SDR's range,
# then BT.709's transfer and matrix, limited range. Hable keeps mid-tones close and
# rolls off highlights; desat=0 keeps the colours of bright areas.
SDR_WHITE_NITS = 100


def is_interlaced(source: ProbeResult) -> bool:
    return source.field_order in TOP_FIELD_SHOWN_FIRST


def hdr_kind(source: ProbeResult) -> str | None:
    """ "PQ" or "HLG" for a high dynamic range source, else None."""
    return HDR_TRANSFERS.get(source.color_transfer)


def filters_needed(source: ProbeResult) -> tuple[str, ...]:
    """The filters `shown` uses for `source` that an ffmpeg build may lack (zscale comes
    with libzimg, an optional library) or that a build may leave out."""
    return ("zscale", "tonemap") if hdr_kind(source) else ()


def shown(video: FilterableStream, source: ProbeResult) -> FilterableStream:
    """`video` as a player shows the source, in this order:

    - interlaced fields woven into whole frames (bwdif, one frame out per frame in, so
      frame count and times stay the source's), the field shown first as the stream
      says; frames of interlaced content shown as they are comb every moving edge;
    - an HDR source (PQ, HLG) tone-mapped to SDR BT.709 (zscale and tonemap);
      untagged primaries, matrix and range are taken as HDR's usual BT.2020, limited;
    - square pixels at `source.width` (the width shown, see ProbeResult); a ratio too
      near 1:1 to change the width is only retagged, not resampled.
    """
    if is_interlaced(source):
        parity = "tff" if TOP_FIELD_SHOWN_FIRST[source.field_order] else "bff"
        video = video.filter("bwdif", mode="send_frame", parity=parity, deint="all")
    if hdr_kind(source):
        video = _tone_mapped(video, source)
    if Fraction(source.sar) != 1:
        stored = (source.coded_width, source.coded_height)
        if source.rotation in (90, 270):
            stored = stored[::-1]
        if (source.width, source.height) != stored:
            video = video.filter("scale", source.width, source.height)
        video = video.filter("setsar", 1)
    return video


def _tone_mapped(video: FilterableStream, source: ProbeResult) -> FilterableStream:
    """An HDR `source` tone-mapped to SDR BT.709 (see SDR_WHITE_NITS).

    zimg refuses a chroma-subsampled frame of an odd width or height ("image dimensions
    must be divisible by subsampling factor"), which VP9 and AV1 allow in 4:2:0 and which
    the tone-mapped frame would be in 4:2:0: an odd-sized source goes through zscale in
    4:4:4 on both sides (swscale upsamples its chroma first); the rendition's padding to
    even sizes and 4:2:0 come after.
    """
    odd = source.coded_width % 2 or source.coded_height % 2
    if odd:
        video = video.filter("format", "yuv444p16le")
    return (
        video.filter(
            "zscale",
            tin=source.color_transfer,
            pin=source.color_primaries or "bt2020",
            min=source.color_matrix or "bt2020nc",
            rin=source.color_range or "tv",
            t="linear",
            npl=SDR_WHITE_NITS,
            p="bt709",
        )
        .filter("format", "gbrpf32le")
        .filter("tonemap", tonemap="hable", desat=0)
        .filter("zscale", t="bt709", m="bt709", r="tv")
        .filter("format", "yuv444p" if odd else "yuv420p")
    )
