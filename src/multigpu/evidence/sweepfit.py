"""Fitting the collective model's latency, ramp and network constants on the ``fit`` sweeps.

The constants of :data:`FITTED` are fitted together, by robust least squares
on log time (``scipy.optimize.least_squares``, soft-L1 loss), on every point of
the sweeps of ``data/sweeps_index.csv`` in the ``fit`` split. Sweeps in
``holdout`` and ``sealed`` are never read here: they are the out-of-sample
check (:mod:`multigpu.evidence.sweeps`).

``data/calibration.csv`` stores the fitted values, and each constant's
``fitted_on`` names the fit sweeps whose prediction it changes
(:func:`influence`). :func:`fit` recomputes the values from the data;
``tests/test_sweepfit.py`` checks the shipped file against it.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration, Key
from multigpu.evidence import fitquality, sweeps


@dataclass(frozen=True)
class Parameter:
    """One fitted constant: where the fit starts and the bounds it keeps to (log scale if ``log``)."""

    name: str
    key: str
    start: float
    low: float
    high: float
    log: bool = False

    @property
    def ident(self) -> Key:
        return (self.name, self.key)


#: constants fitted on the fit sweeps, with their starting values (NCCL's priors where there is one)
FITTED: tuple[Parameter, ...] = (
    Parameter("bandwidth_ramp", "exponent", 0.2, 0.0, 0.9),
    Parameter("bandwidth_ramp", "bytes_per_rank", 2.0**24, 2.0**14, 2.0**32, log=True),
    Parameter("bandwidth_ramp", "net.exponent", 0.2, 0.0, 0.9),
    Parameter("bandwidth_ramp", "net.full_time_us", 1000.0, 1.0, 1e6, log=True),
    Parameter("latency_scale", "nccl", 1.0, 0.25, 8.0),
    Parameter("latency_scale", "nccl.net", 1.0, 0.25, 8.0),
    Parameter("library_net_latency_us", "rccl", 1.0, 0.0, 500.0),
    Parameter("custom_latency_us", "launch", 6.6, 0.0, 100.0),
    Parameter("custom_latency_us", "sync", 0.6, 0.0, 100.0),
    Parameter("sm_efficiency", "net", 0.95, 0.3, 1.0),
    Parameter("sm_efficiency", "net.roce", 0.9, 0.3, 1.0),
    Parameter("sm_efficiency", "net.tcpx", 0.85, 0.2, 1.0),
    Parameter("fabric_latency_us", "efa", 10.0, 0.0, 500.0),
    Parameter("fabric_latency_us", "tcpx", 30.0, 0.0, 5000.0),
    Parameter("nvls_efficiency", "blackwell.rack", 0.74, 0.3, 1.0),
    Parameter("harness_overhead_us", "torch", 20.0, 0.0, 200.0),
    Parameter("harness_launch_us", "nccl-tests", 4.0, 0.0, 50.0),
)
#: the robust loss's scale: a point off by more than about 10 % counts less than quadratically
F_SCALE = 0.1


@dataclass(frozen=True)
class FitData:
    """The points a fit uses: per sweep, sizes (bytes) and measured times (us)."""

    sweeps: tuple[sweeps.Sweep, ...]
    sizes: tuple[np.ndarray, ...]
    times_us: tuple[np.ndarray, ...]


def fit_data(accept: Callable[[sweeps.Sweep], bool] | None = None) -> FitData:
    """Every modelled point of the ``fit`` sweeps (those ``accept`` takes, if given), its time measured or
    derived from its busbw."""
    data = sweeps.points()
    chosen, sizes, times = [], [], []
    for sweep in sweeps.sweeps():
        if sweep.split != "fit" or sweep.reason or (accept is not None and not accept(sweep)):
            continue
        part = data[data["sweep"] == sweep.sweep]
        time = sweeps.measured_times_us(sweep, part)
        keep = np.isfinite(time)
        chosen.append(sweep)
        sizes.append(part["bytes"].to_numpy(dtype=float)[keep])
        times.append(time[keep])
    return FitData(tuple(chosen), tuple(sizes), tuple(times))


def residuals(cal: Calibration, data: FitData) -> np.ndarray:
    """log(predicted / measured time) of every point of ``data``, sweep after sweep."""
    return np.concatenate([np.log(sweeps.predict(s, b, cal) / t) for s, b, t in zip(data.sweeps, data.sizes,
                                                                                    data.times_us)])


def _with(base: Calibration, x: np.ndarray) -> Calibration:
    values = {p.ident: float(np.exp(v) if p.log else v) for p, v in zip(FITTED, x)}
    return base.replace(values, note="sweep fit")


def _coordinates(p: Parameter, value: float) -> float:
    """``value`` in the fit's coordinate for ``p``: its logarithm for a log-scale constant."""
    return float(np.log(value)) if p.log else float(value)


def _bounds() -> tuple[list[float], list[float]]:
    return [_coordinates(p, p.low) for p in FITTED], [_coordinates(p, p.high) for p in FITTED]


def loss(cal: Calibration | None = None, data: FitData | None = None) -> float:
    """The fit's loss at ``cal`` (default: shipped): half the sum of the soft-L1 loss of each point's log error,
    scaled by :data:`F_SCALE`, as ``scipy.optimize.least_squares`` reports it (its ``cost``)."""
    r = residuals(calibration.resolve(cal), fit_data() if data is None else data)
    return float(F_SCALE**2 * np.sum(np.sqrt(1 + (r / F_SCALE) ** 2) - 1))


