"""``python -m multigpu report --prices FILE --out DIR``: every price-dependent table of the book, as CSV
files with a provenance stamp and one XLSX workbook (see :mod:`multigpu.book.report`)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    parser = add_command(subparsers, "report", "write every price-dependent table of the book (chapters 4 and 5, "
                         "claims C24 and C26) for a price file: one CSV per table and report.xlsx")
    parser.add_argument("--prices", metavar="FILE", help="price file (default: $MULTIGPU_PRICES or the packaged one)")
    parser.add_argument("--out", metavar="DIR", required=True, help="folder to write the report to (created)")
    parser.add_argument("--cache", metavar="DIR",
                        help="folder for the price-independent searches kept between runs (default: DIR/.cache)")
    parser.epilog = ("Every CSV carries the stamp columns price_file, price_file_sha256, observed_from, observed_to, "
                     "fx_table, fx_rates, package_version and calibration_digest; offer numbers come with stable "
                     "offer ids (offer_id, nvlink_offer_id, ...).")
    parser.set_defaults(handler=_report)


def _report(args: argparse.Namespace) -> dict[str, Any] | str:
    from multigpu.book import report
    from multigpu.cli.edge import price_table
    from multigpu.cli.progress import progress
    from multigpu.market import search

    start = time.perf_counter()
    table = price_table(args.prices)
    cache = Path(args.cache) if args.cache else Path(args.out) / ".cache"
    reused = search.load_memo(cache)
    with progress("report: tables") as update:
        found = report.tables(table, progress=update)
    provenance = report.stamp(table)
    files = report.write(args.out, found, provenance)
    search.save_memo(cache)
    summary = {"out": str(args.out), "tables": len(found), "files": [str(f) for f in files],
               "searches_reused": reused, "seconds": round(time.perf_counter() - start, 1), **provenance}
    if args.format != "table":
        return summary
    return (f"{table.stamp_markdown()}\nWrote {len(found)} tables to {args.out} as CSV and report.xlsx in "
            f"{summary['seconds']} s ({reused} searches reused from {cache}).")
