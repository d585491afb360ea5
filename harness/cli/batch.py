"""`judge batch`'s options and body; `harness.cli.main` holds the thin command function.

stdout: one JSON line per session as it ends. stderr: the progress display (a `rich` bar
on a terminal, a plain line every `--progress-interval` seconds otherwise), then the
summary table. Exit 0 when every session ends with a valid judge.json, 1 when any does
not, 2 for usage or configuration.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness import config
from harness.cli.options import bounded
from harness.errors import ConfigError, UsageError

F = TypeVar("F", bound=Callable[..., Any])

_BATCH_OPTIONS: list[Callable[[F], F]] = [
    click.argument("root", type=click.Path(file_okay=False, path_type=Path)),
    click.argument("names", nargs=-1, metavar="[SESSION]..."),
    bounded("--sessions", config.BATCH_SESSIONS),
    bounded("--cite-requests", config.BATCH_CITE_REQUESTS),
    click.option(
        "--max-batch-tokens",
        type=click.IntRange(1),
        help="Token budget for the whole batch (judge and audit); once spent nothing new starts.",
    ),
    click.option(
        "--max-batch-seconds",
        type=click.FloatRange(min=0, min_open=True),
        help="Wall-clock limit for the whole batch.",
    ),
    click.option(
        "--replay-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Answer each session from DIR/<session>.jsonl and its audit from "
        "DIR/<session>.cite.jsonl (no key, no network).",
    ),
    click.option(
        "--record-dir",
        type=click.Path(file_okay=False, path_type=Path),
        help="Record each session's answers to DIR/<session>.jsonl and its audit's to "
        "DIR/<session>.cite.jsonl, as `judge run --record` does (replay with --replay-dir).",
    ),
    click.option(
        "--results",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write the summary table to FILE (.csv or .jsonl).",
    ),
    click.option("--force", is_flag=True, help="Judge again sessions that are up to date."),
    click.option(
        "--batch-api",
        is_flag=True,
        help="Send the citation audit and the agent turns of all sessions through the "
        "Message Batches API (half price; one batch per round; resumable under "
        "ROOT/.judge-batch/).",
    ),
    click.option(
        "--batch-poll",
        type=click.FloatRange(min=0, min_open=True),
        default=config.BATCH_POLL_SECONDS,
        show_default=True,
        help="Seconds between polls of a submitted Message Batch.",
    ),
    click.option(
        "--progress-interval",
        type=click.FloatRange(min=0, min_open=True),
        default=10.0,
        show_default=True,
        help="Seconds between plain progress lines when stderr is not a terminal.",
    ),
    click.option(
        "--shard",
        metavar="K/N",
        help="Judge only shard K of N (K from 0 to N-1; by a stable hash of each session's "
        "path under ROOT), or auto/N: K from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.",
    ),
    click.option(
        "--merge-results",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Judge nothing: gather every session's result under ROOT (whichever shard "
        "judged it) into FILE (.csv or .jsonl) and the table, naming sessions not judged yet.",
    ),
    click.option("--quiet", "-q", is_flag=True, help="No progress and no table on stderr."),
]


def batch_options(func: F) -> F:
    """`judge batch`'s own options; its command (`RunOptionsCommand(batch=True)`) adds
    every option of `judge run` after them, less those naming one file per run."""
    for option in reversed(_BATCH_OPTIONS):
        func = option(func)
    return func


NO_KEY = (
    "no API key: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL; `judge doctor` "
    "checks them), or pass --replay-dir DIR to answer each session from DIR/<session>.jsonl"
)


def _check_root(root: Path, names: tuple[str, ...]) -> None:
    """ROOT must be a folder of sessions: a session folder itself, or a folder holding
    none, is a usage error with the way out (not "0/0 sessions done")."""
    from harness.batch.discover import MARKERS, discover, is_session

    folder = root.expanduser()
    if names:
        return  # each name is checked as a session under ROOT by discover()
    if is_session(folder):
        raise UsageError(
            f"{folder} is a session folder, not a folder of sessions: judge it with "
            f"`judge run {folder}`, or give judge batch the folder that holds it "
            f"({folder.resolve().parent})"
        )
    if not discover(folder):
        raise UsageError(
            f"{folder} holds no session folder (a folder directly under it with one of "
            f"{', '.join(MARKERS)}); give judge batch the folder that holds the sessions"
        )


def run_batch(
    root: Path,
    names: tuple[str, ...],
    *,
    sessions: int,
    cite_requests: int,
    max_batch_tokens: int | None,
    max_batch_seconds: float | None,
    replay_dir: Path | None,
    record_dir: Path | None,
    results: Path | None,
    force: bool,
    batch_api: bool,
    batch_poll: float,
    shard: str | None,
    merge_results: Path | None,
    progress_interval: float,
    quiet: bool,
    **options: Any,
) -> int:
    """The command's body: returns the exit code (usage errors raise `UsageError`)."""
    from harness.batch.core import BatchInterrupted, SessionResult, judge_batch
    from harness.batch.limits import BatchLimits
    from harness.batch.progress import Tracker
    from harness.batch.table import check_target, write_results
    from harness.cli.batch_progress import LiveDisplay, PlainDisplay
    from harness.cli.batch_table import render

    if results is not None:
        check_target(results, root)  # before any session is judged
    if merge_results is not None:
        return run_merge(root, names, merge_results, shard=shard, quiet=quiet)
    _check_root(root, names)
    if replay_dir is None:
        for warning in config.run_model_warnings(
            options["model"], options["cite_model"] if options["cite"] else None
        ):
            click.echo(f"judge batch: {warning}", err=True)
    limits = BatchLimits(
        sessions=sessions,
        cite_requests=cite_requests,
        max_tokens=max_batch_tokens,
        max_seconds=max_batch_seconds,
    )
    tracker = Tracker()
    display: LiveDisplay | PlainDisplay | None = None
    console = None
    if not quiet:
        from rich.console import Console

        from harness.cli.batch_widths import env_columns

        tty = sys.stderr.isatty()
        # A terminal: its width as it is (rich measures it, or COLUMNS). A log file is read
        # wide: 160 columns, unless COLUMNS says otherwise.
        console = Console(stderr=True, highlight=False, width=None if tty else env_columns() or 160)
        if tty:
            display = LiveDisplay(tracker, console)
        else:
            display = PlainDisplay(tracker, sys.stderr, progress_interval)

    def emit(result: SessionResult) -> None:
        click.echo(result.line())
        sys.stdout.flush()

    if display is not None:  # once the batch begins: a usage error shows no progress
        tracker.on_begin.append(display.start)
    interrupted: BatchInterrupted | None = None
    try:
        batch = judge_batch(
            root,
            list(names) or None,
            limits=limits,
            replay_dir=replay_dir,
            record_dir=record_dir,
            force=force,
            batch_api=batch_api,
            batch_poll=batch_poll,
            shard=shard,
            on_result=emit,
            tracker=tracker,
            **options,
        )
    except BatchInterrupted as exc:  # wound down: every session has its line already
        interrupted, batch = exc, exc.result
    except ConfigError as exc:
        if not exc.data.get("missing_key"):
            raise
        raise ConfigError(NO_KEY) from exc  # batch has --replay-dir, not --replay FILE
    finally:
        if display is not None and tracker.begun:
            display.stop()
    from harness.interrupt import deferred

    with deferred():  # the account of the batch is written whole, even as it is stopped
        if results is not None:
            write_results(results, batch)
        if console is not None:
            render(batch, console)
            if results is not None:
                console.print(f"judge batch: results written to {results}", markup=False)
    if interrupted is not None:
        raise interrupted  # exit 130 / 143, as any interrupted command
    return batch.exit_code


def run_merge(
    root: Path, names: tuple[str, ...], target: Path, *, shard: str | None, quiet: bool
) -> int:
    """`judge batch ROOT --merge-results FILE`: the command's body, its exit code."""
    from harness.batch.merge import merge_results
    from harness.batch.table import check_target, write_results
    from harness.cli.batch_table import render

    check_target(target, root, "--merge-results")  # before anything is read
    batch = merge_results(root, list(names) or None, shard)
    for result in batch.sessions:
        click.echo(result.line())
    sys.stdout.flush()
    write_results(target, batch, "--merge-results")
    if not quiet:
        from rich.console import Console

        console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)
        render(batch, console)
        waiting = [s.session for s in batch.sessions if s.outcome == "not-judged"]
        console.print(
            f"judge batch: merged {len(batch.sessions)} session(s) into {target}; "
            f"{len(waiting)} not judged yet",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return batch.exit_code


__all__ = ["batch_options", "run_batch", "run_merge"]
