"""The session's own artifacts are untrusted input (#22 §1), and one run's artifacts belong
together (#19).

Everything under SESSION/ — `.judge/` included — comes from the research pipeline, that is
from web content. Each test plants what a hostile session could ship (a run record, a
citation report, a cached source text, a report page, junk names) and runs the real CLI:
nothing planted may make a session "up to date", change a verdict shown, or be linked.
The key is the test run's (conftest sets JUDGE_STATE_DIR); "another installation" is
another state folder.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.agent.fetch import StoredFetcher
from harness.audit.fetched import FetchedTexts
from harness.cli import cli
from harness.errors import ToolError
from harness.fs import origin
from harness.fs.digest import digest_session
from harness.page.inputs import load_page
from tests.support.fakes import GOOD_JUDGE, message, text, write_judge
from tests.support.paths import FIXTURES
from tests.support.sealed import write_sealed
from tests.support.tried import count

FORGED = {**GOOD_JUDGE, "scores": dict.fromkeys(GOOD_JUDGE["scores"], 5), "unknowns": []}
IGNORED_RUN = "ignored a run record this installation did not write"
IGNORED_REPORT = "ignored a citation report this installation did not write"


# -- helpers ---------------------------------------------------------------------------


def _replay(folder: Path, judgment: dict[str, Any] = GOOD_JUDGE) -> Path:
    path = folder / f"replay-{hashlib.sha256(json.dumps(judgment).encode()).hexdigest()[:8]}"
    lines = [message(write_judge(judgment))] + [message(text("done"))] * 3
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def judge(folder: Path, replay: Path, *more: str, env: dict[str, str] | None = None) -> Any:
    """`judge run` through the real CLI (no audit: a hand-written replay)."""
    args = ["run", str(folder), "--replay", str(replay), "--fetch", "stored", "--no-cite"]
    result = CliRunner().invoke(cli, [*args, "--replay-any", *more], env=env)
    lines = result.stdout.splitlines()
    assert lines, result.stderr
    return result.exit_code, json.loads(lines[0])


def up_to_date(receipt: dict[str, Any]) -> bool:
    return str(receipt["note"]).startswith("up to date")


def scores(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "judge.json").read_text())["scores"])


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def other_installation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run code as another installation (its own key), then come back to ours."""
    ours = os.environ["JUDGE_STATE_DIR"]

    class Switch:
        def __enter__(self) -> None:
            monkeypatch.setenv("JUDGE_STATE_DIR", str(tmp_path / "attacker-state"))
            origin.forget_keys()

        def __exit__(self, *exc: object) -> None:
            monkeypatch.setenv("JUDGE_STATE_DIR", ours)
            origin.forget_keys()

    yield Switch()
    origin.forget_keys()


def _forge_judgment(folder: Path) -> None:
    """Replace judge.json by all 5s and vouch for it in run.json, as an attacker would."""
    (folder / "judge.json").write_text(json.dumps(FORGED, indent=2) + "\n")
    path = folder / ".judge" / "run.json"
    record = json.loads(path.read_text())
    record["upToDate"]["judgeSha256"] = sha(folder / "judge.json")
    if record.get("artifacts"):
        record["artifacts"]["judge"]["sha256"] = sha(folder / "judge.json")
    record["judge"] = FORGED
    path.write_text(json.dumps(record, indent=2))


# -- §1: a planted run record never makes a session "up to date" ----------------------


def _plant_other_installation(folder: Path, replay: Path, switch: Any) -> None:
    with switch:  # the attacker's own harness, against an API of its own
        judge(folder, replay)
        _forge_judgment(folder)
        path = folder / ".judge" / "run.json"
        write_sealed(path, "run", json.loads(path.read_text()))  # sealed with its key


def _plant_edited(folder: Path, replay: Path, switch: Any) -> None:
    judge(folder, replay)  # our own record ...
    _forge_judgment(folder)  # ... then judge.json and its sha256 edited


def _plant_unsealed(folder: Path, replay: Path, switch: Any) -> None:
    judge(folder, replay)
    _forge_judgment(folder)
    path = folder / ".judge" / "run.json"
    record = json.loads(path.read_text())
    record.pop("origin", None)
    path.write_text(json.dumps(record))


