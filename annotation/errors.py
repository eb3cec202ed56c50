"""The one family of domain errors; the API's exception handler turns them into HTTP answers."""

from __future__ import annotations


class ApplicationError(Exception):
    """A refusal the user can understand. `code` is stable for clients; `status` is HTTP."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, *, extra: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class ValidationFailed(ApplicationError):
    status = 400
    code = "invalid"


class PermissionDenied(ApplicationError):
    status = 403
    code = "forbidden"


class NotFound(ApplicationError):
    status = 404
    code = "not_found"


class Conflict(ApplicationError):
    status = 409
    code = "conflict"


class OutOfOrder(Conflict):
    """An answer for an item that is not the one to answer now: the page sends its
    answers again, in order, from `expected`."""

    code = "out_of_order"


class OnBreak(ApplicationError):
    status = 423
    code = "on_break"


# Like a break, these hold an answer back for now rather than refuse it: the rater's
# browser keeps it (any 423) and sends it again later.
class SessionPaused(ApplicationError):
    """The study's team paused the rater's session."""

    status = 423
    code = "paused"


class StudyNotRunning(ApplicationError):
    """The study is paused, closed or not started: nothing is accepted for now."""

    status = 423
    code = "study_not_running"


class ImportFailed(ApplicationError):
    """A manifest was refused; `errors` lists every bad row as (line, reason)."""

    code = "import_failed"

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        self.errors = errors
        lines = "\n".join(f"line {line}: {reason}" for line, reason in errors)
        rows = len({line for line, _ in errors if line > 1})  # line 1 is the header
        bad = [*(["a bad header"] if any(line == 1 for line, _ in errors) else []),
               *([f"{rows} bad row(s)"] if rows else [])]  # fmt: skip
        super().__init__(f"{' and '.join(bad)}, nothing imported:\n{lines}")
