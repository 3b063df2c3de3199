"""How sure: prediction intervals for collectives, training step times and serving throughputs, by regime, from
residuals of measurements no fit saw.

**Regimes** (fixed, with the method below, before any held-out coverage was computed):

- size: ``large`` at or above :data:`~multigpu.evidence.sweeps.LARGE_BYTES` (64 MiB per GPU, bandwidth-bound), and
  ``small`` below it, as the validation appendix splits the sweeps;
- family: ``within a node`` (one node) or ``across nodes``.

**Calibration residuals.** The ``fit`` sweeps are dealt into :data:`FOLDS` folds by their source (a hash of the
source's address, so that the sweeps of one deployment stay together). For each fold, the constants of
:data:`~multigpu.evidence.sweepfit.FITTED` are refitted on the other folds alone, and the fold's points are
predicted with them: each residual, log(measured / predicted time), comes from a deployment the fit did not see,
which is what a reader's own cluster is to the model. ``data/interval_residuals.csv`` stores them, and
``data/interval_folds.csv`` the constants each fold's refit gave (``python -m multigpu.evidence.intervals write``
recomputes both, about five minutes), each with a digest of the data and calibration they came from; the tests
recompute the residuals from the stored constants, so a change to the model that moves them is seen.

**Intervals** are split-conformal, per regime, in log space and with equal tails: at level L the time interval of
a prediction p is [p exp(r_lo), p exp(r_hi)], where r_lo and r_hi are the regime's residuals of rank
floor((n + 1)(1 - L)/2) and ceil((n + 1)(1 + L)/2) among its n sorted residuals. A level is given only where
both ranks fall among the n, that is where n is at least 2 / (1 - L) - 1 (:func:`least_points`): 19 points for
90 %, 199 for 99 %. A bus bandwidth interval is the time interval turned over (busbw is bytes over time).

**Coverage** is scored on the ``holdout`` sweeps with the shipped calibration (:func:`coverage`): by point, and by
sweep (each sweep counts once, by the share of its points inside), with the median half log-width, log(hi/lo)/2,
and the mean interval (Winkler) score in log units.

**Published training and serving runs** (:func:`run_coverage`): each stack's kernels are fitted on its ``fit``
runs (:mod:`multigpu.evidence.computefit`), so the intervals are calibrated on cross-validated residuals of that
split, log(measured / predicted): the runs are grouped in :data:`FOLDS` folds by a hash of their deployment
(where they are published and the system they ran on, :func:`run_fold_of`), and each fold is predicted with the
stacks' kernels refitted without it (:func:`run_fold_kernels`, stored in ``data/run_folds.csv`` by :func:`write`;
a stack with too few runs left is priced at the reference line), and each serving release's decode-time factor
likewise, with its pipeline's host time per iteration (:func:`run_fold_releases`, ``data/release_folds.csv``;
1 and 0 where too few rows are left). A fold is a set of clusters the fit did not see, as a reader's is; folding
by source alone left out every run of a stack fitted on one source (PyTorch DDP: Lambda's harness), pricing them
at a line no fitted stack gives. The ``holdout``
split scores them (by run, and by source). A regime needs :func:`least_points` calibration runs for a level, so
each kind is one regime: training step time and serving throughput per GPU (the fit split's runs of each, too
few for a regime by node count).
Time to first token and time per output token (12 and 2 fit rows) have no interval yet.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from multigpu.comm import calibration
from multigpu.evidence import sweepfit, sweeps

#: The calibration residuals (:func:`write`).
RESIDUALS_CSV = sweeps.DATA_DIR / "interval_residuals.csv"
#: The constants each fold's refit gave (:func:`write`): the residuals can be recomputed from them in seconds.
FOLDS_CSV = sweeps.DATA_DIR / "interval_folds.csv"
#: The files the residuals are computed from; their digest is stored with them (:func:`inputs_digest`).
INPUTS = (sweeps.INDEX_CSV, sweeps.POINTS_CSV, calibration.CALIBRATION_CSV)
FOLDS = 5
#: The stacks' kernels refitted without each fold of the published runs (:func:`run_fold_kernels`).
RUN_FOLDS_CSV = sweeps.DATA_DIR / "run_folds.csv"
#: The serving releases' decode-time factors and pipeline host times refitted without each fold of the published
#: runs (:func:`run_fold_releases`).
RELEASE_FOLDS_CSV = sweeps.DATA_DIR / "release_folds.csv"
#: The files the runs' fold kernels come from; their digest is stored with them.
RUN_INPUTS = (sweeps.DATA_DIR / "training_runs.csv", sweeps.DATA_DIR / "serving_runs.csv",
              sweeps.DATA_DIR / "mlperf_datasets.csv",
              sweeps.DATA_DIR / "compute_efficiency.csv", sweeps.DATA_DIR / "stack_efficiency.csv",
              sweeps.DATA_DIR / "release_efficiency.csv", sweeps.DATA_DIR / "pipeline_host.csv",
              sweeps.DATA_DIR / "layer_timings.csv", sweeps.DATA_DIR / "gemm_throughput.csv")
#: The default level of an interval.
LEVEL = 0.90
SIZES = ("large", "small")
FAMILIES = ("within a node", "across nodes")
#: The project's goal for each regime's sharpness: the most its 90 % interval's half log-width, log(hi/lo)/2, may
#: be (0.10 is about ±10 %).
SHARPNESS_GOALS = {("large", "within a node"): 0.10, ("large", "across nodes"): 0.30,
                   ("small", "within a node"): 0.45, ("small", "across nodes"): 0.45}


@dataclass(frozen=True)
class Regime:
    """Where a collective prediction falls: its size class and whether it crosses nodes."""

    size: str
    family: str


def regime(nbytes: float, nodes: int) -> Regime:
    """The regime of a collective of ``nbytes`` per GPU on ``nodes`` nodes."""
    return Regime("large" if nbytes >= sweeps.LARGE_BYTES else "small", "within a node" if nodes <= 1 else
                  "across nodes")


def fold_of(sweep: sweeps.Sweep) -> int:
    """The cross-validation fold of a sweep: a hash of its source's address (the first word of ``source``)."""
    address = (sweep.source or sweep.sweep).split()[0]
    return int(hashlib.sha256(address.encode("utf-8")).hexdigest(), 16) % FOLDS