def _plant_other_kind(folder: Path, replay: Path, switch: Any) -> None:
    """A record whose proof is a genuine MAC of ours, made for another kind of artifact."""
    judge(folder, replay)
    _forge_judgment(folder)
    path = folder / ".judge" / "run.json"
    record = json.loads(path.read_text())
    record["origin"] = origin.seal("citations", record)["origin"]
    path.write_text(json.dumps(record))


PLANTS = {
    "copied from another installation": _plant_other_installation,
    "judge.json and its sha256 edited": _plant_edited,
    "proof removed": _plant_unsealed,
    "proof made for another kind": _plant_other_kind,
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_run_record_is_ignored_and_said_once(
    small_session: Path, tmp_path: Path, other_installation: Any, plant: str
) -> None:
    replay = _replay(tmp_path)
    PLANTS[plant](small_session, replay, other_installation)
    assert scores(small_session) == FORGED["scores"]
    code, receipt = judge(small_session, replay)
    assert code == 0 and not up_to_date(receipt), receipt
    assert "wrote a valid judge.json" in receipt["note"]  # the model was asked again
    assert receipt["note"].count(IGNORED_RUN) == 1  # said once
    assert scores(small_session) == GOOD_JUDGE["scores"]  # the forged scores do not stand
    # Our own record, written now, is trusted: the next run is up to date.
    _, receipt = judge(small_session, replay)
    assert up_to_date(receipt)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))] or [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))] or [path]
    return [path]


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=20))


@st.composite
def mutations(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """`document` with one leaf changed, one key dropped or one key added."""
    mutated = copy.deepcopy(document)
    leaves = [p for p in _leaves(mutated) if p]
    how = draw(st.sampled_from(["change", "drop", "add"]))
    path = draw(st.sampled_from(leaves))
    if how == "change":
        old: Any = mutated
        for key in path:
            old = old[key]
        new = draw(JSON_LEAF.filter(lambda v: v != old or type(v) is not type(old)))
        _set(mutated, path, new)
    elif how == "drop":
        parent: Any = mutated
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    else:
        mutated[draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in mutated))] = draw(
            JSON_LEAF
        )
    return mutated


@pytest.fixture
def judged_base(tmp_path: Path) -> tuple[Path, Path]:
    from tests.support.sessions import write_small_session

    base = write_small_session(tmp_path / "base")
    replay = _replay(tmp_path)
    code, receipt = judge(base, replay)
    assert code == 0 and not up_to_date(receipt)
    _, receipt = judge(base, replay)
    assert up_to_date(receipt)  # the genuine set is up to date
    return base, replay


@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutated_run_record_is_never_up_to_date(
    judged_base: tuple[Path, Path], tmp_path: Path, data: st.DataObject
) -> None:
    count("artifacts: mutated run.json")
    base, replay = judged_base
    record = json.loads((base / ".judge" / "run.json").read_text())
    mutated = data.draw(mutations(record))
    folder = tmp_path / f"m{hashlib.sha256(json.dumps(mutated).encode()).hexdigest()[:10]}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(base, folder)
    (folder / ".judge" / "run.json").write_text(json.dumps(mutated))
    code, receipt = judge(folder, replay)
    assert code == 0 and not up_to_date(receipt), (mutated, receipt)


@pytest.mark.parametrize("where", ["findings", "sources"])
def test_junk_names_do_not_hide_a_later_change(
    small_session: Path, tmp_path: Path, where: str
) -> None:
    """10,000 names that sort before the real files: a change to a real input is seen."""
    junk = small_session / where
    for i in range(10_001):
        (junk / f"0-junk-{i:05}.txt").write_bytes(b"")
    replay = _replay(tmp_path)
    code, receipt = judge(small_session, replay)
    assert code == 0 and not up_to_date(receipt)
    real = small_session / ("findings/sq1.json" if where == "findings" else "sources/s1.txt")
    st_ = real.stat()
    body = real.read_bytes()
    real.write_bytes(body.replace(b"fever", b"FEVER"))  # same size ...
    os.utime(real, ns=(st_.st_atime_ns, st_.st_mtime_ns))  # ... and the same mtime
    _, receipt = judge(small_session, replay)
    assert not up_to_date(receipt), receipt


