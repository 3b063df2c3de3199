"""Published serving measurements (``data/serving_runs.csv``) against the inference model.

Each row of ``serving_runs.csv`` is one published number: a time to first
token (TTFT), a time per output token (TPOT, or inter-token latency) or an
output throughput, for one model, system, layout and precision (see
``data/RUNS-NOTES.md``). Its ``split`` was set by a hash of its id before any
comparison: ``fit``, ``holdout`` or ``sealed``. The ``fit`` rows that state a
TensorRT-LLM release fit that release's decode-time factor
(:mod:`multigpu.evidence.releasefit`); no other constant is fitted on these
rows. Sealed rows are never read here unless a caller names that split.

:func:`map_row` turns a row into a :class:`ModelCall` of
:func:`multigpu.compute.inference.run` where that is well defined, or gives a
one-line reason why not. :func:`compare` sets the model's value beside each
measurement in one unit; :func:`not_modelled` lists the other rows with their
reason; :func:`summary` gives the median and worst |error| by kind, split and
metric.

Units: latencies in seconds, throughput in output tokens/s per GPU. A system
throughput (``tokens/s``) is divided by the row's ``gpus`` (the GPUs of the
whole system or TP group that produced it).

Assumptions, each named in the ``assumption`` column where it is used:

- a model not in the catalogue is modelled only through the stand-in the notes
  name: Llama 2 70B (MLPerf ``llama2-70b``, TensorRT-LLM's "LLaMA 70B") has the
  ``llama3.1-70b`` shape with a 32000-token vocabulary, so ``llama3.1-70b``
  stands in (``stand_in`` True; about 1.3 % more parameters, in the LM head);
- an ``offline`` row without a published batch ran at maximum load (all
  requests queued at once): the batch is the largest, up to
  :data:`MAX_BATCH`, whose weights and KV cache fit the GPU in the model
  (``max_load_batch=False`` turns this off and gives a reason instead); where
  the row's ``engine_limits`` names ``trtllm-bench``, up to the limits that tool
  set (:mod:`multigpu.evidence.trtllmbench`), whose tokens an iteration also
  set how many prompts a prefill pass packs;
- a throughput row whose ``requests`` column states how many requests the benchmark queued at once (the
  release pages' ``$num_requests``, by lengths) is that many requests run in waves of the batch, the last one
  partly filled (:mod:`multigpu.compute.offline`), not the steady state;
- a TTFT row without an output length runs the model with one output token:
  the model's TTFT (one prefill) does not depend on it;
- an empty ``pp`` with a given ``tp`` is 1;
- an ``interactive`` row with a concurrency is a fixed-concurrency benchmark (each user sends the next query
  when the answer ends): its TTFT and TPOT are the closed-loop model's latencies under load
  (:func:`multigpu.compute.inference.closed_loop`), not the decode-only TPOT and bare prefill of
  :func:`multigpu.compute.inference.run`;
- where more users than fit in memory are connected, the scheduler holds the most that fit and the others
  wait for a free place: such a row's TTFT, TPOT and throughput come from the simulation of in-flight
  batching under load (:mod:`multigpu.compute.queueing`, closed loop, mean latencies; ``batch`` is then the
  queries held). Within memory the closed-loop model stays: with identical lengths the simulated users fall
  into an even rhythm and never wait for one another's prefills, where the published runs show that wait.

- an MLPerf row (its dataset's lengths vary from query to query) runs at mean lengths: its input is the
  mean over its benchmark's dataset (``data/mlperf_datasets.csv``, :func:`mlperf_lengths`), its output the
  run's own mean, its tokens per second over its samples per second (both in its log summary). In a
  saturated run a decode step's cost follows the mean KV length and the prefill work per output token the
  mean input over the mean output, so the means carry the load to first order; a prompt's attention grows
  with its square, which the mean understates: by under 1 % of a prefill's FLOPs on these datasets (0.1 % on
  llama2-70b's prompts, 0.9 % on llama3.1-405b's, whose attention is 5 % of them). Only its Offline throughput
  is compared: a Server run's load is a query rate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.compute import inference, models, offline, queueing
from multigpu.evidence import trtllmbench
from multigpu.hardware import catalog

SERVING_CSV = DATA_DIR / "serving_runs.csv"
MLPERF_DATASETS_CSV = DATA_DIR / "mlperf_datasets.csv"
#: The scenario of fixed-concurrency (closed-loop) benchmark rows.
CLOSED_LOOP_SCENARIO = "interactive"
SPLITS = ("fit", "holdout", "sealed")
#: Splits looked at by default; ``sealed`` only when a caller names it.
DEFAULT_SPLITS = ("fit", "holdout")
#: Largest batch tried for a maximum-load row (TensorRT-LLM's CUDA-graph batch sizes go up to 8192, per the notes).
MAX_BATCH = 8192

#: Published metric -> the model's metric kind: ``ttft`` (s), ``tpot`` (s) or ``throughput`` (tokens/s per GPU).
METRIC_KINDS = {"ttft": "ttft", "ttft_mean": "ttft", "tpot": "tpot", "tpot_mean": "tpot", "itl": "tpot",
                "itl_mean": "tpot", "tokens_per_s": "throughput", "tokens_per_s_per_gpu": "throughput"}
#: Time units -> seconds.
SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
#: Throughput units -> whether the value is of the whole system (True) or already per GPU (False).
THROUGHPUT_UNITS = {"tokens/s": True, "tokens/s/gpu": False}
#: The common unit of each metric kind.
UNITS = {"ttft": "s", "tpot": "s", "throughput": "tokens/s/GPU"}

#: Non-catalogue models with the stand-in the notes name: (pattern on the ``model`` column, catalogue id, why).
STAND_INS = (
    (re.compile(r"^(llama 2 70b|llama v2 70b|llama 70b)\b", re.IGNORECASE), "llama3.1-70b",
     "Llama 2 70B modelled as llama3.1-70b (same shape, 32000- not 128256-token vocabulary)"),
)
_MODEL_ID = re.compile(r"\bmodel id ([a-z0-9][a-z0-9.-]*[a-z0-9])")
_AMBIGUOUS = re.compile(r"per GPU or total is ambiguous", re.IGNORECASE)
_TAIL = re.compile(r"_p\d+$")
_MLPERF_BENCHMARK = re.compile(r"\bMLPerf ([a-z0-9][a-z0-9.-]*[a-z0-9])", re.IGNORECASE)
_SAMPLES_PER_S = re.compile(r"\bsamples/s ([0-9]+(?:\.[0-9]+)?)")

#: Reasons given by :func:`map_row` (the model's own errors and memory are added by :func:`not_modelled`).
REASON_TAIL = "tail (p99) latency under load: the model gives one steady-state value, not a percentile"
REASON_AMBIGUOUS = "unit ambiguous in the source (per GPU or whole system)"
REASON_LAYOUT = "layout not published (tp empty)"
REASON_DTYPE = "precision not published (dtype empty)"
REASON_VARIABLE = ("variable input/output lengths (MLPerf dataset) and no mean to run them at: the benchmark "
                   "is not in mlperf_datasets.csv, or the notes give no samples/s")
REASON_INPUT = "input length not published"
REASON_OUTPUT = "output length not published"
REASON_BATCH = "batch / concurrency not published (load set by a target QPS or not given)"
REASON_MAX_LOAD_OFF = "batch not published (maximum load) and max_load_batch is off"
REASON_GPUS = "GPU count not published: a system throughput cannot be put per GPU"
REASON_TILING = "the system's GPUs are not a whole number of tp x pp instances"
REASON_FITS = "the batch does not fit GPU memory in the model"
#: The words that mark a compared row whose users outnumber what fits memory (:func:`queued`).
QUEUE_NOTE = "the others queue"


class ServingRow(datafiles.Row):
    """Schema of ``data/serving_runs.csv`` (one published serving number; see ``data/RUNS-NOTES.md``)."""

    id: datafiles.Text
    kind: datafiles.Text  #: ``mlperf`` (may fit inference constants) or a validation-only source kind
    model: datafiles.Text  #: the model as the source names it
    gpu: datafiles.LowerId
    system_id: datafiles.LowerId
    gpus: datafiles.PositiveCount | None = None  #: GPUs that produced the number (whole system or TP group)
    tp: datafiles.PositiveCount | None = None
    pp: datafiles.PositiveCount | None = None
    ep: datafiles.PositiveCount | None = None
    dtype: str | None = None
    stack: str | None = None
    #: the stack's release the row ran, as its source states it (empty: not stated); it sets the release's decode
    #: kernels (``data/release_efficiency.csv``)
    release: str | None = None
    input_tokens: datafiles.PositiveCount | None = None
    output_tokens: datafiles.PositiveCount | None = None
    batch_or_concurrency: datafiles.PositiveCount | None = None
    metric: datafiles.Text  #: e.g. tokens_per_s, tokens_per_s_per_gpu, ttft, ttft_mean, ttft_p99, tpot, tpot_mean
    measured: datafiles.Positive  #: the value as printed, in ``unit``
    unit: datafiles.Text  #: ns, ms, s, tokens/s (whole system) or tokens/s/GPU
    scenario: str | None = None  #: offline, server, interactive, fixed-batch
    source: datafiles.Text
    split: datafiles.one_of(SPLITS)  # type: ignore[valid-type]
    notes: str | None = None
    #: tokens one iteration of the engine held, where the source states it (else the engine default)
    max_num_tokens: datafiles.PositiveCount | None = None
    #: the tool that set the engine's batch and token limits where the source states none: ``trtllm-bench``
    #: (:mod:`multigpu.evidence.trtllmbench`), or empty
    engine_limits: datafiles.one_of(("", trtllmbench.TOOL)) | None = None  # type: ignore[valid-type]
    #: requests the benchmark queued at once, where its source states them (a maximum-load run of fixed lengths
    #: is then that many requests in waves, :mod:`multigpu.compute.offline`); empty: a steady state
    requests: datafiles.PositiveCount | None = None

    EXPECTED = {"id": "a unique run id", "gpus": "a whole number >= 1", "tp": "a whole number >= 1",
                "pp": "a whole number >= 1", "input_tokens": "a whole number >= 1",
                "output_tokens": "a whole number >= 1", "batch_or_concurrency": "a whole number >= 1",
                "max_num_tokens": "a whole number >= 1", "requests": "a whole number >= 1",
                "measured": "a positive number", "split": "fit, holdout or sealed"}
    NOUN = "serving run"


#: Sealed rows not opened yet: the rows collected for the PCIe side (TensorRT-LLM's release pages, ``kind``
#: ``trtllm-perf``) keep their own sealed third closed until its one opening.
UNOPENED_KINDS = ("trtllm-perf",)
#: Sealed rows not opened yet by id: the RTX PRO 6000 rows of TensorRT-LLM's performance overview (PCIe side).
UNOPENED_IDS = re.compile(r"-rtxpro6000-")


def unopened(row: ServingRow) -> bool:
    """Whether ``row`` is a sealed row not opened yet (:data:`UNOPENED_KINDS`, :data:`UNOPENED_IDS`)."""
    return row.split == "sealed" and (row.kind in UNOPENED_KINDS or bool(UNOPENED_IDS.search(row.id)))


def load(splits: Iterable[str] = DEFAULT_SPLITS, path: str | Path = SERVING_CSV,
         include_unopened: bool = False) -> list[ServingRow]:
    """The rows of ``serving_runs.csv`` whose split is in ``splits``, in file order (ids checked unique); the
    sealed rows not opened yet (:func:`unopened`) only with ``include_unopened``."""
    wanted = datafiles.wanted_splits(splits, SPLITS)
    return [row for _, row in datafiles.read(path, ServingRow, unique=("id",))
            if row.split in wanted and (include_unopened or not unopened(row))]


class MLPerfDatasetRow(datafiles.Row):
    """Schema of ``data/mlperf_datasets.csv``: an MLPerf Inference benchmark's dataset and its mean input."""

    benchmark: datafiles.LowerId  #: the benchmark as MLPerf names it (``llama2-70b``)
    dataset: datafiles.Text
    samples: datafiles.PositiveCount  #: queries in the dataset (MLPerf's ``performance_sample_count``)
    mean_input_tokens: datafiles.Positive  #: mean prompt length over them, tokens of the model's tokenizer
    source: datafiles.Text
    notes: str | None = None

    EXPECTED = {"samples": "a whole number >= 1", "mean_input_tokens": "a positive number"}
    NOUN = "MLPerf dataset"


