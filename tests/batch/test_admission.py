"""harness.batch.admission: a batch's sessions prepare a few at a time, first come first
served; one that prepares too long (its disk, not the interpreter) stops holding the
others up; and through `judge_batch`, no more than the width prepare at once."""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness
from harness.batch import admission as admission_module
from harness.batch import core
from harness.batch.admission import Admission, Pass
from harness.batch.limits import BatchLimits
from tests.support.batch_helpers import StatelessModel, sessions_under
from tests.support.tried import count


def _enter_in_order(gate: Admission, n: int) -> tuple[list[int], list[threading.Thread]]:
    """n threads enter one after another (each queued before the next starts)."""
    order: list[int] = []
    threads = []
    for i in range(n):

        def go(i: int = i) -> None:
            gate.enter()
            order.append(i)

        thread = threading.Thread(target=go, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60  # a wait for a thread to queue, not a speed claim
        while len(gate._waiting) + len(gate._held) < i + 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        threads.append(thread)
    return order, threads


def test_at_most_width_prepare_and_the_rest_wait_in_order() -> None:
    gate = Admission(width=2, patience=60)
    order, threads = _enter_in_order(gate, 5)
    time.sleep(0.05)
    assert order == [0, 1]  # two in; three waiting, in the order they came
    assert [t for t, _ in gate._waiting] == [2, 3, 4]
    gate.leave(0)
    deadline = time.monotonic() + 60
    while len(order) < 3 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert order == [0, 1, 2]
    gate.leave(0)  # twice: nothing more is let in
    time.sleep(0.05)
    assert order == [0, 1, 2]
    for ticket in (1, 2, 3):
        gate.leave(ticket)
    for thread in threads:
        thread.join(60)
    assert order == [0, 1, 2, 3, 4]
    assert gate.most == 2


def test_a_session_preparing_too_long_stops_holding_the_others() -> None:
    """One that never leaves (a session waiting on its disk) is not waited for forever."""
    now = [0.0]

    def clock() -> float:  # a fake clock: every reading is 0.03 s after the one before
        now[0] += 0.03
        return now[0]

    gate = Admission(width=1, patience=0.1, clock=clock)
    first = gate.enter()  # and never leaves
    entered: list[int] = []
    second = threading.Thread(target=lambda: entered.append(gate.enter()), daemon=True)
    second.start()
    # Without the patience the second would wait forever; with it, a few waits of at most
    # 0.1 s, so that no load makes 60 s too short.
    second.join(60)
    assert entered == [first + 1]
    # Let in once the first had prepared for the patience, not before, by the gate's clock.
    assert gate._held[first + 1] - gate._held[first] >= 0.1
    assert gate.most == 1


def test_a_pass_leaves_once_and_none_is_no_gate() -> None:
    gate = Admission(width=1, patience=60)
    one = Pass(gate)
    one.enter()
    one.leave()
    one.leave()
    assert gate._held == {}
    free = Pass(None)
    free.enter()
    free.leave()
    with pytest.raises(ValueError):
        Admission(width=0)


@settings(max_examples=25, deadline=None)
@given(
    width=st.integers(1, 4),
    holds=st.lists(st.floats(0, 0.004), min_size=1, max_size=24),
    seed=st.integers(0, 2**16),
)
def test_any_sessions_all_get_in_never_more_than_width(
    width: int, holds: list[float], seed: int
) -> None:
    """Threads entering at random moments, holding for random times (some forever): all
    get in, and while none has prepared past its patience no more than `width` hold."""
    count("batch: admission schedules")
    gate = Admission(width=width, patience=0.2)
    rng = random.Random(seed)
    forever = {i for i in range(len(holds)) if rng.random() < 0.1}
    inside = 0
    most = 0
    lock = threading.Lock()
    done: list[int] = []

    def session(i: int, hold: float) -> None:
        nonlocal inside, most
        time.sleep(rng.random() * 0.002)
        ticket = gate.enter()
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(hold)
        with lock:
            inside -= 1
            done.append(i)
        if i not in forever:
            gate.leave(ticket)

    threads = [threading.Thread(target=session, args=(i, h)) for i, h in enumerate(holds)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(done) == list(range(len(holds)))
    assert gate.most <= width
    if not forever:
        assert most <= width


def test_a_batch_prepares_no_more_than_the_width_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 sessions at once: at most 2 (the width here) are in their preparation at any
    moment (between being let in and their first phase), and every session is judged."""
    root = tmp_path / "root"
    names = [f"s{i:02d}" for i in range(16)]
    sessions_under(root, names)
    made: list[Admission] = []

    class Narrow(Admission):
        def __init__(self) -> None:
            super().__init__(width=2, patience=60)
            made.append(self)

    monkeypatch.setattr(core, "Admission", Narrow)
    preparing = 0
    most = 0
    lock = threading.Lock()
    real = core.judge_session

    def watched(folder: Path, **kwargs: Any) -> Any:
        nonlocal preparing, most
        with lock:
            preparing += 1
            most = max(most, preparing)
        time.sleep(0.01)  # the preparation takes a while: the others would pile up
        hooks = kwargs["hooks"]
        seen = False

        def prepared() -> None:
            # Counted out as the run says its preparation is over (its first phase
            # begins), before the gate lets the next in: counted out at the phase event
            # instead, after the gate's leave, a loaded machine saw the next come in first.
            nonlocal preparing, seen
            if not seen:
                seen = True
                with lock:
                    preparing -= 1
            hooks.on_prepared()

        kwargs["hooks"] = dataclasses.replace(hooks, on_prepared=prepared)
        try:
            return real(folder, **kwargs)
        finally:
            if not seen:
                with lock:
                    preparing -= 1

    monkeypatch.setattr(core, "judge_session", watched)
    batch = harness.judge_batch(
        root, limits=BatchLimits(sessions=16), client=StatelessModel(), fetch="off", cite=False
    )
    assert sorted(s.session for s in batch.sessions) == names
    assert all(s.ok for s in batch.sessions), [s.note for s in batch.sessions]
    assert len(made) == 1 and made[0].most == 2
    assert most == 2


def test_the_default_width_is_the_default_sessions() -> None:
    from harness import config

    assert config.BATCH_SESSIONS.default == admission_module.PREPARING
    assert Admission().width == admission_module.PREPARING
