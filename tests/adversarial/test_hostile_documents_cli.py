"""Sessions holding document bombs, through real `judge` processes (issue 22 §2).

A PDF whose form draws itself twice (PDFium allocates until it aborts) and HTML nested
hundreds of thousands deep (lexbor spins for minutes): `judge cite`, `judge run` and
`judge batch` end within their limits, with one receipt or one line per session, that
source `source_unreadable` with the reason, and the rest judged. Which limit stopped a
document is read from its reason; that a deadline or a signal cut a conversion short, from
the CPU time the run and its converters used (the deep HTML alone spends its whole 22 s
limit when nothing cuts it), which a loaded machine does not inflate as it does wall time.
"""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.apiserver import FakeAPI, Reply
from tests.support.batch_helpers import responder
from tests.support.hostile_docs import nested_html, self_drawing_pdf
from tests.support.paths import REPO
from tests.support.sessions import write_small_session

KEY = "sk-ant-documents-" + "d0c" * 8


def _hostile_session(folder: Path, *, html: bool = True) -> Path:
    """The small session, plus s2 (the PDF bomb) and, with ``html``, s3 (deep HTML),
    each with a claim quoting it."""
    write_small_session(folder)
    finding_path = folder / "findings" / "sq1.json"
    finding = json.loads(finding_path.read_text())
    hostile = [("s2", "pdf", self_drawing_pdf(times=2, text=b"aspirin lowers fever"))]
    if html:
        hostile.append(("s3", "html", nested_html(400_000, text="aspirin lowers fever")))
    sources = json.loads((folder / "sources.json").read_text())
    for sid, ext, data in hostile:
        (folder / "sources" / f"{sid}.{ext}").write_bytes(data)
        sources["sources"].append({"id": sid, "url": f"https://example.org/{sid}"})
        finding["claims"].append(
            {
                "id": f"sq1-{sid}",
                "text": "Aspirin lowers fever.",
                "sourceIds": [sid],
                "quotes": [{"sourceId": sid, "text": "aspirin lowers fever"}],
            }
        )
    finding_path.write_text(json.dumps(finding, indent=2))
    (folder / "sources.json").write_text(json.dumps(sources, indent=2))
    return folder


def _env(**extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PYTHONPATH=str(REPO), **extra)
    return env


def _problems(claim: dict[str, Any]) -> dict[str, str]:
    return {p["check"]: p["detail"] for p in claim.get("problems", [])}


