"""Forged fetched-text cache entries are untrusted input (#22 §1), through the real CLI.

The audit keeps the text of cited sources the session did not store in
`.judge/sources/<id>.txt` (harness.audit.fetched), each entry sealed with this
installation's key (harness.fs.cache). A session can ship entries of its own there: each
example plants one — unsealed, sealed with another installation's key, sealed for another
source or URL, sealed then edited, cut short, junk bytes, a link to or a hard link of a
genuine entry, a huge file, a folder or a FIFO in its place, the whole cache behind a link
— and runs `judge run` and `judge cite` against a loopback API. Whatever was planted, the
run is the run of the same session without it: the same audit requests (the planted text
never reaches the audit's model), the same verdicts, none "reused", the judge's WebFetch
never calls it "text the citation audit fetched", the same judge.json and exit code; the
run says once that it ignored the entry, and leaves the planted files as they were.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import cli
from harness.fs import origin
from harness.fs.cache import TEXT_CAP, seal_cached
from tests.support.apiserver import RECEIPT, FakeAPI, Reply, Routed
from tests.support.fakes import GOOD_JUDGE, message, text, tool_use, write_judge
from tests.support.sessions import write_small_session
from tests.support.tried import count

KEY = "sk-ant-test-forged-cache-0001"
URL = "https://example.org/aspirin"
QUOTE = "Aspirin is used to reduce fever."
FETCHED = "text the citation audit fetched"
IGNORED = "cached source text(s) this installation did not write"


# -- the loopback API: an obedient judge that WebFetches s1, and an audit that answers ---


def _is_audit(request: dict[str, Any]) -> bool:
    return "output_config" in request


def _results(request: dict[str, Any]) -> list[dict[str, Any]]:
    content = request["messages"][-1]["content"]
    blocks = [] if isinstance(content, str) else content
    return [b for b in blocks if b.get("type") == "tool_result"]


def _judge(request: dict[str, Any]) -> dict[str, Any]:
    """WebFetch s1 (it has no snapshot), then write judge.json, then the receipt. Fixed
    tool ids: two runs of one session send byte-identical conversations."""
    results = _results(request)
    if not results:
        return message(tool_use("WebFetch", {"url": URL}, id="toolu_fetch"))
    if "judge.json written" in str(results[-1].get("content", "")):
        return message(text(RECEIPT))
    write = write_judge(GOOD_JUDGE)
    write["id"] = "toolu_write"
    return message(write)


def _audit(request: dict[str, Any]) -> dict[str, Any]:
    """Every question answered by a number that depends on the request (so a request
    with other text would be answered otherwise)."""
    schema = request["output_config"]["format"]["schema"]["properties"]
    seed = hashlib.sha256(json.dumps(request["messages"]).encode()).digest()
    answers: dict[str, Any] = {}
    for i, (name, field) in enumerate(sorted(schema.items())):
        level = seed[i % len(seed)] / 255
        if field.get("type") == "object":
            options = field["properties"]["value"]["enum"]
            answers[name] = {"value": options[seed[i % 32] % len(options)], "confidence": level}
        else:
            answers[name] = round(level, 3)
    return message(text(json.dumps(answers)))


@pytest.fixture(scope="module")
def api() -> Iterator[FakeAPI]:
    with FakeAPI(default=Routed(_is_audit, Reply(_audit), Reply(_judge))) as server:
        yield server


ENV_KEYS = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


def _env(api: FakeAPI) -> dict[str, str | None]:
    return {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_AUTH_TOKEN": None}


# -- what a run did ----------------------------------------------------------------------


NONCE = re.compile(r'nonce=\\?"[0-9a-f]{24}\\?"')


def _requests(api: FakeAPI, since: int) -> tuple[list[str], list[Any]]:
    """The audit's request bodies (sorted: they may be sent concurrently) and the
    judge's, in order, since request `since`; untrusted text's random delimiters
    (harness.text.untrusted) made alike."""
    bodies = [r.body for r in api.requests[since:] if r.path.startswith("/v1/messages")]
    bodies = [json.loads(NONCE.sub("nonce=N", json.dumps(b))) for b in bodies]
    audit = sorted(json.dumps(b, sort_keys=True) for b in bodies if _is_audit(b))
    return audit, [b for b in bodies if not _is_audit(b)]


def _claims(report: dict[str, Any]) -> list[Any]:
    return list(report["claims"])


def _webfetch_result(judge_requests: list[Any]) -> str:
    for body in judge_requests:
        for block in _results(body):
            if block.get("tool_use_id") == "toolu_fetch":
                return json.dumps(block.get("content"))
    raise AssertionError("the judge's WebFetch was not answered")


def _run(folder: Path, api: FakeAPI) -> dict[str, Any]:
    since = len(api.requests)
    args = ["run", str(folder), "--fetch", "stored", "--audit-fetch", "stored"]
    args += ["--timeout", "10", "--max-retries", "0", "--lock-timeout", "5"]
    result = CliRunner().invoke(cli, args, env=_env(api))
    lines = result.stdout.splitlines()
    assert len(lines) == 1, (result.stdout, result.stderr)
    receipt = json.loads(lines[0])
    audit, judge = _requests(api, since)
    citations = json.loads((folder / ".judge" / "citations.json").read_text())
    shown = CliRunner().invoke(cli, ["show", str(folder), "--json"])
    since = len(api.requests)
    cited = CliRunner().invoke(cli, ["cite", str(folder), "--json", "-q"], env=_env(api))
    table = CliRunner().invoke(cli, ["cite", str(folder), "-q"], env=_env(api))
    cite_audit, _ = _requests(api, since)
    return {
        "code": result.exit_code,
        "receipt": receipt,
        "audit": audit,
        "judge": judge,
        "webfetch": _webfetch_result(judge),
        "claims": _claims(citations),
        "texts": citations["sourceTexts"],
        "judge.json": (folder / "judge.json").read_bytes(),
        "show": (shown.exit_code, json.loads(shown.stdout)["valid"]),
        "cite": (cited.exit_code, _claims(json.loads(cited.stdout))),
        "cite texts": json.loads(cited.stdout)["sourceTexts"],
        "cite table": table.stderr,
        "cite audit": cite_audit,
    }


def _state(path: Path) -> Any:
    """What is at `path`, never following a link: its kind and bytes (a link: its target
    and what that holds; a folder: its entries)."""
    if path.is_symlink():
        target = Path(os.readlink(path))
        return ("link", str(target), _state(path.parent / target))
    if path.is_dir():
        return ("dir", {p.name: _state(p) for p in sorted(path.iterdir())})
    if path.is_fifo():
        return ("fifo",)
    if path.is_file():
        data = path.read_bytes()
        return ("file", len(data), hashlib.sha256(data).hexdigest(), path.stat().st_nlink)
    return None


# -- the forged entries ------------------------------------------------------------------

HUGE = TEXT_CAP + 4096


def _genuine(text: bytes, source_id: str = "s1", url: str = URL) -> bytes:
    """An entry as this installation's audit writes it."""
    return seal_cached(source_id, url, text)


