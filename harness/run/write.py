"""Writing the run record: `.judge/run.json`, under this installation's seal."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.artifacts.record import RunRecord
from harness.fs.names import ARTIFACT_DIR, RUN_FILE
from harness.fs.origin import ephemeral_reason, sealed_artifact
from harness.run.faults import fault_words
from harness.run.start import RunStart


@dataclass(frozen=True, slots=True)
class RecordWritten:
    path: Path | None  # where run.json is, once written
    problem: str | None  # why it could not be written; the receipt still goes out
    unkept: str | None  # written, but no origin key could be kept: why


def write_record(run: RunStart, record: RunRecord) -> RecordWritten:
    try:
        run.artifacts.write(RUN_FILE, sealed_artifact("run", record.document()))
    except OSError as exc:
        return RecordWritten(None, f"{ARTIFACT_DIR}/{RUN_FILE}: {fault_words(exc)}", None)
    return RecordWritten(run.artifacts / RUN_FILE, None, ephemeral_reason())


__all__ = ["RecordWritten", "write_record"]