def inputs_digest(inputs: tuple[Path, ...] = INPUTS) -> str:
    """sha256 (12 hex digits) of the files the residuals come from (:data:`INPUTS`), in order."""
    digest = hashlib.sha256()
    for path in inputs:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


#: A file of a GitHub repository at one commit or tag: the repository (group 1) and the commit (group 2).
_GITHUB_FILE = re.compile(r"^https://github\.com/([^/]+/[^/]+)/blob/([^/]+)/")


def deployment_address(source: str) -> str:
    """What a run's deployment is published in: its source's address (the first word), or for a file of a GitHub
    repository the repository at that commit, so that the files of one snapshot (Lambda's FP16 and FP32 tables,
    one benchmark tag's recipe READMEs) name the same clusters."""
    address = (source or "").split()[0] if (source or "").split() else ""
    snapshot = _GITHUB_FILE.match(address)
    return f"https://github.com/{snapshot.group(1)}@{snapshot.group(2)}" if snapshot else address


def run_fold_of(source: str, system_id: str = "") -> int:
    """The cross-validation fold of a published run: a hash of its deployment, where it is published
    (:func:`deployment_address`) and the system it ran on, so that a fold leaves out clusters, not whole sources:
    a stack fitted on one source's runs keeps the runs of its other systems when one fold is out."""
    address = deployment_address(source)
    return int(hashlib.sha256(f"{address} {system_id}".encode("utf-8")).hexdigest(), 16) % FOLDS


# ---------------------------------------------------------------- calibration residuals


def _points(data: sweepfit.FitData, cal) -> list[dict]:
    rows = []
    for sweep, sizes, times in zip(data.sweeps, data.sizes, data.times_us):
        predicted = sweeps.predict(sweep, sizes, cal)
        for nbytes, measured, model in zip(sizes, times, predicted):
            where = regime(nbytes, sweep.nodes)
            rows.append({"sweep": sweep.sweep, "bytes": int(nbytes), "size": where.size, "family": where.family,
                         "fold": fold_of(sweep), "log_ratio": float(np.log(measured / model))})
    return rows


def fold_constants(progress: bool = False) -> dict[int, dict[calibration.Key, float]]:
    """For each fold, the constants of :data:`~multigpu.evidence.sweepfit.FITTED` refitted on the other folds'
    sweeps alone (the other constants as shipped)."""
    base, out = calibration.resolve(None), {}
    for fold in range(FOLDS):
        if progress:
            print(f"intervals: fold {fold + 1} of {FOLDS}", file=sys.stderr)
        out[fold] = sweepfit.fit_result(base, sweepfit.fit_data(lambda s: fold_of(s) != fold)).values
    return out


