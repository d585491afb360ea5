"""The `judge` command line: parse, call the library, map errors to exit codes.

Heavy imports (the anthropic SDK, jsonschema) happen inside commands so that
`judge validate` and `judge show` start fast.
"""

from __future__ import annotations

import atexit
import os
import select
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from harness import config
from harness.cli.options import RenamingCommand, RunOptionsCommand, bounded
from harness.cli.say import emit_json, err
from harness.errors import EXIT_FAILED, EXIT_OK, ConfigError, JudgeError, exit_code_for

F = TypeVar("F", bound=Callable[..., Any])


_err = err  # every human line (harness.cli.say)
_emit_json = emit_json  # one JSON document on stdout (harness.cli.say)


# Commands whose `--json` puts one JSON document on stdout: on any error too, as
# {"error": {"code", "message"}}, with the exit code the error has without --json.
JSON_COMMANDS = frozenset({"validate", "show", "cite", "doctor", "agree", "compare"})


def _wants_json(args: list[str]) -> bool:
    """`--json` given to a command that has it (before any `--`)."""
    words = args[: args.index("--")] if "--" in args else args
    command = next((w for w in words if not w.startswith("-")), None)
    return command in JSON_COMMANDS and "--json" in words


def _wants_receipt(args: list[str]) -> bool:
    """`judge run`: its every exit prints a receipt on stdout, click's own usage errors too."""
    words = args[: args.index("--")] if "--" in args else args
    return next((w for w in words if not w.startswith("-")), None) == "run"


def error_code(exc: BaseException) -> str:
    """A stable name for a failure: `usage`, `config`, `template`, `write`, `replay`,
    `model_unavailable`, … the `code` each harness exception class declares; `internal`
    for a fault."""
    if isinstance(exc, click.ClickException | click.Abort):
        return "usage" if exc.exit_code == 2 else "aborted"  # type: ignore[union-attr]
    from harness.interrupt import Interrupted

    if isinstance(exc, KeyboardInterrupt | Interrupted):
        return "interrupted"
    if isinstance(exc, JudgeError):
        return exc.code
    return "internal"


def _emit_error_json(exc: BaseException, message: str) -> None:
    _emit_json({"error": {"code": error_code(exc), "message": message}})


class JudgeGroup(click.Group):
    """Maps harness errors to exit codes in one place; no traceback reaches a user.

    With `--json` (JSON_COMMANDS) every error also prints exactly one JSON object on
    stdout, `{"error": {"code": …, "message": …}}`, so `| jq` always reads one document."""

    json_errors = False

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's own errors ("Invalid value for SESSION: …") quote what was typed: shown
        through `printable` like every other human line, else as click shows them."""
        argv = kwargs.get("args", args[0] if args else None)
        self.json_errors = _wants_json(list(sys.argv[1:] if argv is None else argv))
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.ClickException as exc:
            from harness.redact import redact
            from harness.text.terminal import one_line

            exc.message = one_line(redact(exc.message))  # type: ignore[misc]
            if self.json_errors:
                _emit_error_json(exc, exc.format_message())
            if _wants_receipt(list(sys.argv[1:] if argv is None else argv)):
                from harness.run import Receipt

                click.echo(Receipt(wroteJudge=False, note=exc.format_message()).line())
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            if self.json_errors:
                _emit_error_json(exc, "aborted")
            _err("Aborted!")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except JudgeError as exc:
            if self.json_errors:
                _emit_error_json(exc, exc.message)
            _err(f"judge: error: {exc.message}")
            ctx.exit(exit_code_for(exc))
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt as exc:
            if self.json_errors:
                _emit_error_json(exc, "interrupted")
            _err("judge: interrupted")
            ctx.exit(130)
        except Exception as exc:  # a fault of ours: say so plainly, keep the trace opt-in
            if isinstance(exc, BrokenPipeError) and _stdout_closed():
                # Whoever read standard output stopped (`judge ... | head`): what was
                # printed stays printed, the rest goes nowhere, and that is said.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                _err("judge: standard output was closed before everything was printed")
                ctx.exit(EXIT_FAILED)
            from harness.interrupt import within

            signalled = within(exc)  # a signal that landed inside an import
            if signalled is not None:
                raise signalled from None  # main(): the receipt and exit 130 / 143
            if os.environ.get("JUDGE_DEBUG"):
                raise
            name = type(exc).__name__
            message = f"internal error: {name}: {exc} (set JUDGE_DEBUG=1 to see where)"
            if self.json_errors:
                _emit_error_json(exc, message)
            _err(f"judge: {message}")
            ctx.exit(EXIT_FAILED)


def _stdout_closed() -> bool:
    """Standard output is a pipe whose reader is gone (poll says POLLERR)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