@cache
def mlperf_datasets(path: str | Path = MLPERF_DATASETS_CSV) -> dict[str, MLPerfDatasetRow]:
    """The rows of ``mlperf_datasets.csv`` by benchmark."""
    return {row.benchmark: row for _, row in datafiles.read(path, MLPerfDatasetRow, unique=("benchmark",))}


def mlperf_lengths(row: ServingRow) -> tuple[int, int] | None:
    """(input, output) tokens an MLPerf row runs at: its dataset's mean input (:func:`mlperf_datasets`) and the
    run's mean output, its published tokens per second over the samples per second its notes give, each
    rounded to a whole token; None where the benchmark or the samples per second are not known."""
    benchmark = _MLPERF_BENCHMARK.search(row.model)
    samples = _SAMPLES_PER_S.search(row.notes or "")
    dataset = mlperf_datasets().get(benchmark.group(1).lower()) if benchmark else None
    if dataset is None or samples is None or row.unit.strip().lower() != "tokens/s":
        return None
    return round(dataset.mean_input_tokens), max(1, round(row.measured / float(samples.group(1))))


def metric_kind(metric: str) -> str | None:
    """``ttft``, ``tpot`` or ``throughput`` for a published metric name; None for one the model does not give."""
    return METRIC_KINDS.get(metric.strip().lower())