def cross_validated(constants: dict[int, dict[calibration.Key, float]]) -> pd.DataFrame:
    """The calibration residuals: every point of the fit sweeps, predicted with the ``constants`` refitted
    without its fold (:func:`fold_constants`; see the module doc). Columns ``sweep, bytes, size, family, fold,
    log_ratio`` = log(measured / predicted time)."""
    base, rows = calibration.resolve(None), []
    for fold, values in constants.items():
        held = sweepfit.fit_data(lambda s: fold_of(s) == fold)
        rows += _points(held, base.replace(values, note=f"fold {fold} left out"))
    return pd.DataFrame(rows).sort_values(["sweep", "bytes"], kind="stable").reset_index(drop=True)


def write(path: Path = RESIDUALS_CSV, folds_path: Path = FOLDS_CSV) -> pd.DataFrame:
    """Refit each fold (:func:`fold_constants`), store the constants and the calibration residuals
    (:func:`cross_validated`), each file with the inputs' digest."""
    write_run_folds()
    constants = fold_constants(progress=True)
    frame = cross_validated(constants)
    head = (f"# {{what}}; inputs sha256 {inputs_digest()}; python -m multigpu.evidence.intervals write\n")
    out = io.StringIO()
    out.write(head.format(what="cross-validated residuals of the collective model"))
    frame.assign(log_ratio=frame["log_ratio"].round(6)).to_csv(out, index=False, lineterminator="\n",
                                                                quoting=csv.QUOTE_MINIMAL)
    path.write_text(out.getvalue(), encoding="utf-8")
    folds = io.StringIO()
    folds.write(head.format(what="the sweep fit's constants refitted without each fold"))
    writer = csv.writer(folds, lineterminator="\n")
    writer.writerow(["fold", "name", "key", "value"])
    for fold, values in constants.items():
        writer.writerows([fold, name, key, repr(value)] for (name, key), value in sorted(values.items()))
    folds_path.write_text(folds.getvalue(), encoding="utf-8")
    return frame


def stored_constants(path: Path = FOLDS_CSV) -> dict[int, dict[calibration.Key, float]]:
    """The stored refitted constants of each fold (:func:`write`)."""
    table = pd.read_csv(path, comment="#", dtype={"key": str}, keep_default_na=False)
    return {int(fold): {(r.name, r.key): float(r.value) for r in part.itertuples()}
            for fold, part in table.groupby("fold")}


def stored_digest(path: Path = RESIDUALS_CSV) -> str:
    """The inputs' digest the stored residuals were computed from (their first line)."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    return first.split("inputs sha256 ")[1].split(";")[0]


def residuals(path: Path = RESIDUALS_CSV) -> pd.DataFrame:
    """The stored calibration residuals (:func:`write`)."""
    return pd.read_csv(path, comment="#")


# ---------------------------------------------------------------- intervals


@dataclass(frozen=True)
class Band:
    """A regime's interval at one level, as factors on the predicted time: [time x low, time x high]."""

    regime: Regime
    level: float
    points: int  #: calibration points it rests on
    low: float  #: exp(r_lo)
    high: float  #: exp(r_hi)

    def around(self, predicted: float) -> tuple[float, float]:
        """The interval of the predicted quantity whose residuals made the band (a time, or a serving
        throughput)."""
        return predicted * self.low, predicted * self.high

    def inverted(self, predicted: float) -> tuple[float, float]:
        """The interval of a rate that is the band's quantity turned over (a bus bandwidth for a collective's
        time, TFLOP/s or MFU for a training step's time)."""
        return predicted / self.high, predicted / self.low

    def bounds(self, name: str, value: Any, *, rate: bool = False) -> dict[str, Any]:
        """``<name>_lo`` and ``<name>_hi`` of ``value`` (a number or an array): :meth:`around` it, or with
        ``rate`` :meth:`inverted`."""
        low, high = self.inverted(value) if rate else self.around(value)
        return {f"{name}_lo": low, f"{name}_hi": high}

    @property
    def half_log_width(self) -> float:
        """log(high / low) / 2: 0.10 is about ±10 %."""
        return math.log(self.high / self.low) / 2


