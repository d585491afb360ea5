"""Agent loops in lockstep through Message Batches (`judge batch --batch-api`).

Each session in flight runs its ordinary agent loop on its own thread; its judge model is
a `Lockstep.client()` (a `ModelAPI`, harness.model.seam), whose `generate` hands the turn's
request to the round and waits. When every session in flight is waiting (the others have
finished or are busy with nothing but their turn), the last one to arrive submits the
round: one Message Batch holding one turn of every running session. Each waiting loop gets
its own message back and goes on with its tools; a request whose result is errored,
expired or canceled is sent by its own loop to the ordinary API instead. Rounds therefore
equal the longest session's turns, not sessions × turns. Each turn paid is counted by
channel (batch or ordinary) in the batch's `stats.channels` (the summary) and in its
session's client (`channel_use`: the session's run.json `channels.judge`), so the records
add up to the summary. The batch hands every session it starts to the
lockstep (`enter`) before any of them starts, so none makes a round of its own by
reaching its first turn before the others are counted; a session that ended `leave`s
only once the session handed out in its place has entered.

**Saved conversations.** Once a run names its inputs (the up-to-date digest of its
session, brief, model and options: the run's `on_inputs` hook), each answer is saved as it
is read in `ROOT/.judge-batch/conversations/<hash of the session's name>.json`, with the
batch id and custom_id of every turn submitted and not yet answered (written before
polling). Every write replaces the file atomically. A batch killed and started again
takes each unfinished session up where it stopped: its loop replays the turns already
answered from the file (no request), a turn whose round was submitted is polled in the
batch it went out in (not submitted again), and only later turns go out in new rounds.
A run on other inputs starts afresh (the file is replaced); a completed run (or one
found up to date) removes it, and each `--batch-api` batch removes those of sessions no
longer under ROOT (`prune_conversations`). The turns are replayed in order, as `--replay` replays a
recording: the answers of the killed run stand, whatever its tools had found.

**Limits.** With a `Budget`, each round is submitted only while the batch's limits hold
(token budget, time limit), and the tokens the batch pays for (batch results and the
turns that fell back) are counted as they are read; a saved turn replayed costs nothing
and counts nothing. A turn refused this way ends that session's loop as the batch's
limits end it on the ordinary path ("the judge did not finish: the batch's token budget
… was used up"). Each round's batch id and the session and turn of each custom_id are
also appended to `ROOT/.judge-batch/lockstep.jsonl`.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import config, redact
from harness.audit.record import Channels, ChannelUse
from harness.batch.limits import Budget
from harness.batch.state import (
    ROUNDS_FILE,
    PendingTurn,
    RoundLine,
    RoundTurn,
    SavedConversation,
    append_line,
    read_conversation,
    write_conversation,
)
from harness.clock import NEVER
from harness.errors import Halted
from harness.model.batches import MessageBatches, budgeted_tokens, message_data, message_of
from harness.model.messages import sdk_reply
from harness.model.seam import ModelReply

CONVERSATIONS = "conversations"


STALE_TEMP_SECONDS = 3600.0  # a temp file this old was left by a killed write
_SAVED = re.compile(r"[0-9a-f]{32}\.json")  # conversation_name's form


def conversation_name(session: str) -> str:
    """The file name of a session's saved conversation (a hash: any folder name fits)."""
    return hashlib.sha256(session.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json"


def prune_conversations(folder: Path, root: Path, now: float | None = None) -> int:
    """Remove the saved conversations of sessions no longer under `root` (no entry of that
    name is left: removed or renamed), and temp files a killed write left behind; the
    number removed. A conversation of a session still there is kept, named or not."""
    here = folder / CONVERSATIONS
    if here.is_symlink():
        return 0  # not a folder the batch made: nothing in it is removed
    try:
        entries = list(os.scandir(here))
        names = {conversation_name(e.name) for e in os.scandir(root)}
    except OSError:
        return 0  # none saved yet, or ROOT cannot be listed: nothing is removed
    now = time.time() if now is None else now
    removed = 0
    for entry in entries:
        try:
            if entry.name.endswith(".tmp") and entry.name.startswith("."):
                stale = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS
            else:
                stale = _SAVED.fullmatch(entry.name) is not None and entry.name not in names
            if stale:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue  # gone already, or not ours to remove: left as it is
    return removed


class Conversation:
    """One session's saved lockstep conversation, tied to its run's inputs digest."""

    def __init__(self, folder: Path, session: str) -> None:
        self.path = folder / CONVERSATIONS / conversation_name(session)
        self.session = session
        self.inputs: str | None = None  # None: nothing is saved (the run named no inputs)
        self.answers: dict[int, dict[str, Any]] = {}  # turn -> the message, as the API sent it
        self.pending: dict[int, dict[str, str]] = {}  # turn -> {"batch", "customId"}

    def bind(self, inputs: str, *, afresh: bool = False) -> None:
        """Save under `inputs` from now on; take up what a run on the same inputs saved
        (unless `afresh`: `--force` redoes a session from its first turn)."""
        self.inputs, self.answers, self.pending = inputs, {}, {}
        if afresh:
            return
        saved = read_conversation(self.path)  # None: none saved, or cut: start afresh
        if saved is None or saved.session != self.session or saved.inputs != inputs:
            return  # a run on other inputs: none of its turns is this run's
        turn = 1
        while str(turn) in saved.answers:
            try:
                message_of(saved.answers[str(turn)])
            except ValueError:  # not a message: this turn and the later ones are asked again
                break
            self.answers[turn] = saved.answers[str(turn)]
            turn += 1
        for key, where in saved.pending.items():
            if key.isdigit() and int(key) not in self.answers:
                self.pending[int(key)] = {"batch": where.batch, "customId": where.customId}

    def save(self) -> None:
        if self.inputs is None:
            return
        document = SavedConversation(
            session=self.session,
            inputs=self.inputs,
            answers={str(t): m for t, m in sorted(self.answers.items())},
            pending={str(t): PendingTurn(**w) for t, w in sorted(self.pending.items())},
        )
        write_conversation(self.path, document)

    def answered(self, turn: int, message: Any) -> None:
        if self.inputs is None:
            return
        self.answers[turn] = message_data(message)
        self.pending.pop(turn, None)
        self.save()

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


@dataclass
class _Slot:
    session: str
    turn: int
    params: dict[str, Any]
    conversation: Conversation
    channels: Channels  # the session's own counts (its run.json's `channels.judge`)
    message: Any = None
    fallback: str | None = None  # why this turn goes to the ordinary API
    halted: str | None = None  # why this turn is not sent at all (a batch limit)
    done: bool = False


@dataclass
class LockstepStats:
    rounds: int = 0
    requests: int = 0
    fallbacks: int = 0
    resumed: int = 0  # batches of a killed run polled again, not resubmitted
    replayed: int = 0  # turns answered from a saved conversation
    halted: int = 0  # turns not sent: a batch limit was reached
    failed: dict[str, int] = field(default_factory=dict)
    channels: Channels = field(default_factory=Channels)  # turns paid, by channel

    def as_dict(self) -> dict[str, Any]:
        return {
            "judgeRounds": self.rounds,
            "judgeRequests": self.requests,
            "judgeFellBack": self.fallbacks,
            "judgeResumed": self.resumed,
            "judgeReplayed": self.replayed,
            "judgeHalted": self.halted,
            "judgeFailed": dict(self.failed),
        }


class LockstepClient:
    """A session's judge model (a `ModelAPI`): each turn goes out in the batch's rounds."""

    def __init__(self, owner: Lockstep, session: str) -> None:
        self._owner, self.session = owner, session
        self._turn = 0
        self.conversation = Conversation(owner.folder, session)
        self.given: list[dict[str, Any]] | None = None  # with a recording: each message given
        self.channels = Channels()  # this session's turns paid, by channel (the owner's lock)
        self.halted = False  # a turn of it was not sent: the batch's interrupt or a limit

    def bind(self, inputs: object) -> None:
        """The run's inputs digest (its `on_inputs` hook, as its judge begins): save its
        turns under it."""
        if isinstance(inputs, str) and inputs:
            self.conversation.bind(inputs, afresh=self._owner.afresh)

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply:
        """The turn's reply: a saved answer, or the round's (a batch takes as long as it
        takes: the loop's clock rules, not `timeout`). Sent through the one redaction point."""
        sent = redact.outbound(params)
        return sdk_reply(lambda: (self._message(sent), {}))

    def _message(self, params: dict[str, Any]) -> Any:
        self._turn += 1
        saved = self.conversation.answers.get(self._turn)
        if saved is not None:
            self._owner.replayed()
            message = message_of(saved)
        else:
            try:
                message = self._owner.ask(self, self._turn, dict(params))
            except Halted:
                self.halted = True
                raise
        if self.given is not None:
            self.given.append(message_data(message))
        return message

    def channel_use(self) -> Channels:
        """The turns this session paid for, by channel, every sample's (the run's hook,
        harness.run.judge_client.ChannelledTurns): their sum over the sessions is the batch's."""
        return self._owner.channels_of(self)

    def finished(self, outcome: str) -> None:
        """The session's run ended: a completed judgment needs its conversation no more."""
        if outcome in ("model-written", "repaired", "up-to-date"):
            self.conversation.clear()


class Lockstep:
    def __init__(
        self,
        sdk: Any,
        folder: Path,
        *,
        poll: float = config.BATCH_POLL_SECONDS,
        say: Callable[[str], None] | None = None,
        budget: Budget | None = None,
        afresh: bool = False,
    ) -> None:
        self._say = say or (lambda _: None)
        deadline = budget.deadline if budget is not None else NEVER
        self._api = MessageBatches(sdk, deadline, say=self._say)
        self.folder, self._poll = folder, poll
        self.afresh = afresh  # --force: no saved conversation is taken up
        self._budget = budget
        self._cond = threading.Condition()
        self._active = 0
        self._waiting: list[_Slot] = []
        self._submitting = False
        self.stats = LockstepStats()

    def client(self, session: str) -> LockstepClient:
        return LockstepClient(self, session)

    def enter(self) -> None:
        with self._cond:
            self._active += 1

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()  # the others may now all be waiting: a round is due

    def replayed(self) -> None:
        with self._cond:
            self.stats.replayed += 1

    def channels_of(self, client: LockstepClient) -> Channels:
        with self._cond:
            return client.channels.model_copy(deep=True)

    def ask(self, client: LockstepClient, turn: int, params: dict[str, Any]) -> Any:
        slot = _Slot(
            client.session, turn, copy.deepcopy(params), client.conversation, client.channels
        )
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
        if slot.halted is not None:
            raise Halted(slot.halted)
        if slot.fallback is not None:
            with self._cond:
                self.stats.fallbacks += 1
            message = self._api.create(slot.params)
            self._answered(slot, message, batched=False)
            return message
        return slot.message

    def _answered(self, slot: _Slot, message: Any, *, batched: bool) -> None:
        """A turn paid for and read: count its tokens in its channel, the batch's and its
        session's alike (so the sessions' run.json add up to the summary), save it."""
        tokens = budgeted_tokens(message)
        if self._budget is not None:
            self._budget.add(tokens)
        with self._cond:
            for counts in (self.stats.channels, slot.channels):
                channel: ChannelUse = counts.batch if batched else counts.ordinary
                channel.requests += 1
                channel.tokens += tokens
        slot.conversation.answered(slot.turn, message)

    def _round(self, slots: list[_Slot]) -> None:
        """Poll the batch a killed run submitted for the turns it holds; submit one turn of
        every other waiting session as one batch (while the batch's limits hold)."""
        by_batch: dict[str, dict[str, _Slot]] = {}
        fresh: list[_Slot] = []
        for slot in slots:
            where = slot.conversation.pending.get(slot.turn)
            if where is not None:
                by_batch.setdefault(where["batch"], {})[where["customId"]] = slot
            else:
                fresh.append(slot)
        for batch_id, ids in by_batch.items():
            self.stats.resumed += 1
            self._say(f"judge batch: agent turns: resuming message batch {batch_id} ({len(ids)})")
        halt = self._budget.reason() if self._budget is not None and fresh else None
        if halt:
            for slot in fresh:
                slot.halted, slot.done = halt, True
            self.stats.halted += len(fresh)
            self._say(f"judge batch: agent round not submitted: {halt}")
        elif fresh:
            self.stats.rounds += 1
            self.stats.requests += len(fresh)
            ids = {f"t{self.stats.rounds}-{i:05d}": slot for i, slot in enumerate(fresh)}
            try:
                batch_id = self._api.submit([(cid, s.params) for cid, s in ids.items()])
            except Exception as exc:  # the batch itself failed: every turn asks directly
                reason = f"{type(exc).__name__}: {str(exc)[:200]}"
                for slot in fresh:
                    slot.fallback, slot.done = reason, True
            else:
                self._log(batch_id, ids)
                for cid, slot in ids.items():  # before polling: a killed batch polls it again
                    slot.conversation.pending[slot.turn] = {"batch": batch_id, "customId": cid}
                    slot.conversation.save()
                by_batch[batch_id] = ids
                self._say(
                    f"judge batch: agent round {self.stats.rounds}: message batch {batch_id} "
                    f"({len(ids)} turns)"
                )
        for batch_id, ids in by_batch.items():
            self._collect(batch_id, ids)
        for slot in slots:
            if not slot.done:
                slot.fallback = slot.fallback or "missing"
                slot.done = True

    def _collect(self, batch_id: str, ids: dict[str, _Slot]) -> None:
        """Wait for one batch and hand each of its turns its result."""
        stop = self._budget.reason if self._budget is not None else None
        try:
            self._api.wait(batch_id, self._poll, stop)
            halted = self._budget.halted if self._budget is not None else None
            for item in self._api.results(batch_id, halted):
                slot = ids.get(item.custom_id)
                if slot is None or slot.done:
                    continue
                if item.kind == "succeeded":
                    slot.message = item.message
                    self._answered(slot, item.message, batched=True)
                else:
                    slot.fallback = item.kind
                    self.stats.failed[item.kind] = self.stats.failed.get(item.kind, 0) + 1
                slot.done = True
        except Halted as exc:  # interrupted or out of time: the turns stay pending, saved
            unread = [held for held in ids.values() if not held.done]
            for held in unread:  # a turn already answered keeps its answer
                held.halted, held.done = held.halted or str(exc), True
            self.stats.halted += len(unread)
        except Exception as exc:  # the batch could not be read: its turns ask directly
            reason = f"{type(exc).__name__}: {str(exc)[:200]}"
            for slot in ids.values():
                if not slot.done:
                    slot.fallback = reason

    def _log(self, batch_id: str, ids: dict[str, _Slot]) -> None:
        turns = {
            cid: RoundTurn(session=s.session, turn=s.turn, inputs=s.conversation.inputs)
            for cid, s in ids.items()
        }
        append_line(
            self.folder / ROUNDS_FILE,
            RoundLine(round=self.stats.rounds, id=batch_id, customIds=turns),
        )


__all__ = [
    "Conversation",
    "Lockstep",
    "LockstepClient",
    "LockstepStats",
    "conversation_name",
    "prune_conversations",
]
