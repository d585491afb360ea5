"""Which folders under ROOT are sessions: see `harness.session.discover` (one reader of that
rule for the batch and `judge agree`)."""

from harness.session.discover import MARKERS, discover, is_session

__all__ = ["MARKERS", "discover", "is_session"]