def _ranks(n: int, level: float) -> tuple[int, int]:
    """The 1-based ranks of the lower and upper conformal quantiles among n residuals (see the module doc)."""
    lower, upper = (n + 1) * (1 - level) / 2, (n + 1) * (1 + level) / 2
    return math.floor(lower + 1e-9), math.ceil(upper - 1e-9)  # 20 x (1 - 0.9) / 2 is 0.999...9 in floats


def least_points(level: float) -> int:
    """The fewest calibration points that give an interval at ``level`` bounded on both sides: 19 at 90 %."""
    return math.ceil(2 / (1 - level) - 1 - 1e-9)


def band(where: Regime, level: float = LEVEL, calibration_residuals: pd.DataFrame | None = None) -> Band:
    """The interval of a regime at ``level`` (0 < level < 1). Raises ValueError where the regime has fewer
    calibration points than the level needs (:func:`least_points`)."""
    data = residuals() if calibration_residuals is None else calibration_residuals
    values = data[(data["size"] == where.size) & (data["family"] == where.family)]["log_ratio"].to_numpy()
    return conformal(values, level, where, f"{where.size} messages {where.family}")


def conformal(log_ratios: np.ndarray, level: float, where: Regime, what: str) -> Band:
    """The split-conformal band at ``level`` of calibration residuals ``log_ratios`` (log(measured / predicted)),
    for ``where``; ValueError naming ``what`` where they are fewer than :func:`least_points`."""
    if not 0 < level < 1:
        raise ValueError(f"an interval's level is between 0 and 1, not {level}")
    values = np.sort(np.asarray(log_ratios, dtype=float))
    n = len(values)
    lo, hi = _ranks(n, level)
    if lo < 1 or hi > n:
        raise ValueError(f"a {100 * level:g} % interval needs {least_points(level)} calibration points; "
                         f"{what} have {n}")
    return Band(where, level, n, float(np.exp(values[lo - 1])), float(np.exp(values[hi - 1])))


def busbw_bounds(frame: pd.DataFrame, columns: Sequence[str], nbytes: float, nodes: str | int = 1,
                 level: float = LEVEL) -> pd.DataFrame:
    """``frame`` with the prediction interval at ``level`` of each bus-bandwidth column of ``columns`` (GB/s), as
    ``<column>_lo`` and ``<column>_hi``: the band of the regime of ``nbytes`` per GPU on the row's nodes
    (``nodes``: one count for every row, or the name of a column of node counts), turned over as a rate."""
    data = residuals()
    counts = list(frame[nodes]) if isinstance(nodes, str) else [nodes] * len(frame)
    found = {n: band(regime(nbytes, int(n)), level, data) for n in set(counts)}
    parts = [pd.DataFrame([found[n].bounds(column, float(v), rate=True) for n, v in zip(counts, frame[column])],
                          index=frame.index) for column in columns]
    return pd.concat([frame, *parts], axis=1)


def time_bounds(frame: pd.DataFrame, column: str, size_column: str = "bytes", nodes: int = 1,
                level: float = LEVEL) -> pd.DataFrame:
    """``frame`` with the prediction interval at ``level`` of each row's collective time ``column`` (any time
    unit), as ``<column>_lo`` and ``<column>_hi``: the band of the regime of the row's size (``size_column``,
    bytes per GPU) on ``nodes`` nodes, so a curve over sizes changes its width where it crosses from small to
    large messages."""
    data = residuals()
    where = [regime(float(b), nodes) for b in frame[size_column]]
    found = {r: band(r, level, data) for r in set(where)}
    ends = [found[r].bounds(column, float(v)) for r, v in zip(where, frame[column])]
    return pd.concat([frame, pd.DataFrame(ends, index=frame.index)], axis=1)


def bands(level: float = LEVEL) -> pd.DataFrame:
    """Every regime's :func:`band` at ``level``: ``size, family, points, low, high, half_log_width``."""
    data = residuals()
    rows = []
    for size in SIZES:
        for family in FAMILIES:
            b = band(Regime(size, family), level, data)
            rows.append({"size": size, "family": family, "points": b.points, "low": b.low, "high": b.high,
                         "half_log_width": b.half_log_width})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- coverage on held-out sweeps


