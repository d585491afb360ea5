"""The run's first stage: its options checked and its session folder found, or a
`UsageError` (exit 2) before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness import config
from harness.errors import UsageError
from harness.run.options import RunOptions
from harness.session.discover import check_output, not_a_session, too_long


@dataclass(frozen=True, slots=True)
class Resolved:
    folder: Path  # resolved: the session's own folder
    opts: RunOptions


def resolve(path: str | Path, options: dict[str, Any]) -> Resolved:
    try:
        opts = RunOptions(**options)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"invalid run options: {problems}") from exc
    # A max_tokens above the model's output limit is refused by the API: refused here first.
    too_many = config.run_limit_refusal(
        opts.model, opts.max_output_tokens, opts.cite_model if opts.cite else None
    )
    if too_many is not None:
        raise UsageError(too_many)
    if opts.replay is not None and opts.record is not None:
        raise UsageError(config.REPLAY_WITH_RECORD)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UsageError(f"session folder {folder} does not exist or is not a folder")
    folder = folder.resolve()
    length = too_long(folder)
    if length is not None:
        raise UsageError(length)
    not_session = not_a_session(folder)
    if not_session is not None:
        raise UsageError(not_session)  # exit 2, and nothing is written into the folder
    # The files the run writes besides its artifacts: never into the session (a file added
    # changes what it judges), never a FIFO (it would hold the run for ever), refused first.
    if opts.record is not None:  # F and F.cite.jsonl
        from harness.model.resolve import cite_recording  # the SDK loads only when asked

        for written in (opts.record, cite_recording(opts.record)):
            check_output(written, folder, "--record", new_folder=True)
    if opts.transcript is not None:
        check_output(opts.transcript, folder, "--transcript", new_folder=True)
    return Resolved(folder, opts)


def lock_wait(opts: RunOptions) -> tuple[float, str]:
    """How long to wait for another run's lock, and which option says so: --max-seconds
    bounds the wait too, and what the wait took is not given again to the audit or judge."""
    if opts.max_seconds < opts.lock_timeout:
        return opts.max_seconds, "--max-seconds (the run's time)"
    return opts.lock_timeout, "--lock-timeout"


__all__ = ["Resolved", "lock_wait", "resolve"]
