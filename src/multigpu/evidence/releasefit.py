"""Each serving-stack release's decode kernels against the model's (``data/release_efficiency.csv``).

TensorRT-LLM's performance pages give one job's throughput release after release, and the same job ran faster
as the releases' kernels improved: the model, which prices a decode step at its roofline (the weights and KV
cache read, or the FLOPs, whichever takes longer; :mod:`multigpu.compute.inference`), was 30-40 % too fast on the
held-out rows of releases 0.10 and 0.12 and within a few per cent on 1.0's FP8 rows on Hopper, on every GPU of a
page alike (NVSwitch and PCIe boxes). So a release's decode kernels take a factor of the model's time of their
own (:func:`multigpu.compute.efficiency.decode_time_factor`), fitted here:

- **What it scales:** a decode step's kernel time, not the layers' fixed time, the prefills or the
  communication.
- **Rows:** a release's fit-split throughput rows (``release`` column of ``data/serving_runs.csv``) that the
  model compares. FP4 rows are left out of the fit, since FP4 on Blackwell is an open miss of its own (too fast
  at its measured matmul ceiling, as the validation appendix reports); the factor still applies to them.
- **Fit:** the factor sets the median of log(predicted / measured) throughput over those rows to zero: half the
  rows are then too fast and half too slow. A release's rows mix jobs the model misses for reasons of their own
  (a small model at a batch near a thousand, say, where the host's scheduling may bind), so the median, which
  such rows do not pull, is the estimate. Its standard error is half the span between the factors that zero
  the quantiles 0.5 -/+ 0.5 / sqrt(n) of the same errors (the order statistics one standard error either side
  of the median). The factor stays within :data:`BOUNDS`.
- **Rule:** a release gets a factor only with :data:`~multigpu.compute.efficiency.MIN_FIT_RUNS` such fit-split
  rows and :data:`~multigpu.compute.efficiency.MIN_HOLDOUT_RUNS` held-out ones (the holdout split, and the
  sealed rows already opened); the others, and every row that states no release, keep the model's kernels
  (factor 1).

**A release's pipeline loop** (``data/pipeline_host.csv``): with more than one stage, TensorRT-LLM's PyTorch
executor runs ``_executor_loop_pp`` and not its overlap scheduler (``tensorrt_llm/_torch/pyexecutor/py_executor.py``,
``PyExecutor.__init__``), so each iteration's host work waits on every stage's path
(:func:`multigpu.compute.efficiency.pipeline_iteration_host_s`). Its host time per iteration is fitted the same
way (:func:`fit_pipeline_host`), on the release's fit-split throughput rows of more than one stage (FP4 rows too),
with the release's decode-time factor in force, between :data:`HOST_BOUNDS`, by the same rule of fit and held-out
rows; other releases' pipelines never wait on their host.

The book's own predictions state no release: they price the model's kernels, which the newest release fitted
here reaches within its factor (:func:`newest`). ``python -m multigpu.evidence.releasefit write`` rewrites the
file and ``data/pipeline_host.csv``; ``tests/test_releasefit.py`` and ``tests/test_pipeline_host.py`` check them
against :func:`release_fits` and :func:`pipeline_host_fits`.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.compute import efficiency, inference
from multigpu.evidence import fitquality, serving

#: The factor's bounds in a fit: from twice as fast as the model's kernels to four times as slow.
BOUNDS = (0.5, 4.0)
#: The bisection's tolerance, in the factor's logarithm: for the factor, and for the two quantiles that give its
#: standard error (printed to two significant digits).
TOLERANCE, SPREAD_TOLERANCE = 1e-5, 1e-3
#: Columns of ``data/release_efficiency.csv``.
COLUMNS = ["stack", "release", "decode_time_factor", "std_error", "fit_status", "fit_runs", "holdout_runs",
           "fitted_on", "source", "notes"]
#: Columns of ``data/pipeline_host.csv``.
HOST_COLUMNS = ["stack", "release", "iteration_host_s", *COLUMNS[3:]]
#: A pipeline's host time per iteration in a fit: none to 50 ms (s), and the bisection's tolerances (s).
HOST_BOUNDS = (0.0, 0.05)
HOST_TOLERANCE, HOST_SPREAD_TOLERANCE = 1e-6, 1e-5


@dataclass(frozen=True)
class ReleaseFit:
    """One release's decode-time factor or pipeline host time, with the rows it rests on."""

    stack: str
    release: str
    estimate: fitquality.Estimate  #: the decode-time factor (x), or the pipeline's host time per iteration (s)
    fit_runs: tuple[str, ...]
    holdout_runs: tuple[str, ...]


