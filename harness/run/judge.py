"""The judge: the agent loop over the session with Read, Write and WebFetch, once or,
with --samples K, K times (harness.run.sampling)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness import redact
from harness.artifacts.record import Samples, TimeShare
from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.errors import UsageError
from harness.events import emit
from harness.fs.confined import ConfinedError, SessionReader
from harness.run.judge_client import JudgeModel
from harness.run.options import RunOptions
from harness.run.start import RunStart
from harness.session.loader import Session

if TYPE_CHECKING:
    from harness.agent.loop import LoopResult
    from harness.agent.tools import ToolBox

Transcript = Callable[[str, int, Any], None]


@dataclass(frozen=True, slots=True)
class JudgeStart:
    """The judge's start: its tools (the first sample's), its time and its transcript."""

    tools: ToolBox
    new_tools: Callable[[], ToolBox]  # a fresh tool box for each further sample
    at: float  # time.monotonic() when the judge began
    seconds: float  # the judge's time: the run's left, less the reserve
    before: float  # seconds of the run before it (time.beforeAudit when there is no audit)
    transcript: Transcript | None

    def time(self, used: float = 0.0) -> TimeShare:
        return TimeShare(allowed=round(max(self.seconds, 0.0), 3), used=used)

    @property
    def wrote(self) -> bool:
        """The model wrote a valid judge.json (the first sample's tool box)."""
        return self.tools.writes_ok > 0


def begin_judge(
    run: RunStart, session: Session, model: JudgeModel, inputs: str, held: contextlib.ExitStack
) -> JudgeStart:
    from harness.agent import fetch
    from harness.agent.tools import ToolBox

    opts = run.opts
    reader: SessionReader | None = None  # one for every Read of this run
    with contextlib.suppress(ConfinedError):  # unopenable now: each Read opens its own
        reader = held.enter_context(SessionReader(run.folder))

    def new_tools() -> ToolBox:
        return ToolBox(
            session_dir=run.folder,
            session_id=session.session_id,
            fetcher=fetch.make_fetcher(opts.fetch or "live", session, opts.max_fetches),
            cli=opts.cli,
            artifacts=run.artifacts,
            reader=reader,
        )

    tools = new_tools()
    transcript = transcript_writer(opts)
    # The judge has the rest of the run's time, less the reserve for writing; no
    # request or reply body outlasts it (the loop bounds its own by it too).
    now = time.monotonic()
    seconds = run.budget.left(now)
    model.bound_replies(max(seconds, 0.0))
    run.callers.hooks.on_prepared()
    run.callers.hooks.on_inputs(inputs)  # a lockstep conversation is saved under them
    phase = {"event": "phase", "phase": "judge", "inputs": inputs, "seconds": seconds}
    emit(run.callers.progress, phase)
    return JudgeStart(tools, new_tools, now, seconds, run.budget.since(now), transcript)


@dataclass(frozen=True, slots=True)
class Judged:
    first: LoopResult  # the first judgment's loop
    sampled: tuple[LoopResult, ...]  # --samples K: the loops of samples 2..K
    chosen: JudgeCheck | None  # --samples K: the sample put in judge.json
    samples: Samples | None
    samples_moved: str | None  # what was planted where the samples go, moved aside
    used: float  # seconds the judge took

    @property
    def check(self) -> JudgeCheck | None:
        """The valid judge.json the judge left, if it finished."""
        if not (self.first.done and self.first.final is not None):
            return None
        if self.chosen is not None:  # --samples K: the one nearest the median
            return self.chosen
        return self.first.final  # the loop's last check, just read: not read again


def judge(
    run: RunStart,
    model: JudgeModel,
    system: str,
    first: str,
    start: JudgeStart,
    audit: TimeShare | None,
) -> Judged:
    from harness.agent.loop import LoopLimits, run_loop
    from harness.run import sampling

    opts = run.opts

    def one_judgment(tools: ToolBox, seconds: float) -> LoopResult:
        return run_loop(
            model_api=model.api(),
            model=opts.model,
            system=system,
            first_message=first,
            tools=tools,
            check=lambda: check_session_judge(run.folder),
            written=lambda: tools.writes_ok > 0,
            limits=LoopLimits(
                max_turns=opts.max_turns,
                max_output_tokens=opts.max_output_tokens,
                max_total_tokens=opts.max_total_tokens,
                max_seconds=seconds,
                max_reasks=opts.max_reasks,
                request_timeout=opts.timeout,
                time_text=run.budget.time_text(audit, seconds),
            ),
            transcript=start.transcript,
            on_event=run.callers.progress,
            should_stop=run.callers.stop,
        )

    # --samples K: each judgment gets an equal part of the judge's time still left.
    result = one_judgment(start.tools, start.seconds / opts.samples)
    more = sampling.Sampled((), None, None, None)
    if opts.samples > 1 and result.done and result.final is not None:
        until = start.at + start.seconds
        more = sampling.more_samples(run, result, start.new_tools, one_judgment, until)
    used = round(time.monotonic() - start.at, 3)
    model.check_replay()
    return Judged(result, more.loops, more.chosen, more.record, more.moved, used)


def transcript_writer(opts: RunOptions) -> Transcript | None:
    target = opts.transcript
    if target is None:
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the transcript {target}: {exc.strerror}") from exc

    def write(kind: str, turn: int, body: Any) -> None:
        document = {"type": kind, "turn": turn, "body": body}
        line = redact.artifact_text(document, indent=None)
        with target.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    return write


__all__ = ["JudgeStart", "Judged", "begin_judge", "judge", "transcript_writer"]
