"""rater_queue.js on its own, in Chromium: what is kept, dropped, retried, and in which order.

The answers endpoint is played by `page.route` with scripted replies; timers are made
instant (and their requested delays recorded) so the backoff is checked exactly.
"""

import json

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

URL = "/fake/answers/"

HARNESS = """async (url) => {
    const realSetTimeout = window.setTimeout.bind(window);
    window.realSetTimeout = realSetTimeout;
    window.delays = [];
    window.setTimeout = (fn, ms) => { window.delays.push(ms); return realSetTimeout(fn, 0); };
    const m = await import('/static/frontend/rater_queue.js');
    window.troubles = [];
    window.refused = [];
    window.queue = new m.AnswerQueue(window.localStorage, 'mosaic:unsent:test:1');
    window.sender = new m.AnswerSender({
        queue: window.queue, url, csrfToken: 'token',
        onTrouble: (e) => window.troubles.push(e ? (e.signedOut ? 'signed-out' : 'down') : 'ok'),
        onRefused: (o) => window.refused.push(o.body.detail),
    });
    window.answer = (n) => ({client_uuid: `00000000-0000-4000-8000-00000000000${n}`,
                             item: `i${n}`});
    window.summary = (outcomes) => outcomes.map((o) => [o.kind, o.answer.item]);
}"""


@pytest.fixture
def harness(page, live_server):
    """A page with the module loaded; `reply(*replies)` scripts the server's answers."""
    page.goto(f"{live_server.url}/accounts/login/")
    page.evaluate(HARNESS, URL)
    seen: list[dict] = []
    script: list[tuple[int, dict]] = []

    def handle(route):
        request = route.request
        seen.append({"body": json.loads(request.post_data), "csrf": request.headers["x-csrftoken"]})
        status, body = script.pop(0)
        if status == 0:
            return route.abort()
        route.fulfill(status=status, content_type="application/json", body=json.dumps(body))

    page.route(f"**{URL}", handle)

    def reply(*replies):
        script.extend(replies)

    page.reply, page.seen = reply, seen
    return page


def test_an_answer_is_stored_before_it_is_sent(harness):
    page = harness
    page.reply((0, {}), (201, {"status": "stored"}))
    outcomes = page.evaluate(
        """async () => {
            const done = window.sender.submit(window.answer(1));
            const kept = window.queue.list().map((a) => a.item);  // synchronously, before any reply
            return [kept, window.summary(await done), window.queue.list()];
        }"""
    )
    assert outcomes == [["i1"], [["stored", "i1"]], []]
    assert [s["body"]["item"] for s in page.seen] == ["i1", "i1"]
    assert page.seen[0]["csrf"] == "token"


