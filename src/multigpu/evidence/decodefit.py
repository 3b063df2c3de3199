"""The fixed time of a layer's kernels in a forward pass (``decode_layer_overhead_s``), fitted on decode benchmarks.

A decode step reads every weight and the KV cache once; :func:`multigpu.compute.inference.run` prices that read
at the GPU's measured read-only memory bandwidth (:func:`multigpu.compute.inference.hbm_read_efficiency`). What
a real step adds is a fixed time per layer: a dozen kernel launches, small kernels (norms, rotary embedding,
residual adds) that never reach full bandwidth, and kernel tails. It does not scale with the bytes, so it decides
the per-token latency of small models and small batches.

The one constant is fitted here on published engine benchmarks that time the decode step alone, at fixed
prompt and output lengths and fixed batch (``data/decode_latency.csv``: LMDeploy's static benchmark and gpt-fast
on A100). They were split by a hash of their id before any comparison (first hex digit of ``sha256(id)``: 0-4
``fit``, 5-a ``holdout``, b-f ``sealed``): only ``fit`` rows are fitted, least squares of::

    measured - model_without_overhead = layers / pp x overhead

and ``holdout`` rows are the check. ``tests/test_decodefit.py`` holds the shipped constant to :func:`fit`.
MLPerf Inference, the only source the serving rows may fit on, cannot separate this term: its datasets have
variable lengths and its load is set by a query rate, not a batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.compute import inference, models
from multigpu.evidence import fitquality
from multigpu.hardware import catalog

DECODE_CSV = DATA_DIR / "decode_latency.csv"
SPLITS = ("fit", "holdout", "sealed")
#: Splits compared unless a caller names others; ``sealed`` rows are looked at once, at the end.
OPEN_SPLITS = ("fit", "holdout")
#: Published metric -> how it gives the time per output token, seconds.
METRICS = {"tpot_p50": lambda v: v, "tokens_per_s_per_user": lambda v: 1.0 / v}
#: Published metric -> the unit its value must be in.
METRIC_UNITS = {"tpot_p50": "s", "tokens_per_s_per_user": "tokens/s"}


class DecodeRow(datafiles.Row):
    """Schema of ``data/decode_latency.csv``: one published per-token decode time at a fixed batch."""

    id: datafiles.Text
    engine: datafiles.Text
    model: datafiles.Text  #: the model as the source names it
    model_id: datafiles.LowerId  #: the catalogue model it is computed as
    gpu: datafiles.LowerId
    system_id: datafiles.LowerId
    tp: datafiles.PositiveCount
    dtype: datafiles.one_of(("bf16", "fp16"))  # type: ignore[valid-type]
    batch: datafiles.PositiveCount
    prompt_tokens: datafiles.PositiveCount
    output_tokens: datafiles.PositiveCount
    metric: datafiles.one_of(tuple(METRICS))  # type: ignore[valid-type]
    measured: datafiles.Positive  #: as printed, in ``unit``
    unit: datafiles.one_of(tuple(METRIC_UNITS.values()))  # type: ignore[valid-type]
    stack: datafiles.one_of(tuple(inference.STACKS))  # type: ignore[valid-type]
    source: datafiles.Text
    split: datafiles.one_of(SPLITS)  # type: ignore[valid-type]
    notes: str | None = None

    NOUN = "decode measurement"


def load(splits: Iterable[str] = OPEN_SPLITS, path: str | Path = DECODE_CSV) -> list[DecodeRow]:
    """The rows whose split is in ``splits``, in file order (ids checked unique)."""
    wanted = datafiles.wanted_splits(splits, SPLITS)
    rows = []
    for line, row in datafiles.read(path, DecodeRow, unique=("id",)):
        if row.unit != METRIC_UNITS[row.metric]:
            raise InputError(f"{row.metric} is in {METRIC_UNITS[row.metric]}, not {row.unit}", str(path), line, "unit")
        if row.gpu != catalog.system(row.system_id).gpu:
            raise InputError(f"system '{row.system_id}' has {catalog.system(row.system_id).gpu}, not {row.gpu}",
                             str(path), line, "gpu")
        if row.split in wanted:
            rows.append(row)
    return rows


def measured_tpot_s(row: DecodeRow) -> float:
    """The row's time per output token, seconds."""
    return float(METRICS[row.metric](row.measured))


def predicted_tpot_s(row: DecodeRow, layer_overhead_s: float | None = None) -> float:
    """The model's time per output token for the row, seconds (``layer_overhead_s``: None for the shipped one)."""
    r = inference.run(row.model_id, row.system_id, row.tp, row.batch, row.prompt_tokens, row.output_tokens,
                      dtype=row.dtype, stack_name=row.stack, layer_overhead_s=layer_overhead_s)
    return float(r.tpot_s)


def fit(path: str | Path = DECODE_CSV) -> float:
    """``decode_layer_overhead_s`` by least squares over the ``fit`` rows, seconds per layer."""
    return fit_result(path).value


def fit_result(path: str | Path = DECODE_CSV) -> fitquality.Estimate:
    """:func:`fit` with its standard error, seconds (:mod:`multigpu.evidence.fitquality`)."""
    rows = load(("fit",), path)
    layers = np.array([models.model(r.model_id).layers for r in rows], dtype=float)
    gap = np.array([measured_tpot_s(r) - predicted_tpot_s(r, 0.0) for r in rows])
    overhead = float(layers @ gap / (layers @ layers))
    rss = float(np.sum((gap - layers * overhead) ** 2))
    (variance,) = fitquality.covariance_diagonal(layers[:, None], rss / 2)
    return fitquality.Estimate(overhead, float(np.sqrt(variance)))


def compare(splits: Iterable[str] = OPEN_SPLITS, path: str | Path = DECODE_CSV) -> pd.DataFrame:
    """Each row against the model: id, split, engine, model_id, tp, batch, layers, measured_ms, predicted_ms,
    without_overhead_ms (the same model with no fixed time per layer) and rel_error (predicted / measured - 1)."""
    out = []
    for r in load(splits, path):
        measured, predicted = measured_tpot_s(r), predicted_tpot_s(r)
        out.append({"id": r.id, "split": r.split, "engine": r.engine, "model_id": r.model_id, "tp": r.tp,
                    "batch": r.batch, "layers": models.model(r.model_id).layers, "measured_ms": 1e3 * measured,
                    "predicted_ms": 1e3 * predicted, "without_overhead_ms": 1e3 * predicted_tpot_s(r, 0.0),
                    "rel_error": predicted / measured - 1})
    return pd.DataFrame(out)