def to_common_unit(value: float, unit: str, kind: str, gpus: int | None = None) -> float:
    """``value`` in ``unit`` as seconds (``ttft``, ``tpot``) or output tokens/s per GPU (``throughput``).

    A whole-system throughput (``tokens/s``) is divided by ``gpus``. Raises :class:`InputError` for a unit that
    does not fit the kind, or a system throughput without ``gpus``.
    """
    key = unit.strip().lower()
    if kind in ("ttft", "tpot"):
        if key not in SECONDS:
            raise InputError(f"unit '{unit}' is not a time; expected one of {', '.join(SECONDS)}")
        return value * SECONDS[key]
    if kind == "throughput":
        if key not in THROUGHPUT_UNITS:
            raise InputError(f"unit '{unit}' is not a throughput; expected tokens/s or tokens/s/GPU")
        if THROUGHPUT_UNITS[key]:
            if not gpus:
                raise InputError(REASON_GPUS)
            return value / gpus
        return value
    raise InputError(f"unknown metric kind '{kind}'; expected ttft, tpot or throughput")


def measured_value(row: ServingRow) -> tuple[float, str]:
    """The row's measurement in the common unit of its metric kind: (value, unit)."""
    kind = metric_kind(row.metric)
    if kind is None:
        raise InputError(f"metric '{row.metric}' is not a TTFT, TPOT or throughput")
    return to_common_unit(row.measured, row.unit, kind, row.gpus), UNITS[kind]