EPILOG = """\b
Environment:
  ANTHROPIC_API_KEY    API key of `run`, `batch`, `cite` and `doctor` (or
                       ANTHROPIC_AUTH_TOKEN); not needed with --replay,
                       --replay-dir, cite --offline, no findings
  ANTHROPIC_BASE_URL   optional: another Messages-API endpoint
  JUDGE_SESSIONS_ROOT  where a SESSION id is looked up without --root
  JUDGE_DEBUG=1        show the traceback of an internal error

\b
With --json (show, validate, cite, doctor, agree, compare) stdout is one JSON
document, on an error or a signal too: {"error": {"code": ..., "message": ...}},
with the same exit code.

\b
Exit codes:
  0    run, show: a valid judge.json is in place; validate: valid;
       render: rendered; cite: the report was produced; report: written;
       batch: every session ends with a valid judge.json; doctor: all ✓;
       agree: the report was produced
  1    run: no judge.json could be written, or a replay ran dry; batch:
       some session's could not;
       show, validate: judge.json missing or invalid; cite: a replay or API
       error; doctor: a check failed; any command: an internal error
  2    usage or configuration: a bad option, no such session, no API key
       and no replay, an unreadable brief template
  130  interrupted by SIGINT (Ctrl-C); 143: by SIGTERM

\b
Examples:
  judge run SESSION                    judge SESSION, print the receipt
  judge run SESSION --replay r.jsonl   the same from recorded responses
  judge show SESSION --json            summary and judge.json check, as JSON
  judge validate SESSION/judge.json    exit 0 iff judge.json is valid
  judge render SESSION                 the brief as the model will see it
  judge cite SESSION --offline         the deterministic citation checks only
  judge report SESSION                 an HTML page of the audit
  judge batch ROOT --results r.csv     every session under ROOT, one process
  judge doctor --batch-api             check key, endpoint, models before a batch
  judge agree labels.jsonl --root R    saved judgments and audits against human labels
"""


# Each command's help after its options (\b keeps the example block as written).
EPILOGS = {
    "render": """Warnings (unknown or near-miss placeholders) go to stderr.

\b
Example:
  judge render sessions/abc --session-id abc --cli "uv run judge"
""",
    "validate": """Each error names a JSON pointer, what was expected and what was found.

\b
Example:
  judge validate sessions/abc/judge.json --json
""",
    "show": """The summary goes to stderr and judge.json to stdout; with --json, one document
on stdout.

\b
Example:
  judge show sessions/abc --json
""",
    "cite": """Quote support needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL optional) or --replay;
--offline runs the deterministic checks only.

\b
Example:
  judge cite sessions/abc --offline --json
""",
    "run": """Needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL optional) unless --replay is given.
Writes SESSION/judge.json and SESSION/.judge/ (run.json, citations.json).

\b
Example:
  judge run sessions/abc --fetch stored --transcript /tmp/abc.jsonl
""",
    "report": """The page is self-contained and inert: inline style and script, no request of any
kind, untrusted content shown as text.

\b
Example:
  judge report sessions/abc -o /tmp/abc.html
""",
    "agree": """Claims: the confusion matrix, accuracy, Cohen's kappa, precision/recall/F1 of
unsupported, by problem kind, calibration. Scores: Spearman, Kendall, MAE,
exact and within-one agreement, quadratic-weighted kappa, Krippendorff's alpha.

\b
Example:
  judge agree labels.jsonl --root sessions/ --html /tmp/agree.html
""",
    "doctor": """Spends a few free requests (Models, Message Batches list) and one Messages
request of a few tokens (the structured-output check), and says so.

\b
Example:
  judge doctor --model claude-sonnet-5-5 --batch-api --root sessions/
""",
    "batch": """One JSON line per session on stdout; progress and a summary table on stderr.

\b
Example:
  judge batch sessions/ --sessions 8 --results /tmp/results.csv
""",
}


