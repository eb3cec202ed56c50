"""Serving a file from the media folder, with HTTP range requests (videos, posters, exports).

The embedded server streams the file itself (206 Partial Content for a Range header,
so browsers seek and start at once); in production Django only checks access and
hands the file to nginx with X-Accel-Redirect (deploy/nginx.conf), which then answers
the Range header and HEAD itself. HEAD is answered as GET is, after the same checks,
with the same status and headers and no body.

A file behind one URL never changes (a video's rendition, a poster, an export), so it
is sent with a strong ETag (size and modification time, as nginx makes it), its
Last-Modified and a long-lived private Cache-Control; If-None-Match and
If-Modified-Since are answered 304 (Django's get_conditional_response), and a Range
with an If-Range that no longer matches is ignored (RFC 9110, 13.1.5): the whole,
current file is sent. So the rater page's downloads ahead are cheap and survive a reload.

Ranges follow RFC 9110, 14: one byte range is served as 206; a Range header this
server does not understand or that is invalid (another unit, not numbers, a last byte
before the first) is ignored, as the RFC requires, and the whole file sent (200); so is
a request for several ranges, which the RFC allows a server to ignore (one range is all
a video element asks for, and multipart/byteranges is not worth its code here). Only a
valid range that starts at or past the end of the file is answered 416.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date, parse_http_date_safe

# One range-spec; range units are case-insensitive (RFC 9110, 14.1).
RANGE = re.compile(r"^bytes=(\d*)-(\d*)$", re.IGNORECASE | re.ASCII)
CHUNK = 256 * 1024
# Beyond any file: bounds with more digits are clamped to it (int() refuses > 4300 digits).
_FAR = 10**18


class UnsatisfiableRange(Exception):
    """A valid range that starts at or past the end of the file (416)."""


def _bound(digits: str) -> int:
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) < 19 else _FAR


def requested_range(header: str, *, size: int) -> tuple[int, int] | None:
    """The first and last byte (inclusive) a Range header asks for, or None for the
    whole file: no header, or one that is ignored (see the module docstring). A last
    byte past the end, or a suffix longer than the file, is cut to the file (RFC 9110,
    14.1.2). Raises UnsatisfiableRange for a valid range with no byte in the file."""
    match = RANGE.match(header.strip())
    if not match or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if not first:  # a suffix range: the last N bytes
        suffix = _bound(last)
        if suffix == 0 or size == 0:
            raise UnsatisfiableRange
        return max(0, size - suffix), size - 1
    start = _bound(first)
    if last and _bound(last) < start:
        return None  # a last byte before the first: invalid, so ignored
    if start >= size:
        raise UnsatisfiableRange
    return start, min(_bound(last), size - 1) if last else size - 1


def _file_chunks(path: Path, start: int, length: int) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        handle.seek(start)
        while length > 0:
            data = handle.read(min(CHUNK, length))
            if not data:
                return
            length -= len(data)
            yield data


CACHE_CONTROL = "private, max-age=31536000, immutable"


def _range_applies(request, *, etag: str, last_modified: int) -> bool:
    """Whether the Range header is to be served: no If-Range, or one that names the
    file as it is now, by its strong ETag or by its exact Last-Modified date."""
    if_range = request.headers.get("If-Range", "").strip()
    if not if_range:
        return True
    if if_range.startswith(('"', "W/")):
        return if_range == etag  # a strong comparison: a weak validator never matches
    return parse_http_date_safe(if_range) == last_modified


def _validators(response: HttpResponse, *, etag: str, last_modified: int) -> HttpResponse:
    response["ETag"] = etag
    response["Last-Modified"] = http_date(last_modified)
    response["Cache-Control"] = CACHE_CONTROL
    return response


def file_response(request, path: Path) -> HttpResponse:
    content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    accel = getattr(settings, "MOSAIC_MEDIA_ACCEL_REDIRECT", "")
    if accel:  # nginx answers the method, the validators and the Range header itself
        response = HttpResponse(content_type=content_type)
        relative = path.resolve().relative_to(Path(settings.MEDIA_ROOT).resolve())
        response["X-Accel-Redirect"] = accel + str(relative)
        return response
    stat = path.stat()
    size = stat.st_size
    etag = f'"{stat.st_mtime_ns:x}-{size:x}"'
    last_modified = int(stat.st_mtime)
    unchanged = get_conditional_response(request, etag=etag, last_modified=last_modified)
    if unchanged is not None:  # 304 Not Modified (or 412 for a failed If-Match)
        return _validators(unchanged, etag=etag, last_modified=last_modified)
    header = request.headers.get("Range", "")
    if not _range_applies(request, etag=etag, last_modified=last_modified):
        header = ""
    try:
        byte_range = requested_range(header, size=size)
    except UnsatisfiableRange:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response
    start, end = byte_range or (0, size - 1)
    length = end - start + 1
    # HEAD: the same response, without reading the file
    body = iter(()) if request.method == "HEAD" else _file_chunks(path, start, length)
    response = StreamingHttpResponse(
        body, status=200 if byte_range is None else 206, content_type=content_type
    )
    if byte_range is not None:
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Content-Length"] = str(length)
    response["Accept-Ranges"] = "bytes"
    return _validators(response, etag=etag, last_modified=last_modified)