@dataclass(frozen=True)
class ModelCall:
    """One row as a call of :func:`multigpu.compute.inference.run`, and the metric to read from it."""

    id: str
    kind: str  #: the row's ``kind`` (``mlperf`` or a validation source)
    split: str
    metric: str  #: ttft, tpot or throughput
    model_id: str  #: catalogue model
    stand_in: bool  #: True where ``model_id`` stands in for a model not in the catalogue
    system_id: str
    tp: int
    pp: int
    batch: int | None  #: queries in flight; None: the largest that fits (maximum load)
    input_tokens: int
    output_tokens: int
    dtype: str
    measured: float  #: in ``unit``
    unit: str  #: s or tokens/s/GPU
    assumption: str  #: what was assumed to make the call ("" if nothing)
    source: str
    closed_loop: bool = False  #: a fixed-concurrency row: latencies under load (:func:`inference.closed_loop`)
    stack: str = inference.DEFAULT_STACK  #: the serving stack whose all-reduce kernels the row ran
    ep: int = 1  #: GPUs the routed experts are spread over (``infer --ep``), 1: none
    #: tokens one engine iteration holds (``infer --max-num-tokens``): how many prompts a prefill pass packs
    max_num_tokens: int = inference.DEFAULT_MAX_NUM_TOKENS
    #: the most queries the engine holds in flight (all its micro-batches), where its limits are known
    max_batch: int = MAX_BATCH
    release: str | None = None  #: the stack's release the row ran (None: not stated; the model's decode kernels)
    #: requests an offline benchmark queued at once (None: its steady state; :mod:`multigpu.compute.offline`)
    requests: int | None = None


