"""Fixtures of the rater API tests."""

import pytest

from annotation.api import rater as rater_api


@pytest.fixture(params=["fast", "drf"])
def path(request, monkeypatch) -> str:
    """Each test twice: with the fast path (annotation/api/fast.py), and without it."""
    if request.param == "drf":
        monkeypatch.setattr(rater_api, "fast_next", lambda request, slug: None)
        monkeypatch.setattr(rater_api, "fast_answer", lambda request, slug: None)
    return request.param
