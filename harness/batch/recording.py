"""`judge batch --batch-api --record-dir DIR`: what the batches answered one session,
written as `judge run --record` writes it, so `--replay-dir DIR` replays it offline.

The judge's recording is `DIR/<session>.jsonl`: its metadata line (the session and brief
digests and the model the run judged with), then every message the session's loop was
given, in order (from a batch, from the ordinary API after a failed batch request, or
from its saved conversation). The audit's is `DIR/<session>.cite.jsonl`, each request the
session's audit asked and the answer it got. Both are written when the run ends (each
replaced atomically); a session found up to date is not recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.artifacts.record import RunRecord
from harness.audit.record import Channels
from harness.audit.runhook import Channelled
from harness.cite import CiteClient
from harness.cite.replay import RecordingCiteClient, cite_meta
from harness.fs.files import replace_atomically
from harness.model.replay import replay_meta
from harness.model.resolve import cite_recording
from harness.redact import artifact_text


class _Recording(RecordingCiteClient):
    """Records, and passes on the channel counts of the client it records (run.json)."""

    def __init__(self, inner: CiteClient) -> None:
        super().__init__(inner)
        self._counted = inner

    def channel_use(self) -> Channels | None:
        inner = self._counted
        return inner.channel_use() if isinstance(inner, Channelled) else None


class SessionRecording:
    def __init__(self, folder: Path, name: str, cite_client: CiteClient) -> None:
        self.path = folder / f"{name}.jsonl"
        self.cite = _Recording(cite_client)
        self.messages: list[dict[str, Any]] = []  # what the session's loop was given

    def save(self, record: RunRecord | None) -> None:
        """Write both recordings of the run `record` describes (nothing without one)."""
        if record is None or record.sessionDigest is None or record.brief is None:
            return
        meta = replay_meta(record.sessionDigest, record.brief.digest, record.model)
        lines = [artifact_text(meta, indent=None)]
        lines += [artifact_text(m, indent=None) for m in self.messages]
        replace_atomically(self.path, "".join(x + "\n" for x in lines).encode())
        cite = cite_recording(self.path)
        cite_model = str(record.options.get("cite_model", ""))
        self.cite.save(cite, cite_meta(record.sessionDigest, cite_model))


__all__ = ["SessionRecording"]
