"""Serving videos and posters behind opaque ids, with HTTP range requests.

The embedded server streams the file itself (206 Partial Content for a Range header,
so browsers seek and start at once); in production Django only checks access and
hands the file to nginx with X-Accel-Redirect (deploy/nginx.conf).
"""

from __future__ import annotations

import logging
import mimetypes
import os
import re
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from annotation.models import Stimulus
from annotation.selectors import stimulus_visible_to

logger = logging.getLogger(__name__)

RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
CHUNK = 256 * 1024


def _file_chunks(path: Path, start: int, length: int):
    with open(path, "rb") as handle:
        handle.seek(start)
        while length > 0:
            data = handle.read(min(CHUNK, length))
            if not data:
                return
            length -= len(data)
            yield data


def file_response(request, path: Path) -> HttpResponse:
    size = path.stat().st_size
    content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    accel = getattr(settings, "MOSAIC_MEDIA_ACCEL_REDIRECT", "")
    if accel:
        response = HttpResponse(content_type=content_type)
        relative = path.resolve().relative_to(Path(settings.MEDIA_ROOT).resolve())
        response["X-Accel-Redirect"] = accel + str(relative)
        return response
    header = request.headers.get("Range", "")
    match = RANGE.match(header.strip()) if header else None
    if match and (match.group(1) or match.group(2)):
        first, last = match.group(1), match.group(2)
        if first:
            start = int(first)
            end = min(int(last), size - 1) if last else size - 1
        else:  # a suffix range: the last N bytes
            start = max(0, size - int(last))
            end = size - 1
        if start >= size or start > end:
            response = HttpResponse(status=416)
            response["Content-Range"] = f"bytes */{size}"
            return response
        response = StreamingHttpResponse(
            _file_chunks(path, start, end - start + 1), status=206, content_type=content_type
        )
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
    else:
        response = FileResponse(open(path, "rb"), content_type=content_type)  # noqa: SIM115 (closed by Django)
        response["Content-Length"] = str(size)
    response["Accept-Ranges"] = "bytes"
    response["Cache-Control"] = "private, max-age=3600"
    return response


def _visible_stimulus(request, public_id: uuid.UUID) -> Stimulus:
    stimulus = get_object_or_404(Stimulus, public_id=public_id)
    if not stimulus_visible_to(user=request.user, stimulus=stimulus):
        logger.warning("user %s refused video %s", request.user.pk, public_id)
        raise Http404("no such video")  # the same answer as for an unknown id
    return stimulus


@require_GET
@login_required
def video(request, public_id: uuid.UUID):
    stimulus = _visible_stimulus(request, public_id)
    if stimulus.status != Stimulus.Status.READY or not stimulus.rendition:
        raise Http404("this video is not ready")
    path = Path(settings.MEDIA_ROOT) / stimulus.rendition.name
    if not os.path.isfile(path):
        raise Http404("this video is not ready")
    return file_response(request, path)


@require_GET
@login_required
def poster(request, public_id: uuid.UUID):
    stimulus = _visible_stimulus(request, public_id)
    path = Path(settings.MEDIA_ROOT) / stimulus.poster.name
    if not stimulus.poster or not os.path.isfile(path):
        raise Http404("no poster")
    return file_response(request, path)
