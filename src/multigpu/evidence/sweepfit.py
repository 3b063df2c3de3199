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
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration, Key
from multigpu.evidence import sweeps


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


def fit_data() -> FitData:
    """Every modelled point of the ``fit`` sweeps, its time measured or derived from its busbw."""
    data = sweeps.points()
    chosen, sizes, times = [], [], []
    for sweep in sweeps.sweeps():
        if sweep.split != "fit" or sweep.reason:
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


def fit(cal: Calibration | None = None) -> dict[Key, float]:
    """The :data:`FITTED` constants fitted on the fit sweeps, the others held at ``cal``'s (default: shipped).

    The fit runs twice, from the starting values of :data:`FITTED` and from ``cal``'s own values, and keeps
    the lower loss: from one start alone it can stop in a local minimum (with six more sweeps, the NVL72 NVLS
    efficiency stopped at 0.35, low enough that ring wins and the constant no longer matters)."""
    base, data = calibration.resolve(cal), fit_data()
    scale = lambda v, p: np.log(v) if p.log else v  # noqa: E731
    bounds = ([scale(p.low, p) for p in FITTED], [scale(p.high, p) for p in FITTED])
    starts = [np.array([scale(p.start, p) for p in FITTED]),
              np.clip([scale(max(base.value(*p.ident), p.low), p) for p in FITTED], *bounds)]
    results = [least_squares(lambda x: residuals(_with(base, x), data), x0, bounds=bounds, loss="soft_l1",
                             f_scale=F_SCALE, diff_step=1e-3) for x0 in starts]
    best = min(results, key=lambda r: r.cost)
    return {p.ident: float(np.exp(v) if p.log else v) for p, v in zip(FITTED, best.x)}


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
    """Refit and store the :data:`FITTED` values (4 significant digits) and their ``fitted_on`` sweeps in the
    calibration file at ``path``; every other row and column is kept as it is. A maintainer's step, run as
    ``python -m multigpu.evidence.sweepfit``."""
    values = {ident: _rounded(value) for ident, value in fit().items()}
    sweeps_of = influence(calibration.default().replace(values, note="sweep fit"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = next(csv.reader(lines[:1]))
    for i, line in enumerate(lines[1:], start=1):
        row = dict(zip(header, next(csv.reader([line]))))
        ident = (row["name"], row["key"])
        if ident not in values:
            continue
        row["value"] = f"{values[ident]:.4g}"
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
