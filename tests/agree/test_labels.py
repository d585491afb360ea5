"""Reading a labels file: every bad line is an error that names the file, the line and the fix;
nothing is silently dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.agree.labels import ClaimLabel, SessionRating, read_labels
from harness.errors import UsageError

CLAIM = {
    "kind": "claim",
    "session": "s1",
    "claimId": "sq1-c1",
    "support": "supported",
    "rater": "a",
}
RATING = {"kind": "rating", "session": "s1", "rater": "a", "scores": {"citationAccuracy": 4}}


def _write(tmp_path: Path, *lines: str | bytes) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b"\n".join(x.encode() if isinstance(x, str) else x for x in lines) + b"\n")
    return path


def test_reads_both_kinds_in_order_with_line_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(CLAIM), "", json.dumps(RATING))
    labels = read_labels(path)
    assert [(n, type(x)) for n, x in labels.claims] == [(1, ClaimLabel)]
    assert [(n, type(x)) for n, x in labels.ratings] == [(3, SessionRating)]
    assert labels.ratings[0][1].given() == {"citationAccuracy": 4}
    assert labels.sessions() == ["s1"]


BAD = [
    ("not json", "{"),
    ("duplicate key", '{"kind": "claim", "kind": "rating"}'),
    ("unknown kind", json.dumps({**CLAIM, "kind": "vote"})),
    ("bad support", json.dumps({**CLAIM, "support": "Complete"})),
    ("score 6", json.dumps({**RATING, "scores": {"citationAccuracy": 6}})),
    ("score as text", json.dumps({**RATING, "scores": {"citationAccuracy": "4"}})),
    (
        "score 4.0",
        '{"kind": "rating", "session": "s", "rater": "a", "scores": {"completeness": 4.0}}',
    ),
    ("lower-case unknown", json.dumps({**RATING, "scores": {"completeness": "unknown"}})),
    ("unknown dimension", json.dumps({**RATING, "scores": {"style": 3}})),
    ("extra field", json.dumps({**CLAIM, "weight": 2})),
    ("no rater", json.dumps({k: v for k, v in CLAIM.items() if k != "rater"})),
    ("empty session", json.dumps({**CLAIM, "session": ""})),
    ("other version", json.dumps({**CLAIM, "version": "labels-v9"})),
    ("an array", "[1, 2]"),
    ("NaN", '{"kind": "claim", "session": NaN}'),
]


@pytest.mark.parametrize(("why", "line"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_line_names_file_line_and_fix(tmp_path: Path, why: str, line: str) -> None:
    path = _write(tmp_path, json.dumps(CLAIM), line)
    with pytest.raises(UsageError) as caught:
        read_labels(path)
    assert f"{path}:2:" in caught.value.message
    assert "schemas/labels.schema.json" in caught.value.message


def test_not_utf8_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r":1: not UTF-8"):
        read_labels(_write(tmp_path, b"\xff\xfe{}"))
    with pytest.raises(UsageError, match="no such labels file"):
        read_labels(tmp_path / "nope.jsonl")
    with pytest.raises(UsageError, match="is a folder"):
        read_labels(tmp_path)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.jsonl"
        path.write_bytes(data)
        try:
            labels = read_labels(path)
        except UsageError as exc:
            assert str(path) in exc.message
        else:
            assert len(labels.claims) + len(labels.ratings) <= data.count(b"\n") + 1


def test_a_device_that_never_ends_a_line_is_refused_at_the_line_limit() -> None:
    """Issue 31 §4: `judge agree /dev/zero` read to the memory ceiling: a device has no size
    to check first, and the line limit was checked after the whole line was read."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UsageError, match="a line of more than"):
        read_labels(Path("/dev/zero"))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024  # a line's limit (1 MiB) read, never the device
