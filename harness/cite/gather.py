"""Between rounds, pure: which passages become which findings. No model call.

- A passage failing any filter is set aside; so is one whose window failed (no scores).
- A screened concern gathers every remaining match into one finding; a passage matching
  several concerns is evidence for each.
- A factored concern fills each role with its factor's strongest match; a distinct role
  takes the strongest match no other role holds; an empty required role means no finding.

A concern with nothing gathered has no finding at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.cite.concerns import Concerns, FactoredConcern, ScreenedConcern


@dataclass(frozen=True)
class Gathered:
    """A finding-to-be: `concern` indexes `Concerns.concerns`.

    `passages` are in source order; `roles` (factored only) pairs each filled role, in role
    order, with its passage.
    """

    concern: int
    passages: tuple[str, ...]
    roles: tuple[tuple[str, str], ...] = ()


def gather(
    ids: Sequence[str],
    concerns: Concerns,
    scores: Mapping[str, Mapping[str, float] | None],
    threshold: float,
) -> tuple[list[Gathered], list[str]]:
    """Findings in concern order, and the passages set aside, in source order.

    `scores[id]` is None for a passage whose window failed.
    """
    usable: list[tuple[int, str, Mapping[str, float]]] = []
    set_aside: list[str] = []
    for index, pid in enumerate(ids):
        s = scores[pid]
        if s is None or any(s[f.name] <= threshold for f in concerns.filters):
            set_aside.append(pid)
        else:
            usable.append((index, pid, s))

    found: list[Gathered] = []
    for n, concern in enumerate(concerns.concerns):
        if isinstance(concern, ScreenedConcern):
            matches = tuple(pid for _, pid, s in usable if s[concern.name] > threshold)
            if matches:
                found.append(Gathered(n, matches))
        else:
            roles = _fill(concern, usable, threshold)
            if roles is not None:
                order = {pid: i for i, pid, _ in usable}
                passages = tuple(sorted({pid for _, pid in roles}, key=order.__getitem__))
                found.append(Gathered(n, passages, roles))
    return found, set_aside


def strongest(
    ids: Sequence[str], concerns: Concerns, scores: Mapping[str, Mapping[str, float] | None]
) -> dict[str, float]:
    """Each screened concern's highest round-1 score over the passages that were scored, a
    match or not (none for a concern no passage was scored for). Read by no rule: for a
    concern with nothing gathered it is the score that decided so, which a report keeps."""
    out: dict[str, float] = {}
    for concern in concerns.concerns:
        if not isinstance(concern, ScreenedConcern):
            continue
        said = [s[concern.name] for pid in ids if (s := scores[pid]) is not None]
        if said:
            out[concern.name] = max(said)
    return out


def _fill(
    concern: FactoredConcern,
    usable: list[tuple[int, str, Mapping[str, float]]],
    threshold: float,
) -> tuple[tuple[str, str], ...] | None:
    held: dict[str, str] = {}

    def strongest(factor: str, taken: set[str]) -> str | None:
        # Highest score wins; on a tie the earlier passage does.
        best: tuple[float, str] | None = None
        for _, pid, s in usable:
            score = s[factor]
            # Strictly greater only, so an equal score later in the source never displaces.
            if score > threshold and pid not in taken and (best is None or score > best[0]):
                best = (score, pid)
        return None if best is None else best[1]

    # Shared roles first: a distinct role must avoid every other role's passage, which is
    # only known once they are all filled.
    for role in concern.roles:
        if not role.distinct:
            pid = strongest(role.factor, set())
            if pid is not None:
                held[role.name] = pid
    for role in concern.roles:
        if role.distinct:
            pid = strongest(role.factor, set(held.values()))
            if pid is not None:
                held[role.name] = pid

    if not held or any(r.required and r.name not in held for r in concern.roles):
        return None
    return tuple((r.name, held[r.name]) for r in concern.roles if r.name in held)
