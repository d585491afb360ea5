"""Round 1, pure: windows of passages, their requests, and the scores read from replies.

Every detect (filters, screened concerns, factors) is asked of every passage, at most
`window` passages a request, in source order: the model reads a passage's neighbours.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.cite.concerns import Concerns
from harness.cite.questions import inspect, probability
from harness.cite.replies import Checked
from harness.cite.source import CiteSource
from harness.cite.wire import Request

Scores = dict[str, dict[str, float]]
"""passage id -> detect name -> probability."""


@dataclass(frozen=True)
class Window:
    """Passages `start` up to (not including) `stop`, by source index."""

    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start

    def halves(self) -> tuple[Window, Window]:
        """The two halves a refused window is re-sent as; callers never halve a lone one."""
        mid = self.start + len(self) // 2
        return Window(self.start, mid), Window(mid, self.stop)

    def ids(self, source: CiteSource) -> list[str]:
        return source.ids[self.start : self.stop]


def windows(source: CiteSource, size: int) -> list[Window]:
    """Consecutive windows of at most `size` passages covering the source in order."""
    n = len(source.passages)
    return [Window(i, min(i + size, n)) for i in range(0, n, size)]


def key(passage_id: str, detect: str) -> str:
    return f"{passage_id}:{detect}"


def request(source: CiteSource, concerns: Concerns, window: Window) -> Request:
    """One request: the window under the source's `as`, a question per passage and detect."""
    ids = window.ids(source)
    state = source.state
    questions: dict[str, Any] = {}
    for pid in ids:
        ref = source.ref(pid)
        for name, detect in concerns.detects:
            questions[key(pid, name)] = inspect(detect, ref)
    return {"state": {source.as_: {pid: state[pid] for pid in ids}}, "questions": questions}


def scores(
    source: CiteSource, concerns: Concerns, window: Window, answers: Mapping[str, Checked]
) -> Scores:
    """Read a window's checked answers as each passage's probability per detect."""
    return {
        pid: {
            name: probability(detect, answers[key(pid, name)]) for name, detect in concerns.detects
        }
        for pid in window.ids(source)
    }