def _cpu_of_children() -> float:
    """CPU seconds used by this process's waited-for children and theirs (a run's
    converters, which the run waits for, count in the run's)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


# The deep HTML converted to its end spends its CPU limit (20 s and 2 of grace), the run
# about 3 s more (27 s measured). Cut at 6 s or at a signal, the run and its converters used
# 2-7 s: two converters at most, each stopped within the run's 6 s, and the run's own 3 s
# stay under 18 s on any machine; load only lowers what a cut conversion can use.
CUT_CPU_SECONDS = 18.0


def test_cite_offline_ends_with_the_bombs_unreadable_and_the_good_source_checked(
    tmp_path: Path,
) -> None:
    folder = _hostile_session(tmp_path / "sess")
    out = subprocess.run(
        [sys.executable, "-m", "harness", "cite", str(folder), "--offline", "--json", "-q"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    # Each bomb ended at a limit of its own (memory, CPU time, the wall wait), as its
    # reason below says: none was left to run.
    report = json.loads(out.stdout)
    claims = {c["claimId"]: c for c in report["claims"]}
    assert "source_unreadable" not in _problems(claims["sq1-c1"])  # the good source
    for sid in ("s2", "s3"):
        why = _problems(claims[f"sq1-{sid}"])["source_unreadable"]
        assert f"sources/{sid}." in why
        assert any(w in why for w in ("crashed", "CPU time", "longer than", "memory")), why


def _run(folder: Path, server: FakeAPI, max_seconds: float) -> tuple[Any, float]:
    """The finished `judge run` and the CPU seconds it and its converters used."""
    command = [sys.executable, "-m", "harness", "run", str(folder), "--fetch", "off"]
    command += ["--max-seconds", str(max_seconds), "--timeout", "30", "-q"]
    before = _cpu_of_children()
    out = subprocess.run(
        command, env=server.child_env(KEY), capture_output=True, text=True, timeout=300
    )
    return out, _cpu_of_children() - before


def test_run_with_a_pdf_bomb_judges_the_rest(tmp_path: Path) -> None:
    folder = _hostile_session(tmp_path / "sess", html=False)
    with FakeAPI(default=Reply(responder)) as server:
        out, _ = _run(folder, server, 150)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    (line,) = out.stdout.splitlines()
    assert json.loads(line)["wroteJudge"] is True
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "model-written", record["outcome"]  # not its limit
    citations = json.loads((folder / ".judge" / "citations.json").read_text())
    claims = {c["claimId"]: c for c in citations["claims"]}
    assert "source_unreadable" in _problems(claims["sq1-s2"])
    assert "source_unreadable" not in _problems(claims["sq1-c1"])


def test_run_ends_at_its_max_seconds_whatever_the_documents(tmp_path: Path) -> None:
    """Two bombs against --max-seconds 6: the run's deadline ends their conversion (it
    was 27-38 s against --max-seconds 3 before, the deep HTML converted to its CPU limit)."""
    folder = _hostile_session(tmp_path / "sess")
    with FakeAPI(default=Reply(responder)) as server:
        out, cpu = _run(folder, server, 6)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    (line,) = out.stdout.splitlines()
    assert set(json.loads(line)) == {"wroteJudge", "upToDate", "note"}
    print(f"the run and its converters: {cpu:.1f} s of CPU")
    assert cpu < CUT_CPU_SECONDS, cpu  # the conversions were cut, not run to their limit


def test_a_batch_with_a_pdf_bomb_has_a_line_for_every_session(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _hostile_session(root / "sess-bomb", html=False)
    write_small_session(root / "sess-plain")
    results = tmp_path / "results.csv"
    more = ["--results", str(results)]
    with FakeAPI(default=Reply(responder)) as server:
        out = subprocess.run(
            [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", *more],
            env=server.child_env(KEY),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = {json.loads(x)["session"]: json.loads(x) for x in out.stdout.splitlines()}
    assert sorted(lines) == ["sess-bomb", "sess-plain"]
    assert all(v["outcome"] == "model-written" for v in lines.values()), lines
    assert results.is_file() and "sess-bomb" in results.read_text()
    citations = json.loads((root / "sess-bomb" / ".judge" / "citations.json").read_text())
    claims = {c["claimId"]: c for c in citations["claims"]}
    assert "source_unreadable" in _problems(claims["sq1-s2"])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _is_worker(pid: int) -> bool:
    try:
        return b"harness.text.worker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def test_sigterm_while_a_document_converts_ends_the_run_and_its_worker(tmp_path: Path) -> None:
    folder = _hostile_session(tmp_path / "sess")
    before = _cpu_of_children()
    with FakeAPI(default=Reply(responder)) as server:
        command = [sys.executable, "-m", "harness", "run", str(folder), "--fetch", "off", "-q"]
        proc = subprocess.Popen(
            command, env=server.child_env(KEY), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        end = time.monotonic() + 60
        workers: list[int] = []
        while not workers:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < end, "no document converter was started"
            workers = [c for c in _children(proc.pid) if _is_worker(c)]
            time.sleep(0.05)
        time.sleep(0.5)  # inside a conversion (the PDF bomb or the deep HTML)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    # The conversion was stopped at the signal, not waited for (it was ~28 s for deep HTML).
    cpu = _cpu_of_children() - before
    print(f"the run and its converters: {cpu:.1f} s of CPU")
    assert cpu < CUT_CPU_SECONDS, cpu
    assert proc.returncode == 143, err.decode()[-2000:]
    assert b"Traceback" not in err
    (line,) = out.decode().splitlines()
    assert "interrupted by SIGTERM" in json.loads(line)["note"]
    time.sleep(0.3)
    assert not [w for w in workers if Path(f"/proc/{w}").exists() and _is_worker(w)]
