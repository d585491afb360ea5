"""The agent's three tools: their API definitions and one dispatcher.

Every refusal is a `ToolError`, returned to the model as an `is_error` tool
result; the run goes on. Each call is recorded (name, ok or refused, why).
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import config
from harness.agent.calls import ToolCallRecord
from harness.agent.fetch import WebFetcher
from harness.agent.read import read_tool
from harness.contract.judgment import check_judge_text, check_session_judge, write_judgment_atomic
from harness.errors import ToolError, WriteError
from harness.fs.artifacts import ArtifactDir
from harness.fs.confined import ConfinedError, SessionReader, real_path
from harness.fs.scope import resolve_write_target
from harness.session.show import judge_outcome
from harness.text.untrusted import escape_controls, untrusted_names

MAX_WRITE_CHARS = config.MAX_WRITE_CHARS
# The disk faults that end a run (harness.run.faults.DISK_FAULTS) rather than a Write.
DISK_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "name": "Read",
        "description": (
            "Read a file or list a folder inside the session directory. Files come back as "
            "numbered lines; use offset (1-based line) and limit to page through long files. "
            "Paths are relative to the session directory, or absolute inside it."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file or folder."},
                "offset": {"type": "integer", "description": "1-based line to start at."},
                "limit": {"type": "integer", "description": "Number of lines to read."},
            },
            "required": ["file_path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "Write",
        "description": (
            "Write judge.json in the session directory (the only file you may write). The "
            "content is validated first: valid content is written atomically and the "
            "`show --json` round-trip is run; invalid content is NOT written and every error "
            "is listed (JSON pointer, expected, found) so you can fix it."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Must be judge.json."},
                "content": {"type": "string", "description": "The full judge.json text."},
            },
            "required": ["file_path", "content"],
            "additionalProperties": False,
        },
    },
    {
        "name": "WebFetch",
        "description": (
            "Fetch one of the session's own sources (by the exact URL listed in sources.json "
            "or the findings) to spot-check a claim. Only listed http(s) URLs; a few uses per "
            "run. Returns the page as text."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "A source URL from the session."},
                "prompt": {"type": "string", "description": "What you are checking for."},
            },
            "required": ["url"],
            "additionalProperties": False,
        },
    },
]


@dataclass(slots=True)
class ToolBox:
    session_dir: Path
    session_id: str
    fetcher: WebFetcher
    cli: str = "judge"
    # Where judge.json's temp file goes (the run's artifact folder); None: beside it.
    temp_dir: Path | None = None
    # The run's artifact folder, opened once: judge.json is then written by descriptor.
    artifacts: ArtifactDir | None = None
    # The run's confined reader of the session, opened once: every Read walks from it.
    reader: SessionReader | None = None
    calls: list[ToolCallRecord] = field(default_factory=list)
    writes_ok: int = 0
    writes_refused: int = 0
    refused_writes: list[dict[str, Any]] = field(default_factory=list)
    # Writes of valid content that the disk refused (an I/O error, a full disk): why.
    write_failures: list[str] = field(default_factory=list)

    def refuse(self, name: str, tool_input: Any, reason: str) -> tuple[str, bool]:
        """Answer a call the loop did not run (its input was cut, the turn's results were
        full) with `reason`, recorded like any refused call."""
        self.calls.append(
            ToolCallRecord(name=name, target=_target(tool_input), ok=False, detail=reason)
        )
        if name == "Write":
            self.writes_refused += 1
        return reason, True

    def run(self, name: str, tool_input: Any) -> tuple[str, bool]:
        """Run one tool call; returns (result text, is_error)."""
        target = _target(tool_input)
        try:
            if not isinstance(tool_input, dict):
                raise ToolError(f"refused: {name} takes a JSON object of arguments")
            text = self._dispatch(name, tool_input)
        except ToolError as exc:
            call = ToolCallRecord(name=name, target=target, ok=False, detail=exc.message)
            self.calls.append(call)
            # The names an error is about reach the model only inside an untrusted block.
            return untrusted_names(exc.message, exc.names), True
        self.calls.append(ToolCallRecord(name=name, target=target, ok=True))
        return text, False

    def _dispatch(self, name: str, args: dict[str, Any]) -> str:
        if name not in _ARGUMENTS:
            raise ToolError(
                f"refused: there is no tool named {name!r}; use Read, Write or WebFetch"
            )
        _only(args, name, *_ARGUMENTS[name])
        if name == "Read":
            return read_tool(
                self.session_dir,
                args["file_path"],
                args.get("offset"),
                args.get("limit"),
                reader=self.reader,
            )
        if name == "Write":
            return self._write(args["file_path"], args["content"])
        prompt = args.get("prompt")  # WebFetch
        if not isinstance(args["url"], str) or not (prompt is None or isinstance(prompt, str)):
            raise ToolError("refused: WebFetch takes a url string and an optional prompt string")
        return self.fetcher.fetch(args["url"], prompt)

    def _write(self, file_path: Any, content: Any) -> str:
        if not isinstance(file_path, str) or not isinstance(content, str):
            raise ToolError("refused: Write takes file_path and content as strings")
        target = resolve_write_target(self.session_dir, file_path)
        if len(content) > MAX_WRITE_CHARS:
            self.writes_refused += 1
            raise ToolError(
                f"refused: content is {len(content):,} characters; judge.json is small "
                f"(at most {MAX_WRITE_CHARS:,}). Write only the judge.json object."
            )
        check = check_judge_text(content)
        if not check.valid:
            self.writes_refused += 1
            # A reply that broke the format is kept, raw, beside its errors.
            self.refused_writes.append(
                {"content": content, "errors": [i.as_dict() for i in check.issues]}
            )
            lines = "\n".join(f"- {line}" for line in check.error_lines())
            raise ToolError(
                f"judge.json was NOT written: {len(check.issues)} validation error(s).\n{lines}\n"
                "Fix every error and call Write again with the complete corrected file."
            )
        try:
            write_judgment_atomic(
                target,
                content if content.endswith("\n") else content + "\n",
                temp_dir=self.temp_dir,
                artifacts=self.artifacts,
            )
        except WriteError as exc:
            cause = exc.__cause__
            if isinstance(cause, OSError) and cause.errno in DISK_FAULTS:
                # A full or failing disk is no turn of the model's: the run ends with its
                # receipt naming the fault (harness.run.faults), judge.json as it was.
                cause.filename = str(target)
                raise cause from None
            self.write_failures.append(exc.message)
            raise ToolError(f"judge.json could not be written: {exc.message}") from exc
        self.writes_ok += 1
        # What `show --json` would say of judge.json, checked as `show` checks it (in the
        # resolved folder, as `show` names it in an issue).
        try:  # a folder swapped for a link meanwhile is a refusal, not a fault
            folder = Path(real_path(self.session_dir))
        except ConfinedError as exc:
            raise ToolError(f"judge.json was written but cannot be checked: {exc}") from None
        verified = check_session_judge(folder)
        outcome = judge_outcome(self.session_id, verified)
        code = 0 if verified.valid else 1
        sid = escape_controls(self.session_id)
        return (
            "judge.json written in the session folder.\n"
            f"Round-trip `{self.cli} show {sid} --json` exited {code}: "
            f"{json.dumps(outcome)}"
        )


# Each tool's (allowed, required) arguments, read off the specs the model is given.
_ARGUMENTS: dict[str, tuple[set[str], set[str]]] = {
    spec["name"]: (set(spec["input_schema"]["properties"]), set(spec["input_schema"]["required"]))
    for spec in TOOL_SPECS
}


def _only(args: dict[str, Any], tool: str, allowed: set[str], required: set[str]) -> None:
    unknown = sorted(set(args) - allowed)
    missing = sorted(required - set(args))
    if unknown or missing:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown argument(s) {', '.join(unknown)}")
        raise ToolError(
            f"refused: {tool} {'; '.join(parts)} (it takes {', '.join(sorted(allowed))})"
        )


def _target(tool_input: Any) -> str | None:
    """The path or URL a call names, cut to 500 characters, for the run record."""
    if not isinstance(tool_input, dict):
        return None
    value = tool_input.get("file_path", tool_input.get("url"))
    return value[:500] if isinstance(value, str) else None
