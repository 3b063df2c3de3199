"""The rule refits are compared by (multigpu.evidence.fitquality): standard errors from the Jacobian, flat
directions, bounds, and what each status lets a test compare."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from multigpu.comm.calibration import AT_BOUND, DETERMINED, LOOSE
from multigpu.evidence import fitquality
from multigpu.evidence.fitquality import Estimate


def test_standard_errors_of_a_straight_line_are_the_textbook_ones():
    """y = a + b x with noise: the Gauss-Newton variances equal ordinary least squares' s^2 (X^T X)^-1."""
    rng = np.random.default_rng(1)
    x = np.linspace(0, 10, 40)
    y = 2.0 + 0.5 * x + rng.normal(0, 0.3, x.size)
    fit = least_squares(lambda p: p[0] + p[1] * x - y, [0.0, 0.0])
    design = np.column_stack([np.ones_like(x), x])
    s2 = np.sum(fit.fun**2) / (x.size - 2)
    expected = s2 * np.diag(np.linalg.inv(design.T @ design))
    assert fitquality.covariance_diagonal(fit.jac, fit.cost) == pytest.approx(expected, rel=1e-6)


def test_a_constant_the_residuals_do_not_depend_on_has_no_finite_standard_error():
    x = np.linspace(0, 1, 20)
    jac = np.column_stack([np.ones_like(x), x, np.zeros_like(x)])  # the third constant moves nothing
    variance = fitquality.covariance_diagonal(jac, cost=0.5)
    assert np.isfinite(variance[:2]).all() and variance[2] == np.inf


def test_two_constants_that_only_move_the_loss_together_are_both_undetermined():
    x = np.linspace(0, 1, 20)
    jac = np.column_stack([x, x, np.ones_like(x)])  # a + b is pinned, a - b is not
    variance = fitquality.covariance_diagonal(jac, cost=0.5)
    assert variance[0] == variance[1] == np.inf and np.isfinite(variance[2])


@pytest.mark.parametrize("estimate, status", [
    (Estimate(1.0, 0.05), DETERMINED), (Estimate(1.0, 0.1), DETERMINED), (Estimate(1.0, 0.11), LOOSE),
    (Estimate(1.0, None), LOOSE), (Estimate(0.0, 0.01), LOOSE), (Estimate(0.0, None, "low"), AT_BOUND)])
def test_status_follows_the_relative_standard_error(estimate, status):
    assert estimate.status == status


def test_a_determined_constant_agrees_within_one_standard_error_only():
    refit = Estimate(10.0, 0.5)
    assert fitquality.agrees(10.4, refit, (0.0, 100.0))
    assert not fitquality.agrees(10.6, refit, (0.0, 100.0))


def test_a_constant_at_a_bound_agrees_only_at_the_same_bound():
    refit = Estimate(0.001, None, "low")
    assert fitquality.agrees(0.5, refit, (0.0, 100.0))  # within 1 % of the span of 100
    assert not fitquality.agrees(2.0, refit, (0.0, 100.0))
    high = Estimate(2.0**32, None, "high")  # log-scale constant: 1 % of the span of its logarithm
    assert fitquality.agrees(4.295e9, high, (2.0**14, 2.0**32), log=True)
    assert not fitquality.agrees(2.0**30, high, (2.0**14, 2.0**32), log=True)


def test_a_loose_constant_is_never_compared_but_the_loss_is():
    assert fitquality.agrees(1e6, Estimate(1.0, 3.0), (0.0, 1e9))
    assert fitquality.loss_agrees(8.2005, 8.2004)
    assert not fitquality.loss_agrees(8.217, 8.201)  # a refit with one more sweep moved the loss this much


def test_a_constant_the_loss_does_not_push_into_its_bound_is_not_held_there():
    """One BLAS kernel's refit left a constant the loss does not depend on (gradient zero) beside its bound:
    it is loose there, not at the bound; one the loss pushes outward is at the bound."""
    assert fitquality.bound_side(0.9965, 0.3, 1.0, grad=0.0) is None
    assert fitquality.bound_side(0.9965, 0.3, 1.0, grad=-0.01) == "high"
    assert fitquality.bound_side(0.001, 0.0, 100.0, grad=0.0015) == "low"
    assert fitquality.bound_side(0.001, 0.0, 100.0, grad=-0.0015) is None
