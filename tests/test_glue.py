"""What the chapters glue into the prose: plain numbers, rounded where machines may differ."""

from __future__ import annotations

from multigpu.book import glue


def test_a_glued_float_keeps_ten_significant_digits_whatever_the_blas_kernel():
    """Two OpenBLAS kernels gave 0.1118424535357829 and 0.11184245353578628 for one fitted factor: the stored
    record (what nbval compares) must be the same for both, and keep more digits than any prose shows."""
    first = glue.glue("lf_min_test", 0.1118424535357829)
    second = glue.glue("lf_min_test", 0.11184245353578628)
    assert first == second == 0.1118424535
    assert glue.glue("n_test", 7) == 7 and isinstance(glue.glue("n_test", 7), int)  # counts stay whole numbers
