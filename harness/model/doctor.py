"""`judge doctor`'s questions to the API: is the set-up right before a batch is spent on it?

Each check is one `DoctorCheck` (ok or not, what was found, the fix). What is asked, in order:
the key is there (no request); the endpoint answers and accepts the key, and each model id
exists with an output limit that covers what the run will ask (the Models endpoint,
`client.models.retrieve`: free); the citation audit's model answers a structured-output
request (one Messages request of a few tokens, the only one that is paid); the Message
Batches endpoint is allowed (`batches.list(limit=1)`: free), only when asked. A check that
cannot be made because an earlier one failed says so and is not counted as passed. Only this
package knows the SDK; the command line (harness.cli.doctor) prints the checks.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic

from harness import clock
from harness.errors import ConfigError
from harness.model.cite_client import AnthropicCiteClient
from harness.model.client import ClientSettings, build_client
from harness.model.messages import describe_api_error
from harness.redact import redact

__all__ = ["CITE_MAX_TOKENS", "DoctorCheck", "Spent", "check_api"]

# What each audit request may write (the cite client's own default): the cite model's
# output limit must cover it.
CITE_MAX_TOKENS: int = inspect.signature(AnthropicCiteClient).parameters["max_tokens"].default

# The structured-output probe: one yes/no answer as the audit asks its questions.
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "number", "description": "1 if you can read this, else 0"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_MAX_TOKENS = 32


@dataclass(slots=True)
class DoctorCheck:
    name: str
    ok: bool | None  # None: not checked (an earlier check failed)
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


@dataclass(slots=True)
class Spent:
    """What the checks cost: requests sent (the Models and batch-list ones are free) and
    the tokens of the one Messages request."""

    requests: int = 0
    messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "messages": self.messages,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }

    def line(self) -> str:
        paid = (
            f"{self.messages} Messages request of {self.input_tokens} input and "
            f"{self.output_tokens} output tokens"
            if self.messages
            else "no Messages request"
        )
        free = self.requests - self.messages
        return f"spent: {self.requests} request(s): {free} free (models, batches), {paid}"


T = TypeVar("T")


@dataclass(slots=True)
class _Probe:
    client: Any
    timeout: float = 20.0  # for one request, its reply's body included
    ends: float | None = None  # the doctor's overall limit (monotonic)
    spent: Spent = field(default_factory=Spent)
    checks: list[DoctorCheck] = field(default_factory=list)

    def ask(self, call: Callable[[], T]) -> T:
        """One request, bounded as a whole by --timeout (not per byte: a reply dripped a
        few bytes at a time ends there too) and by the doctor's overall limit. A redirect
        is not followed (`follow_redirects=False`) and fails the check that met it."""
        now = time.monotonic()
        until = now + self.timeout if self.ends is None else min(now + self.timeout, self.ends)
        self.spent.requests += 1
        with clock.scope(clock.Deadline(until, "judge doctor's --timeout")):
            try:
                return call()
            except anthropic.APIStatusError as exc:
                if 300 <= exc.status_code < 400:
                    where = exc.response.headers.get("location", "")
                    raise _Redirected(
                        f"the endpoint answered HTTP {exc.status_code}, a redirect to "
                        f"{_shown(where) or 'elsewhere'}, which judge does not follow"
                    ) from None
                raise


def _refused(exc: BaseException) -> bool:
    return isinstance(exc, anthropic.APIStatusError) and exc.status_code in (401, 403)


def _endpoint_fix(url: str) -> str:
    if not os.environ.get("ANTHROPIC_BASE_URL"):
        return (
            f"the default endpoint {url} cannot be reached from here: check the network, DNS "
            "and any proxy (HTTPS_PROXY); ANTHROPIC_BASE_URL is not set"
        )
    return (
        f"check ANTHROPIC_BASE_URL (now {url}): it must be a Messages-API endpoint that "
        "answers; unset it for https://api.anthropic.com"
    )


# Text from the endpoint shown in a check: at most this many characters (an 8 MB model
# name is one line of the report, not 8 MB of it).
SHOWN_CHARS = 120


def _shown(value: object) -> str:
    """What the endpoint said, redacted, one short line (controls made visible)."""
    text = redact(str(value)[:4096])  # only the first SHOWN_CHARS are shown
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text[: SHOWN_CHARS + 1])
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _count(value: object) -> int:
    """A token count as the API states it; anything else (a string, a list, a float out of
    range, a bool) counts as 0: the probe's cost is said, never a crash."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value < 10**12 else 0


