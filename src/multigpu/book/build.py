"""``python -m multigpu.book.build``: build the site, with the price file checked first and the old site kept
until the new one is complete (what ``make book`` runs).

1. The price file (``MULTIGPU_PRICES``, set by ``make book PRICES=file``; else
   the packaged one) is validated before anything else: a bad file is the
   CLI's one error per problem, ``error: <file>:<line>: ...``, exit status 2,
   and nothing is built or deleted. Its warnings are printed, and the log says
   which file the book uses.
2. Jupyter Book builds the whole book (``--all -W -n --keep-going``: any
   warning fails) into a fixed temporary folder, ``_build/.next``.
3. Only when that build succeeds does it replace ``_build/html``; a failed
   build leaves the previous site as it was and says where its log is.

Paths may contain spaces. The same inputs give a byte-identical site.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from multigpu.book import inputs
from multigpu.common.errors import InputError
from multigpu.market import prices

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "_build"
NEXT = BUILD / ".next"
SITE = BUILD / "html"
EXIT_BAD_INPUT = 2


def check_prices() -> prices.PriceTable:
    """The price table the book will use (its path made absolute, since notebooks run in their own
    folders); an :class:`InputError` if the file is bad."""
    path = inputs.prices_path().resolve()
    os.environ[inputs.PRICES_ENV] = str(path)
    return inputs.price_table(path)


def build(jupyter_book: str) -> int:
    """Build the book into :data:`NEXT`; on success swap it in as :data:`SITE`. Returns the exit status."""
    shutil.rmtree(NEXT, ignore_errors=True)
    os.environ[inputs.SEARCH_CACHE_ENV] = str(NEXT / "searches")  # the notebooks of this build share searches
    command = [jupyter_book, "build", str(ROOT), "--all", "-W", "-n", "--keep-going", "--path-output", str(NEXT)]
    status = subprocess.run(command, cwd=ROOT).returncode
    built = NEXT / "_build" / "html"
    if status != 0 or not (built / "index.html").exists():
        print(f"book: the build failed; the previous site in {SITE} is unchanged (log above; reports in "
              f"{NEXT / '_build' / 'html' / 'reports'})", file=sys.stderr)
        return status or 1
    shutil.rmtree(SITE, ignore_errors=True)
    shutil.move(str(built), str(SITE))
    for kept in ("jupyter_execute", ".doctrees"):
        shutil.rmtree(BUILD / kept, ignore_errors=True)
        if (NEXT / "_build" / kept).exists():
            shutil.move(str(NEXT / "_build" / kept), str(BUILD / kept))
    shutil.rmtree(NEXT, ignore_errors=True)
    print(f"book: the site is in {SITE}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    jupyter_book = args[0] if args else str(Path(sys.executable).with_name("jupyter-book"))
    try:
        table = check_prices()
    except InputError as exc:
        for line in exc.lines():
            print(f"error: {line}", file=sys.stderr)
        print(f"book: nothing was built; the previous site in {SITE} is unchanged", file=sys.stderr)
        return EXIT_BAD_INPUT
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"book: {table.stamp_markdown().replace('`', '')} ({table.path})", file=sys.stderr)
    return build(jupyter_book)


if __name__ == "__main__":
    raise SystemExit(main())
