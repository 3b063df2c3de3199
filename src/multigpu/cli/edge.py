"""What every command that reads prices shares: the price table, with its warnings on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

from multigpu.book import inputs
from multigpu.market.prices import PriceTable


def price_table(path: str | Path | None = None) -> PriceTable:
    """The price table of ``--prices`` (else ``MULTIGPU_PRICES``, else the packaged file); its warnings
    (``warning: <file>:<line>: ...``) go to stderr, and the exit status stays 0. (Its notes, the extra
    columns kept and comment lines skipped, are shown by ``prices check``.)"""
    table = inputs.price_table(path)
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return table