@dataclass(frozen=True)
class SweepFit:
    """A fit of the :data:`FITTED` constants: each constant's estimate and the loss reached."""

    estimates: dict[Key, fitquality.Estimate]
    loss: float

    @property
    def values(self) -> dict[Key, float]:
        return {ident: e.value for ident, e in self.estimates.items()}


def fit_result(cal: Calibration | None = None, data: FitData | None = None) -> SweepFit:
    """The :data:`FITTED` constants fitted on the fit sweeps, the others held at ``cal``'s (default: shipped),
    with their standard errors and bounds (:mod:`multigpu.evidence.fitquality`).

    The fit starts from fixed points, the starting values of :data:`FITTED` and ``cal``'s own values, keeps the
    lower loss (from one start alone it can stop in a local minimum: with six more sweeps, the NVL72 NVLS
    efficiency stopped at 0.35, low enough that ring wins and the constant no longer matters), and stops at the
    stated tolerances :data:`~multigpu.evidence.fitquality.SOLVER_TOL`. ``data`` (default: every fit sweep,
    :func:`fit_data`) fits on a subset instead, as the intervals' cross-validation does."""
    base, data = calibration.resolve(cal), fit_data() if data is None else data
    bounds = _bounds()
    starts = [np.array([_coordinates(p, p.start) for p in FITTED]),
              np.clip([_coordinates(p, max(base.value(*p.ident), p.low)) for p in FITTED], *bounds)]
    results = [fitquality.least_squares(lambda x: residuals(_with(base, x), data), x0, bounds=bounds,
                                        loss="soft_l1", f_scale=F_SCALE, diff_step=1e-3, **fitquality.SOLVER_TOL)
               for x0 in starts]
    best = min(results, key=lambda r: r.cost)
    sides = [fitquality.bound_side(x, lo, hi, g) for x, lo, hi, g in zip(best.x, *bounds, best.grad)]
    free = np.array([side is None for side in sides])
    variance = np.full(len(FITTED), np.inf)
    variance[free] = fitquality.covariance_diagonal(best.jac[:, free], best.cost)
    estimates = {}
    for p, x, var, side in zip(FITTED, best.x, variance, sides):
        value = float(np.exp(x) if p.log else x)
        se = float(np.sqrt(var) * (value if p.log else 1.0)) if np.isfinite(var) and side is None else None
        estimates[p.ident] = fitquality.Estimate(value, se, side)
    return SweepFit(estimates, float(best.cost))


def fit(cal: Calibration | None = None) -> dict[Key, float]:
    """The values of :func:`fit_result`."""
    return fit_result(cal).values


def influence(cal: Calibration | None = None) -> dict[Key, tuple[str, ...]]:
    """For each :data:`FITTED` constant, the fit sweeps whose prediction changes when it drops by 10 %
    (or, at zero, rises to 0.001)."""
    base, data = calibration.resolve(cal), fit_data()
    before = [sweeps.predict(s, b, base) for s, b in zip(data.sweeps, data.sizes)]
    found = {}
    for p in FITTED:
        value = base.value(*p.ident)
        moved = base.replace({p.ident: value * 0.9 if value else 1e-3})
        found[p.ident] = tuple(s.sweep for s, b, old in zip(data.sweeps, data.sizes, before)
                               if not np.allclose(sweeps.predict(s, b, moved), old, rtol=1e-9))
    return found


def write(path: Path = calibration.CALIBRATION_CSV) -> dict[Key, float]:
    """Refit and store the :data:`FITTED` values (4 significant digits), their standard errors (2), what the
    data say of each (``fit_status``) and their ``fitted_on`` sweeps in the calibration file at ``path``; every
    other row and column is kept as it is. A maintainer's step, run as ``python -m multigpu.evidence.sweepfit``."""
    result = fit_result()
    values = {ident: _rounded(e.value) for ident, e in result.estimates.items()}
    sweeps_of = influence(calibration.default().replace(values, note="sweep fit"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = next(csv.reader(lines[:1]))
    for i, line in enumerate(lines[1:], start=1):
        row = dict(zip(header, next(csv.reader([line]))))
        ident = (row["name"], row["key"])
        if ident not in values:
            continue
        estimate = result.estimates[ident]
        row["value"] = f"{values[ident]:.4g}"
        row["std_error"] = "" if estimate.std_error is None else f"{estimate.std_error:.2g}"
        row["fit_status"] = estimate.status
        row["fitted_on"] = ",".join(sweeps_of[ident])
        if not row["source"].startswith("fitted"):
            row["source"] = f"fitted on the fit sweeps (multigpu.evidence.sweepfit); prior: {row['source']}"
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(row.values())
        lines[i] = out.getvalue()
    path.write_text("".join(lines), encoding="utf-8")
    return values


def _rounded(value: float) -> float:
    """4 significant digits; below 0.001 (a latency the fit drove to its bound) zero."""
    return 0.0 if abs(value) < 1e-3 else float(f"{value:.4g}")

if __name__ == "__main__":
    for (name, key), value in write().items():
        print(f"{name}/{key} = {value:.4g}")
