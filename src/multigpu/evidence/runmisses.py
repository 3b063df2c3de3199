"""The training model's largest misses on held-out runs, each set beside the runs its stack was fitted on.

A training stack's two constants (:mod:`multigpu.evidence.computefit`) are fitted on its fit-split runs, so a
held-out run that differs from all of them in what the step model is most sensitive to is priced by
extrapolation. For each held-out run :func:`misses` says, on four counts, whether it lies outside its stack's
fit runs:

- ``hidden``: the model's hidden size, outside the range of the fit runs' (the non-GEMM traffic constant scales
  with it, ``k / (h / t)``);
- ``gpu_family``: a GPU family none of the fit runs used (the GEMM ceiling carries the fit to another GPU);
- ``dtype``: a precision none of them used (FP8 adds its own casts);
- ``gpus``: a GPU count outside their range (communication that stops hiding at scale).

Being outside is a reason to expect a miss, not a proof of its cause; :func:`finding` says which counts apply,
and that none does where none does.
"""

from __future__ import annotations

import pandas as pd

from multigpu.common.findings import Finding, Number, and_list, msg
from multigpu.compute import models
from multigpu.hardware import catalog

#: The held-out runs :func:`misses` keeps, the largest |error| first.
MISSES = 5
#: Columns of :func:`misses`.
COLUMNS = ["id", "run", "stack", "error_pct", "gpu_family", "dtype", "gpus", "hidden", "fit_hidden_min",
           "fit_hidden_max", "fit_gpus_min", "fit_gpus_max", "outside_hidden", "outside_gpu", "outside_dtype",
           "outside_gpus"]


def run_name(row: pd.Series) -> str:
    """A run as people name it: its model (the catalogue's name without its note in brackets), precision and GPUs
    (``MPT 3B, FP8, 8 x H100 SXM5 80GB``), the same in every language."""
    model = models.plain_name(row["model_id"])
    gpu = catalog.gpu(row["gpu"]).name
    return f"{model}, {row['dtype'].upper()}, {row['gpus']} × {gpu}"


def _fit_runs(comparison: pd.DataFrame, stack: str) -> pd.DataFrame:
    """``stack``'s fit-split runs of ``comparison``, with each model's hidden size."""
    fit = comparison[(comparison["split"] == "fit") & (comparison["stack"] == stack)]
    return fit.assign(hidden=fit["model_id"].map(lambda m: models.model(m).hidden))


def misses(comparison: pd.DataFrame, n: int = MISSES) -> pd.DataFrame:
    """The ``n`` held-out runs of ``comparison`` (:func:`multigpu.evidence.runs.compare`) the model misses most
    (:data:`COLUMNS`): the run's name, its stack, the error of the step time (%, positive: the model slower), its
    model's hidden size against the fit runs' range, and whether it lies outside its stack's fit runs in hidden
    size, GPU family, precision and GPU count."""
    held = comparison[comparison["split"] == "holdout"]
    held = held.assign(error_pct=100 * held["rel_error"]).reindex(
        held["rel_error"].abs().sort_values(ascending=False).index)
    rows = []
    for _, row in held.head(n).iterrows():
        fit = _fit_runs(comparison, row["stack"])
        hidden = models.model(row["model_id"]).hidden
        rows.append({
            "id": row["id"], "run": run_name(row), "stack": row["stack"], "error_pct": row["error_pct"],
            "gpu_family": row["gpu_family"], "dtype": row["dtype"], "gpus": row["gpus"], "hidden": hidden,
            "fit_hidden_min": fit["hidden"].min(), "fit_hidden_max": fit["hidden"].max(),
            "fit_gpus_min": fit["gpus"].min(), "fit_gpus_max": fit["gpus"].max(),
            "outside_hidden": not fit["hidden"].min() <= hidden <= fit["hidden"].max(),
            "outside_gpu": row["gpu_family"] not in set(fit["gpu_family"]),
            "outside_dtype": row["dtype"] not in set(fit["dtype"]),
            "outside_gpus": not fit["gpus"].min() <= row["gpus"] <= fit["gpus"].max()})
    return pd.DataFrame(rows, columns=COLUMNS)


def _reasons(row: pd.Series) -> list[Finding]:
    """What ``row`` of :func:`misses` lies outside of, one finding per count."""
    reasons = []
    if row["outside_hidden"]:
        reasons.append(Finding.of(msg("a hidden size of {hidden:,}, against {low:,} to {high:,} in those runs"),
                                  hidden=int(row["hidden"]), low=int(row["fit_hidden_min"]),
                                  high=int(row["fit_hidden_max"])))
    if row["outside_gpu"]:
        reasons.append(Finding.of(msg("the {gpu}, which none of them used"), gpu=str(row["gpu_family"])))
    if row["outside_dtype"]:
        reasons.append(Finding.of(msg("{dtype}, which none of them used"), dtype=str(row["dtype"]).upper()))
    if row["outside_gpus"]:
        reasons.append(Finding.of(msg("{gpus:,} GPUs, against {low:,} to {high:,} in those runs"),
                                  gpus=int(row["gpus"]), low=int(row["fit_gpus_min"]), high=int(row["fit_gpus_max"])))
    return reasons


def finding(row: pd.Series) -> Finding:
    """The miss of ``row`` (of :func:`misses`) in words: the run, its error, and what it lies outside of among
    the runs its stack was fitted on, or that it lies within them on every count."""
    reasons = _reasons(row)
    values = {"run": row["run"], "error": Number(row["error_pct"], "+.0f")}
    if not reasons:
        return Finding.of(msg("{run}, off by {error} %, lies within the runs its stack was fitted on in hidden size, "
                           "GPU, precision and GPU count: it is not priced by extrapolation"), **values)
    return Finding.of(msg("{run}, off by {error} %, is priced by extrapolation from the runs its stack was fitted on: "
                          "it has {reasons}"), reasons=and_list(tuple(reasons)), **values)


#: The counts :func:`misses` checks, by column, as the book names them.
COUNTS = {"outside_hidden": msg("hidden size"), "outside_gpu": msg("GPU"), "outside_dtype": msg("precision"),
          "outside_gpus": msg("GPU count")}