@dataclass(frozen=True)
class Prediction:
    """The model's value for a :class:`ModelCall` (in the call's unit), at the batch it used."""

    value: float
    batch: int
    fits: bool  #: weights and KV cache within the GPU's memory
    memory_per_gpu_GB: float
    gpu_memory_GB: float
    users: int = 0  #: a fixed-concurrency row's users where more than ``batch`` fit: the others queue


def resolve_model(row: ServingRow) -> tuple[str, bool, str]:
    """(catalogue model id, stand_in, assumption) for the row, or ("", False, reason) where there is none.

    A ``model id <id>`` in the notes names the catalogue model (same architecture); otherwise only a
    stand-in of :data:`STAND_INS` is used.
    """
    known = models.models()
    match = _MODEL_ID.search(row.notes or "")
    if match and match.group(1) in known:
        return match.group(1), False, ""
    lowered = row.model.strip().lower()
    if lowered in known:
        return lowered, False, ""
    for pattern, model_id, why in STAND_INS:
        if pattern.search(row.model.strip()) and model_id in known:
            return model_id, True, why
    return "", False, f"model '{row.model}' is not in the catalogue and the notes name no stand-in"


def map_row(row: ServingRow, max_load_batch: bool = True) -> ModelCall | str:
    """The row as a :class:`ModelCall`, or a one-line reason why the model cannot express it.

    Checks run from what the published data lacks (metric, unit, model, layout, lengths, batch) to what the
    model lacks, so the reasons that remain after :func:`map_row` are the model's own (see
    :func:`not_modelled`).
    """
    kind = metric_kind(row.metric)
    if kind is None:
        return REASON_TAIL if _TAIL.search(row.metric) else f"metric '{row.metric}' is not a TTFT, TPOT or throughput"
    if kind == "throughput" and _AMBIGUOUS.search(row.notes or ""):
        return REASON_AMBIGUOUS
    model_id, stand_in, why = resolve_model(row)
    if not model_id:
        return why
    try:
        catalog.system(row.system_id)
    except InputError as exc:
        return exc.message
    if row.tp is None:
        return REASON_LAYOUT
    if not row.dtype:
        return REASON_DTYPE
    assumptions = [why] if why else []
    input_tokens, output = row.input_tokens, row.output_tokens
    if row.kind == "mlperf" and input_tokens is None:
        lengths = mlperf_lengths(row)
        if lengths is None:
            return REASON_VARIABLE if (row.scenario or "").lower() == "offline" else REASON_BATCH
        input_tokens, output = lengths
        assumptions.append(f"MLPerf's variable lengths at their means: {input_tokens} tokens in (the dataset's), "
                           f"{output} out (the run's tokens/s over its samples/s)")
    if input_tokens is None:
        return REASON_INPUT
    if output is None:
        if kind != "ttft":
            return REASON_OUTPUT
        output = 1
        assumptions.append("output length not published: 1 token (the model's TTFT does not depend on it)")
    batch = row.batch_or_concurrency
    if batch is None:
        if (row.scenario or "").lower() != "offline":
            return REASON_BATCH
        if not max_load_batch:
            return REASON_MAX_LOAD_OFF
        assumptions.append(f"batch not published (maximum load): the largest up to {MAX_BATCH} that fits in memory")
    pp = row.pp or 1
    if row.pp is None:
        assumptions.append("pp not published: 1")
    if kind == "throughput" and row.gpus and row.gpus % (row.tp * pp):
        return REASON_TILING
    try:
        measured, unit = measured_value(row)
    except InputError as exc:
        return exc.message
    stack_name = serving_stack(row.stack)
    if stack_name is None:
        stack_name = inference.DEFAULT_STACK
        assumptions.append(f"serving stack '{row.stack or ''}' not modelled: {stack_name}'s all-reduce kernels")
    closed = (row.scenario or "").lower() == CLOSED_LOOP_SCENARIO and batch is not None
    max_num_tokens, max_batch = row.max_num_tokens or inference.DEFAULT_MAX_NUM_TOKENS, MAX_BATCH
    if row.engine_limits == trtllmbench.TOOL:
        tool = trtllmbench.limits(model_id, row.system_id, row.tp, pp, row.dtype, input_tokens, output)
        max_num_tokens, max_batch = row.max_num_tokens or tool.max_num_tokens, pp * tool.max_batch_size
        assumptions.append(f"engine limits set by {trtllmbench.TOOL}: {tool.max_batch_size} queries a micro-batch, "
                           f"{tool.max_num_tokens} tokens an iteration")
    elif kind == "throughput" and not closed and row.max_num_tokens is None:
        assumptions.append(f"tokens an engine iteration holds not published: {inference.DEFAULT_MAX_NUM_TOKENS} "
                           "(TensorRT-LLM's default), so a prefill pass packs that many tokens of prompts")
    if closed and kind != "throughput":
        assumptions.append(f"{batch} users at fixed concurrency: the closed-loop model's latencies under load")
    requests = row.requests if kind == "throughput" and not closed else None
    if requests:
        assumptions.append(f"{requests} requests queued at once, run in waves of the batch (the last partly "
                           "filled), not a steady state")
    return ModelCall(row.id, row.kind, row.split, kind, model_id, stand_in, row.system_id, row.tp, pp, batch,
                     input_tokens, output, row.dtype, measured, unit, "; ".join(assumptions), row.source,
                     closed_loop=closed, stack=stack_name, ep=row.ep or 1, max_num_tokens=max_num_tokens,
                     max_batch=max_batch, release=row.release or None, requests=requests)


