"""The rater-facing media views: videos and posters behind opaque ids, served only to
whoever may watch them now (annotation.selectors.stimulus_visible_to); the bytes go out
through config/file_serving.py (Range requests, nginx in production)."""

from __future__ import annotations

import logging
import os
import uuid
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_safe

from annotation.models import Stimulus
from annotation.selectors import stimulus_visible_to
from config.file_serving import file_response

logger = logging.getLogger(__name__)


def _visible_stimulus(request, public_id: uuid.UUID) -> Stimulus:
    stimulus = get_object_or_404(Stimulus, public_id=public_id)
    if not stimulus_visible_to(user=request.user, stimulus=stimulus):
        logger.warning("user %s refused video %s", request.user.pk, public_id)
        raise Http404("no such video")  # the same answer as for an unknown id
    return stimulus


@require_safe  # GET and HEAD
@login_required
def video(request, public_id: uuid.UUID):
    stimulus = _visible_stimulus(request, public_id)
    if stimulus.status != Stimulus.Status.READY or not stimulus.rendition:
        raise Http404("this video is not ready")
    path = Path(settings.MEDIA_ROOT) / stimulus.rendition.name
    if not os.path.isfile(path):
        raise Http404("this video is not ready")
    return file_response(request, path)


@require_safe  # GET and HEAD
@login_required
def poster(request, public_id: uuid.UUID):
    stimulus = _visible_stimulus(request, public_id)
    path = Path(settings.MEDIA_ROOT) / stimulus.poster.name
    if not stimulus.poster or not os.path.isfile(path):
        raise Http404("no poster")
    return file_response(request, path)
