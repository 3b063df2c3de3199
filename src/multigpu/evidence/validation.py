"""The model against measurements: the tables of the model-validation appendix (``book/appendix/validation``).

Nothing here models anything. The collective comparisons come from
:func:`multigpu.evidence.measurements.compare` and :func:`multigpu.evidence.measurements.out_of_sample`;
the training comparisons from :func:`multigpu.evidence.trainingruns.training_validation`. This module
lays them out as tables (column names carry their units) and condenses them; the appendix's figure and
prose values are in :mod:`multigpu.book.app_validation`.

- :func:`comparisons`: every model-against-measurement comparison, one row each, with the set it
  belongs to (``fitted on``, ``held out``, ``out of sample``) and its kind (collective, copy,
  training); :func:`reference_table`, :func:`out_of_sample_table` and :func:`training_table`
  are views of it;
- :func:`coverage`: every ``measured`` row of ``data/measurements.csv`` and how (or why not) it is
  compared;
- :func:`error_summary`: median and worst error by regime (:data:`REGIMES`); :func:`misses`: the rows
  off by more than a threshold;
- :func:`vendor_statements`: vendor-presented rows beside the model (not validation).

The error of a row is ``predicted / measured - 1``, in percent. For bandwidths (GB/s) a positive
error means the model is faster than the measurement; for iteration times (s) it means the model
is slower.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common.units import MiB
from multigpu.evidence import measurements, trainingruns

# ----------------------------------------------------------------------------- model validation

#: The sets a comparison belongs to.
SETS = ("fitted on", "held out", "out of sample")
#: The kinds of comparison.
KINDS = ("collective", "copy", "training")
_COPY_METRICS = ("p2p_uni", "p2p_bidir", "h2d")
_WHAT = {"p2p_uni": "GPU-GPU copy, one way", "p2p_bidir": "GPU-GPU copy, both ways",
         "h2d": "host-to-GPU copy", "nic_rate": "all-to-all, per-GPU NIC rate"}
_OPS = {"allreduce": "all-reduce", "allgather": "all-gather", "reducescatter": "reduce-scatter",
        "alltoall": "all-to-all"}

#: Why a ``measured`` row of data/measurements.csv that is neither a collective nor a training run is not
#: compared with the model. Every such row needs an entry (the tests check it).
NOT_COMPARED: dict[int, str] = {
    **{i: "latency of DeepEP's low-latency dispatch / combine kernels (128 tokens, each sent straight to its "
          "experts' GPUs by RDMA writes from the GPU); the collective model has NCCL's algorithms and "
          "latencies, not this kernel's" for i in (68, 69, 70, 71)},
    72: "DeepEP V2 on an SM90 cluster described only as 'EP 8 x 2, 12 SMs': neither the NICs per GPU nor "
        "their rate are given, and the rate counts logical bytes, including tokens that stay in the node",
    96: "a ratio ('up to 35x') of parallel P2P throughput in a sorting benchmark between a DGX A100 and a "
        "PCIe 3.0 server that is not in the catalogue, with no transfer sizes or pattern in the file",
}


def _what(row: Mapping[str, object]) -> str:
    metric = str(row["metric"])
    if metric == "busbw":
        algorithm = row["algorithm"] or "auto"
        return f"{_OPS.get(str(row['op']), row['op'])} busbw ({algorithm})"
    return _WHAT.get(metric, metric)


def _kind(metric: str) -> str:
    return "copy" if metric in _COPY_METRICS else "collective"


def _row(**values) -> dict:
    values["error_pct"] = 100 * (values["predicted"] / values["measured"] - 1)
    return values


def comparisons(cal: Calibration | None = None) -> pd.DataFrame:
    """Every comparison of the model with a measurement, one row each, with calibration ``cal`` (None: the
    shipped one).

    Sources: the ``measured`` rows of ``data/measurements.csv`` that the model reproduces
    (:func:`multigpu.evidence.measurements.compare`: collectives, copies, NIC rates), the published collectives
    outside that file (:func:`multigpu.evidence.measurements.out_of_sample`, refs ``O1``...), and the training runs
    (:func:`multigpu.evidence.trainingruns.training_validation`: row 75 and Korthikanti et al.'s runs, refs ``K1``...).

    Columns: ``ref`` (``#<id>`` for a row of measurements.csv), ``set`` (``fitted on``: a constant was
    fitted on the row; ``held out``: in measurements.csv, not fitted on; ``out of sample``: published
    elsewhere, used in no fit), ``kind`` (collective, copy, training), ``what``, ``system``, ``gpus``,
    ``nodes``, ``size_MiB`` (message size; NaN for steady-state rates and training), ``size_class``
    (``large``: at least 64 MiB or a steady-state rate; ``small``; empty for training), ``unit``
    (``GB/s`` or ``s per iteration``), ``measured``, ``predicted``, ``error_pct`` (predicted / measured
    - 1, %), ``known_miss`` (the documented cause of an out-of-sample miss, else empty), ``source``.
    """
    rows = []
    for r in measurements.compare(cal=cal).itertuples():
        rows.append(_row(ref=f"#{r.id}", set="fitted on" if r.fitted else "held out", kind=_kind(r.metric),
                         what=_what(r._asdict()), system=r.system_id, gpus=int(r.gpus), nodes=int(r.nodes),
                         size_MiB=r.bytes / MiB, size_class=r.size_class, unit="GB/s", measured=float(r.measured),
                         predicted=float(r.predicted), known_miss="", source=r.source))
    for i, r in enumerate(measurements.out_of_sample(cal=cal).itertuples(), start=1):
        check = measurements.OUT_OF_SAMPLE[i - 1]
        nbytes = float(check["bytes"])
        rows.append(_row(ref=f"O{i}", set="out of sample", kind="collective", what=r.check, system=r.system_id,
                         gpus=int(check["gpus"]), nodes=int(check["nodes"]), size_MiB=nbytes / MiB,
                         size_class="large" if nbytes >= measurements.LARGE_BYTES else "small", unit="GB/s",
                         measured=float(r.measured), predicted=float(r.predicted), known_miss=r.known_miss,
                         source=r.source))
    k = 0
    for r in trainingruns.training_validation(cal=cal).itertuples():
        in_file = "measurements.csv" in r.source
        if not in_file:
            k += 1
        ref = "#" + re.search(r"row (\d+)", r.source).group(1) if in_file else f"K{k}"
        row_set = "fitted on" if r.fitted else ("held out" if in_file else "out of sample")
        rows.append(_row(ref=ref, set=row_set, kind="training", what=f"{r.run} ({r.layout}, TP x PP x DP)",
                         system="dgx-a100", gpus=int(r.gpus), nodes=math.ceil(r.gpus / 8), size_MiB=math.nan,
                         size_class="", unit="s per iteration", measured=float(r.measured_s),
                         predicted=float(r.model_s), known_miss="", source=r.source))
    columns = ["ref", "set", "kind", "what", "system", "gpus", "nodes", "size_MiB", "size_class", "unit",
               "measured", "predicted", "error_pct", "known_miss", "source"]
    return pd.DataFrame(rows, columns=columns)


def _print(frame: pd.DataFrame, columns: Sequence[str], value_names: tuple[str, str]) -> pd.DataFrame:
    out = frame[list(columns)].rename(columns={"measured": value_names[0], "predicted": value_names[1]})
    return out.round({value_names[0]: 2, value_names[1]: 2, "error_pct": 1, "size_MiB": 3}).reset_index(drop=True)


def reference_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The collectives and copies of ``data/measurements.csv`` against the model, for print (GB/s).

    Columns: ``ref``, ``set``, ``kind``, ``what``, ``system``, ``gpus``, ``nodes``, ``size_MiB``,
    ``measured_GBps``, ``predicted_GBps``, ``error_pct``.
    """
    table = comparisons() if table is None else table
    part = table[(table["unit"] == "GB/s") & (table["set"] != "out of sample")]
    return _print(part, ["ref", "set", "kind", "what", "system", "gpus", "nodes", "size_MiB", "measured",
                         "predicted", "error_pct"], ("measured_GBps", "predicted_GBps"))


def training_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The training runs against the model, for print (seconds per iteration, DGX A100 nodes).

    Columns: ``ref``, ``set``, ``what``, ``gpus``, ``measured_s``, ``predicted_s``, ``error_pct``, ``source``.
    """
    table = comparisons() if table is None else table
    part = table[table["kind"] == "training"]
    return _print(part, ["ref", "set", "what", "gpus", "measured", "predicted", "error_pct", "source"],
                  ("measured_s", "predicted_s"))


def out_of_sample_table(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """The out-of-sample collectives (published outside the reference set, used in no fit), for print.

    Columns: ``ref``, ``check``, ``system``, ``variant`` (catalogue fields changed to the measured box's
    wiring), ``measured_GBps``, ``predicted_GBps``, ``error_pct``, ``tolerance_pct`` (what the package's
    tests accept), ``within_tolerance``, ``known_miss``.
    """
    table = comparisons() if table is None else table
    part = table[(table["set"] == "out of sample") & (table["kind"] != "training")].reset_index(drop=True)
    checks = [measurements.OUT_OF_SAMPLE[int(ref[1:]) - 1] for ref in part["ref"]]
    out = pd.DataFrame({
        "ref": part["ref"], "check": part["what"], "system": part["system"],
        "variant": [", ".join(f"{k}={v}" for k, v in c.get("variant", {}).items()) for c in checks],
        "measured_GBps": part["measured"], "predicted_GBps": part["predicted"], "error_pct": part["error_pct"],
        "tolerance_pct": [100 * c["tolerance"] for c in checks]})
    out["within_tolerance"] = out["error_pct"].abs() <= out["tolerance_pct"]
    out["known_miss"] = part["known_miss"]
    return out.round({"measured_GBps": 2, "predicted_GBps": 2, "error_pct": 1, "tolerance_pct": 0})


def coverage() -> pd.DataFrame:
    """Every ``measured`` row of ``data/measurements.csv`` and how the model is set beside it.

    Columns: ``id``, ``benchmark``, ``what`` (the file's ``collective_or_metric``), ``compared``
    (``collective``, ``copy``, ``training`` or ``no``), ``note`` (how the model reproduces the row, or why
    it cannot). Raises ``ValueError`` for a row that is neither compared nor explained.
    """
    frame = measurements.measurements()
    frame = frame[frame["kind"] == "measured"]
    training = trainingruns.training_measurements().set_index("id")
    rows = []
    for _, row in frame.iterrows():
        i = int(row["id"])
        if row["metric"]:
            compared, note = _kind(row["metric"]), row["model_note"]
        elif i in training.index:
            compared = "training" if training.loc[i, "comparable"] else "no"
            note = training.loc[i, "why"]
        elif i in NOT_COMPARED:
            compared, note = "no", NOT_COMPARED[i]
        else:
            raise ValueError(f"measurement {i} is neither compared with the model nor explained in NOT_COMPARED")
        rows.append({"id": i, "benchmark": row["benchmark"], "what": row["collective_or_metric"],
                     "compared": compared, "note": note})
    return pd.DataFrame(rows)


#: The regimes of :func:`error_summary`: a short key (the appendix cites ``<key>_median``, ...) -> the label
#: its ``regime`` column prints.
REGIMES: dict[str, str] = {
    "all": "all comparisons",
    "fit": "fitted on (in sample)",
    "held": "held out (reference set, not fitted)",
    "oos": "out of sample (published elsewhere)",
    "oosdoc": "out of sample, documented misses left out",
    "unfit": "not fitted (held out + out of sample)",
    "coll": "collectives",
    "large": "collectives, large messages (>= 64 MiB) and NIC rates",
    "small": "collectives, small messages (< 64 MiB)",
    "copy": "copies",
    "train": "training iterations",
    "bw": "bandwidths (collectives and copies)",
}


def _regimes(table: pd.DataFrame) -> dict[str, pd.Series]:
    """The rows of each regime of :data:`REGIMES`, by label."""
    collective = table["kind"] == "collective"
    out_of_sample = table["set"] == "out of sample"
    masks = {
        "all": table["ref"] == table["ref"],
        "fit": table["set"] == "fitted on",
        "held": table["set"] == "held out",
        "oos": out_of_sample,
        "oosdoc": out_of_sample & (table["known_miss"] == ""),
        "unfit": table["set"] != "fitted on",
        "coll": collective,
        "large": collective & (table["size_class"] == "large"),
        "small": collective & (table["size_class"] == "small"),
        "copy": table["kind"] == "copy",
        "train": table["kind"] == "training",
        "bw": table["kind"] != "training",
    }
    return {REGIMES[key]: mask for key, mask in masks.items()}


def error_summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Error statistics of :func:`comparisons` by regime.

    Columns: ``regime``, ``rows``, ``median_abs_error_pct``, ``worst_abs_error_pct``, ``worst_ref``,
    ``median_error_pct`` (signed: the bias), ``within_10pct`` (rows within +-10 %).
    """
    table = comparisons() if table is None else table
    rows = []
    for regime, mask in _regimes(table).items():
        part = table[mask]
        if not len(part):
            continue
        errors = part["error_pct"].abs()
        rows.append({"regime": regime, "rows": len(part), "median_abs_error_pct": float(errors.median()),
                     "worst_abs_error_pct": float(errors.max()), "worst_ref": part.loc[errors.idxmax(), "ref"],
                     "median_error_pct": float(part["error_pct"].median()),
                     "within_10pct": int((errors <= 10).sum())})
    return pd.DataFrame(rows).round({"median_abs_error_pct": 1, "worst_abs_error_pct": 1, "median_error_pct": 1})


def misses(table: pd.DataFrame | None = None, above_pct: float = 10.0) -> pd.DataFrame:
    """The comparisons off by more than ``above_pct`` percent at the 0.1 % they are shown to, worst first.

    Columns: ``ref``, ``set``, ``kind``, ``what``, ``unit``, ``measured``, ``predicted``, ``error_pct``,
    ``known_miss``.
    """
    table = comparisons() if table is None else table
    part = table[table["error_pct"].abs().round(1) > above_pct]
    part = part.reindex(part["error_pct"].abs().sort_values(ascending=False).index)
    return part[["ref", "set", "kind", "what", "unit", "measured", "predicted", "error_pct", "known_miss"]] \
        .round({"measured": 2, "predicted": 2, "error_pct": 1}).reset_index(drop=True)


def vendor_statements(cal: Calibration | None = None) -> pd.DataFrame:
    """Vendor-presented rows of ``data/measurements.csv`` that the model can reproduce (conference slides),
    beside the model (calibration ``cal``; None: the shipped one): shown apart, not counted as validation.

    Columns: ``id``, ``kind``, ``what``, ``system``, ``gpus``, ``vendor_GBps``, ``predicted_GBps``,
    ``difference_pct`` (predicted / vendor - 1), ``note`` (the file's ``model_note``).
    """
    kinds = tuple(k for k in measurements.measurements()["kind"].unique() if k != "measured")
    data = measurements.compare(kinds=kinds, cal=cal)
    notes = measurements.measurements().set_index("id")
    frame = pd.DataFrame({"id": data["id"], "kind": [notes.loc[i, "kind"] for i in data["id"]],
                          "what": data.apply(_what, axis=1), "system": data["system_id"], "gpus": data["gpus"],
                          "vendor_GBps": data["measured"], "predicted_GBps": data["predicted"],
                          "difference_pct": 100 * data["rel_error"],
                          "note": [notes.loc[i, "model_note"] for i in data["id"]]})
    return frame.round({"vendor_GBps": 1, "predicted_GBps": 1, "difference_pct": 1})
