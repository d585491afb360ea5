"""Record and replay client replies, keyed by what a request asks, not how it is worded.

A request's replay key is its question keys (as a set) and the passage ids in its state:
`{"quotes": ["q1", "q2"]}` for a window, `{"fault": "t9", ...}` for a factored finding.
Prompt wording can change and a recording still replays. Passage ids should therefore be
unique across everything one recording covers (e.g. `sq1-c1-q1`, not `q1` in every claim).

File format: JSON Lines (or one JSON array) of `ReplayEntry` objects:

    {"state": {"quotes": ["q1"]}, "questions": ["q1:supports"],
     "answers": {"q1:supports": 0.92}, "usage": {"input_tokens": 812, ...},
     "model": "claude-haiku-5-5"}
    {"state": {"quotes": ["q1", "q2", "q3"]}, "questions": [...], "too_large": true}
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from harness.cite.client import CiteClient, Reply, Request, RequestTooLarge
from harness.errors import ReplayError
from harness.strict import Frozen
from harness.usage import Usage


class ReplayEntry(Frozen):
    """One recorded request outcome: answers, or a refusal as too large."""

    state: dict[str, list[str] | str]
    questions: list[str]
    answers: dict[str, Any] = Field(default_factory=dict)
    usage: Usage = Usage()
    model: str | None = None
    too_large: bool = False

    @property
    def key(self) -> str:
        return _key(self.state, self.questions)


def _key(state: Mapping[str, list[str] | str], questions: Iterable[str]) -> str:
    return json.dumps({"state": state, "questions": sorted(questions)}, sort_keys=True)


def signature(request: Request) -> tuple[dict[str, list[str] | str], list[str]]:
    """The passage ids in a request's state, and its question keys."""
    state: dict[str, list[str] | str] = {}
    for name, value in request["state"].items():
        if isinstance(value, Mapping) and isinstance(value.get("id"), str):
            state[name] = value["id"]  # a role: one passage
        elif isinstance(value, Mapping):
            state[name] = list(value)  # a window: passages keyed by id
        else:
            state[name] = json.dumps(value, sort_keys=True)
    return state, list(request["questions"])


def replay_key(request: Request) -> str:
    state, questions = signature(request)
    return _key(state, questions)


class ReplayCiteClient:
    """Answers requests from a recording; a request it cannot answer raises `ReplayError`."""

    def __init__(self, entries: Iterable[ReplayEntry]) -> None:
        self._entries: dict[str, ReplayEntry] = {}
        for entry in entries:
            seen = self._entries.get(entry.key)
            if seen is not None and seen != entry:
                raise ReplayError(
                    "replay: two different recordings of one request",
                    state=entry.state,
                    keys=entry.questions,
                )
            self._entries[entry.key] = entry
        self._used: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path) -> ReplayCiteClient:
        return cls(load_entries(path))

    def ask(self, request: Request) -> Reply:
        state, questions = signature(request)
        key = _key(state, questions)
        entry = self._entries.get(key)
        if entry is None:
            raise ReplayError(
                f"replay has no recording for state {state} with questions {sorted(questions)}",
                state=state,
                keys=sorted(questions),
            )
        with self._lock:
            self._used.add(key)
        if entry.too_large:
            raise RequestTooLarge("replay: recorded as too large")
        return Reply(answers=entry.answers, usage=entry.usage, model=entry.model)

    def unused(self) -> list[ReplayEntry]:
        """Recordings no request asked for: a sign the replay has gone stale."""
        with self._lock:
            return [e for k, e in self._entries.items() if k not in self._used]


CITE_META_KEY = "citeReplay"


def cite_meta(session_digest: str, model: str) -> dict[str, Any]:
    """The first line a run's `--record` writes into the audit's recording."""
    return {CITE_META_KEY: 1, "sessionDigest": session_digest, "model": model}


def read_cite_meta(path: str | Path) -> dict[str, Any] | None:
    """The metadata line of a cite recording, or None (older format, or `judge cite`'s)."""
    try:
        with Path(path).open(encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
        data = json.loads(first) if first.lstrip().startswith("{") else None
    except (OSError, ValueError) as exc:
        raise ReplayError(f"cannot read replay {path}: {exc}") from exc
    return data if isinstance(data, dict) and CITE_META_KEY in data else None


def check_cite_binding(path: str | Path, expected: Mapping[str, Any]) -> None:
    """Refuse a cite recording made for another session or model (`--replay-any` skips
    this). A recording without metadata is accepted: its requests are keyed by passage
    ids, so another session's answers fail loudly as requests with no recording."""
    found = read_cite_meta(path)
    if found is None:
        return
    wrong = [k for k in ("sessionDigest", "model") if found.get(k) != expected.get(k)]
    if wrong:
        detail = "; ".join(
            f"{k}: this run has {expected.get(k)}, the replay was recorded for {found.get(k)}"
            for k in wrong
        )
        raise ReplayError(
            f"cite replay {path} was recorded for another session or model ({detail}); "
            "re-record it, or pass --replay-any"
        )


def load_entries(path: str | Path) -> list[ReplayEntry]:
    """Read a JSON Lines file (optionally after a metadata line), or a file holding one
    JSON array, of entries."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read replay {path}: {exc}") from exc
    try:
        if text.lstrip().startswith("["):
            return [ReplayEntry.model_validate(e) for e in json.loads(text)]
        lines = [line for line in text.splitlines() if line.strip()]
        first = json.loads(lines[0]) if lines and CITE_META_KEY in lines[0] else None
        if isinstance(first, dict) and CITE_META_KEY in first:
            lines = lines[1:]  # the metadata line (see cite_meta)
        return [ReplayEntry.model_validate_json(line) for line in lines]
    except ValueError as exc:  # JSON and pydantic errors alike
        raise ReplayError(f"malformed replay {path}: {exc}") from exc


class RecordingCiteClient:
    """Wraps a client and records each outcome as a `ReplayEntry` (the last one per key)."""

    def __init__(self, inner: CiteClient) -> None:
        self._inner = inner
        self._entries: dict[str, ReplayEntry] = {}
        self._lock = threading.Lock()

    def ask(self, request: Request) -> Reply:
        state, questions = signature(request)
        try:
            reply = self._inner.ask(request)
        except RequestTooLarge:
            self._keep(ReplayEntry(state=state, questions=questions, too_large=True))
            raise
        try:
            entry = ReplayEntry(
                state=state,
                questions=questions,
                answers=dict(reply.answers),
                usage=reply.usage,
                model=reply.model,
            )
        except ValidationError as exc:
            raise ReplayError(f"cannot record reply: {exc}") from exc
        self._keep(entry)
        return reply

    def _keep(self, entry: ReplayEntry) -> None:
        with self._lock:
            self._entries[entry.key] = entry

    @property
    def entries(self) -> list[ReplayEntry]:
        """Recorded entries sorted by key, so a file's order does not depend on timing."""
        with self._lock:
            return [self._entries[k] for k in sorted(self._entries)]

    def save(self, path: str | Path, meta: Mapping[str, Any] | None = None) -> None:
        from harness.redact import artifact_text

        lines = [] if meta is None else [artifact_text(dict(meta), indent=None)]
        lines += [
            artifact_text(e.model_dump(mode="json", exclude_defaults=True), indent=None)
            for e in self.entries
        ]
        Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
