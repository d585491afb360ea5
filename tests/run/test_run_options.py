"""`RunOptions` is the one definition of a run's options: `judge run`'s and `judge batch`'s
options are generated from its fields, and the up-to-date rule's inputs and batch's
per-session options are read from it."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Literal

import click
import pytest
from pydantic import Field

from harness.batch import core as batch_core
from harness.cli import cli
from harness.cli.options import run_options
from harness.run import uptodate
from harness.run.options import Flag, RunOptions

OWN = {"run": {"session", "root", "force", "quiet", "help"}}


def _params(command: str) -> dict[str, click.Parameter]:
    return {p.name: p for p in cli.commands[command].params if p.name is not None}


def test_every_field_is_an_option_of_judge_run_and_back() -> None:
    params = _params("run")
    assert set(params) - OWN["run"] == set(RunOptions.model_fields)
    for name, info in RunOptions.model_fields.items():
        option = params[name]
        assert isinstance(option, click.Option)
        assert option.help == info.description
        if option.is_flag:
            no = "--no-" if info.default is True else "--"
            assert option.opts == [no + name.replace("_", "-")]
        else:
            assert option.opts == ["--" + name.replace("_", "-")]
            assert option.default == info.default


def test_judge_batch_takes_every_field_but_the_per_run_files() -> None:
    params = _params("batch")
    fields = set(RunOptions.model_fields)
    per_run = set(RunOptions.per_session())
    assert fields - per_run <= set(params)
    assert not per_run & set(params)
    replay_any = params["replay_any"]
    assert isinstance(replay_any, click.Option) and (replay_any.help or "").startswith(
        "With --replay-dir"
    )


def test_the_defaults_parsed_are_the_models() -> None:
    ctx = cli.commands["run"].make_context("run", ["some-session"])
    given = {k: v for k, v in ctx.params.items() if k in RunOptions.model_fields}
    assert RunOptions(**given) == RunOptions()
    ctx = cli.commands["run"].make_context("run", ["s", "--no-cite", "--cite-against", "quotes"])
    assert ctx.params["cite"] is False and ctx.params["cite_against"] == "quotes"


class Extended(RunOptions):
    max_widgets: int = Field(3, ge=1, le=9, description="Most widgets.")
    colour: Literal["red", "blue"] = Field("red", description="The colour.")
    shout: bool = Field(False, description="Shout.")
    scratch: str | None = Field(None, description="Scratch.")


def test_adding_a_field_adds_the_option() -> None:
    options = {o.name: o for o in run_options(Extended)}
    assert set(options) == set(Extended.model_fields)
    widgets = options["max_widgets"]
    assert widgets.opts == ["--max-widgets"] and widgets.default == 3
    assert isinstance(widgets.type, click.IntRange)
    assert (widgets.type.min, widgets.type.max) == (1, 9)
    assert widgets.help == "Most widgets."
    colour = options["colour"]
    assert isinstance(colour.type, click.Choice) and list(colour.type.choices) == ["red", "blue"]
    assert options["shout"].is_flag and options["shout"].opts == ["--shout"]
    assert options["scratch"].opts == ["--scratch"] and options["scratch"].default is None


def test_a_flag_says_what_batch_takes_instead() -> None:
    class PerRun(RunOptions):
        sidecar: Annotated[str | None, Flag(per_session="sidecar_dir", input=False)] = Field(
            None, description="One sidecar file per run."
        )

    assert PerRun.per_session()["sidecar"] == "sidecar_dir"
    assert "sidecar" in PerRun.not_inputs()
    assert "sidecar" not in {o.name for o in run_options(PerRun, batch=True)}
    assert "sidecar" in {o.name for o in run_options(PerRun)}


def test_the_derived_lists_are_the_ones_written_before() -> None:
    not_inputs, per_session = uptodate._NOT_INPUTS, batch_core._PER_SESSION
    assert not_inputs == {
        "record",
        "transcript",
        "lock_timeout",
        "timeout",
        "max_retries",
        "cite_concurrency",
    }
    assert per_session == {
        "replay": "replay_dir (DIR/<session>.jsonl)",
        "cite_replay": "replay_dir (DIR/<session>.cite.jsonl)",
        "record": "record_dir (DIR/<session>.jsonl and DIR/<session>.cite.jsonl)",
        "transcript": "one `judge run --transcript` per session",
        "session_id": "the session folder's name, which each session uses",
    }


def test_the_command_line_starts_without_pydantic() -> None:
    code = "import sys, harness.cli.main; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_audit_options_are_the_runs() -> None:
    opts = RunOptions(cite_against="sources", max_seconds=9.0, audit_fetch="live")
    audit = opts.audit_options()
    for name in audit.__slots__:
        assert getattr(audit, name) == getattr(opts, name)


def test_a_field_without_a_command_line_form_is_refused() -> None:
    class Odd(RunOptions):
        weights: dict[str, int] = Field(default_factory=dict, description="Weights.")

    with pytest.raises(TypeError, match="weights"):
        run_options(Odd)
