"""Documents are converted out of process: a bomb costs its source, never the run.

Issue 22 §2: an 861-byte PDF (a form that draws itself twice) made PDFium allocate until
the process aborted; deep or misnested HTML held the run for half a minute and delayed
SIGTERM. Here every such document comes back as a Document with a ``problem`` (the
audit's ``source_unreadable``), the process that asked is alive, a SIGTERM ends the wait
at once, the run's deadline bounds it, and a document is converted once per digest.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.clock import Deadline
from harness.text import isolate
from harness.text.document import Limits, to_document
from tests.support.hostile_docs import (
    misnested_html,
    nested_html,
    page_tree_cycle_pdf,
    self_drawing_pdf,
)
from tests.support.pdfs import make_pdf
from tests.support.tried import count

REPO = Path(__file__).resolve().parents[2]
FAST = Limits(max_seconds=1.0)  # CPU limit 3 s in the worker


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    isolate.cache_clear()


def test_a_self_drawing_form_pdf_is_a_problem_not_a_dead_process() -> None:
    bomb = self_drawing_pdf(times=2)
    assert len(bomb) < 1024
    doc = to_document(bomb, name="sources/s2.pdf", limits=FAST)
    assert doc.kind == "pdf" and doc.plain == ""
    assert doc.problem is not None
    assert any(w in doc.problem for w in ("crashed", "CPU time", "memory", "longer than")), doc
    # The worker that died is replaced: the next document converts.
    good = to_document(make_pdf(["after the bomb"]), name="sources/s3.pdf")
    assert good.problem is None and "after the bomb" in good.plain


def test_a_page_tree_cycle_reads_the_page_it_can() -> None:
    doc = to_document(page_tree_cycle_pdf(), name="c.pdf", limits=FAST)
    assert "cycle" in doc.plain


@pytest.mark.parametrize(
    ("data", "what"),
    [(nested_html(200_000), "nested"), (misnested_html(60_000), "misnested")],
    ids=["200k-nested-divs", "misnested-formatting"],
)
def test_html_that_spins_the_parser_is_stopped_at_its_cpu_limit(data: bytes, what: str) -> None:
    doc = to_document(data, name=f"{what}.html", limits=FAST)
    # The problem names the limit that ended the conversion (FAST: 3 s of CPU, a 6.5 s
    # wait); unbounded, it would end with text and no problem.
    assert doc.problem is not None and doc.kind == "html", doc.problem
    assert "CPU time" in doc.problem or "longer than" in doc.problem


def test_the_runs_deadline_bounds_the_wait_and_is_not_cached() -> None:
    data = nested_html(300_000)
    doc = to_document(data, name="deep.html", deadline=Deadline(time.monotonic() + 1.5))
    # Said only when the wait ended at the deadline; past the document's own limits it
    # would name CPU time or a wait of 35 s, and unbounded there would be no problem.
    assert doc.problem == "not converted: the run's time limit was reached"
    past = to_document(data, name="deep.html", deadline=Deadline(time.monotonic() - 1))
    assert past.problem == "not converted: the run's time limit was reached"
    assert isolate._cached(isolate._key(_request(data), data)) is None


def _request(data: bytes) -> isolate.Request:
    limits = Limits()
    return isolate.Request("html", None, limits.max_bytes, limits.max_pages, 20.0, False)


def test_a_document_is_converted_once_per_digest() -> None:
    data = b"<html><body><p>the same page</p></body></html>"
    before = isolate.stats()
    first = to_document(data, name="sources/a.html")
    second = to_document(data, name="sources/b.html")
    after = isolate.stats()
    assert first.plain == second.plain == "the same page"
    assert second.name == "sources/b.html"
    assert after["conversions"] - before["conversions"] == 1
    assert after["cache_hits"] - before["cache_hits"] == 1


def test_plain_text_never_starts_a_worker() -> None:
    """Run in a fresh process: no PDF or HTML, no worker (and no parser imported)."""
    code = textwrap.dedent(
        """
        import sys
        from harness.text.document import to_document
        from harness.text import isolate
        d = to_document(b"just text, 12 words", name="sources/s1.txt")
        m = to_document(b"# Title\\n\\ntext", name="sources/s2.md")
        assert d.plain and m.plain
        print(isolate.stats()["started"], "selectolax" in sys.modules, "pypdfium2" in sys.modules)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "False", "False"]


