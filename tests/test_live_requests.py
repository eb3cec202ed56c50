"""close_context waits out the live server's requests before a test's tables are flushed."""

import http.client
import threading
import time

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from tests.live_requests import close_context


class _Context:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_closing_a_context_waits_for_the_requests_still_being_answered():
    # given: a threaded server answering a request slowly, as a page is closed
    finished = threading.Event()

    def slow(environ, start_response):
        time.sleep(0.5)
        finished.set()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    server = ThreadedWSGIServer(("127.0.0.1", 0), WSGIRequestHandler)
    server.set_app(slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
        # (the connection ends with the answer, as a closed browser context's connections do)
        request = ("GET", "/", None, {"Connection": "close"})
        threading.Thread(target=client.request, args=request, daemon=True).start()
        time.sleep(0.1)  # the request is being answered
        context = _Context()
        # when
        close_context(context)
        # then: closed, and the request's answer was done before it returned
        assert context.closed and finished.is_set()
        client.close()
    finally:
        server.shutdown()
        server.server_close()
