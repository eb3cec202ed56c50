"""The URLs a rater's page loads a video and its poster from (by the video's public id)."""

from __future__ import annotations

from django.urls import reverse


def media_urls(stimulus) -> dict:
    """A Stimulus (or anything with public_id and poster) as {id, video_url, poster_url}."""
    return {
        "id": str(stimulus.public_id),
        "video_url": reverse("media-video", args=[stimulus.public_id]),
        "poster_url": reverse("media-poster", args=[stimulus.public_id]) if stimulus.poster else "",
    }


def media_entry(stimulus) -> dict:
    """A video as an item's `media` entry: its URLs and native size (nothing else: not
    its role, condition or anything that could tell a golden video apart)."""
    return {**media_urls(stimulus), "width": stimulus.width, "height": stimulus.height}
