"""Every default and bound of a run, once: the CLI's options, `RunOptions`, the agent
loop's limits and the client settings all read them from here.

Kept free of imports beyond the standard library so the CLI can build its options
without loading pydantic or the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

JUDGE_MODEL = "claude-sonnet-5-5"
SCREEN_MODEL = "claude-haiku-5-5"  # bulk screening: the citation audit's support model
CLI_NAME = "judge"
# The enumerations of a run's options, declared once; the tuples are derived from them.
FetchMode = Literal["live", "stored", "off"]  # WebFetch's, and the audit's cited sources'
Against = Literal["auto", "sources", "quotes"]  # what the citation audit judges support against
FETCH_MODES: tuple[FetchMode, ...] = get_args(FetchMode)
AGAINST_MODES: tuple[Against, ...] = get_args(Against)
DEFAULT_AGAINST: Against = "auto"
STREAM_ABOVE_OUTPUT_TOKENS = 16_000  # a call that may write more than this is streamed
# A batch with more requests in flight than this spreads its connections over pools of
# about this many: httpx's pool scans every connection it holds twice per request, which
# at 160 connections was a third of each audit request's CPU.
CONNECTIONS_PER_POOL = 32


@dataclass(frozen=True, slots=True)
class Bound:
    """One numeric knob: its default, its range (`low_open`: strictly above `low`), its help."""

    default: int | float
    low: int | float | None = None
    high: int | float | None = None
    low_open: bool = False
    help: str = ""


CITE_CONCURRENCY = Bound(8, 1, 256, help="Most citation-audit requests in flight at once.")
BATCH_SESSIONS = Bound(4, 1, 1024, help="Sessions judged at once.")
BATCH_POLL_SECONDS = 30.0  # between polls of a submitted Message Batch (--batch-poll)
# Audit requests in flight while `judge batch --batch-api` plans every session's audit.
BATCH_PLAN_CONCURRENCY = 64
BATCH_CITE_REQUESTS = Bound(16, 1, 1024, help="Audit requests in flight across all sessions.")
# Each claim's own passages of a cited source (--cite-against sources), in characters; at least
# one passage (harness.audit.passages.MAX_CHARS). Measured in docs/retrieval.md.
CITE_PASSAGE_CHARS = Bound(
    5400,
    450,
    200_000,
    help="Characters of a cited source's passages each claim citing it reads "
    "(--cite-against sources).",
)
# the audit reads cached fetches; `live` fetches what is missing
AUDIT_FETCH_DEFAULT: FetchMode = "stored"
AUDIT_MAX_FETCHES = Bound(
    20, 0, 1000, help="Sources the citation audit may fetch (--audit-fetch live)."
)
MAX_TURNS = Bound(40, 1, help="Most model calls in the run.")
MAX_OUTPUT_TOKENS = Bound(
    8192,
    256,
    128_000,
    help="Output tokens per model call (above 16,000 the call is streamed); at most the "
    "model's own output limit.",
)
AUDIT_MAX_OUTPUT_TOKENS = 4096  # output tokens of one citation-audit request

# The output-token limit ("Max output") of each model the installed anthropic SDK names
# (`anthropic.types.Model`, SDK 2.15.0), from each model's page of the Claude docs
# (platform.claude.com/docs/en/models/<model>/overview, read 2026-12-01). A larger
# max_tokens is refused by the API with a 400, so a run refuses it first (exit 2). The
# Fable 5.2, Mythos 5.2, Mythos 5.1 and Mythos Preview pages were not in the stored docs:
# their line's limit (Fable 5.1 / Mythos 5 share 128K) is assumed. A model not listed
# here passes through unchecked, with a warning.
MODEL_OUTPUT_LIMITS: dict[str, int] = {
    "claude-fable-5-2": 128_000,
    "claude-mythos-5-2": 128_000,
    "claude-haiku-5-5": 128_000,
    "claude-sonnet-5-5": 128_000,
    "claude-fable-5-1": 128_000,
    "claude-opus-5-5": 128_000,
    "claude-mythos-5-1": 128_000,
    "claude-sonnet-5": 128_000,
    "claude-fable-5": 128_000,
    "claude-mythos-5": 128_000,
    "claude-opus-5": 128_000,
    "claude-opus-4-8": 128_000,
    "claude-opus-4-7": 128_000,
    "claude-mythos-preview": 128_000,
    "claude-opus-4-6": 128_000,
    "claude-sonnet-4-6": 128_000,
    "claude-haiku-4-5": 64_000,
    "claude-haiku-4-5-20251001": 64_000,
    "claude-opus-4-5": 64_000,
    "claude-opus-4-5-20251101": 64_000,
}


def output_limit(model: str) -> int | None:
    """The model's output-token limit, or None for a model this table does not know."""
    return MODEL_OUTPUT_LIMITS.get(model)


def output_limit_refusal(what: str, tokens: int, model_option: str, model: str) -> str | None:
    """Why `tokens` output tokens (`what`: the option that asks them) is more than
    `model` can write, or None when it is within the limit or the model is unknown."""
    limit = output_limit(model)
    if limit is None or tokens <= limit:
        return None
    return (
        f"{what} {tokens:,} is above the output limit of {model} ({limit:,} tokens), which "
        f"the API refuses; use {what} {limit} or less, or another {model_option}"
    )


