"""Agent loops in lockstep through Message Batches (`judge batch --batch-api`).

Each session in flight runs its ordinary agent loop on its own thread; its judge client is
a `Lockstep.client()`, whose `messages.create` hands the turn's request to the round and
waits. When every session in flight is waiting (the others have finished or are busy
with nothing but their turn), the last one to arrive submits the round: one Message Batch
holding one turn of every running session. Each waiting loop gets its own message back
and goes on with its tools; a request whose result is errored, expired or canceled is
sent by its own loop to the ordinary API instead. Rounds therefore equal the longest
session's turns, not sessions × turns.

Each round's batch id and the session and turn of each custom_id are appended to
`ROOT/.judge-batch/lockstep.jsonl`. A conversation is not saved, so a batch killed
mid-conversation judges those sessions again from their first turn when restarted
(finished sessions are up to date, as always).
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.model.batches import MessageBatches

LOG_FILE = "lockstep.jsonl"


@dataclass
class _Slot:
    session: str
    turn: int
    params: dict[str, Any]
    message: Any = None
    fallback: str | None = None  # why this turn goes to the ordinary API
    done: bool = False


@dataclass
class LockstepStats:
    rounds: int = 0
    requests: int = 0
    fallbacks: int = 0
    failed: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "judgeRounds": self.rounds,
            "judgeRequests": self.requests,
            "judgeFellBack": self.fallbacks,
            "judgeFailed": dict(self.failed),
        }


class _Client:
    """What a session's loop sees as its Anthropic client."""

    def __init__(self, owner: Lockstep, session: str) -> None:
        self.messages = self
        self._owner, self._session = owner, session
        self._turn = 0

    def create(self, **params: Any) -> Any:
        params.pop("timeout", None)  # a batch takes as long as it takes; the loop's clock rules
        self._turn += 1
        return self._owner.ask(self._session, self._turn, params)


class Lockstep:
    def __init__(
        self,
        sdk: Any,
        folder: Path,
        *,
        poll: float = 30.0,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self._api, self._folder, self._poll = MessageBatches(sdk), folder, poll
        self._say = say or (lambda _: None)
        self._cond = threading.Condition()
        self._active = 0
        self._waiting: list[_Slot] = []
        self._submitting = False
        self.stats = LockstepStats()

    def client(self, session: str) -> _Client:
        return _Client(self, session)

    def enter(self) -> None:
        with self._cond:
            self._active += 1

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()  # the others may now all be waiting: a round is due

    def ask(self, session: str, turn: int, params: dict[str, Any]) -> Any:
        slot = _Slot(session, turn, copy.deepcopy(params))
        with self._cond:
            self._waiting.append(slot)
            self._cond.notify_all()
            while not slot.done:
                if not self._submitting and self._waiting and len(self._waiting) >= self._active:
                    batch, self._waiting = self._waiting, []
                    self._submitting = True
                    self._cond.release()
                    try:
                        self._round(batch)
                    finally:
                        self._cond.acquire()
                        self._submitting = False
                        self._cond.notify_all()
                else:
                    self._cond.wait(0.5)
        if slot.fallback is not None:
            with self._cond:
                self.stats.fallbacks += 1
            return self._api.create(slot.params)
        return slot.message

    def _round(self, slots: list[_Slot]) -> None:
        """Submit one turn of every waiting session as one batch; hand each its result."""
        self.stats.rounds += 1
        self.stats.requests += len(slots)
        ids = {f"t{self.stats.rounds}-{i:05d}": slot for i, slot in enumerate(slots)}
        try:
            batch_id = self._api.submit([(cid, s.params) for cid, s in ids.items()])
            self._log(batch_id, ids)
            self._say(
                f"judge batch: agent round {self.stats.rounds}: message batch {batch_id} "
                f"({len(ids)} turns)"
            )
            self._api.wait(batch_id, self._poll)
            for item in self._api.results(batch_id):
                slot = ids.get(item.custom_id)
                if slot is None or slot.done:
                    continue
                if item.kind == "succeeded":
                    slot.message = item.message
                else:
                    slot.fallback = item.kind
                    self.stats.failed[item.kind] = self.stats.failed.get(item.kind, 0) + 1
                slot.done = True
        except Exception as exc:  # the batch itself failed: every turn asks directly
            reason = f"{type(exc).__name__}: {str(exc)[:200]}"
            for slot in ids.values():
                if not slot.done:
                    slot.fallback = reason
        for slot in ids.values():
            if not slot.done:
                slot.fallback = slot.fallback or "missing"
                slot.done = True

    def _log(self, batch_id: str, ids: dict[str, _Slot]) -> None:
        entry = {
            "round": self.stats.rounds,
            "id": batch_id,
            "customIds": {cid: {"session": s.session, "turn": s.turn} for cid, s in ids.items()},
        }
        with (self._folder / LOG_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=True) + "\n")


__all__ = ["Lockstep", "LockstepStats"]