def serving_stack(text: str | None) -> str | None:
    """The model's serving stack (:data:`multigpu.compute.inference.STACKS`) for a row's ``stack`` as the source
    names it ("nim (tensorrt-llm)" runs TensorRT-LLM), or None when no modelled stack is named."""
    named = (text or "").lower()
    return next((name for name in inference.STACKS if name in named), None)


def _value(run: inference.ServingRun, metric: str, closed_loop: bool = False) -> float:
    """The model's value of ``metric``; with ``closed_loop``, TTFT and TPOT as users of a fixed-concurrency
    benchmark measure them (:func:`multigpu.compute.inference.closed_loop`)."""
    if closed_loop and metric != "throughput":
        loaded = inference.closed_loop(run)
        return float(loaded.ttft_s if metric == "ttft" else loaded.itl_s)
    return float({"ttft": run.ttft_s, "tpot": run.tpot_s, "throughput": run.tokens_per_s_per_gpu}[metric])


def predict(call: ModelCall, cal: Calibration | None = None) -> Prediction:
    """The model's value for ``call`` (s, or output tokens/s per GPU). A maximum-load call (``batch`` None)
    first finds the largest batch up to the engine's (``max_batch``, else :data:`MAX_BATCH`) that fits; if none
    does, batch 1 (``fits`` False). A throughput call with ``requests`` is that many requests in waves of the
    batch (at most ``requests``; :func:`multigpu.compute.offline.run`).
    Raises the model's :class:`InputError` (e.g. a dtype it has no rate for)."""
    args = dict(model_id=call.model_id, system_id=call.system_id, tp=call.tp, input_tokens=call.input_tokens,
                output_tokens=call.output_tokens, pp=call.pp, dtype=call.dtype, cal=cal,
                stack_name=call.stack, ep=call.ep, release=call.release)
    packing = dict(max_num_tokens=call.max_num_tokens)
    batch = call.batch
    if batch is None:
        fits = np.asarray(inference.run(batch=np.arange(1, call.max_batch + 1), **args, **packing).fits, dtype=bool)
        batch = int(np.flatnonzero(fits).max()) + 1 if fits.any() else 1
    if call.requests:
        batch = min(batch, call.requests)
    run = inference.run(batch=batch, **args, **packing)
    if call.closed_loop and not run.fits and call.pp == 1 and call.ep == 1:
        return _queued(call, args)
    value = _value(run, call.metric, call.closed_loop)
    if call.requests:
        value = offline.run(call.requests, batch, **args, **packing).tokens_per_s_per_gpu
    return Prediction(value, batch, bool(run.fits), float(run.memory_per_gpu_GB), float(run.gpu_memory_GB))