@click.group(
    cls=JudgeGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG
)
@click.version_option(package_name="judge-harness", prog_name="judge")
def cli() -> None:
    """Audit a deep-research session: render the judge brief, run the judge, check citations.

    SESSION is a session folder, or a session id looked up under --root, else under
    $JUDGE_SESSIONS_ROOT, else under the current folder. `judge COMMAND --help` lists the
    options of one command.
    """


def _research_session(session: str, root: Path | None) -> Path:
    """SESSION resolved, and refused (exit 2, one message for every command) when the
    folder is not a research session."""
    from harness.session.discover import require_session
    from harness.session.loader import resolve_session

    return require_session(resolve_session(session, root))


def _session_arg(func: F) -> F:
    return click.argument("session", metavar="SESSION")(func)


def _root_option(func: F) -> F:
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        help="Folder of sessions to resolve a SESSION id under (default: $JUDGE_SESSIONS_ROOT, "
        "else the current folder).",
    )(func)


@cli.command(epilog=EPILOGS["render"])
@_session_arg
@_root_option
@click.option("--session-id", help="Value of {{sessionId}} (default: the session folder's name).")
@click.option(
    "--cli", "cli_cmd", default=config.CLI_NAME, show_default=True, help="Value of {{cli}}."
)
@click.option(
    "--brief",
    type=click.Path(path_type=Path),
    help="Template to render instead of briefs/judge-deep.md.",
)
def render(
    session: str, root: Path | None, session_id: str | None, cli_cmd: str, brief: Path | None
) -> None:
    """Print the judge brief rendered for SESSION."""
    from harness.contract.brief import render_for_session
    from harness.resources import DEFAULT_BRIEF

    folder = _research_session(session, root)
    sid = folder.name if session_id is None else session_id
    rendered = render_for_session(brief or DEFAULT_BRIEF, sid, folder, cli_cmd)
    for warning in rendered.warnings():
        _err(warning)
    click.echo(rendered.text, nl=not rendered.text.endswith("\n"))


@cli.command(epilog=EPILOGS["validate"])
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON document.")
def validate(file: Path, as_json: bool) -> None:
    """Check FILE against the judge.json contract; exit 0 iff it is valid."""
    from harness.contract.judgment import check_judge_file

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


@cli.command(epilog=EPILOGS["show"])
@_session_arg
@_root_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def show(session: str, root: Path | None, as_json: bool) -> None:
    """Summarise SESSION and validate its judge.json; exit 0 iff judge.json is valid."""
    from harness.cli.audited import audit_document, audit_lines
    from harness.session.show import show_document, show_session, summary_lines

    loaded, check = show_session(_research_session(session, root))
    if as_json:
        _emit_json({**show_document(loaded, check), "citations": audit_document(loaded.dir)})
    else:
        for line in [*summary_lines(loaded, check), *audit_lines(loaded.dir)]:
            _err(line)
        if check.valid:
            _emit_json(check.data, indent=2)
    sys.exit(EXIT_OK if check.valid else EXIT_FAILED)


# `judge cite`'s options as `judge run` spells them; the spellings it had before still work.
CITE_RENAMED = {
    "--model": "--cite-model",
    "--concurrency": "--cite-concurrency",
    "--against": "--cite-against",
    "--passage-chars": "--cite-passage-chars",
    "--fetch": "--audit-fetch",
    "--max-fetches": "--audit-max-fetches",
}