settings_fast = settings(max_examples=40, deadline=None)

_tags = st.sampled_from(["div", "p", "b", "i", "span", "li", "table", "td", "tr", "h2", "pre"])
_words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12)


@st.composite
def _markup(draw: st.DrawFn) -> str:
    """Nested and misnested markup: open tags, text, and closes in any order."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 40))):
        tag = draw(_tags)
        parts.append(draw(st.sampled_from([f"<{tag}>", f"</{tag}>", draw(_words)])))
    return "".join(parts)


@settings_fast
@given(markup=_markup())
def test_the_worker_gives_the_same_text_as_converting_in_process(markup: str) -> None:
    count("isolate: worker vs in-process conversion")
    data = markup.encode()
    inside = to_document(data, name="p.html", isolated=False)
    outside = to_document(data, name="p.html")
    assert outside == inside


def test_a_sigterm_ends_a_conversion_at_once_and_the_worker_with_it(tmp_path: Path) -> None:
    """A real process converting 300,000 nested divs (minutes of CPU, under limits that let
    it run them) is sent SIGTERM: it ends at once, and its worker is gone."""
    page = tmp_path / "deep.html"
    page.write_bytes(nested_html(300_000))
    pids = tmp_path / "pids"
    code = textwrap.dedent(
        f"""
        import sys, threading, time
        from harness import interrupt
        from harness.text import isolate
        from harness.text.document import Limits, to_document
        interrupt.install()
        def note():
            while not isolate._running:
                time.sleep(0.02)
            w = next(iter(isolate._running))
            open({str(pids)!r}, "w").write(str(w.proc.pid))
        threading.Thread(target=note, daemon=True).start()
        try:
            data = open({str(page)!r}, "rb").read()
            to_document(data, name="deep.html", limits=Limits(max_seconds=600.0))
        except interrupt.Interrupted:
            sys.exit(143)
        sys.exit(0)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        end = time.monotonic() + 60
        while not (pids.exists() and pids.read_text()):
            assert proc.poll() is None and time.monotonic() < end
            time.sleep(0.05)
        worker = int(pids.read_text())
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        # Unbounded, the wait lasts the conversion: minutes of CPU (3 s for 50,000 divs,
        # growing with the square), more on a loaded machine; an interrupted one ends within
        # a tick or two, so 45 s holds under any load.
        assert proc.wait(timeout=45) == 143
    finally:
        proc.kill()
    end = time.monotonic() + 30
    while _alive(worker):  # killed and reaped by the run; a loaded machine may take a while
        assert time.monotonic() < end, "the worker outlived the run"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_converter_that_cannot_start_is_a_problem_that_is_not_cached(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate.shutdown()
    monkeypatch.setattr(isolate, "_pool", None)
    monkeypatch.setattr(isolate.sys, "executable", str(tmp_path / "no-python"))
    data = b"<html><body><p>never converted</p></body></html>"
    doc = to_document(data, name="a.html")
    assert doc.problem is not None and "could not be started" in doc.problem
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(isolate.sys, "executable", str(broken))
    monkeypatch.setattr(isolate, "_pool", None)
    doc = to_document(data, name="a.html")
    assert doc.problem == "the document converter exited (status 3) before answering"
    monkeypatch.undo()
    isolate.shutdown()
    monkeypatch.setattr(isolate, "_pool", None)
    assert to_document(data, name="a.html").plain == "never converted"  # nothing was cached