def _queued(call: ModelCall, args: dict) -> Prediction:
    """A fixed-concurrency row with more users than fit in memory: the scheduler holds the most that fit, the
    others wait (:mod:`multigpu.compute.queueing`, closed loop); mean TTFT and TPOT, or tokens/s per GPU."""
    eng = queueing.engine(max_batch=call.batch, **args)
    served = queueing.simulate(eng, concurrency=call.batch)
    value = {"ttft": served.ttft_mean_s, "tpot": served.tpot_mean_s,
             "throughput": served.tokens_per_s_per_gpu}[call.metric]
    held = inference.run(batch=eng.max_batch, **args)
    return Prediction(value, eng.max_batch, True, float(held.memory_per_gpu_GB), float(held.gpu_memory_GB),
                      users=call.batch)


def _assess(rows: Iterable[ServingRow], cal: Calibration | None,
            max_load_batch: bool) -> tuple[list[dict], list[dict]]:
    """(compared rows, not-modelled rows) of ``rows``."""
    compared, missing = [], []
    for row in rows:
        call = map_row(row, max_load_batch)
        if isinstance(call, str):
            missing.append({"id": row.id, "kind": row.kind, "split": row.split, "reason": call})
            continue
        try:
            pred = predict(call, cal)
        except InputError as exc:
            missing.append({"id": row.id, "kind": row.kind, "split": row.split,
                            "reason": f"the model raises: {exc.message}"})
            continue
        if not pred.fits:
            missing.append({"id": row.id, "kind": row.kind, "split": row.split,
                            "reason": f"{REASON_FITS} (batch {pred.batch}: {pred.memory_per_gpu_GB:.1f} GB per GPU, "
                                      f"GPU {pred.gpu_memory_GB:.1f} GB)"})
            continue
        assumption = call.assumption
        if pred.users:
            assumption = "; ".join(filter(None, (assumption, f"{pred.users} users, {pred.batch} fit in memory: "
                                                 f"{QUEUE_NOTE} (the simulation of in-flight batching under load)")))
        compared.append({"id": call.id, "kind": call.kind, "split": call.split, "metric": call.metric,
                         "model_id": call.model_id, "stand_in": call.stand_in, "system_id": call.system_id,
                         "tp": call.tp, "pp": call.pp, "batch": pred.batch, "input_tokens": call.input_tokens,
                         "output_tokens": call.output_tokens, "dtype": call.dtype, "release": call.release or "",
                         "measured": call.measured,
                         "predicted": pred.value, "unit": call.unit, "rel_error": pred.value / call.measured - 1,
                         "assumption": assumption, "source": call.source})
    return compared, missing


