"""Forged `--samples K` artifacts are untrusted input (#22 §1), through the real CLI.

`judge run --samples K` keeps each judgment in `.judge/samples/<i>.json`, lists them (with
their sha256) in its sealed run.json, puts the one nearest their median in judge.json
(harness.run.samples); `judge agree --self` reads only what that run.json vouches for.
A session can ship samples of its own. Two properties, each against a loopback API:

- planted BEFORE a run (forged judgments at sample names, junk, a huge file, a link, a
  folder or a FIFO at a sample name, the samples folder a link or a file, a forged run
  record listing forged samples): the run is the run without them — the same exit code,
  judge.json, samples in run.json, `agree --self` figures, `judge show` and report page —
  and it says once what it moved aside; nothing planted is followed or deleted beyond the
  stale `.json` files the run documents it replaces;
- forged AFTER a run (a sample edited, cut, replaced by junk, a link, a folder, a FIFO, a
  huge file; an unlisted sample added; run.json edited to vouch for a forged sample): the
  forged sample is absent — `agree --self` gives the figures of the same session with that
  sample removed, and names it once — and `judge show` and the page are unchanged.
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
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cli import cli
from harness.fs import origin
from harness.fs.origin import sealed_artifact
from tests.support.apiserver import RECEIPT, FakeAPI, Reply
from tests.support.fakes import GOOD_JUDGE, message, text, write_judge
from tests.support.sessions import write_small_session
from tests.support.tried import count

KEY = "sk-ant-test-forged-samples-01"
K = 3
CITES = (1, 5, 3)  # the samples' citationAccuracy, in order: sample 3 is nearest the median
FORGED = {
    **GOOD_JUDGE,
    "scores": dict.fromkeys(GOOD_JUDGE["scores"], 5),
    "unknowns": [],
    "note": "Forged: every dimension 5.",
}
FORGED_BYTES = json.dumps(FORGED, indent=2).encode()
IGNORED_RUN = "ignored a run record this installation did not write"
MOVED = "this installation did not write (renamed *.not-ours-*)"
HUGE = 64 * 1024 * 1024


class SampleJudge:
    """An obedient judge whose i-th conversation of a run writes citationAccuracy
    CITES[i]: the samples differ, so which one is chosen matters."""

    def __init__(self) -> None:
        self.conversations = 0

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        if len(messages) == 1:
            self.conversations += 1
        content = messages[-1]["content"]
        blocks = [] if isinstance(content, str) else content
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results and "judge.json written" in str(results[-1].get("content", "")):
            return message(text(RECEIPT))
        judgment = json.loads(json.dumps(GOOD_JUDGE))
        judgment["scores"]["citationAccuracy"] = CITES[(self.conversations - 1) % K]
        judgment["note"] = f"Sample {self.conversations}."
        write = write_judge(judgment)
        write["id"] = "toolu_write"
        return message(write)


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[FakeAPI, SampleJudge]]:
    judge = SampleJudge()
    with FakeAPI(default=Reply(judge)) as server:
        yield server, judge


def _env(server: FakeAPI) -> dict[str, str | None]:
    return {
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_AUTH_TOKEN": None,
    }


# -- what a run and the readers say ------------------------------------------------------

STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:\d\d|Z| UTC)?")


def _run_id(folder: Path) -> str | None:
    path = folder / ".judge" / "run.json"
    try:
        value = json.loads(path.read_text()).get("runId")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _alike(text: str, folder: Path) -> str:
    """`text` with this run's id and every time stamp made alike (two runs of one session
    differ in those only)."""
    run_id = _run_id(folder)
    if run_id:
        text = text.replace(run_id, "RUN")
    text = re.sub(r"\d+(\.\d+)? s\b", "N s", text)
    text = re.sub(r"nonce-?=?\"?[0-9a-f]{32}", "NONCE", text)  # the page's CSP nonce
    # The run's receipt (on the page) saying what it ignored: checked on its own.
    text = re.sub(r"; moved aside [^;<]*?\(renamed \*\.not-ours-\*\)", "", text)
    text = re.sub(r"; ignored a run record this installation did not write [^;<]*", "", text)
    return STAMP.sub("TIME", text)


def _readers(folder: Path, labels: Path) -> dict[str, Any]:
    """What `agree --self`, `show --json` and the page say about the session."""
    root = folder.parent
    agree = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(root), "--self", "--json"])
    assert agree.exit_code == 0, agree.output
    shown = CliRunner().invoke(cli, ["show", str(folder), "--json"])
    page = root.parent / "page.html"
    made = CliRunner().invoke(cli, ["report", str(folder), "--output", str(page)])
    assert made.exit_code == 0, made.output
    return {
        "self": json.loads(agree.stdout)["self"],
        "show": (shown.exit_code, _alike(shown.stdout, folder)),
        "page": _alike(page.read_text(), folder),
    }


def _run(folder: Path, labels: Path, api: tuple[FakeAPI, SampleJudge]) -> dict[str, Any]:
    server, judge = api
    judge.conversations = 0
    args = ["run", str(folder), "--samples", str(K), "--no-cite", "--fetch", "off"]
    args += ["--timeout", "10", "--max-retries", "0", "--lock-timeout", "5"]
    result = CliRunner().invoke(cli, args, env=_env(server))
    lines = result.stdout.splitlines()
    assert len(lines) == 1, (result.stdout, result.stderr, result.exception)
    record = json.loads((folder / ".judge" / "run.json").read_text())
    return {
        "code": result.exit_code,
        "note": json.loads(lines[0])["note"],
        "judge.json": (folder / "judge.json").read_bytes(),
        "samples": record["samples"],
        "files": {
            p.name: p.read_bytes() for p in sorted((folder / ".judge" / "samples").glob("*.json"))
        },
        **_readers(folder, labels),
    }


def _state(path: Path) -> Any:
    """What is at `path`, never following a link: its kind and bytes."""
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", {p.name: _state(p) for p in sorted(path.iterdir())})
    if path.is_fifo():
        return ("fifo",)
    if path.is_file():
        return ("file", hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)
    return None


def _tree(path: Path) -> dict[str, Any]:
    return {p.name: _state(p) for p in sorted(path.iterdir())} if path.is_dir() else {}


# -- the world: a session, a labels file, and the run with nothing planted --------------


def _fresh(world: dict[str, Any]) -> Path:
    work: Path = world["work"]
    shutil.rmtree(work.parent.parent, ignore_errors=True)
    shutil.copytree(world["pristine"], work)
    (work.parent.parent / "outside").mkdir()
    return work


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, api: tuple[FakeAPI, SampleJudge]
) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("forged-samples")
    pristine = write_small_session(base / "pristine" / "sess")
    labels = base / "labels.jsonl"
    label = {"kind": "rating", "session": "sess", "rater": "a", "scores": {"completeness": 3}}
    labels.write_text(json.dumps(label) + "\n")
    world = {"pristine": pristine, "work": base / "w" / "root" / "sess", "labels": labels}
    done = _run(_fresh(world), labels, api)
    assert done["code"] == 0 and "sample 3 of 3 made" in done["note"], done["note"]
    assert json.loads(done["judge.json"])["scores"]["citationAccuracy"] == CITES[2]
    assert done["self"]["samples"] == K and done["self"]["unreadable"] == []
    assert MOVED not in done["note"] and IGNORED_RUN not in done["note"]
    again = _run(_fresh(world), labels, api)
    assert again == done  # two runs of one session say the same, once made alike
    world["baseline"] = done
    return world


OUTSIDE = "outside"


def _outside(folder: Path) -> Path:
    return folder.parent.parent / OUTSIDE


# -- planted before the run -------------------------------------------------------------

BEFORE = (
    "forged judgments at sample names",
    "junk at a sample name",
    "a huge file at a sample name",
    "a link at a sample name",
    "a folder at a sample name",
    "a FIFO at a sample name",
    "the samples folder is a link",
    "the samples folder is a file",
    "a file that is not a sample",
    "a forged run record listing forged samples",
    "another installation's run record and samples",
)
NAMES = st.sampled_from([f"{i}.json" for i in range(1, 7)])


def _plant_before(folder: Path, kind: str, name: str, junk: bytes) -> tuple[bool, bool]:
    """Plant; (whether something must be moved aside, whether a run record was forged)."""
    samples = folder / ".judge" / "samples"
    samples.mkdir(parents=True, exist_ok=True)
    out = _outside(folder)
    if (samples / name).is_file():
        (samples / name).unlink()  # an earlier plant's forged file: this one replaces it
    if kind == "forged judgments at sample names":
        for i in range(1, K + 2):
            (samples / f"{i}.json").write_bytes(FORGED_BYTES)
    elif kind == "junk at a sample name":
        (samples / name).write_bytes(junk)
    elif kind == "a huge file at a sample name":
        (samples / name).write_bytes(FORGED_BYTES)
        os.truncate(samples / name, HUGE)
    elif kind == "a link at a sample name":
        (out / f"forged-{name}").write_bytes(FORGED_BYTES)
        (samples / name).symlink_to(out / f"forged-{name}")
        return True, False
    elif kind == "a folder at a sample name":
        (samples / name).mkdir()
        (samples / name / "1.json").write_bytes(FORGED_BYTES)
        return True, False
    elif kind == "a FIFO at a sample name":
        os.mkfifo(samples / name)
        return True, False
    elif kind == "the samples folder is a link":
        samples.rmdir()
        for i in range(1, K + 1):
            (out / f"{i}.json").write_bytes(FORGED_BYTES)
        samples.symlink_to(out)
        return True, False
    elif kind == "the samples folder is a file":
        samples.rmdir()
        samples.write_bytes(FORGED_BYTES)
        return True, False
    elif kind == "a file that is not a sample":
        (samples / "notes.txt").write_bytes(junk)
    elif kind == "a forged run record listing forged samples":
        _forge_record(folder, seal=False)
        return False, True
    elif kind == "another installation's run record and samples":
        _forge_record(folder, seal=True)
        return False, True
    else:  # pragma: no cover - BEFORE and this table are one list
        raise AssertionError(kind)
    return False, False


def _forge_record(folder: Path, *, seal: bool) -> None:
    """A run record vouching for K forged samples (sealed with another installation's key,
    or not sealed at all), as a copied one would."""
    samples = folder / ".judge" / "samples"
    sha = "sha256:" + hashlib.sha256(FORGED_BYTES).hexdigest()
    made = []
    for i in range(1, K + 1):
        (samples / f"{i}.json").write_bytes(FORGED_BYTES)
        file = f".judge/samples/{i}.json"
        made.append(
            {"index": i, "file": file, "sha256": sha, "scores": FORGED["scores"], "turns": 2}
        )
    record = {
        "runId": "20991231T000000Z-forged",
        "samples": {"asked": K, "made": made, "chosen": 1, "rule": "forged", "cut": None},
    }
    path = folder / ".judge" / "run.json"
    if not seal:
        path.write_text(json.dumps(record))
        return
    ours = os.environ["JUDGE_STATE_DIR"]
    os.environ["JUDGE_STATE_DIR"] = str(_outside(folder) / "attacker-state")
    origin.forget_keys()
    try:
        path.write_bytes(sealed_artifact("run", record))
    finally:
        os.environ["JUDGE_STATE_DIR"] = ours
        origin.forget_keys()


def _every(argument: str, kinds: tuple[str, ...], **more: Any) -> Any:
    """Each kind once, as an explicit example, besides the generated ones."""

    def apply(test: Any) -> Any:
        for kind in kinds:
            value = [kind] if argument == "kinds" else kind
            test = example(**{argument: value}, **more)(test)
        return test

    return apply


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@_every("kinds", BEFORE, name="2.json", junk=b"junk")
@given(
    kinds=st.lists(st.sampled_from(BEFORE), min_size=1, max_size=3, unique=True),
    name=NAMES,
    junk=st.binary(max_size=300),
)
def test_samples_planted_before_a_run_never_count(
    world: dict[str, Any],
    api: tuple[FakeAPI, SampleJudge],
    kinds: list[str],
    name: str,
    junk: bytes,
) -> None:
    count("artifacts: samples planted before judge run --samples")
    folder = _fresh(world)
    moves = forged_record = False
    whole = [k for k in kinds if k.startswith("the samples folder")]
    first = ("forged judgments at sample names", "a forged run", "another installation")
    kinds = whole[:1] or sorted(kinds, key=lambda k: not k.startswith(first))
    start = int(name.split(".")[0])
    for i, kind in enumerate(kinds):  # the folder itself planted: that alone
        at = f"{(start + i - 1) % 6 + 1}.json"  # each plant at a name of its own
        must_move, record = _plant_before(folder, kind, at, junk)
        moves, forged_record = moves or must_move, forged_record or record
    outside = _tree(_outside(folder))
    samples = folder / ".judge" / "samples"
    kept = {}  # what the run must leave as it is: every entry but a stale .json file
    if samples.is_dir() and not samples.is_symlink():
        kept = {n: s for n, s in _tree(samples).items() if not n.endswith(".json")}
        planted = {n: s for n, s in _tree(samples).items() if n.endswith(".json")}
    else:
        planted = {"samples": _state(samples)}
    done = _run(folder, world["labels"], api)
    baseline = world["baseline"]
    for key in ("code", "judge.json", "samples", "files", "self", "show", "page"):
        assert done[key] == baseline[key], (kinds, key)
    assert done["note"].startswith(baseline["note"]), done["note"]
    assert done["note"].count(MOVED) == (1 if moves else 0), done["note"]
    assert done["note"].count(IGNORED_RUN) == (1 if forged_record else 0), done["note"]
    # Nothing outside is touched; what was not a regular file is moved aside, unchanged.
    assert _tree(_outside(folder)) == outside
    after = _tree(folder / ".judge" / "samples")
    for entry, state in kept.items():
        assert after.get(entry) == state, entry
    if moves:
        aside = _tree(folder / ".judge" / "samples") | _tree(folder / ".judge")
        for entry, state in planted.items():
            if state is not None and (entry == "samples" or state[0] != "file"):
                found = [s for n, s in aside.items() if n.startswith(f"{entry}.not-ours-")]
                assert found == [state], entry


def test_a_planted_samples_link_crashed_the_run(
    world: dict[str, Any], api: tuple[FakeAPI, SampleJudge]
) -> None:
    """The defect the property found (fails before the fix): a link or a file planted as
    `.judge/samples`, or a folder at a sample name, ended `judge run --samples K` with an
    internal error after the judgments were made."""
    folder = _fresh(world)
    (folder / ".judge").mkdir()
    (folder / ".judge" / "samples").symlink_to(_outside(folder))
    done = _run(folder, world["labels"], api)
    assert done["code"] == 0 and done["judge.json"] == world["baseline"]["judge.json"]
    assert done["note"].count(MOVED) == 1


# -- forged after the run ---------------------------------------------------------------

AFTER = (
    "a forged judgment in its place",
    "cut short",
    "junk in its place",
    "a huge file in its place",
    "a link in its place",
    "a folder in its place",
    "a FIFO in its place",
    "an unlisted sample added",
    "run.json edited to vouch for a forged sample",
)


@pytest.fixture(scope="module")
def judged(world: dict[str, Any], api: tuple[FakeAPI, SampleJudge]) -> Path:
    """The genuine run, kept aside: each example starts from a copy of it."""
    folder = _fresh(world)
    _run(folder, world["labels"], api)
    keep = world["work"].parent.parent.parent / "judged"
    shutil.rmtree(keep, ignore_errors=True)
    shutil.copytree(folder, keep, symlinks=True)
    return keep


def _copy_judged(world: dict[str, Any], judged: Path) -> Path:
    work: Path = world["work"]
    shutil.rmtree(work.parent.parent, ignore_errors=True)
    shutil.copytree(judged, work, symlinks=True)
    (work.parent.parent / "outside").mkdir()
    return work


def _forge_after(folder: Path, kind: str, index: int, n: int, junk: bytes) -> str:
    """Forge sample `index` (or add one); the sample's file name that must be named."""
    samples = folder / ".judge" / "samples"
    target = samples / f"{index}.json"
    genuine = target.read_bytes()
    if kind == "a forged judgment in its place":
        target.write_bytes(FORGED_BYTES)
    elif kind == "cut short":
        target.write_bytes(genuine[: n % len(genuine)])
    elif kind == "junk in its place":
        target.write_bytes(junk if junk != genuine else junk + b"x")
    elif kind == "a huge file in its place":
        os.truncate(target, HUGE)
    elif kind == "a link in its place":
        out = _outside(folder) / "forged.json"
        out.write_bytes(genuine)  # even the genuine bytes: never read through a link
        target.unlink()
        target.symlink_to(out)
    elif kind == "a folder in its place":
        target.unlink()
        target.mkdir()
    elif kind == "a FIFO in its place":
        target.unlink()
        os.mkfifo(target)
    elif kind == "an unlisted sample added":
        extra = samples / f"{K + 1 + n % 5}.json"
        extra.write_bytes(FORGED_BYTES)
        return "run.json does not list"
    elif kind == "run.json edited to vouch for a forged sample":
        target.write_bytes(FORGED_BYTES)
        path = folder / ".judge" / "run.json"
        record = json.loads(path.read_text())
        sha = "sha256:" + hashlib.sha256(FORGED_BYTES).hexdigest()
        record["samples"]["made"][index - 1]["sha256"] = sha
        path.write_text(json.dumps(record, indent=2))
        return "run.json"
    else:  # pragma: no cover - AFTER and this table are one list
        raise AssertionError(kind)
    return target.name