def test_network_errors_and_5xx_back_off_from_1_s_doubling_to_30_s(harness):
    page = harness
    failures = [(0, {}), (500, {}), (502, {}), (503, {}), (0, {}), (500, {}), (0, {}), (0, {})]
    page.reply(*failures, (201, {"status": "stored"}))
    result = page.evaluate(
        "async () => [window.summary(await window.sender.submit(window.answer(1))), "
        "window.delays, window.troubles]"
    )
    summary, delays, troubles = result
    assert summary == [["stored", "i1"]]
    assert delays == [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
    assert troubles == ["down"] * 8 + ["ok"]
    assert len(page.seen) == 9


def test_a_conflict_is_final_and_the_next_answer_goes_on(harness):
    page = harness
    page.reply(
        (409, {"error": "conflict", "detail": "this video was already answered"}),
        (201, {"status": "stored"}),
    )
    summary = page.evaluate(
        """async () => {
            window.queue.add(window.answer(1));
            window.queue.add(window.answer(2));
            return window.summary(await window.sender.flush());
        }"""
    )
    assert summary == [["refused", "i1"], ["stored", "i2"]]
    assert page.evaluate("window.refused") == ["this video was already answered"]
    assert page.evaluate("window.queue.list()") == []
    assert [s["body"]["item"] for s in page.seen] == ["i1", "i2"]  # oldest first


def test_a_break_keeps_the_answer_and_stops_sending(harness):
    page = harness
    page.reply((423, {"error": "on_break", "detail": "rest", "break_seconds_left": 9}))
    summary = page.evaluate(
        """async () => {
            window.queue.add(window.answer(1));
            window.queue.add(window.answer(2));
            return window.summary(await window.sender.flush());
        }"""
    )
    assert summary == [["held", "i1"]]
    assert [a["item"] for a in page.evaluate("window.queue.list()")] == ["i1", "i2"]
    assert len(page.seen) == 1
    # after the break the same answers go, in the same order
    page.reply((201, {}), (200, {}))
    assert page.evaluate("async () => window.summary(await window.sender.flush())") == [
        ["stored", "i1"],
        ["stored", "i2"],
    ]


@pytest.mark.parametrize(
    "refusal",
    [
        {"error": "paused", "detail": "your session was paused by the study's team"},
        {"error": "study_not_running", "detail": "this study is not running at the moment"},
    ],
)
def test_a_paused_session_or_study_keeps_the_answer_for_later(harness, refusal):
    # given: the server holds answers back (423) until the team resumes
    page = harness
    page.reply((423, refusal), (423, refusal))
    # when: sent, and sent again (a reload, or the rater's "Try again")
    summaries = page.evaluate(
        """async () => {
            window.queue.add(window.answer(1));
            window.queue.add(window.answer(2));
            const first = window.summary(await window.sender.flush());
            return [first, window.summary(await window.sender.flush())];
        }"""
    )
    # then: kept, in order, nothing shown as refused, and nothing retried by itself
    assert summaries == [[["held", "i1"]], [["held", "i1"]]]
    assert [a["item"] for a in page.evaluate("window.queue.list()")] == ["i1", "i2"]
    assert page.evaluate("window.refused") == []
    assert page.evaluate("window.delays") == []
    # when: the session or study runs again
    page.reply((201, {}), (201, {}))
    # then
    assert page.evaluate("async () => window.summary(await window.sender.flush())") == [
        ["stored", "i1"],
        ["stored", "i2"],
    ]
    assert page.evaluate("window.queue.list()") == []


def test_a_lost_sign_in_keeps_the_answer_but_an_api_refusal_does_not(harness):
    page = harness
    page.reply(
        (403, {"detail": "CSRF Failed: CSRF token missing."}),  # not an API refusal: kept
        (201, {}),
        (403, {"error": "forbidden", "detail": "not open for you"}),  # an API refusal: final
    )
    summary = page.evaluate(
        "async () => window.summary(await window.sender.submit(window.answer(1)))"
    )
    assert summary == [["stored", "i1"]]
    assert page.evaluate("window.troubles") == ["signed-out", "ok"]
    summary = page.evaluate(
        "async () => window.summary(await window.sender.submit(window.answer(2)))"
    )
    assert summary == [["refused", "i2"]]
    assert page.evaluate("window.queue.list()") == []


@pytest.mark.parametrize("code", ["not_authenticated", "authentication_failed", "csrf_failed"])
def test_a_sign_in_refusal_in_the_apis_shape_keeps_the_answer(harness, code):
    page = harness
    page.reply((403, {"error": code, "detail": "sign in again"}), (201, {}))
    summary = page.evaluate(
        "async () => window.summary(await window.sender.submit(window.answer(1)))"
    )
    assert summary == [["stored", "i1"]]
    assert page.evaluate("window.troubles") == ["signed-out", "ok"]


def test_an_answer_out_of_order_lets_the_awaited_one_go_first(harness):
    """Two answers queued the wrong way round (as two tabs may leave them): the server
    names the one it waits for, which goes first; an unknown one is a refusal."""
    page = harness
    out_of_order = {"error": "out_of_order", "detail": "in order", "expected": "i1"}
    page.reply((409, out_of_order), (201, {}), (201, {}), (409, {**out_of_order, "expected": "x"}))
    summary = page.evaluate(
        """async () => {
            window.queue.add(window.answer(2));
            window.queue.add(window.answer(1));
            const first = window.summary(await window.sender.flush());
            const second = window.summary(await window.sender.submit(window.answer(3)));
            return [first, second];
        }"""
    )
    assert summary == [
        [["reordered", "i2"], ["stored", "i1"], ["stored", "i2"]],
        [["refused", "i3"]],
    ]
    assert [s["body"]["item"] for s in page.seen] == ["i2", "i1", "i2", "i3"]
    assert page.evaluate("window.queue.list()") == []


def test_coming_back_online_retries_at_once(harness):
    page = harness
    page.reply((0, {}), (201, {}))
    summary = page.evaluate(
        """async () => {
            // timers that never fire: only the `online` event can wake the retry
            window.setTimeout = (fn, ms) => { window.delays.push(ms); return 0; };
            const done = window.sender.submit(window.answer(1));
            while (window.troubles.length === 0) {
                await new Promise((ok) => window.realSetTimeout(ok, 10));
            }
            window.dispatchEvent(new Event('online'));
            return window.summary(await done);
        }"""
    )
    assert summary == [["stored", "i1"]]
    assert page.evaluate("window.delays") == [1000]


def test_try_again_retries_at_once(harness):
    # the rater's "Try again": a queued answer waiting out its backoff goes now
    page = harness
    page.reply((503, {}), (201, {}))
    summary = page.evaluate(
        """async () => {
            // timers that never fire: only "Try again" can wake the retry
            window.setTimeout = (fn, ms) => { window.delays.push(ms); return 0; };
            const m = await import('/static/frontend/rater_queue.js');
            const done = window.sender.submit(window.answer(1));
            while (window.troubles.length === 0) {
                await new Promise((ok) => window.realSetTimeout(ok, 10));
            }
            m.retryNow();
            return window.summary(await done);
        }"""
    )
    assert summary == [["stored", "i1"]]
    assert page.evaluate("window.delays") == [1000]
