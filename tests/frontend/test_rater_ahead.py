"""The look-ahead's cap (rater_window.js, docs/rater-api.md "The window"): the page
downloads no more than MOSAIC_RATER_AHEAD_ITEMS items and MOSAIC_RATER_AHEAD_BYTES bytes
ahead of the item on screen, takes the next as items are shown, and lets a video larger
than the budget stream when it is shown."""

import pytest

from tests.frontend.rater_browser import current_item, onboard, rate
from tests.frontend.test_rater_rating import server_order

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The most bytes the page held ahead at any moment, from its data-ahead-bytes.
WATCH_AHEAD_BYTES = """
window.mostAheadBytes = 0;
document.addEventListener("DOMContentLoaded", () => {
  const rater = document.querySelector("#rater");
  new MutationObserver(() => {
    const bytes = Number(rater.dataset.aheadBytes || 0);
    window.mostAheadBytes = Math.max(window.mostAheadBytes, bytes);
  }).observe(rater, { attributes: true, attributeFilter: ["data-ahead-bytes"] });
});
"""


def ahead(page) -> tuple[str, int]:
    """(downloaded/held items after the one on screen, the bytes they hold)."""
    rater = page.locator("#rater")
    return rater.get_attribute("data-ahead"), int(rater.get_attribute("data-ahead-bytes"))


def settle(page, expected: str) -> None:
    """Wait until the look-ahead reads `expected` (downloads go in order, so a cap that
    holds leaves it there)."""
    page.wait_for_function(
        "expected => document.querySelector('#rater').dataset.ahead === expected", arg=expected
    )


def test_the_look_ahead_holds_no_more_bytes_than_its_budget(
    page, live_server, rater_study, clip, settings
):
    # given: room for two items' video and poster ahead, not for a third's video
    item_bytes = len(clip.video) + len(clip.poster)
    settings.MOSAIC_RATER_AHEAD_BYTES = budget = 2 * item_bytes + len(clip.video) - 1
    tiny = rater_study(rest_every=0, window_size=5)
    page.add_init_script(WATCH_AHEAD_BYTES)
    onboard(page, live_server, tiny)
    order = server_order()
    # then: of the four items after the one on screen, the first two are downloaded
    settle(page, "2/4")
    assert ahead(page) == ("2/4", 2 * item_bytes)
    # when: the rater answers; the next item is shown from its copy, whose bytes leave
    # the budget, so the one after the two held is downloaded now
    for shown in range(1, 4):
        rate(page, 40 + shown)
        assert current_item(page) == order[shown]
        assert page.locator("#stage video").get_attribute("src").startswith("blob:")
        settle(page, "2/4")
        assert ahead(page) == ("2/4", 2 * item_bytes)
    # then: never more than the budget at any moment
    assert 0 < page.evaluate("window.mostAheadBytes") <= budget


def test_the_look_ahead_takes_no_more_items_than_its_count(
    page, live_server, rater_study, clip, settings
):
    settings.MOSAIC_RATER_AHEAD_ITEMS = 1
    tiny = rater_study(rest_every=0, window_size=5)
    onboard(page, live_server, tiny)
    settle(page, "1/4")
    assert ahead(page) == ("1/4", len(clip.video) + len(clip.poster))
    rate(page, 50)
    settle(page, "1/4")
    assert page.locator("#stage video").get_attribute("src").startswith("blob:")


def test_a_video_larger_than_the_budget_streams_when_shown(
    page, live_server, rater_study, clip, settings
):
    # given: a budget a byte short of a video
    settings.MOSAIC_RATER_AHEAD_BYTES = budget = len(clip.video) - 1
    tiny = rater_study(rest_every=0, window_size=5)
    page.add_init_script(WATCH_AHEAD_BYTES)
    onboard(page, live_server, tiny)
    order = server_order()
    settle(page, "0/4")
    # when: the rater answers the item on screen
    rate(page, 55)
    # then: the next video plays from its URL, to its end (the page waits for that before
    # it takes an answer), and its answer is stored as any other
    assert current_item(page) == order[1]
    source = page.locator("#stage video").get_attribute("src")
    assert source == f"/media/v/{order[1]}/", source
    rate(page, 56)
    assert current_item(page) == order[2]
    assert page.evaluate("window.mostAheadBytes") <= budget


