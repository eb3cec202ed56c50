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


# The page's videos do not play (play() resolves, nothing plays): an item stays where it
# is before its video has ended, as a longer video keeps it.
HOLD_PLAY = """() => {
    window.heldPlay = HTMLMediaElement.prototype.play;
    HTMLMediaElement.prototype.play = function () { return Promise.resolve(); };
}"""

# What the focus is on: [on the page's body, within the item, the item's region itself]
FOCUS = """() => {
    const active = document.activeElement;
    const item = document.querySelector('#widget > .widget');
    return [active === document.body, item.contains(active), active === item];
}"""


def record_writes(page, selector: str) -> Callable[[], list[str]]:
    """Keep each text written into the element from now on (a live region is read out at
    each write); the function returns them so far."""
    page.evaluate(
        """selector => {
            const node = document.querySelector(selector);
            const writes = (window.writes ??= {})[selector] = [];
            new MutationObserver((records) => records.forEach(() => writes.push(node.textContent)))
                .observe(node, {childList: true});
        }""",
        selector,
    )
    return lambda: page.evaluate("selector => window.writes[selector]", selector)


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


# The contrast ratio (WCAG 2: (L1 + 0.05) / (L2 + 0.05)) of an element's text against the
# first opaque background behind it, the opacities of it and its ancestors applied: what an
# audit's colour-contrast check measures, for the plain colours these pages use.
CONTRAST = """node => {
    const rgb = (text) => text.match(/[\\d.]+/g).map(Number);
    const luminance = ([r, g, b]) => {
        const linear = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
    };
    let opacity = 1, back = null;
    for (let at = node; at instanceof Element; at = at.parentElement) {
        const style = getComputedStyle(at);
        opacity *= Number(style.opacity);
        const [r, g, b, a = 1] = rgb(style.backgroundColor);
        if (!back && a === 1) back = [r, g, b];
    }
    back ??= [255, 255, 255];
    const [r, g, b, a = 1] = rgb(getComputedStyle(node).color);
    const shown = [r, g, b].map((c, i) => c * a * opacity + back[i] * (1 - a * opacity));
    const [light, dark] = [luminance(shown), luminance(back)].sort((x, y) => y - x);
    return (light + 0.05) / (dark + 0.05);
}"""


def contrast(locator) -> float:
    """The contrast ratio of the element's text (CONTRAST)."""
    return locator.evaluate(CONTRAST)


PHONE = {"width": 390, "height": 844}  # a phone held upright (iPhone 12-15's CSS size)


def fits_the_screen(page) -> None:
    """Nothing makes the page scroll sideways."""
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width}px wide"


def reachable(page, selector: str) -> None:
    """The control, scrolled into view, is inside the screen and is what a tap there hits
    (nothing sticky covers it)."""
    control = page.locator(selector)
    control.scroll_into_view_if_needed()
    box = control.bounding_box()
    screen = page.viewport_size
    assert box["x"] >= 0 and box["x"] + box["width"] <= screen["width"], box
    assert box["y"] >= 0 and box["y"] + box["height"] <= screen["height"], box
    hit = page.evaluate(
        """([x, y, selector]) => {
            const node = document.elementFromPoint(x, y);
            return Boolean(node && node.closest(selector));
        }""",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, selector],
    )
    assert hit, f"{selector} is covered"
