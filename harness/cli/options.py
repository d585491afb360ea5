"""The options every judged session takes, generated from `RunOptions`' fields.

`judge run` and `judge batch` both take them (batch applies them to each session, less
those naming one file per run): a field's flag, type, range or choices, default and help
all come from the field (harness.run.options), so adding a field adds the option and the
command line and the Python API never drift. They are generated when a command first
needs its parameters (its help, or parsing its arguments), so `judge validate` and
`judge show` start without loading pydantic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args, get_origin

import click

from harness import config

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from harness.run.options import Flag, RunOptions

F = TypeVar("F", bound=Callable[..., Any])


def bounded(flag: str, bound: config.Bound, *, help: str | None = None) -> Callable[[F], F]:
    """A click option with the knob's default, range and help."""
    kind: click.IntRange | click.FloatRange
    if isinstance(bound.default, int):
        kind = int_range(bound)
    else:
        kind = click.FloatRange(bound.low, bound.high, min_open=bound.low_open)
    return click.option(
        flag, type=kind, default=bound.default, show_default=True, help=help or bound.help
    )


def int_range(bound: config.Bound) -> click.IntRange:
    """The range of an integer knob, as `bounded` gives it."""
    low = None if bound.low is None else int(bound.low)
    high = None if bound.high is None else int(bound.high)
    return click.IntRange(low, high, min_open=bound.low_open)


def renamed_args(args: list[str], renamed: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """`args` with each old spelling of an option (`--old`, `--old=VALUE`) written the
    new way, before any `--`; and the old spellings met, in order."""
    out: list[str] = []
    met: list[str] = []
    for at, arg in enumerate(args):
        if arg == "--":
            return out + args[at:], met
        old, eq, value = arg.partition("=")
        if old in renamed:
            met.append(old)
            arg = renamed[old] + eq + value
        out.append(arg)
    return out, met


class RenamingCommand(click.Command):
    """A command some of whose options had another spelling (`renamed`: old to new): the
    old one still works, hidden from the help, and says on stderr to use the new one."""

    def __init__(self, *args: Any, renamed: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = dict(renamed)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args, met = renamed_args(args, self.renamed)
        for old in dict.fromkeys(met):
            click.echo(f"judge: warning: {old} is deprecated; use {self.renamed[old]}", err=True)
        return super().parse_args(ctx, args)


def _range(kind: type, info: FieldInfo) -> click.IntRange | click.FloatRange:
    low: Any = None
    high: Any = None
    low_open = False
    for rule in info.metadata:
        if getattr(rule, "ge", None) is not None:
            low = rule.ge
        if getattr(rule, "gt", None) is not None:
            low, low_open = rule.gt, True
        if getattr(rule, "le", None) is not None:
            high = rule.le
    if kind is int:
        return click.IntRange(low, high, min_open=low_open)
    return click.FloatRange(low, high, min_open=low_open)


def _type(annotation: Any) -> Any:
    """The field's type without `None`: `Path | None` is `Path`."""
    kinds = [k for k in get_args(annotation) if k is not type(None)]
    if get_origin(annotation) is not Literal and len(kinds) == 1:
        return kinds[0]
    return annotation


def field_option(name: str, info: FieldInfo, flag: Flag, *, batch: bool = False) -> click.Option:
    """The click option of one `RunOptions` field: `--field-name` (a field true by default
    is the flag `--no-field-name`), its choices, range, default and help."""
    kind = _type(info.annotation)
    spelling = flag.spelling or "--" + name.replace("_", "-")
    text = (flag.batch_help if batch else None) or info.description
    if kind is bool:
        if info.default is True:
            spelling = flag.spelling or "--no-" + name.replace("_", "-")
            return click.Option(
                [spelling, name], is_flag=True, flag_value=False, default=True, help=text
            )
        return click.Option([spelling, name], is_flag=True, help=text)
    choice: Any = None
    if get_origin(kind) is Literal:
        choice = click.Choice(get_args(kind))
    elif kind is Path:
        choice = click.Path(path_type=Path)
    elif kind in (int, float):
        choice = _range(kind, info)
    elif kind is not str:
        raise TypeError(f"RunOptions.{name}: no command-line form for {kind!r}")
    shown = info.default is not None
    return click.Option(
        [spelling, name], type=choice, default=info.default, show_default=shown, help=text
    )


def run_options(
    model: type[RunOptions] | None = None, *, batch: bool = False
) -> list[click.Option]:
    """Every field's option, in the fields' order; for `judge batch`, less the fields that
    name one file per run (`Flag.per_session`)."""
    if model is None:
        from harness.run.options import RunOptions

        model = RunOptions
    return [
        field_option(name, info, model.flag(name), batch=batch)
        for name, info in model.model_fields.items()
        if not (batch and model.flag(name).per_session)
    ]


class RunOptionsCommand(click.Command):
    """A command that takes `RunOptions`' options (generated on first use) at `at` among
    its own parameters (None: after them); `batch`: as `judge batch` does."""

    def __init__(self, *args: Any, at: int | None = None, batch: bool = False, **kwargs: Any):
        self._at = at
        self._batch = batch
        self._generated: list[click.Parameter] | None = None
        super().__init__(*args, **kwargs)

    @property
    def params(self) -> list[click.Parameter]:
        if self._generated is None:
            self._generated = list(run_options(batch=self._batch))
            at = len(self._own) if self._at is None else self._at
            self._own[at:at] = self._generated
        return self._own

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._own = value
