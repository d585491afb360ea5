"""Every knob of a run, in one typed value: `RunOptions`.

This is the one definition: `judge run`'s and `judge batch`'s options are generated from
its fields (harness.cli.options), the Python API's keywords are its fields
(`RunKeywords`, harness/__init__.py), the up-to-date rule's inputs and batch's per-session
options are read from each field's `Flag`, and the audit's own options are built from it
by `RunOptions.audit_options`. Defaults, bounds and enumerations come from `harness.config`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from harness import config
from harness.audit.options import AuditOptions
from harness.strict import Strict


@dataclass(frozen=True, slots=True)
class Flag:
    """What a field is beyond its type: how the command line spells it, whether it is an
    input of the judgment, and what `judge batch` takes instead of a per-run file."""

    spelling: str | None = None  # default `--field-name`; a field true by default: `--no-…`
    input: bool = True  # changing it may change the judgment (harness.run.uptodate)
    per_session: str | None = None  # names one file per run: what judge batch uses instead
    batch_help: str | None = None  # judge batch's help for it, where it differs


def _field(bound: config.Bound, help: str | None = None) -> Any:
    """A pydantic field with the knob's default, range and help."""
    text = help or bound.help
    if bound.low_open:
        return Field(bound.default, gt=bound.low, le=bound.high, description=text)
    return Field(bound.default, ge=bound.low, le=bound.high, description=text)


class RunOptions(Strict):
    """Every knob of a run; the CLI's options map onto these one to one."""

    model: str = Field(config.JUDGE_MODEL, description="Judge model.")
    brief: Path | None = Field(
        None, description="Template to render instead of briefs/judge-deep.md."
    )
    cli: str = Field(config.CLI_NAME, description="Value of {{cli}}.")
    session_id: Annotated[
        str | None, Flag(per_session="the session folder's name, which each session uses")
    ] = Field(None, description="Value of {{sessionId}} (default: the folder's name).")
    cite: bool = Field(True, description="Skip the claim–quote citation audit.")
    cite_model: str = Field(config.SCREEN_MODEL, description="The citation audit's model.")
    cite_replay: Annotated[
        Path | None, Flag(per_session="replay_dir (DIR/<session>.cite.jsonl)")
    ] = Field(
        None,
        description="Answer the citation audit from a cite replay file (without it, --replay "
        "F.jsonl reads F.cite.jsonl beside it, and runs the audit offline only when there is "
        "none).",
    )
    # The audit's requests in flight: its report is the same at any concurrency.
    cite_concurrency: Annotated[int, Flag(input=False)] = _field(config.CITE_CONCURRENCY)
    cite_against: config.Against = Field(
        config.DEFAULT_AGAINST,
        description="What the citation audit judges support against (see judge cite --against).",
    )
    cite_passage_chars: int = _field(
        config.CITE_PASSAGE_CHARS,
        "Characters of each cited source the citation audit reads per claim citing it.",
    )
    audit_fetch: config.FetchMode = Field(
        config.AUDIT_FETCH_DEFAULT,
        description="The citation audit's text of a cited source without a snapshot: cached "
        "in .judge/sources/ (stored), fetched and cached (live), or none (off).",
    )
    audit_max_fetches: int = _field(
        config.AUDIT_MAX_FETCHES,
        "Most sources the citation audit fetches with --audit-fetch live.",
    )
    # None: "stored" when the judge is replayed (a replay never touches the network
    # unless `fetch="live"` is asked for), else "live".
    fetch: config.FetchMode | None = Field(
        None,
        description="WebFetch from the web, from sources/ snapshots only, or not at all "
        "(default: live; stored with --replay, which never touches the network unless "
        "--fetch live is given).",
    )
    max_turns: int = _field(config.MAX_TURNS)
    max_output_tokens: int = _field(config.MAX_OUTPUT_TOKENS)
    max_total_tokens: int = _field(config.MAX_TOTAL_TOKENS)
    max_seconds: float = _field(config.MAX_SECONDS)
    max_fetches: int = _field(config.MAX_FETCHES)
    max_reasks: int = _field(config.MAX_REASKS)
    samples: int = _field(config.SAMPLES)
    # Where output goes and how long to wait do not change a completed judgment.
    max_retries: Annotated[int, Flag(input=False)] = _field(config.MAX_RETRIES)
    timeout: Annotated[float, Flag(input=False)] = _field(config.TIMEOUT)
    lock_timeout: Annotated[float, Flag(input=False)] = _field(config.LOCK_TIMEOUT)
    replay: Annotated[Path | None, Flag(per_session="replay_dir (DIR/<session>.jsonl)")] = Field(
        None, description="Replay recorded API responses (JSON Lines)."
    )
    # Replay a recording made for another session, brief or model (or one without metadata).
    replay_any: Annotated[
        bool,
        Flag(
            batch_help="With --replay-dir: replay recordings made for another session, brief "
            "or model (or without metadata)."
        ),
    ] = Field(
        False,
        description="Replay FILE even if it was recorded for another session, brief or model "
        "(or carries no metadata line).",
    )
    record: Annotated[
        Path | None,
        Flag(
            input=False,
            per_session="record_dir (DIR/<session>.jsonl and DIR/<session>.cite.jsonl)",
        ),
    ] = Field(
        None,
        description="Record API responses to FILE (the judge, after a metadata line) and the "
        "citation audit's answers beside it (F.jsonl -> F.cite.jsonl); --replay FILE replays "
        "both.",
    )
    transcript: Annotated[
        Path | None,
        Flag(input=False, per_session="one `judge run --transcript` per session"),
    ] = Field(None, description="Write every request and response to FILE (JSON Lines).")

    NO_FLAG: ClassVar[Flag] = Flag()

    @model_validator(mode="after")
    def _replay_fetches_stored(self) -> RunOptions:
        if self.fetch is None:
            self.fetch = "stored" if self.replay is not None else "live"
        return self

    @classmethod
    def flag(cls, name: str) -> Flag:
        """The field's `Flag` (every field has one: the default when none is declared)."""
        found = [m for m in cls.model_fields[name].metadata if isinstance(m, Flag)]
        return found[0] if found else cls.NO_FLAG

    @classmethod
    def not_inputs(cls) -> set[str]:
        """The fields that do not change a completed judgment (the up-to-date rule)."""
        return {n for n in cls.model_fields if not cls.flag(n).input}

    @classmethod
    def per_session(cls) -> dict[str, str]:
        """The fields naming one file per run, with what `judge batch` takes instead."""
        flags = {n: cls.flag(n).per_session for n in cls.model_fields}
        return {n: instead for n, instead in flags.items() if instead is not None}

    def audit_options(self) -> AuditOptions:
        """The audit's own options, from the run's: the one place they are taken from it."""
        return AuditOptions(
            cite_model=self.cite_model,
            cite_replay=self.cite_replay,
            cite_concurrency=self.cite_concurrency,
            cite_against=self.cite_against,
            cite_passage_chars=self.cite_passage_chars,
            audit_fetch=self.audit_fetch,
            audit_max_fetches=self.audit_max_fetches,
            replay=self.replay,
            replay_any=self.replay_any,
            record=self.record,
            timeout=self.timeout,
            max_retries=self.max_retries,
            max_seconds=self.max_seconds,
        )
