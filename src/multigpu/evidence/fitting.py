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
from multigpu.evidence import measurements

#: constants fitted on measurements, in the order :func:`fit` refits them
FITTED: tuple[tuple[str, str], ...] = (
    ("sm_efficiency", "nvlink.hopper"), ("nvls_efficiency", "hopper"), ("ce_efficiency", "nvlink"),
    ("ce_efficiency", "pcie"),
)


def fit(cal: Calibration | None = None) -> dict[tuple[str, str], float]:
    """Refit the :data:`FITTED` constants of ``cal`` (default: shipped) on their ``fitted_on`` rows, in order.

    Efficiencies scale bandwidth, so each is its current value times the
    median of measured / predicted over its rows (one multiplicative step;
    large messages, where latency is negligible). Latencies and the rest are
    fitted on the published sweeps (:mod:`multigpu.evidence.sweepfit`).
    """
    base = calibration.resolve(cal)
    fitted: dict[tuple[str, str], float] = {}
    for name, key in FITTED:
        current = base.replace(fitted) if fitted else base
        data = measurements.compare(base.constant(name, key).fitted_ids, cal=current)
        fitted[(name, key)] = current.value(name, key) * float(np.median(data["measured"] / data["predicted"]))
    return fitted


def refitted(cal: Calibration | None = None) -> Calibration:
    """The calibration with every :data:`FITTED` constant refitted (:func:`fit`)."""
    return calibration.resolve(cal).replace(fit(cal), note="refitted")