# The store on its own, in the page's browser, its downloads answered by a stand-in
# fetch: files of `sizes` bytes, saying their size (Content-Length) or not.
STORE_UNDER_BUDGET = """
async ([moduleUrl, sayLength]) => {
  const { MediaStore } = await import(moduleUrl);
  const sizes = { "/a": 600, "/b": 600, "/huge": 5000, "/c": 300 };
  const asked = [];
  window.fetch = async (url) => {
    asked.push(url);
    const body = new ReadableStream({
      start(controller) {
        for (let sent = 0; sent < sizes[url]; sent += 100) controller.enqueue(new Uint8Array(100));
        controller.close();
      },
    });
    return new Response(body, sayLength ? { headers: { "Content-Length": `${sizes[url]}` } } : {});
  };
  let changed;
  const store = new MediaStore({ budgetBytes: 1000, onChange: () => changed?.() });
  const held = (urls) => new Promise((resolve) => {
    changed = () => store.has(urls) && resolve();
    changed();
  });
  const settled = async () => {
    while (store.loading) await store.loading;
  };
  const state = () => ({
    held: ["/a", "/b", "/huge", "/c"].filter((url) => store.has([url])),
    bytes: store.aheadBytes,
  });
  store.keep({ showing: [], ahead: ["/a", "/huge", "/b", "/c"] });
  await held(["/a"]);
  await settled();
  const before = state();
  store.keep({ showing: ["/a"], ahead: ["/huge", "/b", "/c"] }); // /a is shown
  await held(["/b", "/c"]);
  await settled();
  return { before, after: state(), source: store.source("/huge"), asked };
}
"""


@pytest.mark.parametrize(
    ("say_length", "asked"),
    [
        # /b is asked first while /a holds 600 bytes: its Content-Length does not fit
        (True, ["/a", "/huge", "/b", "/b", "/c"]),
        # /huge is read up to what is left (400 bytes), later up to the whole budget
        (False, ["/a", "/huge", "/huge", "/b", "/c"]),
    ],
    ids=["content-length", "no-length"],
)
def test_the_store_waits_for_room_and_lets_a_file_over_the_budget_stream(
    page, live_server, say_length, asked
):
    from django.templatetags.static import static

    # given: a budget of 1,000 bytes; files of 600, 5,000 (never fits), 600 and 300 bytes
    page.goto(f"{live_server.url}/accounts/login/")
    # when: /a is downloaded, then shown
    outcome = page.evaluate(STORE_UNDER_BUDGET, [static("frontend/rater_window.js"), say_length])
    # then: /b waits (600 + 600 > 1,000) until /a is shown: /a's copy, kept for the
    # screen, leaves the budget, and /b and /c fit; the file too large for the budget is
    # never held and streams from its URL
    assert outcome["before"] == {"held": ["/a"], "bytes": 600}
    assert outcome["after"] == {"held": ["/a", "/b", "/c"], "bytes": 900}
    assert outcome["source"] == "/huge"
    assert outcome["asked"] == asked


# The store on its own again: an item ahead shows a video that is on screen now (a
# ranking's other criterion), which streams there from its URL (shown before its download
# finished).
STORE_SHARED_WITH_SCREEN = """
async (moduleUrl) => {
  const { MediaStore } = await import(moduleUrl);
  const asked = [];
  window.fetch = async (url) => {
    asked.push(url);
    return new Response(new Uint8Array(url === "/a" ? 600 : 300));
  };
  let changed;
  const store = new MediaStore({ budgetBytes: 1000, onChange: () => changed?.() });
  const held = (urls) => Promise.race([
    new Promise((resolve) => {
      changed = () => store.has(urls) && resolve();
      changed();
    }),
    new Promise((resolve) => setTimeout(resolve, 2000)),
  ]);
  const state = () => ({
    held: ["/a", "/c"].filter((url) => store.has([url])),
    bytes: store.aheadBytes,
    asked: [...asked],
  });
  store.keep({ showing: ["/a"], ahead: ["/a", "/c"] });
  await held(["/a", "/c"]);
  const shared = state();
  store.keep({ showing: ["/c"], ahead: ["/c"] }); // the next item, itself shared ahead
  await held(["/c"]);
  return { shared, next: state() };
}
"""


def test_a_video_on_screen_that_an_item_ahead_shows_too_is_downloaded_once(page, live_server):
    from django.templatetags.static import static

    page.goto(f"{live_server.url}/accounts/login/")
    outcome = page.evaluate(STORE_SHARED_WITH_SCREEN, static("frontend/rater_window.js"))
    # then: the item ahead has its own copy of the video streaming on screen, so that it
    # is shown without a connection, and it counts in the budget
    assert outcome["shared"] == {"held": ["/a", "/c"], "bytes": 900, "asked": ["/a", "/c"]}
    # and: a copy held for both is not downloaded again; what no item needs is let go of
    assert outcome["next"] == {"held": ["/c"], "bytes": 300, "asked": ["/a", "/c"]}