def held_out(split: str = "holdout") -> pd.DataFrame:
    """Every point of the ``split`` sweeps with the shipped model's prediction: ``sweep, source, bytes, size,
    family, log_ratio`` = log(measured / predicted time)."""
    if split not in sweeps.OPEN_SPLITS:
        raise ValueError(f"coverage is scored on the open splits {sweeps.OPEN_SPLITS}; the sealed ones are opened "
                         "once, by name, at the end")
    cal, data, rows = calibration.resolve(None), sweeps.points(), []
    for sweep in sweeps.sweeps():
        if sweep.split != split or sweep.reason:
            continue
        part = data[data["sweep"] == sweep.sweep]
        measured = sweeps.measured_times_us(sweep, part)
        predicted = sweeps.predict(sweep, part["bytes"].to_numpy(dtype=float), cal)
        for nbytes, m, p in zip(part["bytes"], measured, predicted):
            if not np.isfinite(m):
                continue
            where = regime(nbytes, sweep.nodes)
            rows.append({"sweep": sweep.sweep, "source": sweep.source, "bytes": int(nbytes), "size": where.size,
                         "family": where.family, "log_ratio": float(np.log(m / p))})
    return pd.DataFrame(rows)


def miss_weight(level: float) -> float:
    """What the interval score charges per log unit a residual falls outside an interval of ``level``:
    2 / (1 - level), 20 at 90 %."""
    return 2 / (1 - level)


def winkler(log_ratio: np.ndarray, lo: float, hi: float, level: float) -> np.ndarray:
    """The interval score of each residual against [lo, hi] (log units): the width, plus :func:`miss_weight`
    times how far a residual falls outside."""
    return (hi - lo) + miss_weight(level) * (np.maximum(lo - log_ratio, 0) + np.maximum(log_ratio - hi, 0))


def acceptance(n: int, level: float = LEVEL, confidence: float = 0.95) -> tuple[int, int]:
    """The two-sided ``confidence`` acceptance region of the count of n points inside an interval of ``level``
    (binomial): (19, 25) for n = 25 at 90 %."""
    from scipy import stats  # here, not at the top: it is most of the time `python -m multigpu` takes to start

    tail = (1 - confidence) / 2
    return int(stats.binom.ppf(tail, n, level)), int(stats.binom.isf(tail, n, level))


def coverage(level: float = LEVEL, split: str = "holdout") -> pd.DataFrame:
    """How often the ``split`` points fall inside their regime's interval at ``level``, by regime: ``size,
    family, calibration_points, low, high`` (the band's factors on the predicted time), ``points, inside,
    share_points, acceptance_low, acceptance_high, sweeps, share_by_sweep, sweep_acceptance_low,
    sweep_acceptance_high, half_log_width, goal`` (:data:`SHARPNESS_GOALS`) and ``winkler`` (mean interval score,
    log units)."""
    calib, points, rows = residuals(), held_out(split), []
    for size in SIZES:
        for family in FAMILIES:
            part = points[(points["size"] == size) & (points["family"] == family)]
            if not part.empty:
                b = band(Regime(size, family), level, calib)
                rows.append(_scored(b, part, part["sweep"], SHARPNESS_GOALS[(size, family)]))
    return pd.DataFrame(rows)


def _scored(b: Band, part: pd.DataFrame, groups: pd.Series, goal: float) -> dict:
    """One row of :func:`coverage`: band ``b`` scored on the held-out residuals of ``part``, by point and by
    group (a sweep, or a source)."""
    lo, hi = math.log(b.low), math.log(b.high)
    inside = (part["log_ratio"] >= lo) & (part["log_ratio"] <= hi)
    by_group = inside.groupby(groups).mean()
    a_lo, a_hi = acceptance(len(part), b.level)
    s_lo, s_hi = acceptance(len(by_group), b.level)
    return {"size": b.regime.size, "family": b.regime.family, "calibration_points": b.points, "low": b.low,
            "high": b.high, "points": len(part), "inside": int(inside.sum()), "share_points": float(inside.mean()),
            "acceptance_low": a_lo, "acceptance_high": a_hi, "sweeps": len(by_group),
            "share_by_sweep": float(by_group.mean()), "sweep_acceptance_low": s_lo, "sweep_acceptance_high": s_hi,
            "half_log_width": b.half_log_width, "goal": goal,
            "winkler": float(winkler(part["log_ratio"].to_numpy(), lo, hi, b.level).mean())}


# ---------------------------------------------------------------- training and serving runs

#: The kinds of published runs with an interval: what each predicts.
RUN_KINDS = ("training step time", "serving throughput")
#: The project's goal for the runs' 90 % half log-width.
RUN_GOALS = {"training step time": 0.20, "serving throughput": 0.30}
#: The family of a run regime: one regime for all runs of a kind (the fit split has too few to split them).
ALL_RUNS = "all runs"


