"""Pairing the sessions of two sides: by id (the folder's name), or by question.

By question, each question must be held by exactly one session on each side: a question
held by several sessions on a side, and a session whose question cannot be read, are named
and left unpaired (a guess would pair the wrong sessions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harness.compare.sides import ComparedSession, Side

PairBy = Literal["id", "question"]


@dataclass(slots=True)
class Paired:
    pairs: list[tuple[ComparedSession, ComparedSession]] = field(default_factory=list)
    unpaired_a: list[str] = field(default_factory=list)
    unpaired_b: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)


def pair(a: Side, b: Side, by: PairBy = "id") -> Paired:
    if by == "id":
        out = Paired()
        out.pairs = [(a.sessions[k], b.sessions[k]) for k in sorted(a.sessions) if k in b.sessions]
        out.unpaired_a = sorted(k for k in a.sessions if k not in b.sessions)
        out.unpaired_b = sorted(k for k in b.sessions if k not in a.sessions)
        return out
    return _by_question(a, b)


def _short(question: str | None, cap: int = 80) -> str:
    text = question or ""
    return repr(text if len(text) <= cap else text[: cap - 1] + "…")


def _questions(side: Side, label: str, ambiguous: list[str]) -> dict[str, ComparedSession]:
    held: dict[str, list[ComparedSession]] = {}
    for session in side.sessions.values():
        if session.question is None:
            ambiguous.append(f"{label} {session.id}: no question (answer.md has no heading)")
            continue
        held.setdefault(session.question.casefold(), []).append(session)
    out: dict[str, ComparedSession] = {}
    for key, sessions in sorted(held.items()):
        if len(sessions) > 1:
            names = ", ".join(sorted(s.id for s in sessions))
            ambiguous.append(
                f"{label}: {len(sessions)} sessions ask {_short(sessions[0].question)}: {names}"
            )
        else:
            out[key] = sessions[0]
    return out


def _by_question(a: Side, b: Side) -> Paired:
    out = Paired()
    qa = _questions(a, "A", out.ambiguous)
    qb = _questions(b, "B", out.ambiguous)
    out.pairs = [(qa[q], qb[q]) for q in sorted(qa, key=lambda q: qa[q].id) if q in qb]
    paired_a = {s.id for s, _ in out.pairs}
    paired_b = {s.id for _, s in out.pairs}
    out.unpaired_a = sorted(k for k in a.sessions if k not in paired_a)
    out.unpaired_b = sorted(k for k in b.sessions if k not in paired_b)
    return out


__all__ = ["PairBy", "Paired", "pair"]
