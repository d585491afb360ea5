"""What converting documents out of process costs: per document and per run.

The same corpus (HTML pages laid out from the fixture snapshots, and PDFs written with
fpdf2) is converted by two trees side by side, each in a fresh process:

* ``base``: the code of ``main`` at this branch's point (``git merge-base HEAD main``,
  extracted with ``git archive`` into a temporary folder), which converts in process;
* ``this``: the working tree, which converts in worker processes
  (:mod:`harness.text.isolate`);
* ``in``: the working tree converting in process (``isolated=False``), which separates
  the cost of isolation from that of the new CSS reading.

Reported for each: the first document's wall time (for ``this`` it includes starting a
worker: the per-run cost), the median wall time per document after it, the total, and
for ``this`` the worker start-up time and counts (:func:`harness.text.isolate.stats`);
then the same corpus again in the same process (``this``: every document a cache hit).
A session of text only (``.txt``/``.md``) is timed too: it must start no worker.

    python bench/bench_documents.py
    python bench/bench_documents.py --pages 40 --pdfs 10 --page-kb 100 --base main
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    started = time.monotonic()
    from harness.text.document import to_document
    files = [Path(p) for p in json.loads(sys.argv[1])]
    extra = {"isolated": False} if sys.argv[2] == "in" else {}
    out = {"import": time.monotonic() - started, "first": [], "again": []}
    for round_ in ("first", "again"):
        for path in files:
            data = path.read_bytes()
            t = time.monotonic()
            doc = to_document(data, name="sources/" + path.name, **extra)
            out[round_].append(time.monotonic() - t)
            assert doc.problem is None, (path, doc.problem)
    try:
        from harness.text import isolate
        out["stats"] = isolate.stats()
    except ImportError:
        out["stats"] = None
    print(json.dumps(out))
    """
)


def _corpus(folder: Path, pages: int, pdfs: int, page_kb: int) -> tuple[list[Path], list[Path]]:
    sys.path.insert(0, str(REPO))
    from tests.support.pdfs import make_pdf

    texts = sorted((REPO / "sessions_fixture").glob("*/sources/*.txt"))
    bodies = [p.read_text(errors="replace") for p in texts] or ["A paragraph of text."]
    documents: list[Path] = []
    for i in range(pages):
        body = bodies[i % len(bodies)]
        paragraphs = "".join(
            f"<p class='c{j % 7}'>{line}</p>\n"
            for j, line in enumerate(body.split("\n"))
            if line.strip()
        )
        if paragraphs:
            paragraphs *= max(1, page_kb * 1024 // len(paragraphs))
        page = (
            f"<!doctype html><html><head><title>Page {i}</title><style>.ad{{display:none}} "
            f".c3{{color:red}}</style></head><body><nav>Home</nav><div class='ad'>ad</div>"
            f"<article>{paragraphs}</article><footer>(c)</footer></body></html>"
        )
        path = folder / f"p{i:03d}.html"
        path.write_text(page)
        documents.append(path)
    for i in range(pdfs):
        body = bodies[i % len(bodies)][:3000].encode("latin-1", "replace").decode("latin-1")
        path = folder / f"d{i:03d}.pdf"
        path.write_bytes(make_pdf([body, body[::-1]]))
        documents.append(path)
    plain: list[Path] = []
    for i in range(max(3, pages // 4)):
        path = folder / f"t{i:03d}.txt"
        path.write_text(bodies[i % len(bodies)])
        plain.append(path)
    return documents, plain


def _base_tree(rev: str, into: Path) -> Path:
    base = subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", base, "harness"],
        capture_output=True,
        check=True,
    ).stdout
    tar_path = into / "base.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def _measure(tree: Path, files: list[Path], where: str = "") -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([str(f) for f in files]), where],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=str(tree),
    )
    if out.returncode != 0:
        raise SystemExit(f"the {tree} run failed:\n{out.stderr[-3000:]}")
    result: dict[str, object] = json.loads(out.stdout)
    return result


def _row(name: str, r: dict[str, object]) -> str:
    first = list(r["first"])  # type: ignore[call-overload]
    again = list(r["again"])  # type: ignore[call-overload]
    rest = first[1:] or first
    stats = r.get("stats") or {}
    workers = ""
    if stats:
        workers = (
            f"{stats['started']:.0f} worker(s) started in {stats['start_seconds'] * 1000:.0f} ms "
            f"total; {stats['conversions']:.0f} conversions, {stats['cache_hits']:.0f} cache hits"
        )
    median = statistics.median(rest) * 1000
    return (
        f"{name:<6} first {first[0] * 1000:7.1f} ms | median after {median:6.1f} ms/doc"
        f" | total {sum(first):6.2f} s | again {sum(again):6.2f} s | {workers}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=30, help="HTML pages in the corpus")
    parser.add_argument("--pdfs", type=int, default=8, help="PDFs in the corpus")
    parser.add_argument("--page-kb", type=int, default=100, help="size of each HTML page")
    parser.add_argument("--base", default="main", help="the branch whose merge-base is compared")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        documents, plain = _corpus(folder, args.pages, args.pdfs, args.page_kb)
        base = _base_tree(args.base, Path(tmp))
        size = sum(p.stat().st_size for p in documents)
        print(f"corpus: {args.pages} HTML pages and {args.pdfs} PDFs, {size / 1e6:.2f} MB")
        for label, files in (("PDF+HTML", documents), ("text only", plain)):
            print(f"-- {label} ({len(files)} documents)")
            print(_row("base", _measure(base, files)))
            print(_row("this", _measure(REPO, files)))
            print(_row("in", _measure(REPO, files, "in")))


if __name__ == "__main__":
    main()