def run_fold_kernels(progress: bool = False) -> dict[int, dict[str, object]]:
    """For each fold, the kernels of every stack with constants of its own, refitted on its fit-split runs
    outside the fold (:func:`multigpu.evidence.computefit.fit_stack`); the reference line where too few are
    left."""
    from multigpu.compute import efficiency
    from multigpu.evidence import computefit

    stacks = tuple(computefit.stack_fits())
    frame = computefit.compared("fit")
    sources = dict(zip(frame["id"], zip(frame["source"], frame["system_id"])))
    out = {}
    for fold in range(FOLDS):
        if progress:
            print(f"intervals: runs, fold {fold + 1} of {FOLDS}", file=sys.stderr)
        fits = {stack: computefit.fit_stack(stack, keep=lambda i: run_fold_of(*sources.get(i, ("", ""))) != fold)
                for stack in stacks}
        out[fold] = {stack: f.kernels if f else efficiency.reference_kernels() for stack, f in fits.items()}
    return out


def run_fold_releases() -> dict[int, dict[tuple[str, str], tuple[float, float]]]:
    """For each fold, every serving release's decode-time factor and pipeline host time per iteration (s) with a
    value of its own (``data/release_efficiency.csv``, ``data/pipeline_host.csv``), refitted on its fit-split rows
    outside the fold (:func:`multigpu.evidence.releasefit.fit_release`, then with those factors
    :func:`~multigpu.evidence.releasefit.fit_pipeline_host`); 1 (the model's kernels) and 0 (stages that never
    wait) where too few are left."""
    from multigpu.compute import efficiency
    from multigpu.evidence import releasefit, serving

    where = {row.id: (row.source, row.system_id) for row in serving.load(("fit",))}
    shipped = list(dict.fromkeys([*efficiency.release_rows(), *efficiency.pipeline_host_rows()]))
    out = {}
    for fold in range(FOLDS):
        def keep(i: str, fold: int = fold) -> bool:
            return run_fold_of(*where[i]) != fold

        fits = releasefit.release_fits(keep=keep)
        factors = {key: fits[key].estimate.value if key in fits else 1.0 for key in shipped}
        hosts = releasefit.pipeline_host_fits(keep=keep, factors=factors)
        out[fold] = {key: (factors[key], hosts[key].estimate.value if key in hosts else 0.0) for key in shipped}
    return out


def write_run_folds(path: Path = RUN_FOLDS_CSV, releases_path: Path = RELEASE_FOLDS_CSV) -> None:
    """Refit the stacks' kernels (:func:`run_fold_kernels`) and the serving releases' factors
    (:func:`run_fold_releases`) without each fold and store them with the inputs' digest."""
    head = (f"# {{what}} refitted without each fold of the published runs; inputs sha256 "
            f"{inputs_digest(RUN_INPUTS)}; python -m multigpu.evidence.intervals write\n")
    out = io.StringIO()
    out.write(head.format(what="the stacks' kernels"))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["fold", "stack", "share", "traffic_per_hidden"])
    for fold, kernels in run_fold_kernels(progress=True).items():
        writer.writerows([fold, stack, repr(k.share), repr(k.traffic_per_hidden)] for stack, k in kernels.items())
    path.write_text(out.getvalue(), encoding="utf-8")
    out = io.StringIO()
    out.write(head.format(what="the serving releases' decode-time factors and pipeline host times"))
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["fold", "stack", "release", "decode_time_factor", "iteration_host_s"])
    for fold, values in run_fold_releases().items():
        writer.writerows([fold, stack, release, repr(f), repr(h)] for (stack, release), (f, h) in values.items())
    releases_path.write_text(out.getvalue(), encoding="utf-8")


def stored_run_releases(path: Path = RELEASE_FOLDS_CSV, column: str = "decode_time_factor"
                        ) -> dict[int, dict[tuple[str, str], float]]:
    """The stored release factors of each fold (:func:`write_run_folds`), or with ``column`` ``iteration_host_s``
    their pipelines' host times per iteration (s)."""
    table = pd.read_csv(path, comment="#", dtype={"release": str})
    return {int(fold): {(r.stack, r.release): float(getattr(r, column)) for r in part.itertuples()}
            for fold, part in table.groupby("fold")}


def stored_run_kernels(path: Path = RUN_FOLDS_CSV) -> dict[int, dict[str, object]]:
    """The stored kernels of each fold (:func:`write_run_folds`)."""
    from multigpu.compute import efficiency

    table = pd.read_csv(path, comment="#")
    return {int(fold): {r.stack: efficiency.StackKernels(float(r.share), float(r.traffic_per_hidden))
                        for r in part.itertuples()} for fold, part in table.groupby("fold")}