def _other_installation(text: bytes, state: Path) -> bytes:
    ours = os.environ["JUDGE_STATE_DIR"]
    os.environ["JUDGE_STATE_DIR"] = str(state)
    origin.forget_keys()
    try:
        return seal_cached("s1", URL, text)
    finally:
        os.environ["JUDGE_STATE_DIR"] = ours
        origin.forget_keys()


KINDS = (
    "unsealed",
    "another installation's key",
    "sealed for another source",
    "sealed for another URL",
    "sealed, then edited",
    "sealed, then cut short",
    "junk bytes",
    "a header and junk",
    "a link to a genuine entry",
    "a hard link of a genuine entry",
    "the cache folder is a link",
    "huge",
    "a folder in its place",
    "a FIFO in its place",
)


PROSE = st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass"))
BODY = PROSE.map(lambda prose: prose + b"\n" + QUOTE.encode() + b"\n")  # the quote, verbatim
EXTRA = st.tuples(st.integers(min_value=0, max_value=10**9), st.binary(max_size=400))


def _plant(folder: Path, outside: Path, kind: str, body: bytes, extra: Any) -> list[Path]:
    """Plant a forged s1 entry; the paths whose state the run must leave as it was."""
    n, junk = extra
    cache = folder / ".judge" / "sources"
    cache.mkdir(parents=True, exist_ok=True)
    entry = cache / "s1.txt"
    outside.mkdir(parents=True, exist_ok=True)
    if kind == "unsealed":
        entry.write_bytes(body)
    elif kind == "another installation's key":
        entry.write_bytes(_other_installation(body, outside / "attacker-state"))
    elif kind == "sealed for another source":
        entry.write_bytes(_genuine(body, source_id="s2"))
    elif kind == "sealed for another URL":
        entry.write_bytes(_genuine(body, url=URL + "?planted"))
    elif kind == "sealed, then edited":
        blob = bytearray(_genuine(body))
        at = len(blob) - 1 - n % len(body)  # a byte of the text, not of the header
        blob[at] = (blob[at] + 1 + n % 255) % 256
        entry.write_bytes(bytes(blob))
    elif kind == "sealed, then cut short":
        blob = _genuine(body)
        entry.write_bytes(blob[: n % len(blob)])
    elif kind == "junk bytes":
        entry.write_bytes(junk)
    elif kind == "a header and junk":
        entry.write_bytes(b"judge-cache-v1 hmac-sha256:" + junk[:64].hex().encode() + b"\n" + body)
    elif kind == "a link to a genuine entry":
        (outside / "s1.txt").write_bytes(_genuine(body))
        entry.symlink_to(outside / "s1.txt")
        return [entry, outside / "s1.txt"]
    elif kind == "a hard link of a genuine entry":
        (outside / "s1.txt").write_bytes(_genuine(body))
        os.link(outside / "s1.txt", entry)
    elif kind == "the cache folder is a link":
        cache.rmdir()
        (outside / "sources").mkdir(exist_ok=True)
        (outside / "sources" / "s1.txt").write_bytes(_genuine(body))
        cache.symlink_to(outside / "sources")
        return [cache, outside / "sources"]
    elif kind == "huge":
        entry.write_bytes(_genuine(body))
        os.truncate(entry, HUGE + n % 4096)  # sparse: the header's MAC no longer covers it
    elif kind == "a folder in its place":
        entry.mkdir()
        (entry / "s1.txt").write_bytes(_genuine(body))
    elif kind == "a FIFO in its place":
        os.mkfifo(entry)
    else:  # pragma: no cover - KINDS and this table are one list
        raise AssertionError(kind)
    return [entry]


