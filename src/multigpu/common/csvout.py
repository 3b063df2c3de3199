"""Cells for CSV and spreadsheet files we write: full precision, and no text a spreadsheet would run."""

from __future__ import annotations

import json
import math
from typing import Any

#: A text cell starting with one of these is read as a formula by spreadsheets (CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_text(text: str) -> str:
    """``text``, with a leading ``'`` when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_cell(value: Any) -> str:
    """A cell for CSV: numbers at full precision (``repr``; NaN empty), dates as ISO text, text that a
    spreadsheet would read as a formula escaped with a leading ``'``; numbers, negative ones included, are
    never escaped."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (dict, list, tuple)):
        return safe_text(json.dumps(value, ensure_ascii=False, default=str))
    return safe_text(str(value))