def row_stack(row: serving.ServingRow) -> str:
    """The serving stack a row ran, as :func:`multigpu.evidence.serving.map_row` reads it (the default where the
    row names none the model has)."""
    return serving.serving_stack(row.stack) or inference.DEFAULT_STACK


def _rows(splits: tuple[str, ...]) -> list[serving.ServingRow]:
    """The throughput rows of ``splits`` that state a release, FP4 rows left out."""
    return [r for r in serving.load(splits) if r.release and serving.metric_kind(r.metric) == "throughput"
            and (r.dtype or "") not in inference.FP4_FORMATS]


def releases() -> list[tuple[str, str]]:
    """Every (stack, release) that a fit-split or held-out row states, in file order."""
    return list(dict.fromkeys((row_stack(r), r.release) for r in _rows(("fit", "holdout"))))


def _pipeline_rows(splits: tuple[str, ...]) -> list[serving.ServingRow]:
    """The throughput rows of ``splits`` that state a release and run more than one pipeline stage, FP4 rows
    too: the only ones are FP4 on the RTX PRO 6000, whose one-stage rows the model meets within a few per cent,
    so FP4 is not what misses there."""
    return [r for r in serving.load(splits) if r.release and serving.metric_kind(r.metric) == "throughput"
            and (r.pp or 1) > 1]


def pipelines() -> list[tuple[str, str]]:
    """Every (stack, release) with a fit-split or held-out row of more than one pipeline stage, in file order."""
    return list(dict.fromkeys((row_stack(r), r.release) for r in _pipeline_rows(("fit", "holdout"))))


def _compared(rows: list[serving.ServingRow]) -> list[str]:
    """The ids of ``rows`` that the model compares (at the model's own kernels: the factor moves no row in or
    out, since it changes no memory)."""
    with efficiency.trying(releases={(row_stack(r), r.release): 1.0 for r in rows}):
        return list(serving.compare_rows(rows)["id"])


def fit_release(stack: str, release: str, keep: Callable[[str], bool] | None = None) -> ReleaseFit | None:
    """``release``'s decode-time factor fitted on its fit-split rows (those ``keep`` takes, by id: a
    cross-validation fold's complement); None where it has too few rows for a factor of its own."""
    return _fit(stack, release, _rows, keep, lambda value: efficiency.trying(releases={(stack, release): value}),
                BOUNDS, (TOLERANCE, SPREAD_TOLERANCE), log=True)


def fit_pipeline_host(stack: str, release: str, keep: Callable[[str], bool] | None = None) -> ReleaseFit | None:
    """``release``'s host time per pipeline iteration (s) fitted on its fit-split rows of more than one stage
    (those ``keep`` takes), with the release's decode-time factor in force; None where it has too few."""
    return _fit(stack, release, _pipeline_rows, keep,
                lambda value: efficiency.trying(hosts={(stack, release): value}), HOST_BOUNDS,
                (HOST_TOLERANCE, HOST_SPREAD_TOLERANCE), log=False)


