"""Predictions on record: the model's numbers, with their intervals, for configurations no measurement in the data
covers yet, written down before anyone measures them.

A prediction scored after it was made is out of sample by construction: nothing the model was fitted or tuned on
can have seen the measurement. ``data/predictions.csv`` holds them, one row per quantity, each stamped with the
date it was recorded and the model's digest (:func:`multigpu.market.search.data_digest`: the package version, its
data and the model's code). The file is append-only: a row, once recorded, never changes
(``tests/test_predictions.py`` holds each row's digest), so a prediction cannot be improved after the fact.

When a measurement of a recorded configuration is published, it goes into ``data/prediction_outcomes.csv`` (the
prediction's id, the measured value in the prediction's unit, the date it was published and its source), and
:func:`scored` sets it against the prediction: inside its interval or not, and the error. An outcome observed
before its prediction was recorded is not out of sample, and the file refuses it.

``python -m multigpu.evidence.predictions record`` appends the configurations of :data:`CONFIGURATIONS` that are
not on record yet, predicted by the model as it is today.
"""

from __future__ import annotations

import csv
import datetime
import io
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd

from multigpu.common import datafiles
from multigpu.common.errors import InputError
from multigpu.common.units import GiB, MiB, format_size
from multigpu.evidence import intervals, sweeps

#: The record and the measurements that score it.
PREDICTIONS_CSV = sweeps.DATA_DIR / "predictions.csv"
OUTCOMES_CSV = sweeps.DATA_DIR / "prediction_outcomes.csv"
COLUMNS = ["id", "recorded", "model_digest", "config", "kind", "system_id", "gpus", "nodes", "bytes", "setting",
           "quantity", "unit", "predicted", "low", "high", "level"]
OUTCOME_COLUMNS = ["prediction", "measured", "observed", "source"]
KINDS = ("collective", "training", "serving")
#: The sizes of each collective prediction (bytes).
SIZES = (1 * MiB, 64 * MiB, 1 * GiB, 8 * GiB)


@dataclass(frozen=True)
class Configuration:
    """What to predict: a collective's bus bandwidth by size, a training step's time or a serving throughput on
    ``system_id``. ``job``: the keyword arguments of :func:`multigpu.compute.training.step` (``training``) or
    :func:`multigpu.compute.inference.run` (``serving``)."""

    id: str
    kind: str
    system_id: str
    gpus: int
    nodes: int = 1
    job: tuple[tuple[str, object], ...] = ()


def _job(**values: object) -> tuple[tuple[str, object], ...]:
    return tuple(values.items())


#: The configurations on record or to be recorded: the three systems of the catalogue that no published sweep,
#: training run or serving row in the data measures (a B300 node, a whole GB300 NVL72 rack, an H20 141 GB node),
#: each with an all-reduce by size, a training step as NVIDIA's recipes run one, and a serving point; and the AMD
#: MI355X node (recorded 2026-12-06, once the catalogue had it), whose all-reduce is predicted on 4 nodes because
#: the data already hold published sweeps of one node and of two (those are not out of sample), with a training
#: step under Megatron-LM's defaults and a serving point under vLLM, as AMD's software runs them.
CONFIGURATIONS = (
    Configuration("b300-allreduce", "collective", "dgx-b300", 8, job=_job(op="allreduce")),
    Configuration("gb300-nvl72-allreduce", "collective", "gb300-nvl72", 72, job=_job(op="allreduce")),
    Configuration("h20-141-allreduce", "collective", "hgx-h20-141", 8, job=_job(op="allreduce")),
    Configuration("b300-train-llama3.1-8b", "training", "dgx-b300", 8, job=_job(
        model_id="llama3.1-8b", tp=1, pp=1, global_batch=128, micro_batch=2, seq=8192, dtype="fp8",
        grad_dtype="bf16", stack="nemo")),
    Configuration("gb300-nvl72-train-llama3.1-70b", "training", "gb300-nvl72", 64, job=_job(
        model_id="llama3.1-70b", tp=1, pp=1, global_batch=256, micro_batch=2, seq=8192, dtype="fp8",
        zero_stage=3, grad_dtype="bf16", stack="nemo")),
    Configuration("h20-141-train-llama3.1-8b", "training", "hgx-h20-141", 8, job=_job(
        model_id="llama3.1-8b", tp=1, pp=1, global_batch=128, micro_batch=1, seq=8192, dtype="bf16",
        stack="nemo")),
    Configuration("b300-serve-llama3.1-70b", "serving", "dgx-b300", 8, job=_job(
        model_id="llama3.1-70b", tp=8, batch=64, input_tokens=1024, output_tokens=1024, dtype="fp8")),
    Configuration("gb300-nvl72-serve-llama3.1-70b", "serving", "gb300-nvl72", 8, job=_job(
        model_id="llama3.1-70b", tp=8, batch=64, input_tokens=1024, output_tokens=1024, dtype="fp8")),
    Configuration("h20-141-serve-llama3.1-70b", "serving", "hgx-h20-141", 8, job=_job(
        model_id="llama3.1-70b", tp=8, batch=64, input_tokens=1024, output_tokens=1024, dtype="fp8")),
    Configuration("mi355x-4n-allreduce", "collective", "mi355x-8", 32, nodes=4, job=_job(op="allreduce")),
    Configuration("mi355x-train-llama3.1-8b", "training", "mi355x-8", 8, job=_job(
        model_id="llama3.1-8b", tp=1, pp=1, global_batch=128, micro_batch=1, seq=8192, dtype="bf16",
        stack="megatron")),
    Configuration("mi355x-serve-llama3.1-70b", "serving", "mi355x-8", 8, job=_job(
        model_id="llama3.1-70b", tp=8, batch=64, input_tokens=1024, output_tokens=1024, dtype="fp8",
        stack_name="vllm")),
)


