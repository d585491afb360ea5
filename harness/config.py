"""Every default and bound of a run, once: the CLI's options, `RunOptions`, the agent
loop's limits and the client settings all read them from here.

Kept free of imports beyond the standard library so the CLI can build its options
without loading pydantic or the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass

JUDGE_MODEL = "claude-sonnet-5-5"
SCREEN_MODEL = "claude-haiku-5-5"  # bulk screening: the citation audit's support model
CLI_NAME = "judge"
FETCH_MODES = ("live", "stored", "off")
AGAINST_MODES = ("auto", "sources", "quotes")  # what the citation audit judges support against
DEFAULT_AGAINST = "auto"
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
BATCH_SESSIONS = Bound(4, 1, 256, help="Sessions judged at once.")
BATCH_CITE_REQUESTS = Bound(16, 1, 1024, help="Audit requests in flight across all sessions.")
CITE_MAX_PASSAGES = Bound(
    10, 1, 1000, help="Passages of each cited source the audit reads (--against sources)."
)
AUDIT_FETCH_MODES = ("stored", "live", "off")
AUDIT_FETCH_DEFAULT = "stored"  # the audit reads cached fetches; `live` fetches what is missing
AUDIT_MAX_FETCHES = Bound(20, 0, 1000, help="Sources the citation audit may fetch (--fetch live).")
MAX_TURNS = Bound(40, 1, help="Most model calls in the run.")
MAX_OUTPUT_TOKENS = Bound(
    8192, 256, 128_000, help="Output tokens per model call (above 16,000 the call is streamed)."
)
MAX_TOTAL_TOKENS = Bound(
    400_000,
    1000,
    help="Tokens per run: input, cache writes and output (cache reads are not counted).",
)
MAX_SECONDS = Bound(600.0, 0, low_open=True, help="Wall-clock limit of the run, in seconds.")
MAX_FETCHES = Bound(5, 0, help="Most WebFetch uses in the run.")
MAX_REASKS = Bound(2, 0, help="Times the judge is re-asked with the exact errors.")
MAX_RETRIES = Bound(2, 0, help="The SDK's retries of a failed API request.")
TIMEOUT = Bound(120.0, 0, low_open=True, help="Seconds per API request.")
DOCTOR_TIMEOUT = Bound(20.0, 0, low_open=True, help="Seconds per request of `judge doctor`.")
LOCK_TIMEOUT = Bound(30.0, 0, help="Seconds to wait for another run of the same session to finish.")

# What one source document may cost (harness.text.document.Limits), and what one
# session's snapshots may cost together (harness.session.snapshots): said when cut.
DOCUMENT_BYTES = 8 * 1024 * 1024
DOCUMENT_PDF_PAGES = 300
DOCUMENT_PDF_SECONDS = 20.0
SNAPSHOTS_TOTAL_BYTES = 256 * 1024 * 1024
