from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.support.paths import FIXTURES
from tests.support.sessions import snapshot, write_small_session
from tests.support.tried import TRIED

# The installation's origin key (harness.fs.origin) lives in the operator's state folder:
# tests never write into the real home. Child processes inherit the variable, so a run in
# a subprocess and the test that checks its artifacts share one key.
STATE_DIR = Path(tempfile.mkdtemp(prefix="judge-state-"))
os.environ["JUDGE_STATE_DIR"] = str(STATE_DIR)
os.environ.pop("JUDGE_KEY_FILE", None)


# Property and fuzz tests: ~200 inputs each in `make test`; HYPOTHESIS_PROFILE=fuzz for
# the long run. Tests that pin their own max_examples keep it in both.
_PROFILE = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("judge", max_examples=200, **_PROFILE)  # type: ignore[arg-type]
settings.register_profile("fuzz", max_examples=5000, **_PROFILE)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "judge"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remove this run's temporary folders without recursion: hostile tests leave trees
    1,200 deep, which pytest's own clean-up (shutil.rmtree) cannot delete, and an old one
    would then break a later run's start-up clean-up."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    basetemp = getattr(factory, "_basetemp", None) if factory is not None else None
    if basetemp is not None and not os.environ.get("JUDGE_KEEP_TMP"):
        from tests.support.deeptree import remove_tree

        remove_tree(Path(basetemp))
    shutil.rmtree(STATE_DIR, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many generated inputs each property and fuzz test tried (the README figures)."""
    if not TRIED:
        return
    terminalreporter.section("inputs tried")
    for name, count in sorted(TRIED.items()):
        terminalreporter.write_line(f"{count:>8,}  {name}")
    terminalreporter.write_line(f"{sum(TRIED.values()):>8,}  in all")
    report = os.environ.get("JUDGE_TRIED_REPORT")
    if report:
        Path(report).write_text(json.dumps(dict(sorted(TRIED.items())), indent=2) + "\n")


@pytest.fixture
def small_session(tmp_path: Path) -> Path:
    return write_small_session(tmp_path / "sess-small")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "session_may_change: this test changes the session's files during a run on purpose",
    )


@pytest.fixture(autouse=True)
def _runs_leave_the_session_untouched(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every in-process run of the whole suite ends with the session's own files
    byte-identical (everything but judge.json and .judge/): the contract, checked
    wherever a test runs the judge, not only where a test remembers to."""
    if request.node.get_closest_marker("session_may_change"):
        return
    import harness.run.driver as run_module

    execute = run_module._judge

    def guarded(run: Any, held: Any) -> Any:
        before = snapshot(run.folder)
        result = execute(run, held)
        after = snapshot(run.folder)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        assert not changed, f"a run changed the session's own files: {changed}"
        return result

    monkeypatch.setattr(run_module, "_judge", guarded)


@pytest.fixture
def fixture_copy(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Copy a named fixture session into tmp_path; tests never run on the originals."""

    def copy(name: str) -> Path:
        target = tmp_path / name
        shutil.copytree(FIXTURES / name, target, symlinks=True)
        return target

    return copy


@pytest.fixture(autouse=True)
def _replays_refuse_what_the_api_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A replayed run's requests meet the real API's rules too (`apirules`), so every
    end-to-end test through `--replay` (run, cite, report, batch --replay-dir...) sends
    only what the API would accept: a refused request is answered with the API's 400, as
    the live API would answer it. The model id is not checked: a replay may be made for
    any model, and never reaches the API."""
    import httpx2

    from harness.model import replay
    from tests.support.apirules import check_messages

    handle = replay.ReplayTransport.handle_request

    def strict(self: Any, request: Any) -> Any:
        try:
            body = json.loads(request.content or b"{}")
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            refusal = check_messages({**body, "model": "claude-sonnet-5-5"})
            if refusal is not None:
                return httpx2.Response(refusal.status, json=refusal.body())
        return handle(self, request)

    monkeypatch.setattr(replay.ReplayTransport, "handle_request", strict)
