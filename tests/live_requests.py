"""Closing a browser test's Chromium context so that its database can be flushed safely."""

from __future__ import annotations

import threading
import time


def _answering() -> list[threading.Thread]:
    """The live server's threads still answering a request (socketserver's ThreadingMixIn
    names each after its target)."""
    return [t for t in threading.enumerate() if t.name.endswith("(process_request_thread)")]


def close_context(context, *, timeout_s: float = 10.0) -> None:
    """Close a browser context, then wait (at most ``timeout_s``) for the requests it had
    sent that the live server is still answering. The test's tables are flushed when it
    ends; a request still running then deadlocked the flush (its transaction against the
    TRUNCATE) or failed on the emptied tables, failing the next test."""
    context.close()
    deadline = time.monotonic() + timeout_s
    for thread in _answering():
        thread.join(max(0.0, deadline - time.monotonic()))
