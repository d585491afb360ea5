"""`judge run`'s stderr summary and `judge show` say what the audit judged support against."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from harness.cli.audited import against_lines
from harness.cli.main import cli
from tests.support.paths import FIXTURES
from tests.support.sealed import write_sealed

# dangling-citations, audited with --against auto: five claims whose cited sources have
# stored text are judged against it, one (its source has none) against its quotes.
AUTO_LINE = "citations: against auto: 5 against their sources' text, 1 against their quotes"


def run(folder: Path, *extra: str) -> str:
    replay = FIXTURES / "replays" / f"{folder.name}.jsonl"  # .cite.jsonl beside it
    result = CliRunner().invoke(cli, ["run", str(folder), "--replay", str(replay), *extra], env={})
    assert result.exit_code == 0, result.stderr
    return result.stderr


def show(folder: Path, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["show", str(folder)], env={})
    assert result.exit_code == code, result.stderr
    return result.stderr


def test_run_and_show_give_the_mode_and_how_the_claims_split(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("dangling-citations")
    stderr = run(folder)
    assert AUTO_LINE in stderr
    record = json.loads((folder / ".judge" / "run.json").read_text())["citations"]
    assert record["against"] == "auto"
    assert record["judgedAgainst"] == {"sources": 5, "quotes": 1, "neither": 0}
    saved = json.loads((folder / ".judge" / "citations.json").read_text())
    assert [c["against"] for c in saved["claims"]].count("sources") == 5

    shown = show(folder)
    assert "citations: 6 claims (claude-haiku-5-5)" in shown
    assert AUTO_LINE in shown
    # `show --json` carries the same account.
    result = CliRunner().invoke(cli, ["show", str(folder), "--json"], env={})
    assert result.exit_code == 0, result.stderr
    audit = json.loads(result.stdout)["citations"]
    assert audit["claims"] == 6 and audit["models"] == ["claude-haiku-5-5"]
    assert audit["against"] == "auto" and audit["offline"] is False
    assert audit["judgedAgainst"] == {"sources": 5, "quotes": 1, "neither": 0}
    assert sum(audit["verdicts"].values()) == 6


def test_show_json_names_a_missing_audit(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("dangling-citations")
    result = CliRunner().invoke(cli, ["show", str(folder), "--json"], env={})
    audit = json.loads(result.stdout)["citations"]
    assert audit == {
        "path": ".judge/citations.json",
        "problem": "no audit saved (judge run writes .judge/citations.json)",
    }


def test_an_offline_audit_says_the_mode_was_not_applied(fixture_copy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("dangling-citations")
    replay = tmp_path / "alone.jsonl"  # no alone.cite.jsonl beside it: the audit is offline
    replay.write_bytes((FIXTURES / "replays" / "dangling-citations.jsonl").read_bytes())
    result = CliRunner().invoke(
        cli, ["run", str(folder), "--replay", str(replay), "--cite-against", "sources"], env={}
    )
    assert result.exit_code == 0, result.stderr
    line = "citations: --against sources not applied: offline, no support judged"
    assert line in result.stderr
    assert line in show(folder)
    record = json.loads((folder / ".judge" / "run.json").read_text())["citations"]
    assert record["against"] == "sources"
    assert record["judgedAgainst"] == {"sources": 0, "quotes": 0, "neither": 6}


def test_show_without_an_audit_says_none_was_saved(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("dangling-citations")  # never judged: no judge.json, exit 1
    shown = show(folder, code=1)
    assert "citations: no audit saved (judge run writes .judge/citations.json)" in shown
    assert "citations: against" not in shown


def test_show_names_an_unusable_audit_report(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("dangling-citations")
    (folder / ".judge").mkdir(exist_ok=True)
    (folder / ".judge" / "citations.json").write_text("{not json", encoding="utf-8")
    shown = show(folder, code=1)
    assert "citations: .judge/citations.json is not valid JSON (" in shown
    assert "judge run rewrites it" in shown
    (folder / ".judge" / "citations.json").write_text('{"against": "all"}', encoding="utf-8")
    shown = show(folder, code=1)  # not this installation's: ignored, whatever it holds
    assert (
        "citations: ignored a citation report this installation did not write "
        "(.judge/citations.json has no valid proof of origin"
    ) in shown
    write_sealed(folder / ".judge" / "citations.json", "citations", {"against": "all"})
    shown = show(folder, code=1)
    assert (
        "citations: .judge/citations.json is not a citation report (against: expected one "
        "of auto, sources, quotes); judge run rewrites it"
    ) in shown


def test_each_mode_reads_as_what_was_judged() -> None:
    def line(against: str, sources: int, quotes: int, neither: int) -> list[str]:
        split = {"sources": sources, "quotes": quotes, "neither": neither}
        return against_lines(against, split, offline=False)

    assert line("sources", 4, 0, 2) == [
        "  citations: against sources: 4 against their sources' text, "
        "2 against neither (no cited source has text)"
    ]
    assert line("quotes", 0, 7, 0) == ["  citations: against quotes: 7 against their quotes"]
    assert line("auto", 0, 0, 0) == ["  citations: against auto: no claims"]
    assert against_lines(None, None, offline=False) == []  # a run.json from before the field


def test_show_never_reads_the_report_through_a_linked_artifact_folder(  # type: ignore[no-untyped-def]
    fixture_copy, tmp_path: Path
) -> None:
    folder = fixture_copy("dangling-citations")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "citations.json").write_text("{}", encoding="utf-8")
    (folder / ".judge").symlink_to(elsewhere, target_is_directory=True)
    shown = show(folder, code=1)
    assert "citations: .judge/citations.json goes through .judge, a symbolic link" in shown
