"""The Python API's two doors, `judge_session` and `judge_batch` (exported by `harness`).

Their judging keywords are `RunOptions`' fields: typed by `RunKeywords` / `BatchKeywords`
for a type checker (tests/test_api.py checks they are exactly the fields and types), and
each door's runtime signature (`help()`, `inspect.signature`) is generated from the
fields with their defaults. Both call the one `harness.run.judge_session` (batch: for
each session), as `judge run` and `judge batch` do.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from harness import config
from harness.events import OnEvent, ShouldStop
from harness.run import RunOptions, RunResult
from harness.run import judge_session as run_session

if TYPE_CHECKING:
    from harness.batch.core import BatchResult, SessionResult
    from harness.batch.limits import BatchLimits
    from harness.batch.progress import Tracker


class BatchKeywords(TypedDict, total=False):
    """`RunOptions`' fields less those naming one file per run: `judge_batch`'s keywords."""

    model: str
    brief: Path | None
    cli: str
    cite: bool
    cite_model: str
    cite_concurrency: int
    cite_against: config.Against
    cite_passage_chars: int
    audit_fetch: config.FetchMode
    audit_max_fetches: int
    fetch: config.FetchMode | None
    max_turns: int
    max_output_tokens: int
    max_total_tokens: int
    max_seconds: float
    max_fetches: int
    max_reasks: int
    samples: int
    max_retries: int
    timeout: float
    lock_timeout: float
    replay_any: bool


class RunKeywords(BatchKeywords, total=False):
    """Every field of `RunOptions`: `judge_session`'s keywords."""

    session_id: str | None
    cite_replay: Path | None
    replay: Path | None
    record: Path | None
    transcript: Path | None


def _checked(func: str, given: Mapping[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
    """A keyword that is not an option is a TypeError, as for any function."""
    for name in given:
        if name not in allowed:
            raise TypeError(f"{func}() got an unexpected keyword argument {name!r}")
    return dict(given)


def judge_session(
    path: str | Path,
    *,
    force: bool = False,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    client: Any = None,
    cite_client: Any = None,
    **options: Unpack[RunKeywords],
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
    return run_session(
        path,
        client=client,
        cite_client=cite_client,
        force=force,
        progress=progress,
        stop=stop,
        **_checked("judge_session", options, RunKeywords.__optional_keys__),
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
    batch_poll: float = config.BATCH_POLL_SECONDS,
    shard: str | None = None,
    on_result: Callable[[SessionResult], None] | None = None,
    tracker: Tracker | None = None,
    client: Any = None,
    cite_client: Any = None,
    **options: Unpack[BatchKeywords],
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

    return core.judge_batch(
        root,
        sessions,
        limits=limits,
        replay_dir=replay_dir,
        record_dir=record_dir,
        force=force,
        batch_api=batch_api,
        batch_poll=batch_poll,
        shard=shard,
        on_result=on_result,
        tracker=tracker,
        client=client,
        cite_client=cite_client,
        **_checked("judge_batch", options, BatchKeywords.__optional_keys__),
    )


def _signature(func: Callable[..., Any], keywords: frozenset[str]) -> inspect.Signature:
    """`func`'s signature with its `**options` spelled out: each field of `RunOptions`
    that `keywords` holds, keyword-only, with the field's default and type."""
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    own = [p for p in inspect.signature(func).parameters.values() if p.kind is not p.VAR_KEYWORD]
    fields = [
        inspect.Parameter(name, keyword_only, default=info.default, annotation=info.annotation)
        for name, info in RunOptions.model_fields.items()
        if name in keywords
    ]
    return inspect.signature(func).replace(parameters=[*own, *fields])


judge_session.__signature__ = _signature(judge_session, RunKeywords.__optional_keys__)  # type: ignore[attr-defined]
judge_batch.__signature__ = _signature(judge_batch, BatchKeywords.__optional_keys__)  # type: ignore[attr-defined]