COMPARE_COLUMNS = ["id", "kind", "split", "metric", "model_id", "stand_in", "system_id", "tp", "pp", "batch",
                   "input_tokens", "output_tokens", "dtype", "release", "measured", "predicted", "unit", "rel_error",
                   "assumption", "source"]


def compare(splits: Sequence[str] = DEFAULT_SPLITS, cal: Calibration | None = None,
            max_load_batch: bool = True) -> pd.DataFrame:
    """The model beside every row in ``splits`` that it can express (``cal`` None: the shipped calibration).

    Columns: ``id, kind, split, metric`` (ttft, tpot, throughput), ``model_id, stand_in, system_id, tp, pp,
    batch`` (the batch used), ``input_tokens, output_tokens, dtype, release`` ("" where not stated),
    ``measured`` and ``predicted`` in ``unit`` (s, or output tokens/s per GPU), ``rel_error`` = predicted /
    measured - 1, ``assumption`` (what was assumed; "" if nothing) and ``source``.
    """
    return compare_rows(load(splits), cal, max_load_batch)


def compare_rows(rows: Iterable[ServingRow], cal: Calibration | None = None,
                 max_load_batch: bool = True) -> pd.DataFrame:
    """:func:`compare` of the given ``rows`` (a fit tries its candidates on its own rows this way)."""
    compared, _ = _assess(rows, cal, max_load_batch)
    return pd.DataFrame(compared, columns=COMPARE_COLUMNS)


def queued(comparison: pd.DataFrame) -> pd.Series:
    """Which rows of a :func:`compare` frame had more users than fit memory, the others queued (a boolean
    Series)."""
    return comparison["assumption"].str.contains(QUEUE_NOTE, regex=False)


def not_modelled(splits: Sequence[str] = DEFAULT_SPLITS, cal: Calibration | None = None,
                 max_load_batch: bool = True) -> pd.DataFrame:
    """The rows in ``splits`` that :func:`compare` leaves out, each with a one-line reason.

    Columns: ``id, kind, split, reason``. The reason is the first of: a metric the model does not give
    (tail latency), an ambiguous unit, a model with no catalogue entry or stand-in, a missing layout,
    precision, length or batch, the model's own :class:`InputError` ("the model raises: ..."), or a batch
    that does not fit GPU memory.
    """
    _, missing = _assess(load(splits), cal, max_load_batch)
    return pd.DataFrame(missing, columns=["id", "kind", "split", "reason"])


def summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median and worst |rel_error| by source (``mlperf``, ``other``, ``all``), split and metric kind.

    Columns: ``source_kind, split, metric, rows, median_abs_error, worst_abs_error, worst_id`` (errors as
    fractions: 0.15 = 15 %).
    """
    columns = ["source_kind", "split", "metric", "rows", "median_abs_error", "worst_abs_error", "worst_id"]
    if comparison.empty:
        return pd.DataFrame(columns=columns)
    data = comparison.assign(abs_error=comparison["rel_error"].abs(),
                             source_kind=np.where(comparison["kind"] == "mlperf", "mlperf", "other"))
    data = pd.concat([data, data.assign(source_kind="all")], ignore_index=True)
    rows = []
    for (source_kind, split, metric), part in data.groupby(["source_kind", "split", "metric"], sort=True):
        worst = part.loc[part["abs_error"].idxmax()]
        rows.append({"source_kind": source_kind, "split": split, "metric": metric, "rows": len(part),
                     "median_abs_error": float(part["abs_error"].median()),
                     "worst_abs_error": float(worst["abs_error"]), "worst_id": worst["id"]})
    return pd.DataFrame(rows, columns=columns)
