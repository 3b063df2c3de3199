"""``python -m multigpu.book.build``: build the site, with the price file checked first and the old site kept
until the new one is complete (what ``make book`` runs).

1. The price file (``MULTIGPU_PRICES``, set by ``make book PRICES=file``; else
   the packaged one) is validated before anything else: a bad file is the
   CLI's one error per problem, ``error: <file>:<line>: ...``, exit status 2,
   and nothing is built or deleted. Its warnings are printed, and the log says
   which file the book uses.
2. Jupyter Book builds the whole book (``--all -W -n --keep-going``: any
   warning fails) into a fixed temporary folder, ``_build/.next``, once per
   edition: English, then Chinese (``zh/``, prose from the catalogs in
   ``book/locales``). The notebooks run once, before either edition: all of
   them at the same time, one process per core, into the build's
   jupyter-cache, which both editions read (a notebook that fails there runs
   again in the English build, whose log then shows the error). With
   ``--stored-outputs`` nothing runs: the pages show the outputs committed in
   the notebooks (``make test`` builds so, right after nbval has compared
   every notebook's stored outputs with a fresh run of it).
3. Chromium prints each edition's book and one-page decision card as PDF into its ``pdf/`` folder
   (:mod:`multigpu.book.pdf`; the introduction links them), both editions at once.
4. Only when every edition builds and prints does it replace ``_build/html``; a failed
   build leaves the previous site as it was and says where its log is.

Paths may contain spaces. The same inputs give a byte-identical site.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from multigpu.book import i18n, inputs
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


#: The editions ``make book`` builds: (Sphinx language, folder under the site); the first is the site's root.
EDITIONS = (("en", ""), (i18n.LANGUAGE, "zh"))


CACHE = NEXT / "jupyter_cache"


def notebooks() -> list[Path]:
    """The book's notebooks (those ``make notebooks`` executes), sorted."""
    return sorted(p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def execute_notebooks() -> None:
    """Run every notebook once into the build's fresh jupyter-cache (:data:`CACHE`), as many at a time as there
    are cores, with the execution timeout of ``_config.yml``; each edition's build then reads their outputs.
    A notebook that fails is left out of the cache, so the English build runs it again and reports it."""
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    timeout = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["execute"]["timeout"]
    cache = get_cache(str(CACHE))
    for path in notebooks():
        cache.add_nb_to_project(str(path))
    logger = logging.getLogger("multigpu.book.build")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("book: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    result = load_executor("local-parallel", cache, logger=logger).run_and_cache(timeout=timeout)
    for path in result.excepted + result.errored:
        logger.info("%s failed here; the English build runs it again", path)
    drop_stderr(cache, logger)


def drop_stderr(cache, logger: logging.Logger) -> list[str]:
    """Take out of the cache each notebook whose outputs hold a stderr stream, so that the English build runs it
    again on its own (and fails, under ``-W``, only if it writes to stderr there too). Two kernels started at once
    can race for one TCP port; the loser's kernel then prints the error into a cell's outputs of a notebook that
    ran correctly. Returns the notebooks taken out."""
    dropped = []
    for record in cache.list_cache_records():
        cells = cache.get_cache_bundle(record.pk).nb.cells
        if any(o.get("output_type") == "stream" and o.get("name") == "stderr" for c in cells
               for o in c.get("outputs", [])):
            cache.remove_cache(record.pk)
            dropped.append(record.uri)
            logger.info("%s wrote to stderr here; the English build runs it again", record.uri)
    return dropped


def _build_edition(jupyter_book: str, language: str, *, stored: bool) -> tuple[int, Path]:
    """Build one edition into ``NEXT/<language>``, the notebooks' outputs read from :data:`CACHE` (a notebook
    missing there runs, and is cached, in this build), or, if ``stored``, those committed in the notebooks."""
    execute = "off" if stored else "cache"
    config = i18n.config(NEXT / f"_config.{language}.yml", language=language, execute=execute, cache=CACHE)
    contents = i18n.toc(NEXT / f"_toc.{language}.yml", language)
    out = NEXT / language
    command = [jupyter_book, "build", str(ROOT), "--all", "-W", "-n", "--keep-going", "--config", str(config),
               "--toc", str(contents), "--path-output", str(out)]
    return subprocess.run(command, cwd=ROOT).returncode, out / "_build" / "html"


def _print_pdfs(built: dict[str, Path]) -> bool:
    """Each built edition's book and decision card as PDF (:mod:`multigpu.book.pdf`), which its introduction
    links; False, with the reason, if Chromium cannot print them (the previous site stays)."""
    from multigpu.book import pdf

    def one(language: str, folder: str) -> list[Path]:  # its own Chromium: Playwright's sync API is per thread
        return pdf.print_edition(built[folder], pdf.edition(language))

    try:
        with ThreadPoolExecutor(max_workers=len(EDITIONS)) as pool:  # the editions at once, one core each
            printed = [pool.submit(one, language, folder) for language, folder in EDITIONS]
            for path in (path for job in printed for path in job.result()):
                print(f"book: printed {path.name} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - any failure to print leaves the old site, with its reason
        print(f"book: the PDFs could not be printed ({type(exc).__name__}: {exc}); the previous site in {SITE} "
              "is unchanged", file=sys.stderr)
        return False
    return True


def build(jupyter_book: str, *, stored: bool = False) -> int:
    """Build every edition of :data:`EDITIONS` into :data:`NEXT`; only when all succeed swap them in as
    :data:`SITE` (the English edition at the root, the others in their folders). With ``stored`` the pages show
    the notebooks' committed outputs and nothing is executed. Returns the exit status."""
    shutil.rmtree(NEXT, ignore_errors=True)
    # the notebooks of this build share searches; `make test` names one folder for all its phases (results are
    # keyed by the model's code and data, so a reused one is exact)
    os.environ.setdefault(inputs.SEARCH_CACHE_ENV, str(NEXT / "searches"))
    started = time.monotonic()
    if stored:
        print("book: the notebooks' stored outputs, not run again", file=sys.stderr)
    else:
        execute_notebooks()
        print(f"book: notebooks executed in {time.monotonic() - started:.0f} s", file=sys.stderr)
    built = {}
    for language, folder in EDITIONS:
        started = time.monotonic()
        status, html = _build_edition(jupyter_book, language, stored=stored)
        print(f"book: the {language} edition built in {time.monotonic() - started:.0f} s", file=sys.stderr)
        if status != 0 or not (html / "index.html").exists():
            print(f"book: the {language} build failed; the previous site in {SITE} is unchanged (log above; "
                  f"reports in {html / 'reports'})", file=sys.stderr)
            return status or 1
        built[folder] = html
    started = time.monotonic()
    if not _print_pdfs(built):
        return 1
    print(f"book: PDFs printed in {time.monotonic() - started:.0f} s", file=sys.stderr)
    shutil.rmtree(SITE, ignore_errors=True)
    shutil.move(str(built.pop("")), str(SITE))
    for folder, html in built.items():
        shutil.move(str(html), str(SITE / folder))
    first = NEXT / EDITIONS[0][0] / "_build"
    for kept in ("jupyter_execute", ".doctrees"):
        shutil.rmtree(BUILD / kept, ignore_errors=True)
        if (first / kept).exists():
            shutil.move(str(first / kept), str(BUILD / kept))
    shutil.rmtree(NEXT, ignore_errors=True)
    print(f"book: the site is in {SITE} (" + ", ".join(f"{lang}: /{folder}" for lang, folder in EDITIONS) + ")",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m multigpu.book.build",
                                     description="Build both editions of the site and their PDFs into _build/html.")
    parser.add_argument("jupyter_book", nargs="?", default=str(Path(sys.executable).with_name("jupyter-book")),
                        help="the jupyter-book executable (default: the one beside this Python)")
    parser.add_argument("--stored-outputs", action="store_true",
                        help="show the outputs committed in the notebooks instead of running them")
    args = parser.parse_args(argv)
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
    return build(args.jupyter_book, stored=args.stored_outputs)


if __name__ == "__main__":
    raise SystemExit(main())