def _run_frame(kind: str, splits: tuple[str, ...]) -> pd.DataFrame:
    from multigpu.evidence import runs, serving

    if kind == "training step time":
        return runs.compare(splits=splits)
    return serving.compare(splits=splits).query("metric == 'throughput'")


def _cross_validated_runs(kind: str) -> pd.DataFrame:
    """The fit split's runs of ``kind``, each predicted with the kernels (and serving releases' factors) refitted
    without its fold."""
    from multigpu.compute import efficiency

    parts = []
    releases, hosts = stored_run_releases(), stored_run_releases(column="iteration_host_s")
    for fold, kernels in stored_run_kernels().items():
        with efficiency.trying(stacks=kernels, releases=releases[fold], hosts=hosts[fold]):
            frame = _run_frame(kind, ("fit",))
        folds = [run_fold_of(source, system) for source, system in zip(frame["source"], frame["system_id"])]
        parts.append(frame[np.asarray(folds) == fold])
    return pd.concat(parts, ignore_index=True)


def run_residuals(splits: tuple[str, ...], kinds: tuple[str, ...] = RUN_KINDS) -> pd.DataFrame:
    """Published runs of ``splits`` against the model: ``kind`` (of ``kinds``, :data:`RUN_KINDS`), ``id, split,
    source, log_ratio`` = log(measured / predicted) of the step time or of the throughput per GPU. The fit
    split's are cross-validated (:func:`_cross_validated_runs`), the others' predicted as shipped."""
    frames = []
    for kind in kinds:
        others = tuple(s for s in splits if s != "fit")
        parts = ([_cross_validated_runs(kind)] if "fit" in splits else []) + (
            [_run_frame(kind, others)] if others else [])
        frames.append(pd.concat(parts, ignore_index=True).assign(kind=kind))
    return pd.concat([pd.DataFrame({"kind": f["kind"], "id": f["id"], "split": f["split"], "source": f["source"],
                                    "log_ratio": -np.log1p(f["rel_error"].to_numpy(dtype=float))})
                      for f in frames], ignore_index=True)


@functools.lru_cache(maxsize=None)
def run_band(kind: str, level: float = LEVEL) -> Band:
    """The interval of a published-run kind of :data:`RUN_KINDS` at ``level``, calibrated on the fit split (kept
    for the process: it rests on the package's data files only)."""
    data = run_residuals(("fit",), (kind,))
    return conformal(data["log_ratio"].to_numpy(), level, Regime(kind, ALL_RUNS), kind)


#: The published-run kind whose interval a workload kind's cost carries (:func:`cost_bounds`).
COST_REGIME = {"train": "training step time", "serve": "serving throughput"}
#: The columns :func:`cost_bounds` brackets.
COST_FIELDS = ("time_h", "gpu_hours", "cost_usd", "cost")


def cost_bounds(frame: pd.DataFrame, kinds: Sequence[str], level: float = LEVEL,
                utilisation: float = 1.0) -> pd.DataFrame:
    """``frame`` (rows of :func:`multigpu.market.cost.offer_costs`, one workload kind of ``kinds`` per row) with
    the prediction interval of each feasible row's hours and cost at ``level``: ``<field>_lo`` and ``<field>_hi``
    for :data:`COST_FIELDS` (NaN where the offer cannot run it), ``interval_level`` and ``interval_regime``. A
    training job's hours go as its step time, a serving target's GPU-hours per million tokens as the inverse of
    its throughput; both are billed as the cost is (:func:`multigpu.market.cost.scaled_costs`). ValueError where
    the level needs more calibration runs than there are."""
    from multigpu.market import cost

    bands = {kind: run_band(regime, level) for kind, regime in COST_REGIME.items()}
    columns: dict[str, list[float]] = {f"{f}_{end}": [] for f in COST_FIELDS for end in ("lo", "hi")}
    for row, kind in zip(frame.to_dict("records"), kinds):
        band = bands[kind]
        factors = (band.low, band.high) if kind == "train" else (1 / band.high, 1 / band.low)
        for end, factor in zip(("lo", "hi"), factors):
            values = cost.scaled_costs(row, kind, factor, utilisation) if row["feasible"] else {}
            for f in COST_FIELDS:
                columns[f"{f}_{end}"].append(values.get(f, math.nan))
    return frame.assign(**columns, interval_level=level, interval_regime=[COST_REGIME[k] for k in kinds])


