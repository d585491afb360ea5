"""The options every judged session takes, derived from `harness.config` once.

`judge run` and `judge batch` both take them (batch applies them to each session), so a
default, a bound or a help text is written in one place and the two never drift.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness import config

F = TypeVar("F", bound=Callable[..., Any])


def bounded(flag: str, bound: config.Bound, *, help: str | None = None) -> Callable[[F], F]:
    """A click option with the knob's default, range and help."""
    kind: click.IntRange | click.FloatRange
    if isinstance(bound.default, int):
        low = None if bound.low is None else int(bound.low)
        high = None if bound.high is None else int(bound.high)
        kind = click.IntRange(low, high, min_open=bound.low_open)
    else:
        kind = click.FloatRange(bound.low, bound.high, min_open=bound.low_open)
    return click.option(
        flag, type=kind, default=bound.default, show_default=True, help=help or bound.help
    )


def judging_options(func: F) -> F:
    """The options that decide how a session is judged (the `RunOptions` knobs)."""
    options: list[Callable[[F], F]] = [
        click.option("--model", default=config.JUDGE_MODEL, show_default=True, help="Judge model."),
        click.option(
            "--brief",
            type=click.Path(path_type=Path),
            help="Template to render instead of briefs/judge-deep.md.",
        ),
        click.option(
            "--cli",
            "cli_cmd",
            default=config.CLI_NAME,
            show_default=True,
            help="Value of {{cli}}.",
        ),
        click.option("--no-cite", is_flag=True, help="Skip the claim–quote citation audit."),
        click.option(
            "--cite-model",
            default=config.SCREEN_MODEL,
            show_default=True,
            help="The citation audit's model.",
        ),
        bounded("--cite-concurrency", config.CITE_CONCURRENCY),
        click.option(
            "--cite-against",
            type=click.Choice(config.AGAINST_MODES),
            default=config.DEFAULT_AGAINST,
            show_default=True,
            help="What the citation audit judges support against (see judge cite --against).",
        ),
        bounded(
            "--cite-passage-chars",
            config.CITE_PASSAGE_CHARS,
            help="Characters of each cited source the citation audit reads per claim citing it.",
        ),
        click.option(
            "--audit-fetch",
            type=click.Choice(config.AUDIT_FETCH_MODES),
            default=config.AUDIT_FETCH_DEFAULT,
            show_default=True,
            help="The citation audit's text of a cited source without a snapshot: cached in "
            ".judge/sources/ (stored), fetched and cached (live), or none (off).",
        ),
        bounded(
            "--audit-max-fetches",
            config.AUDIT_MAX_FETCHES,
            help="Most sources the citation audit fetches with --audit-fetch live.",
        ),
        click.option(
            "--fetch",
            type=click.Choice(config.FETCH_MODES),
            default=None,
            help="WebFetch from the web, from sources/ snapshots only, or not at all "
            "(default: live; stored with --replay, which never touches the network unless "
            "--fetch live is given).",
        ),
        bounded("--samples", config.SAMPLES),
        bounded("--max-turns", config.MAX_TURNS),
        bounded("--max-output-tokens", config.MAX_OUTPUT_TOKENS),
        bounded("--max-total-tokens", config.MAX_TOTAL_TOKENS),
        bounded("--max-seconds", config.MAX_SECONDS),
        bounded("--max-fetches", config.MAX_FETCHES),
        bounded("--max-retries", config.MAX_RETRIES),
        bounded("--timeout", config.TIMEOUT),
        bounded("--lock-timeout", config.LOCK_TIMEOUT),
    ]
    for option in reversed(options):
        func = option(func)
    return func
