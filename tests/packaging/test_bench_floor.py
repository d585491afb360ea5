"""bench/bench_batch.py's floor: wall ÷ bound for processes whose starts are evenly spaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import bench_batch


@pytest.fixture(scope="module")
def latencies() -> bench_batch.Latencies:
    return bench_batch.Latencies(0.5, 1.0)  # the fake's draws, with no server


@pytest.mark.parametrize("width", [32, 512])
def test_with_free_starts_the_floor_is_the_bound(
    latencies: bench_batch.Latencies, width: int
) -> None:
    # Small sessions' chains dominate their share of the slots: the bound is the slowest chain.
    assert bench_batch.start_floor(latencies, width, 0.0, 0.0) == pytest.approx(1.0)


def test_the_floor_grows_with_the_start_up_and_each_starts_cost(
    latencies: bench_batch.Latencies,
) -> None:
    floors = [
        bench_batch.start_floor(latencies, 512, s, c) for s, c in [(0, 0), (1.7, 0), (1.7, 0.01)]
    ]
    assert floors == sorted(floors) and floors[0] < floors[1] < floors[2]
    # The start-up is added whole: 1.7 s over the bound.
    chains = [latencies.chain(f"small-{i:03d}") for i in range(512)]
    assert floors[1] - floors[0] == pytest.approx(1.7 / max(chains))


def test_a_chain_is_the_five_draws_the_fake_makes_for_that_session(
    latencies: bench_batch.Latencies,
) -> None:
    audits = [latencies.draw("small-007", "audit", n) for n in range(2)]
    turns = [latencies.draw("small-007", "turn", n) for n in range(3)]
    assert latencies.chain("small-007") == pytest.approx(sum(audits) + sum(turns))
    assert latencies.chain("small-007") != latencies.chain("small-008")


def test_shards_on_cores_of_their_own_lower_the_floor(latencies: bench_batch.Latencies) -> None:
    one, two, four = (bench_batch.start_floor(latencies, 512, 1.7, 0.02, n) for n in (1, 2, 4))
    assert one > two > four > 1.0


def test_the_checkouts_compared_take_turns_at_running_second() -> None:
    # Whichever runs second in a round on the same sessions peaks higher: no checkout may
    # always be second.
    a, b = Path("a"), Path("b")
    assert bench_batch.rounds([a, b], 1) == [a, b]
    assert bench_batch.rounds([a, b], 4) == [a, b, b, a, a, b, b, a]
    assert bench_batch.rounds([a], 3) == [a, a, a]