def _setting(config: Configuration) -> str:
    """The configuration in words a reader can rerun (the CLI's flags' values)."""
    job = dict(config.job)
    if config.kind == "collective":
        return f"{job['op']}, {config.gpus} GPUs, {config.nodes} node(s)"
    if config.kind == "training":
        return (f"{job['model_id']} {job['dtype']}, {config.gpus} GPUs, TP {job['tp']} PP {job['pp']}, micro-batch "
                f"{job['micro_batch']}, global batch {job['global_batch']}, sequence {job['seq']}, "
                f"ZeRO {job.get('zero_stage', 1)}, stack {job['stack']}")
    stack = f", stack {job['stack_name']}" if "stack_name" in job else ""
    return (f"{job['model_id']} {job['dtype']}, TP {job['tp']}, {job['batch']} concurrent requests, "
            f"{job['input_tokens']} tokens in, {job['output_tokens']} out{stack}")


def predict(config: Configuration, level: float = intervals.LEVEL) -> list[dict[str, object]]:
    """The model's prediction rows of ``config`` today (no id, date or digest yet): the other columns of
    :data:`COLUMNS` (``bytes`` empty but for a collective)."""
    from multigpu.comm import collectives
    from multigpu.compute import inference, training

    base = {"config": config.id, "kind": config.kind, "system_id": config.system_id, "gpus": config.gpus,
            "nodes": config.nodes, "bytes": "", "setting": _setting(config), "level": level}
    job = dict(config.job)
    if config.kind == "collective":
        result = collectives.evaluate(job["op"], config.system_id, config.gpus, list(SIZES), nodes=config.nodes)
        rows = []
        for nbytes, busbw in zip(SIZES, result["busbw_GBps"]):
            low, high = intervals.band(intervals.regime(nbytes, config.nodes), level).inverted(float(busbw))
            rows.append({**base, "bytes": int(nbytes), "setting": f"{base['setting']}, {format_size(nbytes)}",
                         "quantity": "busbw", "unit": "GB/s", "predicted": float(busbw), "low": low, "high": high})
        return rows
    if config.kind == "training":
        args = {k: v for k, v in job.items() if k not in ("model_id", "tp", "pp", "global_batch", "micro_batch")}
        step = training.step(job["model_id"], config.system_id, config.gpus, job["tp"], job["pp"],
                             job["global_batch"], job["micro_batch"], **args)
        low, high = intervals.run_band("training step time", level).around(step.step_time_s)
        return [{**base, "quantity": "step time", "unit": "s", "predicted": step.step_time_s, "low": low,
                 "high": high}]
    run = inference.run(job["model_id"], config.system_id, job["tp"], job["batch"], job["input_tokens"],
                        job["output_tokens"], dtype=job["dtype"],
                        stack_name=str(job.get("stack_name", inference.DEFAULT_STACK)))
    value = float(run.tokens_per_s_per_gpu)
    low, high = intervals.run_band("serving throughput", level).around(value)
    return [{**base, "quantity": "output tokens per second per GPU", "unit": "tokens/s", "predicted": value,
             "low": low, "high": high}]


