"""How well a fit's data pin down each constant, and the rule a refit is compared with the shipped values by.

A fit's optimiser can stop anywhere along a direction its data leave flat: two numerical libraries (OpenBLAS
kernels, say) that round differently then give different constants at the same loss. So what a test compares
is what the data determine:

- the **loss**: the shipped constants must reach the refit's loss within :data:`LOSS_RTOL`;
- a **determined** constant (standard error at most :data:`DETERMINED_REL_SE` of its value, off its bounds) must
  lie within one standard error of the refit's: closer than that, the data cannot tell two values apart;
- a constant **at its bound** (within :data:`AT_BOUND_SHARE` of the bounds' span, the loss's gradient pushing
  it there) must be at the same bound;
- a **loose** constant (larger standard error, or none: the data do not move the loss along it) is not compared.

Standard errors come from the Gauss-Newton approximation at the fit's solution: ``s^2 (J^T J)^-1`` over the
constants off their bounds, ``J`` the Jacobian of the (robust-loss scaled) residuals in the fit's own
coordinates and ``s^2 = 2 cost / (points - constants)``. A direction of ``J^T J`` whose curvature is below
:data:`FLAT` of the largest is flat: every constant with weight on it has no finite standard error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from multigpu.comm.calibration import AT_BOUND, DETERMINED, LOOSE

#: a constant is determined when one standard error is at most this share of its value
DETERMINED_REL_SE = 0.10
#: the shipped constants reach a refit's loss when the two losses differ by at most this share
LOSS_RTOL = 1e-4
#: a constant this close to a bound, as a share of the bounds' span (of its log for a log-scale one), is at it
AT_BOUND_SHARE = 0.01
#: a direction of J^T J with curvature below this share of the largest is flat (singular values squared)
FLAT = 1e-12
#: the solver's stopping tolerances (scipy.optimize.least_squares ftol, xtol, gtol), stated, not defaulted
SOLVER_TOL = {"ftol": 1e-10, "xtol": 1e-10, "gtol": 1e-10}


@dataclass(frozen=True)
class Estimate:
    """One fitted constant: its value, standard error (its unit; None where none is finite) and bound."""

    value: float
    std_error: float | None
    at_bound: str | None = None  #: "low" or "high" when the fit stopped there

    @property
    def status(self) -> str:
        """:data:`~multigpu.comm.calibration.DETERMINED`, ``LOOSE`` or ``AT_BOUND`` by the rules above."""
        if self.at_bound:
            return AT_BOUND
        if self.std_error is not None and self.std_error <= DETERMINED_REL_SE * abs(self.value):
            return DETERMINED
        return LOOSE


def covariance_diagonal(jac: np.ndarray, cost: float) -> np.ndarray:
    """The variances of the fit's coordinates from the Jacobian ``jac`` (points x constants) at a solution of
    loss ``cost`` (scipy's: half the sum of squared, robust-scaled residuals); ``inf`` along flat directions."""
    points, n = jac.shape
    if n == 0:
        return np.zeros(0)
    s2 = 2 * cost / max(points - n, 1)
    _, sv, vt = np.linalg.svd(jac, full_matrices=False)
    curvature = sv**2
    flat = curvature <= FLAT * curvature.max()
    variance = (vt[~flat] ** 2 / curvature[~flat, None]).sum(axis=0) * s2
    on_flat = (np.abs(vt[flat]) > 1e-6).any(axis=0) if flat.any() else np.zeros(n, bool)
    return np.where(on_flat, np.inf, variance)


def bound_side(x: float, low: float, high: float, grad: float | None = None) -> str | None:
    """"low" or "high" when ``x`` (in the fit's coordinates) is within :data:`AT_BOUND_SHARE` of that bound and,
    given the loss's gradient ``grad`` there, the loss pushes it into that bound (a constant the loss does not
    move, gradient zero, is not held by its bound: it is loose wherever the optimiser left it)."""
    margin = AT_BOUND_SHARE * (high - low)
    if x <= low + margin and (grad is None or grad > 0):
        return "low"
    if x >= high - margin and (grad is None or grad < 0):
        return "high"
    return None


def agrees(shipped: float, refit: Estimate, bounds: tuple[float, float], log: bool = False) -> bool:
    """Whether the ``shipped`` value of a constant agrees with its ``refit`` by the rules of the module: within
    one standard error where determined, at the same bound where the refit is at one, always where loose.
    ``bounds`` are the constant's (natural units); ``log``: the fit's coordinate is its logarithm."""
    if refit.status == AT_BOUND:
        scale = np.log if log else (lambda v: v)
        return bound_side(float(scale(max(shipped, 1e-300))), *map(float, map(scale, bounds))) == refit.at_bound
    if refit.status == DETERMINED:
        return abs(shipped - refit.value) <= refit.std_error
    return True


def loss_agrees(shipped_loss: float, refit_loss: float) -> bool:
    """Whether the shipped constants reach the refit's loss (:data:`LOSS_RTOL`)."""
    return abs(shipped_loss - refit_loss) <= LOSS_RTOL * refit_loss


def least_squares(*args: Any, **kwargs: Any) -> Any:
    """``scipy.optimize.least_squares``, imported when a fit runs: importing SciPy's optimiser up front is a
    quarter of the time ``python -m multigpu`` takes to start, and most commands fit nothing."""
    from scipy.optimize import least_squares as solve

    return solve(*args, **kwargs)
