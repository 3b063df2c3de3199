"""The one formatting module (issue 43, deliverable 5): years bare, estimates to three significant figures, no
false zero and no negative zero, whatever the number."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from multigpu.common.numtext import (ESTIMATE, ESTIMATE_FIGURES, below_resolution, fixed, number_text,
                                     significant, year_text)

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)
non_zero = finite.filter(lambda x: abs(x) > 1e-9)


def _digits(text: str) -> str:
    """The significant digits of a plain decimal text: no sign, separator, point, or leading or trailing zero
    that only places the point."""
    whole, _, fraction = text.lstrip("-").replace(",", "").partition(".")
    return (whole + fraction).lstrip("0") if fraction else whole.lstrip("0").rstrip("0")


@pytest.mark.parametrize("value, text", [(11333.16, "11,300"), (24.51, "24.5"), (3.2145, "3.21"),
                                         (0.01234, "0.0123"), (999.6, "1,000"), (0.09996, "0.100"),
                                         (-50658152.0, "-50,700,000"), (32723.31, "32,700")])
def test_an_estimate_shows_three_significant_figures(value, text):
    """The examples of the issue: 50,658,152.00 and 32,723.31 USD were printed for estimates good to about 10 %."""
    assert significant(value) == text == number_text(value, ESTIMATE)


@given(non_zero)
def test_an_estimate_is_the_number_rounded_to_its_figures(value):
    """At most :data:`ESTIMATE_FIGURES` significant digits, and within half a unit of the last of them."""
    text = significant(value)
    shown = float(text.replace(",", ""))
    assert len(_digits(text)) <= ESTIMATE_FIGURES
    assert math.isclose(shown, value, rel_tol=0.5 * 10 ** (1 - ESTIMATE_FIGURES) * 1.000001)


@given(non_zero, st.integers(min_value=0, max_value=3))
def test_no_sentence_shows_zero_for_a_number_that_is_not_zero(value, places):
    """A fixed-point spec that would print a non-zero number as 0.0 gives two significant figures instead, and no
    spec prints a negative zero."""
    text = number_text(value, f",.{places}f")
    assert text.strip("-+0.,"), text
    assert not re.fullmatch(r"-0(\.0*)?", number_text(-abs(value) / 1e12, f".{places}f"))


@given(non_zero, st.integers(min_value=0, max_value=3))
def test_a_cell_under_its_column_s_resolution_shows_the_bound(value, places):
    """A table column of fixed decimals shows "<0.01" for 0.004 (any number its decimals would show as zero), the
    number itself otherwise."""
    bound = below_resolution(value, places)
    step = 10.0 ** -places
    if not fixed(value, places).strip("-0.,"):
        assert bound == (f"<{step:.{places}f}" if value > 0 else f">-{step:.{places}f}")
    else:
        assert bound is None and fixed(value, places).strip("-0.,")


def test_zero_infinity_years_and_text():
    """Zero is zero (no sign; in a sentence without decimals), infinity is ∞ in a cell, a year has no separator,
    text passes through."""
    assert fixed(-0.0, 2) == "0.00" and fixed(-0.001, 2) == "0.00" and fixed(math.inf, 1) == "∞"
    assert number_text(-0.0, ".1f") == "0" and number_text(0.0, ",.2f") == "0" and significant(0.0) == "0"
    assert below_resolution(0.0, 2) is None and below_resolution(math.nan, 2) is None
    assert year_text(2016.0) == "2016" and year_text(2024) == "2024"
    assert number_text("H100 SXM", "s") == "H100 SXM" and number_text(1234.5, ",.2f") == "1,234.50"
