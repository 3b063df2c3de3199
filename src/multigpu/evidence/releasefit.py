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

The book's own predictions state no release: they price the model's kernels, which the newest release fitted
here reaches within its factor (:func:`newest`). ``python -m multigpu.evidence.releasefit write`` rewrites the
file; ``tests/test_releasefit.py`` checks it against :func:`release_fits`.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Callable
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


@dataclass(frozen=True)
class ReleaseFit:
    """One release's decode-time factor, with the rows it rests on."""

    stack: str
    release: str
    factor: fitquality.Estimate
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


def _compared(rows: list[serving.ServingRow]) -> list[str]:
    """The ids of ``rows`` that the model compares (at the model's own kernels: the factor moves no row in or
    out, since it changes no memory)."""
    with efficiency.trying(releases={(row_stack(r), r.release): 1.0 for r in rows}):
        return list(serving.compare_rows(rows)["id"])


def fit_release(stack: str, release: str, keep: Callable[[str], bool] | None = None) -> ReleaseFit | None:
    """``release``'s decode-time factor fitted on its fit-split rows (those ``keep`` takes, by id: a
    cross-validation fold's complement); None where it has too few rows for a factor of its own."""
    def mine(splits: tuple[str, ...]) -> list[serving.ServingRow]:
        return [r for r in _rows(splits) if (row_stack(r), r.release) == (stack, release)]

    fit = [r for r in mine(("fit",)) if keep is None or keep(r.id)]
    fit_ids = tuple(_compared(fit)) if fit else ()
    holdout_ids = tuple(_compared(mine(("holdout", "sealed"))))
    if len(fit_ids) < efficiency.MIN_FIT_RUNS or len(holdout_ids) < efficiency.MIN_HOLDOUT_RUNS:
        return None
    rows = [r for r in fit if r.id in fit_ids]

    def log_errors(factor: float) -> np.ndarray:
        with efficiency.trying(releases={(stack, release): factor}):
            return np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy(dtype=float))

    spread = 0.5 / np.sqrt(len(rows))
    value = _zero_of_quantile(log_errors, 0.5, TOLERANCE)
    low, high = (_zero_of_quantile(log_errors, q, SPREAD_TOLERANCE) for q in (0.5 - spread, 0.5 + spread))
    side = fitquality.bound_side(value, *BOUNDS)
    factor = fitquality.Estimate(value, None if side else (high - low) / 2, side)
    return ReleaseFit(stack, release, factor, fit_ids, holdout_ids)


def _zero_of_quantile(log_errors: Callable[[float], np.ndarray], q: float, tolerance: float) -> float:
    """The factor at which the ``q`` quantile of ``log_errors(factor)`` is zero, by bisection in log space to
    ``tolerance`` (a larger factor slows every row, so the quantile falls as it grows); a bound of :data:`BOUNDS`
    where the zero lies beyond it."""
    low, high = np.log(BOUNDS[0]), np.log(BOUNDS[1])
    if np.quantile(log_errors(BOUNDS[0]), q) <= 0:
        return BOUNDS[0]
    if np.quantile(log_errors(BOUNDS[1]), q) >= 0:
        return BOUNDS[1]
    while high - low > tolerance:
        mid = (low + high) / 2
        low, high = (mid, high) if np.quantile(log_errors(float(np.exp(mid))), q) > 0 else (low, mid)
    return float(np.exp((low + high) / 2))


def release_fits(keep: Callable[[str], bool] | None = None) -> dict[tuple[str, str], ReleaseFit]:
    """:func:`fit_release` for every release with rows enough, by (stack, release)."""
    fits = {key: fit_release(*key, keep=keep) for key in releases()}
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


def _row(fit: ReleaseFit) -> list[str]:
    status = fit.factor.status
    error = "" if fit.factor.std_error is None else f"{fit.factor.std_error:.2g}"
    return [fit.stack, fit.release, f"{fit.factor.value:.4g}", error, status, str(len(fit.fit_runs)),
            str(len(fit.holdout_runs)), " ".join(fit.fit_runs), "data/serving_runs.csv (fit split; each row's "
            "source is in its row)", "the factor at which the median of log(model / measured) throughput over the "
            "release's fit-split rows (FP4 rows left out) is zero, through the whole serving model: "
            "multigpu.evidence.releasefit.fit_release"]


def write(path: Path = efficiency.RELEASE_EFFICIENCY_CSV) -> None:
    """Refit every release (:func:`release_fits`) and write ``data/release_efficiency.csv``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(_row(f) for f in release_fits().values())
    path.write_text(out.getvalue(), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["write"]:
        sys.exit("usage: python -m multigpu.evidence.releasefit write")
    write()
