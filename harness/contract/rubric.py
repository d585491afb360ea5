"""The rubric's constants: the five dimensions, "Unknown" and the rubric version."""

from __future__ import annotations

from typing import Literal

__all__ = ["DIMENSIONS", "RUBRIC_VERSION", "UNKNOWN"]

RUBRIC_VERSION: Literal["deep-judge-v1"] = "deep-judge-v1"
DIMENSIONS: tuple[str, ...] = (
    "factualAccuracy",
    "citationAccuracy",
    "completeness",
    "sourceQuality",
    "toolEfficiency",
)
UNKNOWN: Literal["Unknown"] = "Unknown"
