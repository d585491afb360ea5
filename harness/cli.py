"""The `judge` command line: parse, call the library, map errors to exit codes.

Heavy imports (the anthropic SDK, jsonschema) happen inside commands so that
`judge validate` and `judge show` start fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.defaults import JUDGE_MODEL, SCREEN_MODEL
from harness.errors import EXIT_FAILED, EXIT_OK, JudgeError, exit_code_for

F = TypeVar("F", bound=Callable[..., Any])


def _err(message: str) -> None:
    """Every human line: redacted, and control characters, bidi overrides and line
    separators from the session or the model shown escaped (one line stays one line)."""
    from harness.redact import redact
    from harness.text.terminal import one_line

    click.echo(one_line(redact(message)), err=True)


def _emit_json(document: Any, indent: int | None = None) -> None:
    """JSON on stdout: redacted and ASCII-safe, so no byte of it acts on a terminal."""
    from harness.redact import artifact_text

    click.echo(artifact_text(document, indent=indent))


class JudgeGroup(click.Group):
    """Maps harness errors to exit codes in one place; no traceback reaches a user."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's own errors ("Invalid value for SESSION: …") quote what was typed: shown
        through `printable` like every other human line, else as click shows them."""
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.ClickException as exc:
            from harness.redact import redact
            from harness.text.terminal import one_line

            exc.message = one_line(redact(exc.message))  # type: ignore[misc]
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            _err("Aborted!")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except JudgeError as exc:
            _err(f"judge: error: {exc.message}")
            ctx.exit(exit_code_for(exc))
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            _err("judge: interrupted")
            ctx.exit(130)
        except Exception as exc:  # a fault of ours: say so plainly, keep the trace opt-in
            if os.environ.get("JUDGE_DEBUG"):
                raise
            name = type(exc).__name__
            _err(f"judge: internal error: {name}: {exc} (set JUDGE_DEBUG=1 to see where)")
            ctx.exit(EXIT_FAILED)


@click.group(cls=JudgeGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="judge-harness", prog_name="judge")
def cli() -> None:
    """Audit a deep-research session: render the judge brief, run the judge, check citations."""


def _session_arg(func: F) -> F:
    return click.argument("session", metavar="SESSION")(func)


def _root_option(func: F) -> F:
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        help="Folder of sessions to resolve a SESSION id under (default: $JUDGE_SESSIONS_ROOT, "
        "else the current folder).",
    )(func)


@cli.command()
@_session_arg
@_root_option
@click.option("--session-id", help="Value of {{sessionId}} (default: the session folder's name).")
@click.option("--cli", "cli_cmd", default="judge", show_default=True, help="Value of {{cli}}.")
@click.option(
    "--brief",
    type=click.Path(path_type=Path),
    help="Template to render instead of briefs/judge-deep.md.",
)
def render(
    session: str, root: Path | None, session_id: str | None, cli_cmd: str, brief: Path | None
) -> None:
    """Print the judge brief rendered for SESSION."""
    from harness.brief import render_for_session
    from harness.resources import DEFAULT_BRIEF
    from harness.session import resolve_session

    folder = resolve_session(session, root)
    sid = folder.name if session_id is None else session_id
    rendered = render_for_session(brief or DEFAULT_BRIEF, sid, folder, cli_cmd)
    for warning in rendered.warnings():
        _err(warning)
    click.echo(rendered.text, nl=not rendered.text.endswith("\n"))


@cli.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON document.")
def validate(file: Path, as_json: bool) -> None:
    """Check FILE against the judge.json contract; exit 0 iff it is valid."""
    from harness.judgment import check_judge_file

    check = check_judge_file(file)
    if as_json:
        _emit_json(
            {
                "file": str(file),
                "valid": check.valid,
                "errors": [issue.as_dict() for issue in check.issues],
            }
        )
    elif check.valid:
        _err(f"{file}: valid judge.json")
    else:
        _err(f"{file}: invalid judge.json ({len(check.issues)} error(s)):")
        for line in check.error_lines():
            _err(f"  - {line}")
    sys.exit(EXIT_OK if check.valid else EXIT_FAILED)


@cli.command()
@_session_arg
@_root_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def show(session: str, root: Path | None, as_json: bool) -> None:
    """Summarise SESSION and validate its judge.json; exit 0 iff judge.json is valid."""
    from harness.report import show_document, show_session, summary_lines
    from harness.session import resolve_session

    loaded, check = show_session(resolve_session(session, root))
    if as_json:
        _emit_json(show_document(loaded, check))
    else:
        for line in summary_lines(loaded, check):
            _err(line)
        if check.valid:
            _emit_json(check.data, indent=2)
    sys.exit(EXIT_OK if check.valid else EXIT_FAILED)


@cli.command()
@_session_arg
@_root_option
@click.option("--offline", is_flag=True, help="Only the deterministic checks; no model.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--model", default=SCREEN_MODEL, show_default=True, help="Support model.")
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=8,
    show_default=True,
    help="Most model requests in flight at once, across all claims.",
)
@click.option(
    "--replay", type=click.Path(path_type=Path), help="Answer from a cite replay file (JSONL)."
)
@click.option("--record", type=click.Path(path_type=Path), help="Record the answers to FILE.")
def cite(
    session: str,
    root: Path | None,
    offline: bool,
    as_json: bool,
    model: str,
    concurrency: int,
    replay: Path | None,
    record: Path | None,
) -> None:
    """Check every claim's citations in SESSION: deterministic checks, then quote support."""
    from harness.audit import audit_folder, table_lines
    from harness.session import resolve_session

    report = audit_folder(
        resolve_session(session, root),
        offline=offline,
        model=model,
        concurrency=concurrency,
        replay=replay,
        record=record,
    )
    if as_json:
        _emit_json(report.to_dict())
    else:
        for line in table_lines(report):
            _err(line)
    sys.exit(EXIT_OK)


