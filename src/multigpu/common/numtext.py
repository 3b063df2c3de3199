"""Numbers as people read them: the one place the package turns a number into text for a reader.

The book's tables (:mod:`multigpu.book.tables`), its sentences (:mod:`multigpu.common.findings`), its money
(:mod:`multigpu.book.money`), its figure labels and the command line all format through here, by these rules:

- **Separators** group thousands (1,024); a **year** never has one (2016, :func:`year_text`).
- **No false zero.** A fixed-point spec never prints a non-zero number as zero: in a sentence it is shown to two
  significant figures instead (0.031, :func:`number_text`); in a table column of fixed decimals, as the bound it is
  under (<0.01, :func:`below_resolution`). Nothing prints as a negative zero.
- **Estimates at the precision the model supports.** The model's held-out error is near 10 %, so a model estimate
  (a time, a cost, a throughput) is shown to at most :data:`ESTIMATE_FIGURES` significant figures: 11,300 and not
  11,333.16 (:func:`significant`; the format spec :data:`ESTIMATE` asks for it wherever a spec is taken, money
  included).

Nothing here depends on the language: the words around a number (units, "n/a") are the caller's.
"""

from __future__ import annotations

import math
import re

#: Significant figures a model estimate is shown to: the model's held-out error is near 10 % (the validation
#: appendix), so a fourth figure would claim a precision the estimate does not have.
ESTIMATE_FIGURES = 3

#: The format spec, wherever this module takes one, for a model estimate: :data:`ESTIMATE_FIGURES` significant
#: figures with separators. ``sig2``, ``sig4`` ... ask for another count.
ESTIMATE = f"sig{ESTIMATE_FIGURES}"
_SIGNIFICANT = re.compile(r"^sig([1-9])$")

#: A fixed-point format spec (``.1f``, ``,.2f``): the one kind that can print a non-zero number as zero.
_FIXED = re.compile(r"^[,_]?\.\d+f$")


def significant(value: float, figures: int = ESTIMATE_FIGURES) -> str:
    """``value`` to ``figures`` significant figures, with separators and no exponent: 11,333.16 -> "11,300",
    24.51 -> "24.5", 3.2145 -> "3.21", 0.01234 -> "0.0123"; zero, infinity and NaN as :func:`number_text` shows
    them with ``g``."""
    x = float(value)
    if x == 0 or not math.isfinite(x):
        return _no_negative_zero(format(x, "g"))
    decimals = figures - 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) != math.floor(math.log10(abs(x))):  # 999.6 -> 1,000
        decimals -= 1
    return _no_negative_zero(f"{round(x, decimals):,.{max(decimals, 0)}f}")


def range_text(value: float, low: float, high: float, figures: int = ESTIMATE_FIGURES) -> str:
    """An estimate with its interval, as the book's tables print one: "x (lo–hi)", each to ``figures``
    significant figures (:func:`significant`), joined by an en dash."""
    return f"{significant(value, figures)} ({significant(low, figures)}–{significant(high, figures)})"


def number_text(value: float, spec: str) -> str:
    """``format(value, spec)``, except that :data:`ESTIMATE` (``sigN``) gives N significant figures
    (:func:`significant`), a non-zero finite number a fixed-point spec prints as zero ("0.0", "-0") is shown to two
    significant figures ("0.031"), exactly zero under a fixed-point spec is "0", and no number prints as a negative
    zero; text is formatted as it is."""
    if isinstance(value, str):
        return format(value, spec)
    wanted = _SIGNIFICANT.match(spec)
    if wanted:
        return significant(value, int(wanted.group(1)))
    text = format(value, spec)
    if _FIXED.match(spec) and value == 0:  # exactly zero reads "0" in a sentence, not "0.0"
        return "0"
    if _FIXED.match(spec) and value and math.isfinite(value) and not text.strip("-+0.,"):
        return format(value, ".2g")
    return _no_negative_zero(text)


def fixed(value: float, places: int) -> str:
    """``value`` with ``places`` decimals and separators, as a table cell shows it: never "-0.00", infinity as
    "∞" or "-∞"."""
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    return _no_negative_zero(f"{number:,.{places}f}")


def below_resolution(value: float, places: int) -> str | None:
    """A non-zero number too small for ``places`` decimals, as the bound it is under ("<0.01", ">-0.01"), so that
    a column of fixed decimals shows no 0.00 for a value that is not 0; None for any other value."""
    number = float(value)
    if not math.isfinite(number) or number == 0:
        return None
    if fixed(number, places).strip("-0.,"):  # shown as a number that is not zero (0.5 rounds to 0 at no decimals)
        return None
    step = 10.0 ** -places
    return f"<{step:.{places}f}" if number > 0 else f">-{step:.{places}f}"


def year_text(value: float) -> str:
    """A calendar year as people write it: 2016, never 2,016 or 2016.0."""
    return str(int(value))


def _no_negative_zero(text: str) -> str:
    """``text`` less the sign of a negative zero ("-0", "-0.00"): a zero has no sign."""
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text
