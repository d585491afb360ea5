"""The request the engine's rules build: plain JSON data, known to the rules and the client."""

from __future__ import annotations

from typing import Any

Request = dict[str, Any]
"""`{"state": {...}, "questions": {key: {"type", "instructions", "criteria"}}}`, read-only."""