@cli.command(epilog=EPILOGS["cite"], cls=RenamingCommand, renamed=CITE_RENAMED)
@_session_arg
@_root_option
@click.option("--offline", is_flag=True, help="Only the deterministic checks; no model.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--cite-model", default=config.SCREEN_MODEL, show_default=True, help="Support model.")
@bounded(
    "--cite-concurrency",
    config.CITE_CONCURRENCY,
    help="Most model requests in flight at once, across all claims.",
)
@click.option(
    "--replay", type=click.Path(path_type=Path), help="Answer from a cite replay file (JSONL)."
)
@click.option("--record", type=click.Path(path_type=Path), help="Record the answers to FILE.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.option(
    "--cite-against",
    type=click.Choice(config.AGAINST_MODES),
    default=config.DEFAULT_AGAINST,
    show_default=True,
    help="Judge support against the cited sources' text, the claim's quotes, or (auto) "
    "the sources where they have text and the quotes otherwise.",
)
@bounded(
    "--cite-passage-chars",
    config.CITE_PASSAGE_CHARS,
    help="Characters of each cited source read for each claim citing it: its most "
    "relevant passages (the source sends the union over its claims).",
)
@click.option(
    "--audit-fetch",
    type=click.Choice(config.FETCH_MODES),
    default=config.AUDIT_FETCH_DEFAULT,
    show_default=True,
    help="A cited source without a snapshot: read its text cached in .judge/sources/ "
    "(stored), fetch it through WebFetch's guard and cache it (live), or neither (off).",
)
@bounded(
    "--audit-max-fetches",
    config.AUDIT_MAX_FETCHES,
    help="Most sources fetched with --audit-fetch live.",
)
def cite(
    session: str,
    root: Path | None,
    offline: bool,
    as_json: bool,
    cite_model: str,
    cite_concurrency: int,
    replay: Path | None,
    record: Path | None,
    quiet: bool,
    cite_against: config.Against,
    cite_passage_chars: int,
    audit_fetch: config.FetchMode,
    audit_max_fetches: int,
) -> None:
    """Check every claim's citations in SESSION: deterministic checks, then quote support."""
    from harness.audit import audit_folder
    from harness.cli.cite_table import table_lines

    if not offline and replay is None:
        for warning in config.run_model_warnings(cite_model, None):
            _err(f"judge: {warning}")
    folder = _research_session(session, root)  # before the key: a folder of sessions is not one
    if record is not None:
        from harness.session.discover import check_output

        check_output(record, folder, "--record")  # saved at the end: its folder must exist
    progress = None
    if not quiet:
        from harness.cli.progress import ProgressLines

        # judge cite has no --timeout: the defaults audit_folder's client is built with.
        retries = int(config.MAX_RETRIES.default)
        progress = ProgressLines(
            request=f"at most {config.TIMEOUT.default:g} s, retried at most {retries} times"
        )
    report = audit_folder(
        folder,
        offline=offline,
        model=cite_model,
        concurrency=cite_concurrency,
        replay=replay,
        record=record,
        progress=progress,
        against=cite_against,
        passage_chars=cite_passage_chars,
        fetch=audit_fetch,
        max_fetches=audit_max_fetches,
    )
    if as_json:
        _emit_json(report.to_dict())
    else:
        from harness.cli.width import stderr_width
        from harness.session.file_problems import of_folder

        for line in table_lines(report, stderr_width(), of_folder(folder)):
            _err(line)
    sys.exit(EXIT_OK)


@cli.command(epilog=EPILOGS["run"], cls=RunOptionsCommand, at=2)
@_session_arg
@_root_option
@click.option(
    "--force",
    is_flag=True,
    help="Judge again even when judge.json is up to date (written by a completed run on "
    "identical inputs).",
)
@click.option("--quiet", "-q", is_flag=True, help="No human summary on stderr.")
def run(session: str, root: Path | None, quiet: bool, **options: Any) -> None:
    """Judge SESSION: write judge.json and print the receipt on stdout."""
    from harness.run import Receipt, judge_session
    from harness.session.loader import resolve_session

    if options.get("replay") is None:  # a replay sends nothing: no limit to know
        cite_model = options["cite_model"] if options["cite"] else None
        for warning in config.run_model_warnings(options["model"], cite_model):
            _err(f"judge: {warning}")
    try:
        folder = resolve_session(session, root)  # a missing session still gets its receipt
        progress = None
        if not quiet:
            from harness.cli.progress import ProgressLines

            progress = ProgressLines(request=f"at most {options['timeout']:g} s (--timeout)")
        result = judge_session(folder, progress=progress, **options)
    except JudgeError as exc:
        if isinstance(exc, ConfigError) and "judge doctor" not in exc.message:
            from harness.run import DOCTOR_HINT

            exc.message = f"{exc.message}; {DOCTOR_HINT}"  # no key, a refused key (401/403)
        click.echo(Receipt(wroteJudge=False, note=exc.message).line())
        raise
    click.echo(result.receipt.line())
    if not quiet:
        from harness.cli.summary import run_summary_lines

        for line in run_summary_lines(result):
            _err(line)
    sys.exit(result.exit_code)


