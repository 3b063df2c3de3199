"""Fitting the communication model's fitted constants to the measurements they name.

The constants of :data:`FITTED` carry, in ``data/calibration.csv``, the
measurement ids they were fitted on (``fitted_on``). :func:`fit` recomputes
them from those rows and returns the values; :func:`refitted` the calibration
with them. Neither changes anything in place.
"""

from __future__ import annotations

import numpy as np

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.evidence import fitquality, measurements

#: the standard error of a median over that of a mean of normal scatter (sqrt(pi / 2))
MEDIAN_SE_FACTOR = float(np.sqrt(np.pi / 2))

#: constants fitted on measurements, in the order :func:`fit` refits them
FITTED: tuple[tuple[str, str], ...] = (
    ("sm_efficiency", "nvlink.hopper"), ("nvls_efficiency", "hopper"), ("ce_efficiency", "nvlink"),
    ("ce_efficiency", "pcie"),
)


def fit(cal: Calibration | None = None) -> dict[tuple[str, str], float]:
    """The values of :func:`fit_result`."""
    return {ident: e.value for ident, e in fit_result(cal).items()}


def fit_result(cal: Calibration | None = None) -> dict[tuple[str, str], fitquality.Estimate]:
    """Refit the :data:`FITTED` constants of ``cal`` (default: shipped) on their ``fitted_on`` rows, in order.

    Efficiencies scale bandwidth, so each is its current value times the
    median of measured / predicted over its rows (one multiplicative step;
    large messages, where latency is negligible), with the median's standard
    error (:data:`MEDIAN_SE_FACTOR` x the ratios' standard deviation / sqrt(n);
    none for one row). Latencies and the rest are fitted on the published
    sweeps (:mod:`multigpu.evidence.sweepfit`).
    """
    base = calibration.resolve(cal)
    fitted: dict[tuple[str, str], float] = {}
    out = {}
    for name, key in FITTED:
        current = base.replace(fitted) if fitted else base
        data = measurements.compare(base.constant(name, key).fitted_ids, cal=current)
        ratio = (data["measured"] / data["predicted"]).to_numpy(dtype=float)
        fitted[(name, key)] = value = current.value(name, key) * float(np.median(ratio))
        spread = MEDIAN_SE_FACTOR * float(np.std(ratio, ddof=1)) / np.sqrt(ratio.size) if ratio.size > 1 else None
        out[(name, key)] = fitquality.Estimate(value, None if spread is None else value * spread)
    return out


def refitted(cal: Calibration | None = None) -> Calibration:
    """The calibration with every :data:`FITTED` constant refitted (:func:`fit`)."""
    return calibration.resolve(cal).replace(fit(cal), note="refitted")
