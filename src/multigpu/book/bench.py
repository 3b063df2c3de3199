"""``python -m multigpu.book.bench`` (``make bench``): how long the book and the report take, and whether two
builds are byte-identical. A benchmark to run by hand or in CI logs, not a timed test.

Prints, in seconds: each of two clean builds of the site (``multigpu.book.build``), the report of the
packaged price file with an empty search cache and again with the cache, and the files that differ between
the two builds (none expected).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from multigpu.book.build import ROOT, SITE


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    python = sys.executable
    jupyter_book = str(Path(python).with_name("jupyter-book"))
    times, builds = {}, []
    for run in (1, 2):
        times[f"book build {run}"] = _timed([python, "-m", "multigpu.book.build", jupyter_book])
        builds.append(_digests(SITE))
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report"
        times["report, empty cache"] = _timed([python, "-m", "multigpu", "report", "--out", str(out)])
        times["report, warm cache"] = _timed([python, "-m", "multigpu", "report", "--out", str(out)])
        shutil.rmtree(out, ignore_errors=True)
    for what, seconds in times.items():
        print(f"{what:24s} {seconds:7.1f} s")
    differ = sorted(k for k in builds[0].keys() | builds[1].keys() if builds[0].get(k) != builds[1].get(k))
    print(f"files that differ between the two builds: {len(differ)}" + "".join(f"\n  {d}" for d in differ[:20]))
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