@cli.command(epilog=EPILOGS["report"])
@click.argument("target", metavar="SESSION|ROOT")
@_root_option
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the page to FILE (default: SESSION/.judge/report.html, or ROOT/report.html "
    "for a folder of sessions).",
)
@click.option(
    "--labels",
    type=click.Path(path_type=Path),
    help="ROOT only: add the agreement of the judge and the audit with these human labels "
    "(as `judge agree LABELS --root ROOT`).",
)
@click.option(
    "--open",
    "open_page",
    is_flag=True,
    help="Open the page in the desktop's browser (xdg-open, $BROWSER) once written.",
)
def report(
    target: str, root: Path | None, output: Path | None, labels: Path | None, open_page: bool
) -> None:
    """Write a self-contained HTML page: SESSION|ROOT is one session (its audit) or a
    folder of sessions (an index over them). The page's path is printed on stdout."""
    from harness.page import build
    from harness.session.loader import resolve_session

    folder = resolve_session(target, root)
    if output is not None:
        from harness.session.discover import check_output

        check_output(output, folder, "-o/--output")
    section = None
    if labels is not None:
        from harness.cli.agree import agree as compute
        from harness.page.agreement import agreement_section

        section = agreement_section(compute(labels, folder, with_self=False))
    written = build(folder, None if output is None else output.expanduser(), section)
    for failure in written.failed:
        _err(f"judge: warning: {failure}")
    extra = f" ({len(written.pages)} session pages written)" if written.kind == "index" else ""
    path = written.path.absolute()
    from harness.text.terminal import one_line

    shown = one_line(str(path))  # a folder's name may hold escapes: shown, never acted on
    _err(f"wrote {shown}{extra}")
    click.echo(shown)  # the page's path alone on stdout: a script can open it
    if open_page:
        _open_in_browser(path)
    sys.exit(EXIT_OK)


@cli.command(epilog=EPILOGS["agree"])
@click.argument("labels", type=click.Path(path_type=Path), metavar="LABELS")
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder holding the labelled sessions (default: $JUDGE_SESSIONS_ROOT, else the "
    "current folder).",
)
@click.option(
    "--self",
    "with_self",
    is_flag=True,
    help="Also the judge against its own samples (.judge/samples/, from --samples K).",
)
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON document.")
@click.option(
    "--html",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report as an inert HTML page to FILE.",
)
def agree(
    labels: Path, root: Path | None, with_self: bool, as_json: bool, html: Path | None
) -> None:
    """Measure the saved judgments and audits of the labelled sessions against human labels
    (LABELS: JSON Lines, schemas/labels.schema.json); no model request."""
    from harness.cli.agree import agree as compute
    from harness.cli.agree_text import agreement_lines

    if html is not None:
        from harness.cli.agree import labels_root
        from harness.session.discover import check_output

        check_output(html, labels_root(root), "--html")
    report = compute(labels, root, with_self)
    if html is not None:
        from harness.page.agreement import write_agreement_page

        write_agreement_page(report, html)
    if as_json:
        _emit_json(report.to_dict(), indent=2)
    else:
        for line in agreement_lines(report):
            _err(line)
    if html is not None:
        _err(f"wrote {html}")
    sys.exit(EXIT_OK)


def _open_in_browser(path: Path) -> None:
    """The desktop's opener (webbrowser: $BROWSER, xdg-open, a known browser), or a line
    saying there is none; the page is written either way, so this never fails the command."""
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        _err(f"judge: no browser or desktop opener found here; open {path} yourself")
        return
    if browser.open(path.as_uri()):
        _err(f"opened {path} in the browser")
    else:
        _err(f"judge: the browser could not be started; open {path} yourself")


