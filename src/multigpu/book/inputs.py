"""The edge: which price file and FX table the book (and the CLI) use, read from the environment once.

``MULTIGPU_PRICES`` points the whole book and the CLI at another price file
(``make book PRICES=file`` sets it), ``MULTIGPU_FX`` at another FX table, and
``MULTIGPU_SEARCH_CACHE`` (set by the book build) at a folder where the notebooks
of one build share the price-independent searches. This is the only module that
reads them; everything below takes a
:class:`~multigpu.market.prices.PriceTable` or a
:class:`~multigpu.comm.calibration.Calibration` as a value.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.market import prices, search
from multigpu.market.prices import PriceTable

PRICES_ENV = "MULTIGPU_PRICES"
FX_ENV = "MULTIGPU_FX"
SEARCH_CACHE_ENV = "MULTIGPU_SEARCH_CACHE"
_shared: list[str] = []


def _from_env(variable: str) -> Path | None:
    value = os.environ.get(variable, "").strip()
    if not value:
        return None
    if not Path(value).is_file():
        raise InputError(f"{variable} names no such file", file=value)
    return Path(value)


def prices_path() -> Path:
    """``MULTIGPU_PRICES`` if set (it must name a file), else the packaged price file."""
    return _from_env(PRICES_ENV) or prices.DEFAULT_PRICES


def fx_path() -> Path:
    """``MULTIGPU_FX`` if set (it must name a file), else the packaged FX table."""
    return _from_env(FX_ENV) or prices.DEFAULT_FX


def price_table(path: str | Path | None = None) -> PriceTable:
    """The price table of ``path`` (a CLI's ``--prices``), else of the environment, else the packaged one;
    converted with the FX table of the environment (else the packaged one). Read from disk on every call:
    an edge calls it once and passes the table down. Also joins the build's shared searches
    (:func:`share_searches`)."""
    share_searches()
    return prices.load_table(path if path is not None else prices_path(), fx_path())


def model_calibration() -> Calibration:
    """The calibration the book and the CLI use: the shipped one."""
    return calibration.default()


def share_searches() -> None:
    """With ``MULTIGPU_SEARCH_CACHE`` set (the book build sets it to a folder of that build), read the searches
    earlier notebooks of the build ran and write this process's back when it exits, so each
    price-independent search runs once per build. Results are exact (keyed by every argument, the
    calibration and the model's code digest), so a page is the same with or without the cache."""
    folder = os.environ.get(SEARCH_CACHE_ENV, "").strip()
    if not folder or folder in _shared:
        return
    _shared.append(folder)
    search.load_memo(folder)
    atexit.register(search.save_memo, folder)