class _Redirected(Exception):
    """The endpoint answered with a redirect, which judge does not follow."""


def _key_fix() -> str:
    return "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) to a key this endpoint accepts"


def check_api(
    *,
    model: str,
    cite_model: str | None,
    max_output_tokens: int,
    batch_api: bool,
    timeout: float,
    cite_max_tokens: int = CITE_MAX_TOKENS,
) -> tuple[list[DoctorCheck], Spent, str]:
    """The API checks, the requests they spent, and the endpoint's URL as the SDK has it.
    `cite_model` None: the audit is off (no structured-output check)."""
    checks: list[DoctorCheck] = []
    try:
        built = build_client(ClientSettings(timeout=timeout, max_retries=0, follow_redirects=False))
    except ConfigError as exc:
        checks.append(DoctorCheck("key", False, exc.message.split(":")[0], _key_fix()))
        for name in ("endpoint", *_model_names(model, cite_model, batch_api)):
            checks.append(DoctorCheck(name, None, "not checked: no API key"))
        return checks, Spent(), ""
    client = built.client
    url = str(client.base_url).rstrip("/")
    planned = len(_model_names(model, cite_model, batch_api))  # at most one request each
    probe = _Probe(client, timeout=timeout, ends=time.monotonic() + timeout * planned)
    try:
        _run(probe, url, model, cite_model, max_output_tokens, cite_max_tokens, batch_api)
    finally:
        client.close()
    return probe.checks, probe.spent, url


def _model_names(model: str, cite_model: str | None, batch_api: bool) -> list[str]:
    names = [f"model {model}"]
    if cite_model is not None:
        if cite_model != model:
            names.append(f"model {cite_model}")
        names.append("structured output")
    if batch_api:
        names.append("batches")
    return names


def _run(
    probe: _Probe,
    url: str,
    model: str,
    cite_model: str | None,
    max_output_tokens: int,
    cite_max_tokens: int,
    batch_api: bool,
) -> None:
    checks = probe.checks
    wanted = {model: ("--max-output-tokens", max_output_tokens)}
    if cite_model is not None:
        need = max(cite_max_tokens, wanted[cite_model][1]) if cite_model in wanted else None
        wanted[cite_model] = (
            ("--max-output-tokens", need) if need else ("the audit's", cite_max_tokens)
        )
    first = True
    for name, (option, tokens) in wanted.items():
        try:
            info = probe.ask(functools.partial(probe.client.models.retrieve, name))
        except _Redirected as exc:
            checks.append(DoctorCheck("key", None, "present; not checked: the endpoint redirected"))
            fix = "set ANTHROPIC_BASE_URL to the endpoint itself, not to one that redirects"
            checks.append(DoctorCheck("endpoint", False, str(exc), fix))
            _not_checked(checks, model, cite_model, batch_api, "the endpoint redirected")
            return
        except anthropic.APIConnectionError as exc:
            checks.append(DoctorCheck("key", None, "present; not checked: nothing answered"))
            checks.append(
                DoctorCheck(
                    "endpoint",
                    False,
                    f"nothing answered at {url} within --timeout: {_shown(exc)}",
                    _endpoint_fix(url),
                )
            )
            _not_checked(checks, model, cite_model, batch_api, "the endpoint did not answer")
            return
        except anthropic.APIStatusError as exc:
            if _refused(exc):
                what = describe_api_error(exc)
                checks.append(
                    DoctorCheck("key", False, f"the endpoint refused it ({what})", _key_fix())
                )
                checks.append(DoctorCheck("endpoint", True, f"{url} answers"))
                _not_checked(checks, model, cite_model, batch_api, "the key was refused")
                return
            if first:
                checks.append(DoctorCheck("key", True, "present and accepted"))
                checks.append(DoctorCheck("endpoint", True, f"{url} answers"))
                first = False
            if exc.status_code == 404:
                checks.append(
                    DoctorCheck(
                        f"model {name}",
                        False,
                        f"the Models endpoint does not know {name!r} ({describe_api_error(exc)})",
                        "pass a model id this endpoint lists (--model / --cite-model)",
                    )
                )
            else:
                checks.append(DoctorCheck(f"model {name}", False, describe_api_error(exc), ""))
            continue
        except Exception as exc:  # an answer that is not the API's (an HTML page, ...)
            detail = f"{url} answered, but not as the Anthropic API: {type(exc).__name__}"
            checks.append(
                DoctorCheck("key", None, "present; not checked: the endpoint is not the API")
            )
            checks.append(DoctorCheck("endpoint", False, detail, _endpoint_fix(url)))
            _not_checked(checks, model, cite_model, batch_api, "the endpoint is not the API")
            return
        if first:
            checks.append(DoctorCheck("key", True, "present and accepted"))
            checks.append(DoctorCheck("endpoint", True, f"{url} answers"))
            first = False
        checks.append(_limit_check(name, info, option, tokens))
    if cite_model is not None:
        checks.append(_structured(probe, cite_model))
    if batch_api:
        checks.append(_batches(probe))


