"""The Messages-API agent loop: tool use, every stop reason, limits, re-asks.

The loop owns the conversation and nothing else: tools come from a `ToolBox`,
the model from a `ModelAPI` (our own seam: the real SDK, a replay through it, or a
scripted fake), and the final check from `check`. It never raises for model
behaviour or API faults; it returns why it stopped and the run decides.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness import clock, config
from harness.agent.tools import TOOL_SPECS, ToolBox
from harness.contract.judgment import JudgeCheck
from harness.errors import Halted, InvalidRequest, ModelUnavailable, OutOfTime, RateLimited
from harness.events import OnEvent, ShouldStop, emit
from harness.model.seam import ModelAPI, reused_tool_id, sendable_messages
from harness.usage import Usage

CACHE = {"type": "ephemeral"}
# A request that failed this close to the loop's time limit failed because of it.
LATE_SLACK = 0.05

Transcript = Callable[[str, int, Any], None]


@dataclass(frozen=True, slots=True)
class LoopLimits:
    max_turns: int = int(config.MAX_TURNS.default)
    max_output_tokens: int = int(config.MAX_OUTPUT_TOKENS.default)
    max_total_tokens: int = int(config.MAX_TOTAL_TOKENS.default)
    max_seconds: float = config.MAX_SECONDS.default
    max_reasks: int = int(config.MAX_REASKS.default)
    request_timeout: float = config.TIMEOUT.default
    # The time limit in words for a note ("16 s for the run: ..."); "" says max_seconds.
    time_text: str = ""
    # Bytes of tool results sent back in one turn; calls past it are refused, and said.
    max_turn_result_bytes: int = config.MAX_TOOL_RESULT_BYTES_PER_TURN


@dataclass(slots=True)
class LoopResult:
    """Why the loop stopped. `done` means the final check passed."""

    done: bool
    reason: str
    turns: int = 0
    reasks: int = 0
    usage: Usage = field(default_factory=Usage)
    models: list[str] = field(default_factory=list)
    stop_reasons: list[str | None] = field(default_factory=list)
    final_text: str = ""
    unavailable: bool = False
    invalid: bool = False  # the API refused a request as invalid (our defect, not an outage)
    final: JudgeCheck | None = None  # the last check of judge.json, when one was made
    problems: list[str] = field(default_factory=list)  # what was cut or corrected, said


def run_loop(
    *,
    model_api: ModelAPI,
    model: str,
    system: str,
    first_message: str,
    tools: ToolBox,
    check: Callable[[], JudgeCheck],
    written: Callable[[], bool],
    limits: LoopLimits,
    transcript: Transcript | None = None,
    on_event: OnEvent | None = None,
    should_stop: ShouldStop | None = None,
) -> LoopResult:
    deadline = clock.Deadline.after(limits.max_seconds)
    # Every request of the loop (each attempt, each retry wait, each reply's body) ends by
    # the loop's own time limit (harness.clock).
    with clock.scope(deadline):
        return _run_loop(
            model_api=model_api,
            model=model,
            system=system,
            first_message=first_message,
            tools=tools,
            check=check,
            written=written,
            limits=limits,
            transcript=transcript,
            on_event=on_event,
            should_stop=should_stop,
            deadline=deadline,
        )


def _left(deadline: clock.Deadline) -> float:
    left = deadline.left()
    assert left is not None  # the loop's own deadline always has a time
    return left


def _run_loop(
    *,
    model_api: ModelAPI,
    model: str,
    system: str,
    first_message: str,
    tools: ToolBox,
    check: Callable[[], JudgeCheck],
    written: Callable[[], bool],
    limits: LoopLimits,
    transcript: Transcript | None,
    on_event: OnEvent | None,
    should_stop: ShouldStop | None,
    deadline: clock.Deadline,
) -> LoopResult:
    result = LoopResult(done=False, reason="")
    messages: list[dict[str, Any]] = [_user_text(first_message)]
    tool_specs = copy.deepcopy(TOOL_SPECS)
    tool_specs[-1]["cache_control"] = CACHE
    system_blocks = [{"type": "text", "text": system, "cache_control": CACHE}]
    time_text = limits.time_text or f"{limits.max_seconds:g} s"

    while True:
        if result.turns >= limits.max_turns:
            result.reason = f"the turn limit ({limits.max_turns}) was reached"
            return result
        if result.usage.budgeted >= limits.max_total_tokens:
            result.reason = f"the token budget ({limits.max_total_tokens:,} tokens) was used up"
            return result
        remaining = _left(deadline)
        if remaining <= 0:
            result.reason = f"the time limit ({time_text}) was reached"
            return result
        halt = should_stop() if should_stop is not None else None
        if halt:  # e.g. a batch's shared token budget (harness.events)
            result.reason = halt
            return result
        reused = reused_tool_id(messages)
        if reused is not None:  # a reply gave an id again: the history cannot be sent
            result.reason = (
                f"the API's reply is malformed: the tool_use id {reused} is given twice "
                "in the conversation"
            )
            result.unavailable = True
            return result

        params = {
            "model": model,
            "max_tokens": limits.max_output_tokens,
            "system": system_blocks,
            "tools": tool_specs,
            # Made a history the API accepts (blank text dropped, one turn per role in
            # turn, every tool_use answered) before the breakpoint lands on its last block.
            "messages": _with_cache_breakpoint(sendable_messages(messages)),
        }
        result.turns += 1
        if transcript:
            transcript("request", result.turns, params)
        try:
            response = model_api.generate(params, min(remaining, limits.request_timeout))
        except Halted as exc:  # refused before it was sent (a batch's shared limit)
            result.turns -= 1
            result.reason = exc.message
            return result
        except InvalidRequest as exc:
            result.reason = exc.message
            result.invalid = True
            return result
        except ModelUnavailable as exc:
            # A model still answering when the time ran out is the time limit, not an
            # unavailable model; a wait the API asked for past it is "rate limited".
            late = _left(deadline) <= LATE_SLACK
            if isinstance(exc, OutOfTime) or (late and not isinstance(exc, RateLimited)):
                result.reason = (
                    f"the time limit ({time_text}) was reached while the model was "
                    f"answering ({exc.message})"
                )
                return result
            result.reason = exc.message
            result.unavailable = True
            return result
        except MemoryError:
            result.reason = _out_of_memory(f"sending turn {result.turns} or reading its reply")
            return result
        if transcript:
            transcript("response", result.turns, response.raw)
        spent = result.usage.budgeted
        result.usage += response.usage
        result.problems += [f"turn {result.turns}: {p}" for p in response.problems]
        if response.model not in result.models:
            result.models.append(response.model)
        result.stop_reasons.append(response.stop_reason)
        content = response.content
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text").strip()
        if text:
            result.final_text = text
        stop = response.stop_reason
        emit(
            on_event,
            {
                "event": "turn",
                "turn": result.turns,
                "stop": stop,
                "tools": [b.get("name") for b in content if b.get("type") == "tool_use"],
                "tokens": result.usage.budgeted - spent,
                "totalTokens": result.usage.budgeted,
            },
        )

        if stop == "pause_turn":
            # A server-side pause: hand the turn back as it is so the model resumes.
            messages.append({"role": "assistant", "content": content})
            continue
        if stop in ("refusal", "model_context_window_exceeded"):
            why = "the model refused" if stop == "refusal" else "the context window was exceeded"
            result.reason = f"{why} (stop_reason {stop})"
            return result
        if not content:
            # An empty assistant turn cannot be sent back; nudge with a user turn instead
            # (merged with the turn before it when sent: harness.model.seam.sendable_messages).
            messages.append(_user_text("(no reply received) Please continue the task."))
            continue
        messages.append({"role": "assistant", "content": content})
        tool_uses = [b for b in content if b.get("type") == "tool_use"]

        if stop == "tool_use" or (tool_uses and stop != "max_tokens"):
            try:
                answers = _run_tools(tools, tool_uses, response.cut, limits, result)
            except MemoryError:
                result.reason = _out_of_memory(f"running the tools of turn {result.turns}")
                return result
            messages.append({"role": "user", "content": answers})
            continue
        if stop == "max_tokens":
            blocks = [
                _tool_result(
                    b["id"],
                    "cut off at the output limit before this call was complete; call it again",
                    True,
                )
                for b in tool_uses
            ]
            blocks.append(
                {
                    "type": "text",
                    "text": (
                        "Your reply hit the output token limit. Continue briefly from where "
                        "you stopped; if judge.json is not written yet, write it now."
                    ),
                }
            )
            messages.append({"role": "user", "content": blocks})
            continue

        # end_turn, stop_sequence, or a stop reason this SDK does not know: final check.
        final = result.final = check()
        if final.valid and written():
            result.done = True
            result.reason = "the model wrote a valid judge.json"
            return result
        if result.reasks >= limits.max_reasks:
            result.reason = _not_done_reason(final, written(), result.reasks)
            return result
        result.reasks += 1
        messages.append(_user_text(_reask_text(final, written())))


def _run_tools(
    tools: ToolBox,
    uses: list[dict[str, Any]],
    cut: dict[str, str],
    limits: LoopLimits,
    result: LoopResult,
) -> list[dict[str, Any]]:
    """Run every tool_use of the turn in order; answer them all in one user message.

    A call whose input was cut (harness.model: past its cap while streaming) is answered
    with why. Once the turn's results hold `limits.max_turn_result_bytes`, the later
    calls are not run: each is answered that the turn's results are full (call it again
    next turn), and the record says how many.
    """
    answers: list[dict[str, Any]] = []
    size, skipped = 0, 0
    for use in uses:
        name, tool_input = use.get("name", ""), use.get("input")
        if use["id"] in cut:
            text, error = tools.refuse(name, tool_input, cut[use["id"]])
        elif size >= limits.max_turn_result_bytes:
            skipped += 1
            text, error = tools.refuse(name, tool_input, _turn_full(limits))
        else:
            text, error = tools.run(name, tool_input)
            size += len(text.encode("utf-8", "surrogatepass"))
        answers.append(_tool_result(use["id"], text, error))
    if skipped:
        result.problems.append(
            f"turn {result.turns}: {skipped} of {len(uses)} tool call(s) not run: the "
            f"turn's tool results reached {size:,} bytes (the limit is "
            f"{limits.max_turn_result_bytes:,} bytes per turn)"
        )
    return answers


def _turn_full(limits: LoopLimits) -> str:
    return (
        f"refused: this turn's tool results already hold {limits.max_turn_result_bytes:,} "
        "bytes (the limit per turn), so this call was not run; call it again in a later "
        "turn if you still need it"
    )


def _out_of_memory(doing: str) -> str:
    return (
        f"the harness ran out of memory {doing} (a fault of this process, not of the "
        "model or the API)"
    )


def _tool_result(tool_use_id: str, text: str, is_error: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def _user_text(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy whose last block carries cache_control; the stored history is not mutated."""
    if not messages:
        return messages
    last = dict(messages[-1])
    blocks = [dict(b) for b in last["content"]]
    blocks[-1]["cache_control"] = CACHE
    last["content"] = blocks
    return [*messages[:-1], last]


def _reask_text(final: JudgeCheck, written: bool) -> str:
    if final.valid and not written:
        return (
            "You have not written judge.json in this run. Write your judgment now with the "
            "Write tool (file_path 'judge.json'), in exactly the brief's format."
        )
    if not final.issues or final.issues[0].found == "no such file":
        return (
            "judge.json does not exist yet: the task is not done. Write it now with the Write "
            "tool (file_path 'judge.json'), in exactly the brief's format."
        )
    lines = "\n".join(f"- {line}" for line in final.error_lines())
    return (
        "`show --json` fails: judge.json is not valid.\n"
        f"{lines}\nFix every error and Write the complete file again."
    )


def _not_done_reason(final: JudgeCheck, written: bool, reasks: int) -> str:
    if final.valid and not written:
        return f"the model did not write judge.json after {reasks} reminder(s)"
    errors = "; ".join(final.error_lines()[:3])
    return f"the model ended without a valid judge.json after {reasks} re-ask(s) ({errors})"
