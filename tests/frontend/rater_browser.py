"""Driving the rater page the way a rater does: through the marketplace link and the UI."""

from __future__ import annotations

from collections.abc import Callable

from annotation.models import Stimulus
from tests.annotation.rater_fixtures import TinyStudy

DIMENSIONS = ("subject", "completeness", "interaction")


def entry_url(live_server, tiny: TinyStudy, pid: str, **extra: str) -> str:
    query = {"token": tiny.study.entry_token, "PROLIFIC_PID": pid, **extra}
    return f"{live_server.url}/r/{tiny.study.slug}/?" + "&".join(
        f"{k}={v}" for k, v in query.items()
    )


def enter(page, live_server, tiny: TinyStudy, pid: str = "P1") -> None:
    page.goto(entry_url(live_server, tiny, pid, STUDY_ID="S1", SESSION_ID="X1"))
    wait_step(page, "consent", "tutorial", "rating", "break", "waiting", "message", "finished")


def wait_step(page, *steps: str) -> str:
    page.wait_for_function(
        "steps => steps.includes(document.querySelector('#rater')?.dataset.step)", arg=list(steps)
    )
    return page.locator("#rater").get_attribute("data-step")


def agree(page) -> None:
    page.click("#consent-accept")
    wait_step(page, "tutorial")


def finish_tutorial(page) -> None:
    page.locator(".tutorial-pair").first.wait_for()
    page.click("#tutorial-done")
    wait_step(page, "rating")


def current_item(page) -> str:
    """Wait until the shown video has played through once; its opaque id."""
    page.wait_for_selector("#step-rating[data-ready]:not([hidden])")
    return page.locator("#step-rating").get_attribute("data-item")


def set_sliders(page, value: float | dict) -> None:
    values = value if isinstance(value, dict) else dict.fromkeys(DIMENSIONS, value)
    for key, score in values.items():
        page.locator(f'#sliders input[data-dimension="{key}"]').fill(str(score))


def delivered(page) -> None:
    """Wait until the server has every answer the page took (the window lets the page go
    on before an answer is stored)."""
    page.wait_for_function("document.querySelector('#rater').dataset.unsent === '0'")


def rate(page, value: float | dict, *, wait_delivered: bool = True) -> str:
    """Rate the item on screen and wait until the page has moved past it (and, unless
    told otherwise, until the server has the answer)."""
    item = current_item(page)
    set_sliders(page, value)
    page.click("#next")
    page.wait_for_function(
        """item => document.querySelector('#rater').dataset.step !== 'rating'
                   || document.querySelector('#step-rating').dataset.item !== item""",
        arg=item,
    )
    if wait_delivered:
        delivered(page)
    return item


def is_golden(item: str) -> bool:
    return Stimulus.objects.get(public_id=item).role == Stimulus.Role.GOLDEN


def rate_until(page, value_of: Callable[[str], float], *stop: str) -> list[str]:
    """Rate every item shown, waiting out breaks, until one of the `stop` steps shows."""
    rated = []
    while True:
        step = wait_step(page, "rating", "break", *stop)
        if step in stop:
            return rated
        if step == "break":
            page.wait_for_function("document.querySelector('#rater').dataset.step !== 'break'")
            continue
        page.wait_for_selector("#step-rating[data-ready]:not([hidden])")
        item = page.locator("#step-rating").get_attribute("data-item")
        rated.append(rate(page, value_of(item)))


def qualify(page, value: float = 50.0) -> None:
    """Answer the two qualification items; 50 lies within 1.5 sigma of the experts' 50."""
    for _ in range(2):
        rate(page, value)


def onboard(page, live_server, tiny: TinyStudy, pid: str = "P1") -> None:
    enter(page, live_server, tiny, pid)
    agree(page)
    finish_tutorial(page)
    qualify(page)
    wait_step(page, "message")
    page.click("#message-continue")
    wait_step(page, "rating")
