"""One exception base for the harness, mapped to exit codes in one place.

`JudgeError` carries structured data. Subclasses fix the exit code (usage and
configuration problems exit 2, failures to produce a result exit 1) and declare their
public `code`, the name `--json` prints as `{"error": {"code": …}}`: a class of its own
must say it (checked when the class is made), so renaming a class never changes output.
`ToolError` is different in kind: it is never raised out of a run; the agent
loop turns it into an `is_error` tool result so the model can recover.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class JudgeError(Exception):
    """Base of every error the harness raises on purpose."""

    exit_code: int = EXIT_FAILED
    code: str = "judge"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must declare its public error `code`")

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return self.message


class UsageError(JudgeError):
    """Bad command-line input: a missing session, a bad option value."""

    code = "usage"
    exit_code = EXIT_USAGE


class ConfigError(JudgeError):
    """The environment cannot support the request (no API key and no replay, ...)."""

    code = "config"
    exit_code = EXIT_USAGE


class TemplateError(UsageError):
    """A brief template that cannot be read or rendered."""

    code = "template"


class WriteError(JudgeError):
    """An output could not be written (read-only folder, full disk, ...)."""

    code = "write"
    exit_code = EXIT_FAILED


class ReplayError(JudgeError):
    """A replay file is exhausted, malformed, or cannot answer a request.

    Loud on purpose: a replay that silently fell back would hide a broken test.
    """

    code = "replay"
    exit_code = EXIT_FAILED


Fault = Literal["timeout", "connection", "unavailable"]
"""What kind of fault made the model unavailable, as the SDK told it: the API did not
answer in time (`timeout`), could not be reached or broke the connection (`connection`),
or answered that it could not serve the request, or with a reply that is no message
(`unavailable`)."""


class ModelUnavailable(JudgeError):
    """The model API stayed unavailable after the SDK's retries.

    `fault` says what kind of fault it was, set where the SDK's exception is caught
    (harness.model), so that no reader has to tell it from the message's words."""

    code = "model_unavailable"
    exit_code = EXIT_FAILED

    def __init__(self, message: str, *, fault: Fault = "unavailable", **data: Any) -> None:
        super().__init__(message, **data)
        self.fault: Fault = fault


class RateLimited(ModelUnavailable):
    """The API asked for a wait (retry-after) longer than the time left: the request is
    given up at once instead of sleeping past the run's time."""

    code = "rate_limited"


class OutOfTime(ModelUnavailable):
    """The run's (or its phase's) time ran out (harness.clock): while a request was in
    flight or waiting to be retried, or inside a loop of the audit (what it was making is
    dropped whole). The time limit, not an unavailable model."""

    code = "out_of_time"


class InvalidRequest(JudgeError):
    """The API refused a request as invalid (`invalid_request_error`: HTTP 400, 404, 413,
    422): a defect of the harness's request or of the operator's options, never an
    outage, so it is never retried and never reported as the model being unavailable.
    The run still ends in its advisory fallback (exit 0) with this reason."""

    code = "invalid_request"
    exit_code = EXIT_FAILED


class Halted(ModelUnavailable):
    """A shared limit (a batch's token budget or time limit) refused a request before it
    was sent: the agent loop ends as its own `should_stop` would, not as unavailable."""

    code = "halted"


class ToolError(JudgeError):
    """A refused or failed tool call; returned to the model, never fatal.

    ``message`` is the harness's own words; ``names`` are the (field, value) pairs it is
    about (a path, a URL, a redirect target), which may be session- or web-chosen: the
    agent hands them to the model only inside an untrusted block after the message.
    """

    code = "tool"

    def __init__(self, message: str, *, names: Sequence[tuple[str, str]] = (), **data: Any) -> None:
        super().__init__(message, **data)
        self.names = tuple(names)


def exit_code_for(exc: BaseException) -> int:
    """The one place that maps exceptions to process exit codes."""
    if isinstance(exc, JudgeError):
        return exc.exit_code
    return EXIT_FAILED