def _fit(stack: str, release: str, select: Callable[[tuple[str, ...]], list[serving.ServingRow]],
         keep: Callable[[str], bool] | None, trial: Callable[[float], AbstractContextManager],
         bounds: tuple[float, float], tolerances: tuple[float, float], log: bool) -> ReleaseFit | None:
    """The value that zeroes the median log error of ``release``'s fit-split rows of ``select`` (tried through
    ``trial``), with its standard error (module doc), or None under :data:`~multigpu.compute.efficiency.MIN_FIT_RUNS`
    fit or :data:`~multigpu.compute.efficiency.MIN_HOLDOUT_RUNS` held-out compared rows."""
    def mine(splits: tuple[str, ...]) -> list[serving.ServingRow]:
        return [r for r in select(splits) if (row_stack(r), r.release) == (stack, release)]

    fit = [r for r in mine(("fit",)) if keep is None or keep(r.id)]
    fit_ids = tuple(_compared(fit)) if fit else ()
    holdout_ids = tuple(_compared(mine(("holdout", "sealed"))))
    if len(fit_ids) < efficiency.MIN_FIT_RUNS or len(holdout_ids) < efficiency.MIN_HOLDOUT_RUNS:
        return None
    rows = [r for r in fit if r.id in fit_ids]

    def log_errors(value: float) -> np.ndarray:
        with trial(value):
            return np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy(dtype=float))

    spread = 0.5 / np.sqrt(len(rows))
    value = _zero_of_quantile(log_errors, 0.5, tolerances[0], bounds, log)
    low, high = (_zero_of_quantile(log_errors, q, tolerances[1], bounds, log) for q in (0.5 - spread, 0.5 + spread))
    side = fitquality.bound_side(value, *bounds)
    estimate = fitquality.Estimate(value, None if side else (high - low) / 2, side)
    return ReleaseFit(stack, release, estimate, fit_ids, holdout_ids)


def _zero_of_quantile(log_errors: Callable[[float], np.ndarray], q: float, tolerance: float,
                      bounds: tuple[float, float] = BOUNDS, log: bool = True) -> float:
    """The value at which the ``q`` quantile of ``log_errors(value)`` is zero, by bisection to ``tolerance`` (in
    the value's logarithm with ``log``, else in the value; a larger value slows every row, so the quantile falls
    as it grows); a bound of ``bounds`` where the zero lies beyond it."""
    to, back = (np.log, np.exp) if log else (float, float)
    low, high = to(bounds[0]), to(bounds[1])
    if np.quantile(log_errors(bounds[0]), q) <= 0:
        return bounds[0]
    if np.quantile(log_errors(bounds[1]), q) >= 0:
        return bounds[1]
    while high - low > tolerance:
        mid = (low + high) / 2
        low, high = (mid, high) if np.quantile(log_errors(float(back(mid))), q) > 0 else (low, mid)
    return float(back((low + high) / 2))


def release_fits(keep: Callable[[str], bool] | None = None) -> dict[tuple[str, str], ReleaseFit]:
    """:func:`fit_release` for every release with rows enough, by (stack, release)."""
    fits = {key: fit_release(*key, keep=keep) for key in releases()}
    return {key: f for key, f in fits.items() if f is not None}


def pipeline_host_fits(keep: Callable[[str], bool] | None = None,
                       factors: dict[tuple[str, str], float] | None = None) -> dict[tuple[str, str], ReleaseFit]:
    """:func:`fit_pipeline_host` for every release with pipelined rows enough, by (stack, release), with the
    decode-time ``factors`` given in force (default: the file's)."""
    with efficiency.trying(releases=factors):
        fits = {key: fit_pipeline_host(*key, keep=keep) for key in pipelines()}
    return {key: f for key, f in fits.items() if f is not None}


def newest(stack: str = inference.DEFAULT_STACK) -> efficiency.ReleaseEfficiencyRow | None:
    """The shipped row of ``stack``'s newest release with a factor of its own (releases compared as version
    numbers), or None."""
    known = efficiency.releases(stack)
    return efficiency.release_rows()[(stack, known[-1])] if known else None


#: Columns of :func:`held_out_effect`.
EFFECT_COLUMNS = ["release", "decode_time_factor_x", "standard_error", "fit_rows", "held_out_rows",
                  "held_out_error_without_factor_pct", "held_out_error_with_factor_pct"]


