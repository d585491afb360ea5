"""Human labels (`judge agree LABELS`): one JSON Lines file, a label per line.

Two kinds of line, each with its rater:

- `{"kind": "claim", "session": "s1", "claimId": "sq1-c2", "support": "supported",
  "rater": "expert-1"}`: does the claim's cited evidence support it (`supported`, `partial`,
  `unsupported`);
- `{"kind": "rating", "session": "s1", "rater": "expert-1", "scores": {"citationAccuracy": 4,
  "completeness": "Unknown"}}`: a person's rubric scores for the session (any subset of the
  five dimensions, each an integer 0–5 or `"Unknown"`).

`session` is the session folder's path relative to the root (`--root`), POSIX-style. A line may
carry `sessionDigest`, the session's digest when it was labelled (a session judged on changed
inputs is flagged), and a free `note`. `schemas/labels.schema.json` is exported from
`LabelLine`. A line that is not one of these is an error naming the file, the line and the fix;
nothing is silently dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, RootModel, StringConstraints, ValidationError, field_validator

from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError
from harness.session.discover import session_name
from harness.strict import Strict
from harness.text.jsonstrict import loads_strict

LABELS_VERSION: Literal["labels-v1"] = "labels-v1"
MAX_LABEL_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024

Support = Literal["supported", "partial", "unsupported"]
SUPPORT: tuple[Support, ...] = ("supported", "partial", "unsupported")
HumanScore = Annotated[int, Field(ge=0, le=5)] | Literal["Unknown"]
Name = Annotated[str, StringConstraints(min_length=1, max_length=1000)]


class _Line(Strict):
    @field_validator("session")
    @classmethod
    def _one_spelling(cls, value: str) -> str:
        """`s1`, `./s1`, `s1/` and `s1//.` name one session (harness.session.discover's
        rule); a name that cannot name a session under the root is kept as written, and
        reported as missing."""
        return session_name(value) or value

    version: Literal["labels-v1"] = LABELS_VERSION
    session: Name = Field(description="The session's folder, relative to the root (POSIX).")
    rater: Name = Field(description="Who labelled it.")
    sessionDigest: str | None = Field(
        default=None,
        description="The session's digest when labelled (harness.run: sha256:…); a session "
        "whose inputs changed since is flagged.",
    )
    note: str | None = Field(default=None, description="Free text: where the label came from.")


class ClaimLabel(_Line):
    """A person's support label for one claim."""

    kind: Literal["claim"]
    claimId: Name
    support: Support


class DimensionScores(Strict):
    factualAccuracy: HumanScore | None = None
    citationAccuracy: HumanScore | None = None
    completeness: HumanScore | None = None
    sourceQuality: HumanScore | None = None
    toolEfficiency: HumanScore | None = None


class SessionRating(_Line):
    """A person's rubric scores for one session (any subset of the dimensions)."""

    kind: Literal["rating"]
    scores: DimensionScores

    def given(self) -> dict[str, int | str]:
        return {d: v for d in DIMENSIONS if (v := getattr(self.scores, d)) is not None}


class LabelLine(RootModel[Annotated[ClaimLabel | SessionRating, Field(discriminator="kind")]]):
    """One line of a labels file (schemas/labels.schema.json)."""


@dataclass(frozen=True, slots=True)
class Labels:
    """A labels file, read: every line in file order, with its line number."""

    path: Path
    claims: tuple[tuple[int, ClaimLabel], ...]
    ratings: tuple[tuple[int, SessionRating], ...]

    def sessions(self) -> list[str]:
        seen = dict.fromkeys(label.session for _, label in (*self.claims, *self.ratings))
        return list(seen)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        size = path.stat().st_size
        if size > MAX_LABEL_BYTES:
            raise UsageError(
                f"{path}: {size:,} bytes, more than the {MAX_LABEL_BYTES:,} a labels file may "
                "have; split it"
            )
        with path.open("rb") as handle:
            # Read a line at most MAX_LINE_BYTES + 1 at a time, and the file at most
            # MAX_LABEL_BYTES in all: a device or a pipe (/dev/zero) has no size to check
            # first and may never end a line.
            total, number = 0, 0
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                number += 1
                total += len(raw)
                if total > MAX_LABEL_BYTES:
                    raise UsageError(
                        f"{path}: more than the {MAX_LABEL_BYTES:,} bytes a labels file may "
                        "have; split it"
                    )
                yield number, raw
    except FileNotFoundError:
        raise UsageError(f"{path}: no such labels file; pass a JSON Lines file of labels") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder; pass the labels file (JSON Lines)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror}); check the path") from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = "/".join(str(p) for p in err["loc"] if p not in ("claim", "rating"))
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def read_labels(path: Path) -> Labels:
    """Every label of `path`; the first bad line is a `UsageError` naming file, line and fix."""
    claims: list[tuple[int, ClaimLabel]] = []
    ratings: list[tuple[int, SessionRating]] = []
    fix = "each line is one JSON object (schemas/labels.schema.json)"
    for number, raw in _lines(path):
        where = f"{path}:{number}"
        if len(raw) > MAX_LINE_BYTES:
            raise UsageError(f"{where}: a line of more than {MAX_LINE_BYTES:,} bytes; {fix}")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{where}: not UTF-8; {fix}") from None
        if not text.strip():
            continue
        strict = loads_strict(text)
        if not strict.parsed or strict.issues:
            issue = strict.issues[0].message() if strict.issues else "not JSON"
            raise UsageError(f"{where}: {issue}; {fix}")
        try:
            line = LabelLine.model_validate(strict.value, strict=True).root
        except ValidationError as exc:
            raise UsageError(f"{where}: {_first_error(exc)}; {fix}") from None
        if isinstance(line, ClaimLabel):
            claims.append((number, line))
        else:
            ratings.append((number, line))
    return Labels(path=path, claims=tuple(claims), ratings=tuple(ratings))


def label_schema() -> dict[str, object]:
    schema = LabelLine.model_json_schema()
    return json.loads(json.dumps(schema))  # type: ignore[no-any-return]


__all__ = [
    "LABELS_VERSION",
    "SUPPORT",
    "ClaimLabel",
    "DimensionScores",
    "LabelLine",
    "Labels",
    "SessionRating",
    "Support",
    "label_schema",
    "read_labels",
]