@cli.command(epilog=EPILOGS["doctor"])
@click.option("--model", default=config.JUDGE_MODEL, show_default=True, help="Judge model.")
@click.option(
    "--cite-model", default=config.SCREEN_MODEL, show_default=True, help="The audit's model."
)
@click.option("--no-cite", is_flag=True, help="The audit will be off: skip its model's checks.")
@bounded("--max-output-tokens", config.MAX_OUTPUT_TOKENS)
@click.option("--batch-api", is_flag=True, help="Also check that Message Batches are allowed.")
@_root_option
@bounded("--timeout", config.DOCTOR_TIMEOUT)
@click.option("--json", "as_json", is_flag=True, help="Print the checks as one JSON document.")
def doctor(
    model: str,
    cite_model: str,
    no_cite: bool,
    max_output_tokens: int,
    batch_api: bool,
    root: Path | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Check the set-up before judging: the key, the endpoint, the models, structured
    output, Message Batches (with --batch-api) and the session root. Exit 1 on any ✗."""
    from harness.cli.doctor import diagnose, lines

    document = diagnose(
        model=model,
        cite_model=cite_model,
        no_cite=no_cite,
        max_output_tokens=max_output_tokens,
        batch_api=batch_api,
        root=root,
        timeout=timeout,
    )
    if as_json:
        _emit_json({k: v for k, v in document.items() if k != "spentLine"})
    else:
        for line in lines(document):
            _err(line)
    sys.exit(EXIT_OK if document["ok"] else EXIT_FAILED)


def _batch_options(func: F) -> F:
    from harness.cli.batch import batch_options

    return batch_options(func)


@cli.command(epilog=EPILOGS["batch"], cls=RunOptionsCommand, batch=True)
@_batch_options
def batch(**options: Any) -> None:
    """Judge every session folder under ROOT, or only the [SESSION]... named, in one process.

    One JSON line per session on stdout as it ends; progress, then a summary table, on
    stderr. Sessions a completed run judged on identical inputs are skipped (--force).
    """
    from harness.cli.batch import run_batch

    sys.exit(run_batch(**options))


# `judge compare` (harness/cli/compare.py): the command and its example.
from harness.cli.compare import register as _register_compare  # noqa: E402

_register_compare(cli)


def main() -> None:
    from harness.interrupt import Interrupted, install, stopped

    try:
        install()  # SIGINT/SIGTERM: a receipt and exit 130/143, never a traceback
        cli(prog_name="judge")
    except (Interrupted, KeyboardInterrupt) as exc:  # outside a run (a run handles its own)
        if _wants_json(sys.argv[1:]):  # `--json`: one object on stdout, a signal too
            from harness.interrupt import as_interrupted

            _emit_error_json(exc, f"{as_interrupted(exc)}")
        sys.exit(stopped(exc, sys.argv[1:]))


def entry() -> NoReturn:
    """The `judge` program (the console script, `python -m harness`): `main`, then the
    process ends at once (`leave`). Called in a process of its own only; `main` raises
    SystemExit for callers that go on."""
    try:
        main()
    except SystemExit as exc:
        leave(exc.code)
    leave(0)


def leave(code: object) -> NoReturn:
    """End the process with `code` once everything is said, without the interpreter's
    teardown: freeing the SDK's thousands of classes one by one took 0.5-1.1 s after the
    last line of every command (bench/bench_batch.py's start-up trace, docs/batch.md).

    Nothing is skipped that matters: every artifact is already written, fsynced and
    closed (harness.fs.artifacts); the atexit handlers run (the document workers,
    logging); standard output and error are flushed, and a pipe closed early gives the
    exit code Python gives (120). With a thread of ours still running (none should be)
    the normal exit waits for it, as Python would."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("text"): Python prints it and exits 1
        print(code, file=sys.stderr)
        status = 1
    if any(
        t.is_alive() and not t.daemon
        for t in threading.enumerate()
        if t is not threading.main_thread()
    ):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream
            status = status or 120
    os._exit(status)