def test_a_digest_past_its_cap_is_never_up_to_date(
    small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If a cap is needed, exceeding it means "not up to date", never "unchanged"."""
    import harness.run.digests as digests

    for i in range(20):
        (small_session / "sources" / f"extra-{i:02}.txt").write_text(f"extra {i}\n")
    assert not digest_session(small_session, skip=(".judge",), max_files=10).complete

    def capped(folder: Path, **kwargs: Any) -> Any:
        return digest_session(folder, **kwargs, max_files=10)

    monkeypatch.setattr(digests, "digest_session", capped)
    replay = _replay(tmp_path)
    judge(small_session, replay)
    _, receipt = judge(small_session, replay)
    assert not up_to_date(receipt)
    assert "did not cover everything" in receipt["note"]
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["upToDate"] is None  # and this run's judgment is not offered for reuse


# -- §1: the fetched-text cache ------------------------------------------------------


URL = "https://example.org/aspirin"


def _uncached_source(folder: Path) -> None:
    (folder / "sources" / "s1.txt").unlink()  # s1 has no snapshot of its own


def test_a_planted_cache_text_is_not_the_audits(small_session: Path) -> None:
    _uncached_source(small_session)
    planted = small_session / ".judge" / "sources" / "s1.txt"
    planted.parent.mkdir(parents=True)
    planted.write_text("Aspirin is used to reduce fever.\n")  # the quote, verbatim
    texts = FetchedTexts(small_session / ".judge", {"s1": URL}, "stored")
    assert texts("s1") is None and texts.reused == []
    assert "not written by this installation" in texts.refused["s1"]
    fetcher = StoredFetcher(small_session, {"s1": URL})
    with pytest.raises(ToolError) as refused:
        fetcher.fetch(URL)
    assert "text the citation audit fetched" not in str(refused.value)


def test_a_cached_text_is_trusted_only_as_written(small_session: Path) -> None:
    _uncached_source(small_session)
    live = FetchedTexts(
        small_session / ".judge", {"s1": URL}, "live", fetch=lambda url: "Fetched text.\n"
    )
    assert live("s1") == "Fetched text.\n"
    stored = FetchedTexts(small_session / ".judge", {"s1": URL}, "stored")
    assert stored("s1") == "Fetched text.\n" and stored.reused == ["s1"]
    assert "text the citation audit fetched" in StoredFetcher(small_session, {"s1": URL}).fetch(URL)
    # The same entry under another source's URL, or with its text changed: not ours.
    assert FetchedTexts(small_session / ".judge", {"s1": URL + "x"}, "stored")("s1") is None
    entry = small_session / ".judge" / "sources" / "s1.txt"
    entry.write_bytes(entry.read_bytes().replace(b"Fetched", b"Planted"))
    assert FetchedTexts(small_session / ".judge", {"s1": URL}, "stored")("s1") is None


def test_changing_the_cached_text_is_not_up_to_date(small_session: Path, tmp_path: Path) -> None:
    _uncached_source(small_session)
    FetchedTexts(small_session / ".judge", {"s1": URL}, "live", fetch=lambda url: "Text.\n")("s1")
    replay = _replay(tmp_path)
    judge(small_session, replay)
    _, receipt = judge(small_session, replay)
    assert up_to_date(receipt)
    entry = small_session / ".judge" / "sources" / "s1.txt"
    entry.write_bytes(entry.read_bytes().replace(b"Text.", b"Lies."))
    _, receipt = judge(small_session, replay)
    assert not up_to_date(receipt)


# -- §1: a planted citation report is not shown as the audit ----------------------------

FIXTURE = "quote-not-in-source"
REPLAYS = FIXTURES / "replays"


def judge_fixture(folder: Path, *more: str, env: dict[str, str] | None = None) -> Any:
    args = ["run", str(folder), "--replay", str(REPLAYS / f"{FIXTURE}.jsonl")]
    args += ["--cite-replay", str(REPLAYS / f"{FIXTURE}.cite.jsonl"), "--fetch", "stored"]
    result = CliRunner().invoke(cli, [*args, *more], env=env)
    return result.exit_code, json.loads(result.stdout.splitlines()[0])


def show(folder: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["show", str(folder), "--json"])
    return dict(json.loads(result.stdout))


@pytest.fixture
def judged_fixture(tmp_path: Path) -> Path:
    folder = tmp_path / FIXTURE
    shutil.copytree(FIXTURES / FIXTURE, folder, symlinks=True)
    code, receipt = judge_fixture(folder)
    assert code == 0 and receipt["wroteJudge"], receipt
    return folder


def _all_supported(report: dict[str, Any]) -> dict[str, Any]:
    forged = copy.deepcopy(report)
    forged.pop("origin", None)
    for claim in forged["claims"]:
        claim["verdict"], claim["problems"] = "supported", []
    return forged


def _report_unsealed(folder: Path, report: dict[str, Any], switch: Any) -> None:
    (folder / ".judge" / "citations.json").write_text(json.dumps(_all_supported(report)))


def _report_other_installation(folder: Path, report: dict[str, Any], switch: Any) -> None:
    with switch:
        write_sealed(folder / ".judge" / "citations.json", "citations", _all_supported(report))


def _report_other_kind(folder: Path, report: dict[str, Any], switch: Any) -> None:
    forged = _all_supported(report)
    write_sealed(folder / ".judge" / "citations.json", "run", forged)


REPORT_PLANTS = {
    "no proof": _report_unsealed,
    "another installation's proof": _report_other_installation,
    "a proof made for a run record": _report_other_kind,
}


def _says_not_supported(folder: Path) -> None:
    shown = show(folder)["citations"]
    assert IGNORED_REPORT in shown["problem"] and "verdicts" not in shown
    page = load_page(folder)
    assert not page.audit.present and page.agreement is None
    verdicts = {c.verdict for f in page.findings for c in f.claims}
    assert verdicts == {"not audited"}


@pytest.mark.parametrize("plant", sorted(REPORT_PLANTS))
def test_a_planted_citation_report_is_not_shown(
    judged_fixture: Path, other_installation: Any, plant: str
) -> None:
    path = judged_fixture / ".judge" / "citations.json"
    report = json.loads(path.read_text())
    assert any(c["verdict"] != "supported" for c in report["claims"])
    REPORT_PLANTS[plant](judged_fixture, report, other_installation)
    _says_not_supported(judged_fixture)


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutated_citation_report_is_never_shown(
    judged_fixture: Path, data: st.DataObject
) -> None:
    count("artifacts: mutated citations.json")
    path = judged_fixture / ".judge" / "citations.json"
    genuine = path.read_bytes()
    report = json.loads(genuine)
    mutated = data.draw(mutations(report))
    path.write_text(json.dumps(mutated))
    try:
        shown = show(judged_fixture)["citations"]
        assert IGNORED_REPORT in shown.get("problem", ""), shown
    finally:
        path.write_bytes(genuine)


# -- §1: the report index links only pages it rendered -------------------------------


def test_a_planted_page_link_is_replaced_not_linked(judged_fixture: Path) -> None:
    snapshot = next((judged_fixture / "sources").iterdir())
    before = snapshot.read_bytes()
    page = judged_fixture / ".judge" / "report.html"
    page.symlink_to(snapshot)  # "its page" is a link to its own snapshot ...
    later = 4_102_444_800  # ... dated 2100: "newer than everything it shows"
    os.utime(snapshot, (later, later))
    result = CliRunner().invoke(cli, ["report", str(judged_fixture.parent)])
    assert result.exit_code == 0, result.stderr
    assert not page.is_symlink() and "<!doctype html>" in page.read_text()
    assert snapshot.read_bytes() == before
    index = (judged_fixture.parent / "report.html").read_text()
    assert f"./{FIXTURE}/.judge/report.html" in index


# -- #19: one run's artifacts belong together -----------------------------------------


def test_a_failing_force_run_keeps_the_set_together(judged_fixture: Path) -> None:
    judge_bytes = (judged_fixture / "judge.json").read_bytes()
    citations = judged_fixture / ".judge" / "citations.json"
    report_bytes = citations.read_bytes()
    first = json.loads((judged_fixture / ".judge" / "run.json").read_text())
    before = load_page(judged_fixture).agreement
    assert before is not None and "judge 2 vs 3" in before.why
    dead = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "sk-ant-test-0"}
    result = CliRunner().invoke(
        cli, ["run", str(judged_fixture), "--force", "--max-retries", "0"], env=dead
    )
    receipt = json.loads(result.stdout.splitlines()[0])
    assert result.exit_code == 0 and receipt["wroteJudge"] is False
    assert f"of run {first['runId']} were left in place" in receipt["note"]
    # judge.json and the audit it was compared with, both as they were.
    assert (judged_fixture / "judge.json").read_bytes() == judge_bytes
    assert citations.read_bytes() == report_bytes
    record = json.loads((judged_fixture / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "kept-previous" and record["runId"] != first["runId"]
    assert record["artifacts"]["judge"]["runId"] == first["runId"]
    assert record["artifacts"]["citations"]["runId"] == first["runId"]
    shown = show(judged_fixture)["citations"]
    assert shown["pairedWithJudge"] and shown["runId"] == first["runId"]
    after = load_page(judged_fixture)
    assert after.agreement is not None and after.agreement.why == before.why
    assert f"judge.json: run {first['runId']}" in " ".join(after.provenance)


def test_artifacts_of_two_runs_are_never_paired(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        folder = tmp_path / name / FIXTURE
        shutil.copytree(FIXTURES / FIXTURE, folder, symlinks=True)
        judge_fixture(folder)
        runs.append(folder)
    a, b = runs
    shutil.copy(a / ".judge" / "citations.json", b / ".judge" / "citations.json")  # ours, but A's
    shown = show(b)["citations"]
    run_a = json.loads((a / ".judge" / "run.json").read_text())["runId"]
    run_b = json.loads((b / ".judge" / "run.json").read_text())["runId"]
    assert shown["runId"] == run_a and shown["judgeRunId"] == run_b
    assert shown["pairedWithJudge"] is False
    page = load_page(b)
    assert page.agreement is None
    assert any("not known to come from one run" in line for line in page.provenance)
    lines = CliRunner().invoke(cli, ["show", str(b)]).stderr  # the summary, not judge.json
    assert f"from run {run_a}; not the run that wrote judge.json ({run_b})" in lines


def test_a_batch_resume_never_takes_a_planted_set(tmp_path: Path) -> None:
    """`judge batch` resumes on the up-to-date rule: sessions shipped with a judged-looking
    set from another installation (all 5s, their sha256 vouched) are judged again."""
    import subprocess
    import sys

    from tests.support.apiserver import FakeAPI, Reply
    from tests.support.batch_helpers import mentions, responder, sessions_under

    root = tmp_path / "root"
    names = ["sess-a", "sess-b"]
    sessions_under(root, names)

    def batch(api: FakeAPI, state: Path) -> dict[str, Any]:
        env = api.child_env("sk-ant-artifacts-0", JUDGE_STATE_DIR=str(state))
        done = subprocess.run(
            [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return {json.loads(x)["session"]: json.loads(x) for x in done.stdout.splitlines()}

    with FakeAPI(default=Reply(responder)) as api:
        batch(api, tmp_path / "attacker-state")  # the attacker's own installation
        for name in names:
            _forge_judgment(root / name)
        mark = len(api.requests)
        results = batch(api, Path(os.environ["JUDGE_STATE_DIR"]))
        later = api.requests[mark:]
    for name in names:
        assert results[name]["outcome"] == "model-written", results[name]
        assert any(mentions(r.body, name) for r in later), name
        assert scores(root / name) == GOOD_JUDGE["scores"]


def test_the_judgment_vouched_for_is_the_one_checked(small_session: Path) -> None:
    """A planted judge.json swapped for ours between the check and the provenance read was
    shown as ours (two reads of the file); the digest vouched for is now the one checked."""
    from harness.artifacts.read import provenance
    from harness.contract.judgment import check_session_judge

    code, _ = judge(small_session, _replay(small_session))
    assert code == 0
    ours = (small_session / "judge.json").read_bytes()
    planted = json.dumps(FORGED).encode()
    (small_session / "judge.json").write_bytes(planted)
    check = check_session_judge(small_session)  # the planted file: valid, not ours
    (small_session / "judge.json").write_bytes(ours)  # swapped back before the second look
    assert (
        check.judgment is not None
        and check.sha256 == "sha256:" + hashlib.sha256(planted).hexdigest()
    )
    assert provenance(small_session, check).judge_run is None
    assert provenance(small_session).judge_run is not None  # ours, read afresh, is vouched