def held_out_errors(stack: str = inference.DEFAULT_STACK) -> pd.DataFrame:
    """The held-out throughput rows (FP4 ones too) of ``stack``'s releases with a factor of their own: ``id,
    release``, and ``error_without`` and ``error_with``, predicted / measured - 1 at the model's kernels (factor 1)
    and with the factor."""
    known = efficiency.releases(stack)
    with_factor = _held_out_throughput()
    with efficiency.trying(releases={(stack, release): 1.0 for release in known}):
        without = _held_out_throughput()
    both = with_factor.merge(without[["id", "rel_error"]], on="id", suffixes=("", "_without"))
    both = both[both["release"].isin(known)]
    return pd.DataFrame({"id": both["id"], "release": both["release"], "error_without": both["rel_error_without"],
                         "error_with": both["rel_error"]}).reset_index(drop=True)


def held_out_effect(stack: str = inference.DEFAULT_STACK) -> pd.DataFrame:
    """Each shipped release of ``stack`` with a factor of its own, oldest first (:data:`EFFECT_COLUMNS`): its
    factor and standard error, its fit rows, and its held-out throughput rows (:func:`held_out_errors`) with their
    median |error| (%) at the model's kernels (factor 1) and with the factor."""
    errors = held_out_errors(stack)
    table = []
    for release in efficiency.releases(stack):
        row, mine = efficiency.release_rows()[(stack, release)], errors[errors["release"] == release]
        table.append({"release": release, "decode_time_factor_x": row.decode_time_factor,
                      "standard_error": row.std_error, "fit_rows": row.fit_runs, "held_out_rows": len(mine),
                      "held_out_error_without_factor_pct": 100 * float(mine["error_without"].abs().median()),
                      "held_out_error_with_factor_pct": 100 * float(mine["error_with"].abs().median())})
    return pd.DataFrame(table, columns=EFFECT_COLUMNS)


def _held_out_throughput() -> pd.DataFrame:
    frame = serving.compare(("holdout",))
    return frame[frame["metric"] == "throughput"]


def _row(fit: ReleaseFit, rows: str) -> list[str]:
    status = fit.estimate.status
    error = "" if fit.estimate.std_error is None else f"{fit.estimate.std_error:.2g}"
    what = "factor" if rows == "decode" else "host time per iteration"
    which = ("release's fit-split rows (FP4 rows left out)" if rows == "decode"
             else "release's fit-split rows of more than one pipeline stage")
    where = "fit_release" if rows == "decode" else "fit_pipeline_host"
    return [fit.stack, fit.release, f"{fit.estimate.value:.4g}", error, status, str(len(fit.fit_runs)),
            str(len(fit.holdout_runs)), " ".join(fit.fit_runs), "data/serving_runs.csv (fit split; each row's "
            f"source is in its row)", f"the {what} at which the median of log(model / measured) throughput over the "
            f"{which} is zero, through the whole serving model: multigpu.evidence.releasefit.{where}"]


def _write_rows(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def write(path: Path = efficiency.RELEASE_EFFICIENCY_CSV, hosts_path: Path = efficiency.PIPELINE_HOST_CSV) -> None:
    """Refit every release (:func:`release_fits`) and write ``data/release_efficiency.csv``; then, with those
    factors, every release's pipeline host time (:func:`pipeline_host_fits`) into ``data/pipeline_host.csv``."""
    fits = release_fits()
    _write_rows(path, COLUMNS, [_row(f, "decode") for f in fits.values()])
    hosts = pipeline_host_fits(factors={key: f.estimate.value for key, f in fits.items()})
    _write_rows(hosts_path, HOST_COLUMNS, [_row(f, "pipeline") for f in hosts.values()])


if __name__ == "__main__":
    if sys.argv[1:] != ["write"]:
        sys.exit("usage: python -m multigpu.evidence.releasefit write")
    write()