#: The fields of the recommender's options (:mod:`multigpu.market.recommend`) :func:`option_bounds` brackets.
OPTION_FIELDS = {"train": ("step_time_s", "mfu", "time_h", "cost_usd"),
                 "serve": ("capacity_tokens_per_s", "capacity_requests_per_s", "instances", "cost_per_hour_usd",
                           "cost_per_million_tokens_usd")}


def option_bounds(frame: pd.DataFrame, level: float = LEVEL) -> pd.DataFrame:
    """The recommender's ranked options (``frame.attrs["kind"]`` train or serve) with each feasible row's prediction
    interval at ``level`` (``<field>_lo``, ``<field>_hi`` of :data:`OPTION_FIELDS`; NaN where a row cannot run),
    ``interval_level`` and ``interval_regime``. A training option's step time, hours and cost go as the band of a
    step time (its MFU the other way); a serving option's capacity goes as the band of a throughput per GPU, and
    the instances that carry the same demand, their cost per hour and per million tokens, are counted again at
    each end. ValueError where the level needs more calibration runs than there are."""
    kind = frame.attrs["kind"]
    band = run_band(COST_REGIME[kind], level)
    columns: dict[str, list[float]] = {f"{f}_{end}": [] for f in OPTION_FIELDS[kind] for end in ("lo", "hi")}
    demand = frame.attrs.get("requests_per_s", 0) * frame.attrs.get("output_tokens", 0)
    for row in frame.to_dict("records"):
        ends = _option_ends(row, kind, band, demand) if row["feasible"] else ({}, {})
        for end, values in zip(("lo", "hi"), ends):
            for f in OPTION_FIELDS[kind]:
                columns[f"{f}_{end}"].append(values.get(f, math.nan))
    out = frame.assign(**columns, interval_level=level, interval_regime=COST_REGIME[kind])
    out.attrs.update(frame.attrs)
    return out


def _option_ends(row: dict, kind: str, band: Band, demand_tps: float) -> tuple[dict, dict]:
    """(low end, high end) of one feasible option's :data:`OPTION_FIELDS` under ``band``."""
    if kind == "train":
        low, high = ({f: row[f] * factor for f in ("step_time_s", "time_h", "cost_usd")} for factor in
                     (band.low, band.high))
        low["mfu"], high["mfu"] = band.inverted(row["mfu"])
        return low, high
    per_instance = row["capacity_tokens_per_s"] / row["instances"]
    price_hour = row["cost_per_hour_usd"] / row["instances"]

    def at(factor: float) -> dict:
        instances = max(1, math.ceil(demand_tps / (per_instance * factor) - 1e-9))
        return {"capacity_tokens_per_s": row["capacity_tokens_per_s"] * factor,
                "capacity_requests_per_s": row["capacity_requests_per_s"] * factor, "instances": instances,
                "cost_per_hour_usd": instances * price_hour,
                "cost_per_million_tokens_usd": instances * price_hour / (demand_tps * 3600 / 1e6)}

    slow, fast = at(band.low), at(band.high)
    return ({**slow, **{f: fast[f] for f in ("instances", "cost_per_hour_usd", "cost_per_million_tokens_usd")}},
            {**fast, **{f: slow[f] for f in ("instances", "cost_per_hour_usd", "cost_per_million_tokens_usd")}})


def run_coverage(level: float = LEVEL) -> pd.DataFrame:
    """:func:`coverage`'s columns for the published runs, one row per kind of :data:`RUN_KINDS` (``size`` holds
    the kind, ``family`` is :data:`ALL_RUNS`, ``sweeps`` counts sources): calibrated on the fit split's runs,
    scored on the holdout split's."""
    data, rows = run_residuals(("fit", "holdout")), []
    for kind in RUN_KINDS:
        part = data[data["kind"] == kind]
        calib, held = part[part["split"] == "fit"], part[part["split"] == "holdout"]
        where = Regime(kind, ALL_RUNS)
        rows.append(_scored(conformal(calib["log_ratio"].to_numpy(), level, where, kind), held, held["source"],
                            RUN_GOALS[kind]))
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["write"]:
        print("usage: python -m multigpu.evidence.intervals write", file=sys.stderr)
        return 2
    frame = write()
    print(f"intervals: {len(frame)} residuals written to data/{RESIDUALS_CSV.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
