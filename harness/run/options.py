"""Every knob of a run, in one typed value: `RunOptions`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness import config


def _field(bound: config.Bound) -> Any:
    """A pydantic field with the knob's default and range."""
    if bound.low_open:
        return Field(bound.default, gt=bound.low, le=bound.high, description=bound.help)
    return Field(bound.default, ge=bound.low, le=bound.high, description=bound.help)


class RunOptions(BaseModel):
    """Every knob of a run; the CLI's options map onto these one to one."""

    model_config = ConfigDict(extra="forbid")

    model: str = config.JUDGE_MODEL
    brief: Path | None = None
    cli: str = config.CLI_NAME
    session_id: str | None = None
    cite: bool = True
    cite_model: str = config.SCREEN_MODEL
    cite_replay: Path | None = None
    cite_concurrency: int = _field(config.CITE_CONCURRENCY)
    cite_against: Literal["auto", "sources", "quotes"] = "auto"
    cite_passage_chars: int = _field(config.CITE_PASSAGE_CHARS)
    audit_fetch: Literal["live", "stored", "off"] = "stored"
    audit_max_fetches: int = _field(config.AUDIT_MAX_FETCHES)
    # None: "stored" when the judge is replayed (a replay never touches the network
    # unless `fetch="live"` is asked for), else "live".
    fetch: Literal["live", "stored", "off"] | None = None
    max_turns: int = _field(config.MAX_TURNS)
    max_output_tokens: int = _field(config.MAX_OUTPUT_TOKENS)
    max_total_tokens: int = _field(config.MAX_TOTAL_TOKENS)
    max_seconds: float = _field(config.MAX_SECONDS)
    max_fetches: int = _field(config.MAX_FETCHES)
    max_reasks: int = _field(config.MAX_REASKS)
    samples: int = _field(config.SAMPLES)
    max_retries: int = _field(config.MAX_RETRIES)
    timeout: float = _field(config.TIMEOUT)
    lock_timeout: float = _field(config.LOCK_TIMEOUT)
    replay: Path | None = None
    # Replay a recording made for another session, brief or model (or one without metadata).
    replay_any: bool = False
    record: Path | None = None
    transcript: Path | None = None

    @model_validator(mode="after")
    def _replay_fetches_stored(self) -> RunOptions:
        if self.fetch is None:
            self.fetch = "stored" if self.replay is not None else "live"
        return self
