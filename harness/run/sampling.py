"""`judge run --samples K`: samples 2..K after the first, kept in .judge/samples/; the one
the rule chooses (harness.run.samples) is put in judge.json."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.artifacts.record import Sample, Samples
from harness.contract.judgment import JudgeCheck, check_session_judge, write_judgment_atomic
from harness.fs.names import ARTIFACT_DIR, SAMPLES_DIR
from harness.run import samples as rule
from harness.run.faults import fault_words, is_disk_fault
from harness.run.start import RunStart

if TYPE_CHECKING:
    from harness.agent.loop import LoopResult
    from harness.agent.tools import ToolBox


@dataclass(frozen=True, slots=True)
class Sampled:
    loops: tuple[LoopResult, ...]  # samples 2..K, as they ended
    chosen: JudgeCheck | None  # the sample now in judge.json
    record: Samples | None  # run.json's `samples`
    moved: str | None  # what was planted where the samples go (moved aside), or why none was kept


def more_samples(
    run: RunStart,
    first: LoopResult,
    new_tools: Callable[[], ToolBox],
    one_judgment: Callable[[ToolBox, float], LoopResult],
    until: float,
) -> Sampled:
    opts = run.opts
    assert first.final is not None
    made = [(first.final, first.turns)]
    loops: list[LoopResult] = []
    cut: str | None = None
    for index in range(2, opts.samples + 1):
        left = until - time.monotonic()
        if left <= 1.0:
            cut = f"the judge's time ran out after {index - 1} of {opts.samples} samples"
            break
        if run.callers.stop is not None and run.callers.stop():
            cut = f"the run was asked to stop after {index - 1} of {opts.samples} samples"
            break
        extra = one_judgment(new_tools(), left / (opts.samples - index + 1))
        loops.append(extra)
        if not (extra.done and extra.final is not None):
            cut = f"sample {index} ended without a valid judgment ({extra.reason})"
            continue
        made.append((extra.final, extra.turns))
    scores = [_scores(check) for check, _ in made]
    chosen = rule.choose(scores)
    texts = {
        f"{i + 1}.json": (check.raw or "").encode("utf-8") for i, (check, _) in enumerate(made)
    }
    try:
        moved = run.artifacts.write_samples(SAMPLES_DIR, texts)
    except OSError as exc:
        if not is_disk_fault(exc):
            raise
        # The paid turns are the run's all the same: the run goes on with the first sample
        # (already in judge.json, valid), and run.json counts every turn (issue 31 §5).
        exc.filename = exc.filename or str(run.artifacts / SAMPLES_DIR)
        kept = (
            f"the {len(made)} samples could not be kept ({fault_words(exc)}); judge.json is "
            "the last sample written, not chosen among them"
        )
        in_place = check_session_judge(run.folder)
        return Sampled(tuple(loops), in_place if in_place.valid else first.final, None, kept)
    write_judgment_atomic(run.judge_path, made[chosen][0].raw or "", artifacts=run.artifacts)
    record = Samples(
        asked=opts.samples,
        made=[
            Sample(
                index=i + 1,
                file=f"{ARTIFACT_DIR}/{SAMPLES_DIR}/{i + 1}.json",
                sha256="sha256:" + hashlib.sha256(texts[f"{i + 1}.json"]).hexdigest(),
                scores=scores[i],
                turns=turns,
            )
            for i, (_, turns) in enumerate(made)
        ],
        chosen=chosen + 1,
        rule=rule.RULE,
        cut=cut,
    )
    return Sampled(tuple(loops), made[chosen][0], record, _moved_words(len(moved)))


def _scores(check: JudgeCheck) -> dict[str, int | str]:
    assert check.judgment is not None
    scores: dict[str, int | str] = check.judgment.scores.model_dump()
    return scores


def _moved_words(count: int) -> str | None:
    """Planted where the samples go: moved aside, said once."""
    if not count:
        return None
    return (
        f"moved aside {count} entr{'y' if count == 1 else 'ies'} in "
        f"{ARTIFACT_DIR}/{SAMPLES_DIR}/ this installation did not write (renamed *.not-ours-*)"
    )


__all__ = ["Sampled", "more_samples"]
