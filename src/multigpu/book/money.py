"""Money in the current language: the currency a page draws and states money in (USD; in the Chinese edition CNY
first, USD alongside, converted by the price table's FX table), the rate it converts at, and a figure's source line
that names the price file and that rate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from multigpu.book import lang
from multigpu.book.lang import _
from multigpu.common.numtext import number_text
from multigpu.market.prices import PriceTable

#: The currency the Chinese edition states money in first (USD alongside), from the price table's FX table.
LOCAL_CURRENCY = "CNY"


#: The dollar sign in glued Markdown, escaped: the book's MyST reads ``$...$`` as maths (dollarmath).
DOLLAR = "\\$"


def currency() -> str:
    """The currency money is drawn in for the current language: USD, or :data:`LOCAL_CURRENCY` in Chinese."""
    return "USD" if lang.current() == "en" else LOCAL_CURRENCY


def declared_rate(table: PriceTable) -> float:
    """Units of :data:`LOCAL_CURRENCY` per USD as the Chinese edition states it (four decimals,
    :func:`fx_sentence`): every CNY amount is converted at this rate, so a reader can check any of them."""
    return round(1 / table.fx[LOCAL_CURRENCY].usd_per_unit, 4)


def in_currency(usd: Any, table: PriceTable) -> Any:
    """A USD amount (a number, or a pandas Series) in :func:`currency`, converted at the rate the page declares
    (:func:`declared_rate`)."""
    if currency() == "USD":
        return usd
    return usd * declared_rate(table) if isinstance(usd, pd.Series) else float(usd) * declared_rate(table)


def money(usd: Any, table: PriceTable, spec: str = ".2f") -> str:
    """A USD amount as prose text in the current language: English the number alone (the prose says "USD");
    Chinese CNY first, USD alongside, "¥69,300（$10,300）" (the dollar escaped, :data:`DOLLAR`); "n/a" for a
    missing value. ``spec`` goes to :func:`multigpu.common.numtext.number_text`: ``.2f`` for a price,
    :data:`~multigpu.common.numtext.ESTIMATE` for the model's estimate of a cost."""
    if usd is None or (isinstance(usd, float) and math.isnan(usd)):
        return _("n/a")
    if lang.current() == "en":
        return number_text(usd, spec)
    local = "¥" + number_text(float(usd) * declared_rate(table), spec)
    return _("{local} ({usd})", local=local, usd=DOLLAR + number_text(usd, spec))


def price(usd: Any, table: PriceTable, spec: str = ".2f") -> str:
    """A USD amount as prose text with its currency: English "USD 1.50"; Chinese CNY first, "¥10.06（$1.50）"."""
    return _("USD {amount}", amount=number_text(usd, spec)) if lang.current() == "en" else money(usd, table, spec)


def fx_sentence(table: PriceTable) -> str:
    """The rate the Chinese edition converts at, with its date and FX file: "1 USD = 6.7063 CNY (2026-09-10,
    fx_rates.csv)" in the current language."""
    rate = table.fx[LOCAL_CURRENCY]
    return _("converted at 1 USD = {rate:.4f} {currency} (rate of {date}, `{file}`)", rate=1 / rate.usd_per_unit,
             currency=LOCAL_CURRENCY, date=rate.date.isoformat(), file=table.stamp()["fx_name"])


def price_source(table: PriceTable, function: str, converted: bool = False) -> str:
    """A figure's source line: the price file's name and hash, the function that drew it and, for money
    drawn in CNY, the FX rate."""
    s = table.stamp()
    text = _("price file {name} (sha256 {sha}); {function}", name=s["name"], sha=s["sha256_12"], function=function)
    if converted and currency() != "USD":
        text = _("{source}; {fx}", source=text, fx=fx_sentence(table).replace("`", ""))
    return text


def fmt(value: Any, spec: str = ".1f", unit: str = "", none: str | None = None) -> str:
    """A number as prose text: ``format(value, spec)`` with ``unit`` appended; ``none`` (default "n/a" in the
    current language) for a missing value (None, NaN) and "unbounded" for infinity. For glued text that must
    read right with any price file, including one that lacks the offers a number needs."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _("n/a") if none is None else none
    if isinstance(value, float) and math.isinf(value):
        return _("unbounded")
    return f"{number_text(value, spec)}{unit}"


def local_name(column: str) -> str:
    """The CNY twin of a USD column's name: ``min_usd_per_gpu_hour`` -> ``min_cny_per_gpu_hour``."""
    return "_".join(LOCAL_CURRENCY.lower() if part == "usd" else part for part in column.split("_"))


def money_columns(frame: pd.DataFrame, columns: Iterable[str], table: PriceTable) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` and the ``columns`` to show, in the current language: English as they are; Chinese with a CNY
    column (:func:`local_name`, converted by ``table``'s FX table) before each USD column (a name with a ``usd``
    word) of ``columns``."""
    columns = list(columns)
    if currency() == "USD":
        return frame, columns
    frame, shown = frame.copy(), []
    for column in columns:
        if "usd" in column.split("_"):
            frame.insert(frame.columns.get_loc(column), local_name(column), in_currency(frame[column], table))
            shown.append(local_name(column))
        shown.append(column)
    return frame, shown


def local_bounds(frame: pd.DataFrame, column: str, table: PriceTable) -> pd.DataFrame:
    """``frame`` with the prediction interval of ``column``'s local-currency twin (:func:`local_name`), where
    :func:`money_columns` made one, converted as the twin is: ``<twin>_lo`` and ``<twin>_hi`` beside
    ``<column>_lo`` and ``<column>_hi``, so that a table shows both as "x (lo–hi)"
    (:func:`multigpu.book.tables.table_html` with ``ranges``)."""
    twin = local_name(column)
    if twin == column or twin not in frame:
        return frame
    return frame.assign(**{f"{twin}_{end}": in_currency(frame[f"{column}_{end}"], table) for end in ("lo", "hi")})
