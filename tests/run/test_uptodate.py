"""The "up to date" rule: a finished judgment on identical inputs is not paid for twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from harness.cli import cli
from harness.resources import DEFAULT_BRIEF
from harness.run import RunHooks, judge_session
from harness.run.uptodate import local_time
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.paths import FIXTURES

RECEIPT = 'Done. {"wroteJudge": true, "note": "scored"}'
KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-uptodate"}


def model() -> ScriptedModel:
    """A judge that writes a good judge.json, then ends its turn: two calls a run."""
    return ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text(RECEIPT))])


def run(folder: Path, **options: Any) -> tuple[Any, int]:
    """Run once with a fresh fake; the result and how many model calls it made."""
    fake = model()
    options = {"fetch": "stored", "cite": False, **options}
    result = judge_session(folder, client=fake, **options)
    return result, len(fake.requests)


def test_second_run_is_up_to_date_without_a_model_call(small_session: Path) -> None:
    first, calls = run(small_session)
    assert first.outcome == "model-written" and calls == 2
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    judge_bytes = (small_session / "judge.json").read_bytes()
    assert record["upToDate"]["inputs"].startswith("sha256:")

    second, calls = run(small_session)
    assert calls == 0
    assert second.outcome == "up-to-date" and second.exit_code == 0
    assert second.receipt.wroteJudge is False and second.receipt.upToDate is True
    assert first.receipt.upToDate is False  # true only when the run was skipped
    assert second.receipt.note.startswith("up to date: judge.json was written by the run of ")
    assert local_time(record["ended"]) in second.receipt.note  # local time, to the second
    assert "--force redoes it" in second.receipt.note
    assert second.judgment is not None and second.judgment.scores.completeness == 3
    # Nothing was written: judge.json, run.json and no previous-judge copy.
    assert (small_session / "judge.json").read_bytes() == judge_bytes
    assert json.loads((small_session / ".judge" / "run.json").read_text()) == record
    assert not (small_session / ".judge" / "previous-judge.json").exists()


def test_the_run_hooks_hear_its_milestones_and_the_inputs_it_stamps(
    small_session: Path,
) -> None:
    """A caller steers by `RunHooks`, not by the progress events: the preparation ends as
    the judge begins, and the judge begins under the inputs digest run.json stamps."""
    heard: list[tuple[str, str]] = []
    hooks = RunHooks(
        on_prepared=lambda: heard.append(("prepared", "")),
        on_inputs=lambda digest: heard.append(("inputs", digest)),
    )
    first, _ = run(small_session, hooks=hooks)
    assert first.outcome == "model-written"
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert heard == [("prepared", ""), ("inputs", record["upToDate"]["inputs"])]
    heard.clear()
    second, _ = run(small_session, hooks=hooks)  # up to date: no audit, no judge
    assert second.outcome == "up-to-date" and heard == []


def test_force_judges_again(small_session: Path) -> None:
    run(small_session)
    again, calls = run(small_session, force=True)
    assert calls == 2 and again.outcome == "model-written"


def test_a_changed_session_file_is_judged_again(small_session: Path) -> None:
    run(small_session)
    (small_session / "answer.md").write_text("Aspirin reduces fever and pain [s1].\n")
    again, calls = run(small_session)
    assert calls == 2 and again.outcome == "model-written"
    _, calls = run(small_session)
    assert calls == 0


def test_another_brief_model_or_option_is_judged_again(small_session: Path, tmp_path: Path) -> None:
    run(small_session)
    brief = tmp_path / "brief.md"
    brief.write_text(DEFAULT_BRIEF.read_text() + "\nBe brief.\n")
    changes: list[dict[str, Any]] = [
        {"brief": brief},
        {"model": "claude-opus-5-5"},
        {"max_turns": 12},
        {"fetch": "off"},
        {"cite": True},
    ]
    for change in changes:
        result, calls = run(small_session, **change)
        assert calls == 2, change
        assert result.outcome == "model-written", change
        _, calls = run(small_session, **change)  # now that one is up to date
        assert calls == 0, change


def test_options_that_do_not_change_the_judgment_keep_it_up_to_date(
    small_session: Path, tmp_path: Path
) -> None:
    run(small_session)
    _, calls = run(
        small_session, transcript=tmp_path / "t.jsonl", lock_timeout=3, timeout=30, max_retries=0
    )
    assert calls == 0


def test_a_judge_json_edited_by_hand_is_judged_again(small_session: Path) -> None:
    run(small_session)
    path = small_session / "judge.json"
    document = json.loads(path.read_text())
    document["note"] = "edited by hand"
    path.write_text(json.dumps(document))
    result, calls = run(small_session)
    assert calls == 2 and result.outcome == "model-written"
    previous = json.loads((small_session / ".judge" / "previous-judge.json").read_text())
    assert previous["note"] == "edited by hand"


def test_a_removed_judge_json_is_judged_again(small_session: Path) -> None:
    run(small_session)
    (small_session / "judge.json").unlink()
    _, calls = run(small_session)
    assert calls == 2


def test_a_fallback_is_not_up_to_date_but_no_findings_is(
    small_session: Path, tmp_path: Path
) -> None:
    fake = ScriptedModel([message(text("I will not write anything."))], repeat_last=True)
    failed = judge_session(small_session, client=fake, fetch="stored", cite=False)
    assert failed.outcome == "fallback"
    _, calls = run(small_session)
    assert calls == 2  # a fallback after a model failure is judged again

    empty = tmp_path / "empty"
    (empty / "findings").mkdir(parents=True)
    first, _ = run(empty)
    assert first.outcome == "fallback"
    second, calls = run(empty)
    assert second.outcome == "up-to-date" and calls == 0


def test_a_tampered_run_record_is_not_trusted(small_session: Path) -> None:
    run(small_session)
    path = small_session / ".judge" / "run.json"
    record = json.loads(path.read_text())
    record["upToDate"]["inputs"] = "sha256:" + "0" * 64
    path.write_text(json.dumps(record))
    _, calls = run(small_session)
    assert calls == 2
    path.write_text("{not json")
    _, calls = run(small_session)
    assert calls == 2


def test_cli_run_replayed_twice_then_force(tmp_path: Path) -> None:
    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    replay = FIXTURES / "replays" / "clean.jsonl"
    args = ["run", str(session), "--replay", str(replay), "--fetch", "stored", "-q"]
    runner = CliRunner()
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["wroteJudge"] is True
    second = runner.invoke(cli, args)
    assert second.exit_code == 0
    receipt = json.loads(second.stdout)
    assert receipt["wroteJudge"] is False and receipt["note"].startswith("up to date")
    assert receipt["upToDate"] is True
    forced = runner.invoke(cli, [*args, "--force"])
    assert forced.exit_code == 0
    assert json.loads(forced.stdout) == {
        "wroteJudge": True,
        "upToDate": False,  # always present
        "note": json.loads(forced.stdout)["note"],
    }
    # Another recording is another model: judged again (a replay counts by its
    # content, not by its path).
    other = tmp_path / "other.jsonl"
    other.write_bytes(replay.read_bytes() + b"\n")
    again = runner.invoke(cli, [*args[:2], "--replay", str(other), *args[4:]])
    assert again.exit_code == 0
    assert json.loads(again.stdout)["wroteJudge"] is True


def test_a_run_that_waited_for_the_lock_does_not_pay_again(small_session: Path) -> None:
    import threading
    import time

    def slow_write(_: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.6)  # the second run starts meanwhile and waits on the lock
        return message(write_judge(GOOD_JUDGE))

    first_model = ScriptedModel([slow_write, message(text(RECEIPT))])
    results: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: results.update(
            first=judge_session(small_session, client=first_model, fetch="stored", cite=False)
        )
    )
    thread.start()
    time.sleep(0.2)
    second, calls = run(small_session, lock_timeout=10)
    thread.join()
    assert results["first"].outcome == "model-written"
    assert second.outcome == "up-to-date" and calls == 0
    assert not (small_session / ".judge" / "previous-judge.json").exists()


def test_an_up_to_date_session_needs_no_key(tmp_path: Path) -> None:
    """Up to date is decided before a key is asked for: with no key set, a session a
    completed run judged on identical inputs is exit 0, `upToDate` true, not exit 2."""
    from tests.support.apiserver import FakeAPI

    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    args = ["run", str(session), "--fetch", "stored"]
    runner = CliRunner()
    with FakeAPI() as api:
        first = runner.invoke(cli, args, env={"ANTHROPIC_BASE_URL": api.url, **KEY})
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["upToDate"] is False
    no_key = {name: None for name in (*KEY, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")}
    second = runner.invoke(cli, args, env=no_key)
    assert second.exit_code == 0, second.output
    receipt = json.loads(second.stdout)
    assert receipt["upToDate"] is True and receipt["wroteJudge"] is False, receipt
    assert receipt["note"].startswith("up to date: "), receipt
    assert "no API key" not in second.stderr
    # Inputs that changed are judged again, and then the missing key is the error.
    third = runner.invoke(cli, [*args, "--max-turns", "7"], env=no_key)
    assert third.exit_code == 2
    assert json.loads(third.stdout)["upToDate"] is False
    assert "no API key" in json.loads(third.stdout)["note"]