@cli.command()
@_session_arg
@_root_option
@click.option("--model", default=JUDGE_MODEL, show_default=True, help="Judge model.")
@click.option("--brief", type=click.Path(path_type=Path), help="Brief template to render.")
@click.option("--session-id", help="Value of {{sessionId}} (default: the folder's name).")
@click.option("--cli", "cli_cmd", default="judge", show_default=True, help="Value of {{cli}}.")
@click.option("--no-cite", is_flag=True, help="Skip the claim–quote citation audit.")
@click.option("--cite-model", default=SCREEN_MODEL, show_default=True)
@click.option(
    "--cite-replay",
    type=click.Path(path_type=Path),
    help="Answer the citation audit from a cite replay file (without it, --replay runs the "
    "audit offline).",
)
@click.option("--cite-concurrency", type=click.IntRange(1, 256), default=8, show_default=True)
@click.option(
    "--fetch",
    type=click.Choice(["live", "stored", "off"]),
    default=None,
    help="WebFetch from the web, from sources/ snapshots only, or not at all "
    "(default: live; stored with --replay, which never touches the network unless "
    "--fetch live is given).",
)
@click.option("--max-turns", type=click.IntRange(1), default=40, show_default=True)
@click.option(
    "--max-output-tokens", type=click.IntRange(256, 128_000), default=8192, show_default=True
)
@click.option("--max-total-tokens", type=click.IntRange(1000), default=400_000, show_default=True)
@click.option(
    "--max-seconds", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True
)
@click.option("--max-fetches", type=click.IntRange(0), default=5, show_default=True)
@click.option("--max-retries", type=click.IntRange(0), default=2, show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds per API request.",
)
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=30.0, show_default=True)
@click.option(
    "--replay", type=click.Path(path_type=Path), help="Replay recorded API responses (JSON Lines)."
)
@click.option(
    "--replay-any",
    is_flag=True,
    help="Replay FILE even if it was recorded for another session, brief or model (or "
    "carries no metadata line).",
)
@click.option(
    "--record",
    type=click.Path(path_type=Path),
    help="Record API responses to FILE (the judge, after a metadata line) and the citation "
    "audit's answers beside it (F.jsonl -> F.cite.jsonl); --replay FILE replays both.",
)
@click.option(
    "--transcript",
    type=click.Path(path_type=Path),
    help="Write every request and response to FILE (JSON Lines).",
)
@click.option("--quiet", "-q", is_flag=True, help="No human summary on stderr.")
def run(
    session: str, root: Path | None, cli_cmd: str, no_cite: bool, quiet: bool, **options: Any
) -> None:
    """Judge SESSION: write judge.json and print the receipt on stdout."""
    from harness.run import Receipt, judge_session
    from harness.session import resolve_session

    try:
        folder = resolve_session(session, root)  # a missing session still gets its receipt
        result = judge_session(folder, cli=cli_cmd, cite=not no_cite, **options)
    except JudgeError as exc:
        click.echo(Receipt(wroteJudge=False, note=exc.message).line())
        raise
    click.echo(result.receipt.line())
    if not quiet:
        from harness.summary import run_summary_lines

        for line in run_summary_lines(result):
            _err(line)
    sys.exit(result.exit_code)


def main() -> None:
    from harness.interrupt import Interrupted, install, stopped

    install()  # SIGINT/SIGTERM: a receipt and exit 130/143, never a traceback
    try:
        cli(prog_name="judge")
    except (Interrupted, KeyboardInterrupt) as exc:  # outside a run (a run handles its own)
        sys.exit(stopped(exc, sys.argv[1:]))