def _absent(world: dict[str, Any], judged: Path, kind: str, index: int) -> dict[str, Any]:
    """What the readers say with the forged artifact simply absent."""
    folder = _copy_judged(world, judged)
    if kind == "run.json edited to vouch for a forged sample":
        (folder / ".judge" / "run.json").unlink()
    elif kind != "an unlisted sample added":
        (folder / ".judge" / "samples" / f"{index}.json").unlink()
    return _readers(folder, world["labels"])


@pytest.fixture(scope="module")
def absent() -> dict[Any, dict[str, Any]]:
    return {}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@_every("kind", AFTER, index=2, n=7, junk=b"junk")
@given(
    kind=st.sampled_from(AFTER),
    index=st.integers(min_value=1, max_value=K),
    n=st.integers(min_value=0, max_value=10**6),
    junk=st.binary(max_size=300),
)
def test_samples_forged_after_a_run_are_absent(
    world: dict[str, Any],
    judged: Path,
    absent: dict[Any, dict[str, Any]],
    kind: str,
    index: int,
    n: int,
    junk: bytes,
) -> None:
    count("artifacts: samples forged after judge run --samples")
    if (kind, index) not in absent:
        absent[kind, index] = _absent(world, judged, kind, index)
    reference = absent[kind, index]
    if "genuine" not in absent:
        absent["genuine"] = _readers(_copy_judged(world, judged), world["labels"])
    genuine = absent["genuine"]
    folder = _copy_judged(world, judged)
    named = _forge_after(folder, kind, index, n, junk)
    outside = _tree(_outside(folder))
    seen = _readers(folder, world["labels"])
    figures = {k: v for k, v in seen["self"].items() if k != "unreadable"}
    assert figures == {k: v for k, v in reference["self"].items() if k != "unreadable"}
    assert figures != {k: v for k, v in genuine["self"].items() if k != "unreadable"} or (
        kind == "an unlisted sample added"
    )
    said = [line for line in seen["self"]["unreadable"] if named in line]
    assert len(said) == 1, seen["self"]["unreadable"]
    if kind == "run.json edited to vouch for a forged sample":
        assert IGNORED_RUN in said[0]
    if kind != "run.json edited to vouch for a forged sample":  # (test_session_artifacts)
        # judge show and the page never read samples: as they were.
        assert seen["show"] == genuine["show"] and seen["page"] == genuine["page"]
    assert _tree(_outside(folder)) == outside


def test_samples_copied_from_another_session_lend_nothing(
    world: dict[str, Any], judged: Path
) -> None:
    """A run record this installation sealed, with its samples, copied whole into another
    session (one with other contents): `agree --self` reads none of its samples there and
    says so once; the session it was written for keeps its own."""
    folder = _copy_judged(world, judged)
    other = folder.parent / "other"
    shutil.copytree(folder, other, symlinks=True)
    (other / "answer.md").write_text("Another answer, another session.\n")
    labels = folder.parent.parent / "both.jsonl"
    label = {"kind": "rating", "rater": "a", "scores": {"completeness": 3}}
    labels.write_text(
        "".join(json.dumps({**label, "session": n}) + "\n" for n in ("sess", "other"))
    )
    agree = CliRunner().invoke(
        cli, ["agree", str(labels), "--root", str(folder.parent), "--self", "--json"]
    )
    report = json.loads(agree.stdout)["self"]
    said = [line for line in report["unreadable"] if line.startswith("other/")]
    assert len(said) == 1 and "other session contents" in said[0], report["unreadable"]
    assert not [line for line in report["unreadable"] if line.startswith("sess")]
    assert report["samples"] == K  # "sess"'s own samples only, not the copy's
