"""The URLs a rater's page loads a video and its poster from (by the video's public id)."""

from __future__ import annotations

import uuid
from functools import lru_cache

from django.urls import get_script_prefix, get_urlconf, reverse

_PLACEHOLDER = str(uuid.UUID(int=0))


@lru_cache(maxsize=16)
def _template(name: str, prefix: str, urlconf: str | None) -> str:
    return reverse(name, args=[_PLACEHOLDER])


def _url(name: str, public_id: str) -> str:
    """reverse(name, args=[public_id]), from a template reversed once per URL
    configuration (a window of items asks for many: reverse costs more than the rest)."""
    return _template(name, get_script_prefix(), get_urlconf()).replace(_PLACEHOLDER, public_id)


def media_urls(stimulus) -> dict:
    """A Stimulus (or anything with public_id and poster) as {id, video_url, poster_url}."""
    public_id = str(stimulus.public_id)
    return {
        "id": public_id,
        "video_url": _url("media-video", public_id),
        "poster_url": _url("media-poster", public_id) if stimulus.poster else "",
    }


def media_entry(stimulus) -> dict:
    """A video as an item's `media` entry: its URLs and native size (nothing else: not
    its role, condition or anything that could tell a golden video apart)."""
    return {**media_urls(stimulus), "width": stimulus.width, "height": stimulus.height}