def recorded(path: Path = PREDICTIONS_CSV) -> pd.DataFrame:
    """The predictions on record (:data:`COLUMNS`; ``bytes`` NaN but for a collective)."""
    return pd.read_csv(path, dtype={"id": str, "model_digest": str, "recorded": str})


def configuration(config_id: str) -> Configuration:
    """The configuration of :data:`CONFIGURATIONS` with this id."""
    return next(c for c in CONFIGURATIONS if c.id == config_id)


class OutcomeRow(datafiles.Row):
    """Schema of ``data/prediction_outcomes.csv``."""

    prediction: datafiles.Text
    measured: datafiles.Positive
    observed: datafiles.PastDate
    source: datafiles.Text

    EXPECTED: ClassVar[dict[str, str]] = {"prediction": "the id of a row of data/predictions.csv",
                                          "measured": "the measured value, in the prediction's unit",
                                          "observed": "the date the measurement was published (YYYY-MM-DD)"}
    NOUN = "outcome"


def outcomes(path: Path = OUTCOMES_CSV, predictions: pd.DataFrame | None = None) -> pd.DataFrame:
    """The measurements that score the record (:data:`OUTCOME_COLUMNS`). An :class:`InputError` at the file's
    line for an outcome of no recorded prediction, or one observed before its prediction was recorded."""
    known = (recorded() if predictions is None else predictions).set_index("id")["recorded"]
    rows = []
    for line, row in datafiles.read(path, OutcomeRow, unique=("prediction",), allow_empty=True):
        if row.prediction not in known.index:
            raise InputError(f"no prediction '{row.prediction}' on record", str(path), line, "prediction")
        if row.observed.isoformat() < str(known[row.prediction]):
            raise InputError(f"observed {row.observed}, before the prediction was recorded "
                             f"({known[row.prediction]}): not out of sample", str(path), line, "observed")
        rows.append({"prediction": row.prediction, "measured": row.measured, "observed": row.observed.isoformat(),
                     "source": row.source})
    return pd.DataFrame(rows, columns=OUTCOME_COLUMNS).astype({"measured": float})


def scored(predictions: pd.DataFrame | None = None, measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each prediction with its measurement where one has arrived: :data:`COLUMNS` plus ``measured`` (NaN where
    none), ``inside`` (the measurement within [low, high]) and ``error_pct`` (predicted / measured - 1, %)."""
    predictions = recorded() if predictions is None else predictions
    measured = outcomes(predictions=predictions) if measured is None else measured
    joined = predictions.merge(measured[["prediction", "measured"]], how="left", left_on="id",
                               right_on="prediction").drop(columns="prediction")
    joined["inside"] = (joined["measured"] >= joined["low"]) & (joined["measured"] <= joined["high"])
    joined["error_pct"] = 100 * (joined["predicted"] / joined["measured"] - 1)
    return joined


def _rows_of(config: Configuration, today: str, digest: str) -> list[dict[str, object]]:
    """``config``'s rows as recorded: a collective's ids end in their size (``b300-allreduce-1gib``)."""
    return [{"id": config.id + (f"-{format_size(row['bytes']).lower()}" if row["bytes"] != "" else ""),
             "recorded": today, "model_digest": digest, **row} for row in predict(config)]


def record(today: str | None = None, path: Path = PREDICTIONS_CSV) -> list[str]:
    """Append to the record every row of :data:`CONFIGURATIONS` not on it yet, predicted today; the ids added.
    Rows already recorded are left as they are, whatever the model says now."""
    from multigpu.market.search import data_digest

    today = today or datetime.date.today().isoformat()
    have = set(recorded(path)["id"]) if path.exists() else set()
    digest = data_digest()
    new = [row for config in CONFIGURATIONS for row in _rows_of(config, today, digest) if row["id"] not in have]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    if not path.exists():
        writer.writeheader()
    for row in new:
        writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) and math.isfinite(v) else v) for k, v in row.items()})
    with path.open("a", encoding="utf-8") as handle:
        handle.write(buffer.getvalue())
    return [str(row["id"]) for row in new]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["record"]:
        print("usage: python -m multigpu.evidence.predictions record", file=sys.stderr)
        return 2
    added = record()
    print(f"recorded {len(added)} prediction(s) in {PREDICTIONS_CSV}" + (": " + ", ".join(added) if added else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
