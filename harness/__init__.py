"""judge: audit a deep-research session and make sure a valid judge.json is in place.

    import harness

    try:
        result = harness.judge_session("sessions/abc", model="claude-sonnet-5-5")
    except harness.JudgeError as exc:     # usage or configuration: no key, no session
        print(exc, exc.exit_code)
    else:
        print(result.outcome, result.receipt.note, result.exit_code)

`judge_session` runs the whole audit on one session (`judge run`); `judge_batch` on every
session under a root (`judge batch`). Both take typed keyword parameters whose defaults are
`harness.config`'s, the same as the command line's (tests/test_api.py checks that they are
exactly `RunOptions`' fields and defaults). Model behaviour never raises: an API that stays
down, a refusal or a model that never writes ends in the advisory judge.json, which the
result says. Everything heavy is imported lazily, so `judge validate` and `judge show`
start fast.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from harness import config
from harness.errors import ConfigError, JudgeError, UsageError
from harness.events import OnEvent, ShouldStop

if TYPE_CHECKING:
    from harness.batch.core import BatchInterrupted, BatchResult, SessionResult
    from harness.batch.limits import BatchLimits
    from harness.batch.progress import Tracker
    from harness.run import Receipt, RunOptions, RunResult

__all__ = [
    "BatchInterrupted",
    "BatchLimits",
    "BatchResult",
    "ConfigError",
    "JudgeError",
    "Receipt",
    "RunOptions",
    "RunResult",
    "SessionResult",
    "UsageError",
    "compare",
    "judge_batch",
    "judge_session",
]
_BATCH = {"BatchInterrupted", "BatchResult", "SessionResult"}

Against = Literal["auto", "sources", "quotes"]
Fetch = Literal["live", "stored", "off"]


def _int(bound: config.Bound) -> int:
    return int(bound.default)


def _float(bound: config.Bound) -> float:
    return float(bound.default)


def judge_session(
    path: str | Path,
    *,
    model: str = config.JUDGE_MODEL,
    brief: Path | None = None,
    cli: str = config.CLI_NAME,
    session_id: str | None = None,
    cite: bool = True,
    cite_model: str = config.SCREEN_MODEL,
    cite_replay: Path | None = None,
    cite_concurrency: int = _int(config.CITE_CONCURRENCY),
    cite_against: Against = "auto",
    cite_passage_chars: int = _int(config.CITE_PASSAGE_CHARS),
    audit_fetch: Fetch = "stored",
    audit_max_fetches: int = _int(config.AUDIT_MAX_FETCHES),
    fetch: Fetch | None = None,
    max_turns: int = _int(config.MAX_TURNS),
    max_output_tokens: int = _int(config.MAX_OUTPUT_TOKENS),
    max_total_tokens: int = _int(config.MAX_TOTAL_TOKENS),
    max_seconds: float = _float(config.MAX_SECONDS),
    max_fetches: int = _int(config.MAX_FETCHES),
    max_reasks: int = _int(config.MAX_REASKS),
    samples: int = _int(config.SAMPLES),
    max_retries: int = _int(config.MAX_RETRIES),
    timeout: float = _float(config.TIMEOUT),
    lock_timeout: float = _float(config.LOCK_TIMEOUT),
    replay: Path | None = None,
    replay_any: bool = False,
    record: Path | None = None,
    transcript: Path | None = None,
    force: bool = False,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    client: Any = None,
    cite_client: Any = None,
) -> RunResult:
    """Judge one session folder, as `judge run` does, and return its `RunResult`
    (`receipt`, `outcome`, `judgment`, `record`, `exit_code`).

    The keywords are `judge run`'s options (`--max-turns` is `max_turns`; `cite=False` is
    `--no-cite`); `fetch=None` is "stored" with `replay`, else "live". `force` judges again
    a session that is up to date. `progress(event)` hears what the run does and `stop()`
    may end it early (harness.events). `client` / `cite_client` replace the Anthropic
    clients (tests). Raises `JudgeError` (`UsageError`, `ConfigError`: exit 2) only for
    usage or configuration: no such session, bad options, no API key, a refused key.
    """
    from harness.run import pipeline

    options = dict(locals())
    for name in ("path", "force", "progress", "stop", "client", "cite_client", "pipeline"):
        options.pop(name)
    return pipeline.judge_session(
        path,
        client=client,
        cite_client=cite_client,
        force=force,
        progress=progress,
        stop=stop,
        **options,
    )


def judge_batch(
    root: str | Path,
    sessions: list[str] | None = None,
    *,
    limits: BatchLimits | None = None,
    replay_dir: str | Path | None = None,
    record_dir: str | Path | None = None,
    force: bool = False,
    batch_api: bool = False,
    batch_poll: float = 30.0,
    shard: str | None = None,
    on_result: Callable[[SessionResult], None] | None = None,
    model: str = config.JUDGE_MODEL,
    brief: Path | None = None,
    cli: str = config.CLI_NAME,
    cite: bool = True,
    cite_model: str = config.SCREEN_MODEL,
    cite_concurrency: int = _int(config.CITE_CONCURRENCY),
    cite_against: Against = "auto",
    cite_passage_chars: int = _int(config.CITE_PASSAGE_CHARS),
    audit_fetch: Fetch = "stored",
    audit_max_fetches: int = _int(config.AUDIT_MAX_FETCHES),
    fetch: Fetch | None = None,
    max_turns: int = _int(config.MAX_TURNS),
    max_output_tokens: int = _int(config.MAX_OUTPUT_TOKENS),
    max_total_tokens: int = _int(config.MAX_TOTAL_TOKENS),
    max_seconds: float = _float(config.MAX_SECONDS),
    max_fetches: int = _int(config.MAX_FETCHES),
    max_reasks: int = _int(config.MAX_REASKS),
    samples: int = _int(config.SAMPLES),
    max_retries: int = _int(config.MAX_RETRIES),
    timeout: float = _float(config.TIMEOUT),
    lock_timeout: float = _float(config.LOCK_TIMEOUT),
    replay_any: bool = False,
    tracker: Tracker | None = None,
    client: Any = None,
    cite_client: Any = None,
) -> BatchResult:
    """Judge every session under `root` (or only `sessions`, by folder name), as
    `judge batch` does, and return its `BatchResult` (`sessions`, `totals`, `exit_code`).

    `limits` (`BatchLimits(sessions=, cite_requests=, max_tokens=, max_seconds=)`) are
    the batch's own; the other keywords are `judge_session`'s, applied to each session,
    except those naming one file per run: `replay_dir` answers each session from
    `DIR/<session>.jsonl` (and its audit from `DIR/<session>.cite.jsonl`), `record_dir`
    records them there. `shard="K/N"` (or `"auto/N"`) takes only that shard's sessions, as
    `--shard`. `on_result(session_result)` is called as each session ends.
    Raises `JudgeError` for the batch's usage or configuration, before any session;
    `BatchInterrupted` (its `result` the whole `BatchResult`) after Ctrl-C or SIGTERM.
    """
    from harness.batch import core

    options = dict(locals())
    for name in ("root", "sessions", "core"):
        options.pop(name)
    return core.judge_batch(root, sessions, **options)


def __getattr__(name: str) -> Any:
    if name in _BATCH:
        from harness.batch import core

        return getattr(core, name)
    if name == "compare":  # the package, callable: harness.compare(A, B) -> CompareResult
        import importlib

        return importlib.import_module("harness.compare")
    if name == "BatchLimits":
        from harness.batch.limits import BatchLimits

        return BatchLimits
    if name in __all__:
        from harness.run import pipeline as run

        return getattr(run, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