def _not_checked(
    checks: list[DoctorCheck], model: str, cite_model: str | None, batch_api: bool, why: str
) -> None:
    checks.extend(
        DoctorCheck(n, None, f"not checked: {why}")
        for n in _model_names(model, cite_model, batch_api)
    )


def _limit_check(name: str, info: Any, option: str, tokens: int) -> DoctorCheck:
    limit = getattr(info, "max_tokens", None)
    shown = _shown(getattr(info, "display_name", "") or name)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        return DoctorCheck(
            f"model {name}", True, f"exists ({shown}); the endpoint does not state its output limit"
        )
    if limit < tokens:
        return DoctorCheck(
            f"model {name}",
            False,
            f"exists ({shown}), but writes at most {limit:,} tokens and {option} asks {tokens:,}",
            f"lower {option} to {limit:,} or less" if option.startswith("--") else "",
        )
    return DoctorCheck(f"model {name}", True, f"exists ({shown}), writes up to {limit:,} tokens")


def _structured(probe: _Probe, cite_model: str) -> DoctorCheck:
    name = "structured output"
    probe.spent.messages += 1
    fix = "pass a --cite-model that supports structured outputs, or --no-cite"
    try:
        reply = probe.ask(
            lambda: probe.client.messages.create(
                model=cite_model,
                max_tokens=_PROBE_MAX_TOKENS,
                messages=[{"role": "user", "content": "Can you read this? Answer with ok."}],
                output_config={"format": {"type": "json_schema", "schema": _PROBE_SCHEMA}},
            )
        )
    except _Redirected as exc:
        return DoctorCheck(name, False, str(exc), fix)
    except anthropic.APIError as exc:
        return DoctorCheck(name, False, f"{cite_model} refused it ({describe_api_error(exc)})", fix)
    except Exception as exc:  # a reply the SDK could not read
        return DoctorCheck(name, False, f"the reply could not be read: {type(exc).__name__}", fix)
    usage = getattr(reply, "usage", None)
    if usage is not None:
        probe.spent.input_tokens += _count(getattr(usage, "input_tokens", 0))
        probe.spent.output_tokens += _count(getattr(usage, "output_tokens", 0))
    content = getattr(reply, "content", None)
    blocks = content if isinstance(content, list) else []
    text = "".join(
        t
        for b in blocks
        if getattr(b, "type", "") == "text" and isinstance(t := getattr(b, "text", ""), str)
    )
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or "ok" not in answer:
        stop = _shown(getattr(reply, "stop_reason", None))
        shown = _shown(text[:80]) or f"no text (stop reason {stop})"
        return DoctorCheck(
            name, False, f"{cite_model} did not answer in the schema: {shown!r}", fix
        )
    return DoctorCheck(name, True, f"{cite_model} answers in a JSON schema")


def _batches(probe: _Probe) -> DoctorCheck:
    name = "batches"
    try:
        probe.ask(lambda: probe.client.messages.batches.list(limit=1))
    except _Redirected as exc:
        return DoctorCheck(name, False, str(exc), "run without --batch-api")
    except anthropic.APIError as exc:
        return DoctorCheck(
            name,
            False,
            f"the Message Batches endpoint refused ({describe_api_error(exc)})",
            "run without --batch-api, or use a key and endpoint that allow Message Batches",
        )
    return DoctorCheck(name, True, "the Message Batches endpoint is allowed")