# -- the session and the run without any planted entry ----------------------------------


def _fresh(pristine: Path, work: Path) -> Path:
    """The same session at the same path each time (its path is in the judge's prompt)."""
    shutil.rmtree(work.parent, ignore_errors=True)
    shutil.copytree(pristine, work)
    return work


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, api: FakeAPI) -> dict[str, Any]:
    """The pristine session, where each example runs it, and its run with nothing planted."""
    root = tmp_path_factory.mktemp("forged-cache")
    pristine = write_small_session(root / "pristine" / "sess")
    (pristine / "sources" / "s1.txt").unlink()  # s1 has no snapshot: the cache would answer
    work = root / "work" / "sess"
    done = _run(_fresh(pristine, work), api)
    assert done["code"] == 0 and done["receipt"]["wroteJudge"], done["receipt"]
    assert done["show"] == (0, True)
    assert done["audit"], "the audit asked the model nothing: the comparison would be empty"
    assert FETCHED not in done["webfetch"] and IGNORED not in done["receipt"]["note"]
    assert done["texts"]["reused"] == [] and done["texts"]["refused"] == {}
    again = _run(_fresh(pristine, work), api)
    assert {k: again[k] for k in SAME} == {k: done[k] for k in SAME}  # deterministic
    return {"pristine": pristine, "work": work, "baseline": done}


SAME = ("code", "audit", "judge", "webfetch", "claims", "judge.json", "show", "cite", "cite audit")


def test_a_genuine_entry_is_read_so_the_comparison_can_fail(
    world: dict[str, Any], api: FakeAPI
) -> None:
    """The control: an entry this installation wrote IS used (reused, sent to the audit,
    shown to the judge as fetched text), so each comparison below can see a difference."""
    work = _fresh(world["pristine"], world["work"])
    entry = work / ".judge" / "sources" / "s1.txt"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(_genuine(b"Planted prose.\n" + QUOTE.encode() + b"\n"))
    done = _run(work, api)
    assert done["texts"]["reused"] == ["s1"]
    assert FETCHED in done["webfetch"]
    for key in ("audit", "judge", "webfetch", "claims", "cite", "cite audit"):
        assert done[key] != world["baseline"][key], key
    assert IGNORED not in done["receipt"]["note"]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=BODY, extra=EXTRA)
def test_a_forged_cache_entry_never_counts(
    world: dict[str, Any], api: FakeAPI, kind: str, body: bytes, extra: tuple[int, bytes]
) -> None:
    count("artifacts: forged fetched-text cache entry (judge run + cite)")
    baseline = world["baseline"]
    work = _fresh(world["pristine"], world["work"])
    planted = _plant(work, work.parent / "outside", kind, body, extra)
    before = [_state(p) for p in planted]
    done = _run(work, api)
    for key in SAME:
        assert done[key] == baseline[key], key
    assert FETCHED not in done["webfetch"]
    assert done["texts"]["reused"] == [] and done["cite texts"]["reused"] == []
    assert list(done["texts"]["refused"]) == ["s1"], done["texts"]
    assert done["receipt"]["note"].count(IGNORED) == 1, done["receipt"]["note"]
    assert done["cite table"].count(IGNORED) == 1, done["cite table"]
    assert [_state(p) for p in planted] == before  # read, never changed or removed