def unknown_model_warning(model_option: str, model: str) -> str | None:
    """A one-line warning for a model the limits table does not know (sent as given)."""
    if output_limit(model) is not None:
        return None
    return (
        f"warning: {model_option} {model} is not a model the installed anthropic SDK names; "
        "its output limit is unknown, so the request is sent unchecked"
    )


MAX_TOTAL_TOKENS = Bound(
    400_000,
    1000,
    help="Tokens per run: input, cache writes and output (cache reads are not counted).",
)
MAX_SECONDS = Bound(
    600.0,
    0,
    low_open=True,
    help="Wall-clock limit of the whole run (audit, judge, writing), in seconds; the audit "
    "gets at most half of it.",
)
MAX_FETCHES = Bound(5, 0, help="Most WebFetch uses in the run.")
MAX_REASKS = Bound(2, 0, help="Times the judge is re-asked with the exact errors.")
SAMPLES = Bound(
    1,
    1,
    20,
    help="Independent judgments of the session, kept in .judge/samples/ (judge agree --self); "
    "judge.json is the one nearest their per-dimension median.",
)
MAX_RETRIES = Bound(2, 0, help="The SDK's retries of a failed API request.")
TIMEOUT = Bound(120.0, 0, low_open=True, help="Seconds per API request.")
DOCTOR_TIMEOUT = Bound(20.0, 0, low_open=True, help="Seconds per request of `judge doctor`.")
LOCK_TIMEOUT = Bound(30.0, 0, help="Seconds to wait for another run of the same session to finish.")

# How --max-seconds is shared (harness.run.budget): the audit gets at most this part of
# the time left when it starts, the judge the rest; writing judge.json and run.json keeps
# WRITE_RESERVE_SHARE of the whole, at most WRITE_RESERVE_SECONDS.
AUDIT_TIME_SHARE = 0.5
WRITE_RESERVE_SHARE = 0.1
WRITE_RESERVE_SECONDS = 2.0

# What a reply of the model may cost the harness (harness.model, harness.agent.loop).
MAX_WRITE_CHARS = 64 * 1024  # judge.json's content in one Write
# A streamed tool input is cut past this many characters of JSON: the longest encoding of a
# Write the tool would accept (every character escaped as \uXXXX), plus the file path.
MAX_TOOL_INPUT_CHARS = 6 * MAX_WRITE_CHARS + 4096
MAX_STREAMED_REPLY_CHARS = 16 * 1024 * 1024  # all the deltas of one streamed reply
MAX_TOOL_RESULT_BYTES_PER_TURN = 4 * 1024 * 1024  # tool results sent back in one turn
MAX_USAGE_TOKENS = 100_000_000  # one reply's count of any kind; beyond: clamped, and said

# What one source document may cost (harness.text.document.Limits), and what one
# session's snapshots may cost together (harness.session.snapshots): said when cut.
DOCUMENT_BYTES = 8 * 1024 * 1024
DOCUMENT_PDF_PAGES = 300
DOCUMENT_PDF_SECONDS = 20.0
# PDF and HTML are converted in worker processes (harness/text/isolate.py): at most this
# many at once, each under this address-space ceiling (RLIMIT_AS).
DOCUMENT_WORKERS = 2
DOCUMENT_WORKER_BYTES = 1024 * 1024 * 1024
SNAPSHOTS_TOTAL_BYTES = 256 * 1024 * 1024


# Said wherever a run, an audit or a client is asked to replay and record at once: the
# run's options (harness.run.resolve) before any file is read, and the model layer's own
# guards for callers that reach it directly.
REPLAY_WITH_RECORD = "--replay and --record cannot be used together; choose one"


def run_limit_refusal(model: str, max_output_tokens: int, cite_model: str | None) -> str | None:
    """Why a run's output limits are more than its models write (`cite_model`: None when
    the run has no citation audit), or None. Checked before any request."""
    refusal = output_limit_refusal("--max-output-tokens", max_output_tokens, "--model", model)
    if refusal is None and cite_model is not None:
        refusal = output_limit_refusal(
            "the citation audit's max_tokens", AUDIT_MAX_OUTPUT_TOKENS, "--cite-model", cite_model
        )
    return refusal


def run_model_warnings(model: str, cite_model: str | None) -> list[str]:
    """The warnings for a run's models the limits table does not know."""
    warnings = [unknown_model_warning("--model", model)]
    if cite_model is not None:
        warnings.append(unknown_model_warning("--cite-model", cite_model))
    return [w for w in warnings if w is not None]


# One line of a Message Batch's results file (harness.model.batches): one request's result,
# a message of at most 16,000 output tokens with --batch-api (a few hundred KiB as JSON). A
# line past this is not read: that request's result is `too-large`, and it is asked again.
MAX_BATCH_RESULT_LINE_BYTES = 16 * 1024 * 1024
