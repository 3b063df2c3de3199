"""The one training-layout search and the one serving search of the project.

Cost (:mod:`multigpu.market.cost`), the recommender
(:mod:`multigpu.market.recommend`), chapters 4 and 5 and the CLI all ask these
two functions, so a workload on a system gets one layout everywhere.

:func:`train` enumerates tensor x pipeline x data parallelism, micro-batch,
interleaving, recomputation, sequence parallelism and ZeRO stage for a model on
a system (:func:`layouts`), evaluates them all at once with the training model
(:func:`multigpu.compute.training.evaluate`, the function behind ``train``, so
the best layout's step time is the one ``train`` reports), drops those that do
not fit in memory, and ranks the rest by step time.

:func:`serve` tries every tensor-parallel degree that divides an instance and
fits in one node; for each (:func:`serving_option`) the largest in-flight batch
whose per-user speed meets the floor, and picks the degree with the most output
tokens per second per GPU.

Both are memoised on all their arguments, the calibration included
(:data:`MEMO`). The results do not depend on prices, so a run with another
price file reuses them; :func:`save_memo` and :func:`load_memo` keep them on
disk between runs, keyed by the package version and a hash of the data files
(catalogue, models, calibration) as well.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import os
import pickle
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from multigpu import __version__
from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.common.findings import Finding, Number, msg, say
from multigpu.compute import inference, models, training
from multigpu.compute.layout import DEFAULT_GRAD_DTYPE, DEFAULT_TRAINING_STACK, TRAINING_STACKS, Layout
from multigpu.hardware import catalog

RECOMPUTE = ("none", "selective", "full")
#: ZeRO stages tried: 1 (distributed optimizer, Megatron's default) and 3 (FSDP).
ZERO_STAGES = (1, 3)
#: Largest micro-batch (sequences) and interleaving tried.
MAX_MICRO_BATCH, MAX_INTERLEAVE = 16, 8
#: Most layers taken off the last pipeline stage, which also runs the output layer, and spread over the others.
MAX_LAST_STAGE_SHIFT = 3
#: The fewest tokens of a sequence the search gives a context-parallel rank (context parallelism splits each
#: sequence into 2 x cp chunks, two to a rank): a search bound, as NVIDIA's recipes keep 4,096 tokens on a rank
#: (Llama 3.1 70B and 405B at 8,192 tokens with cp 2: their runs in ``data/training_runs.csv``), so sequences of
#: 4,096 tokens are not split
MIN_CP_TOKENS = 4096
#: Largest in-flight batch tried when serving.
MAX_BATCH = 256
Progress = Callable[[int, int], None]

#: Why a job cannot run on a system, by kind (the message of the reason's finding): it does not fit in memory ...
TOO_BIG_TRAINING = msg("does not fit: the leanest layout of {n_gpus} GPUs needs {n_need} GB per GPU, the {gpu} has "
                       "{n_have} GB")
TOO_BIG_SERVING = msg("does not fit: the weights and one query's KV cache exceed {n_gpus} x {n_memory} GB (tp up to "
                      "{n_tp})")
#: ... or it runs, but too slowly for the serving target.
TOO_SLOW_PREFILL = msg("too slow to first token: the fastest prefill takes {n_fastest} s, above the ceiling of "
                       "{n_ceiling} s")
TOO_SLOW_DECODE = msg("too slow: the fastest layout gives {n_fastest} tokens/s per user at batch 1, below the floor "
                      "of {n_floor}")
#: The kinds of reason, by message.
REASON_KINDS = {TOO_BIG_TRAINING: "does not fit", TOO_BIG_SERVING: "does not fit", TOO_SLOW_PREFILL: "too slow",
                TOO_SLOW_DECODE: "too slow"}


def reason_kind(reason: object) -> str | None:
    """What kind of reason ``reason`` is ("does not fit", "too slow"; None for another or no reason), read from
    the messages of its finding and of the findings inside it, never from its words."""
    found = [getattr(reason, "value", None)]
    while found:
        value = found.pop()
        if isinstance(value, Finding):
            if value.message in REASON_KINDS:
                return REASON_KINDS[value.message]
            found += [v for _, v in value.values]
    return None


class Memo:
    """Results of the searches by their full arguments (calibration included): a plain dict per search
    that can be written to disk and read back (:func:`save_memo`, :func:`load_memo`)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[tuple, Any]] = {}

    def __call__(self, function: Callable[..., Any]) -> Callable[..., Any]:
        table = self.tables.setdefault(function.__name__, {})

        @functools.wraps(function)
        def memoised(*key: Any) -> Any:
            if key not in table:
                table[key] = function(*key)
            return table[key]

        memoised.cache_clear = table.clear  # type: ignore[attr-defined]
        return memoised

    def clear(self) -> None:
        for table in self.tables.values():
            table.clear()


#: The memo of :func:`train` and :func:`serve` (and :func:`serving_option`).
MEMO = Memo()


#: the layers whose code a search result depends on (the model's), below the package folder
MODEL_LAYERS = ("common", "hardware", "comm", "compute", "market")


def data_digest() -> str:
    """A hash of the package version, every data file the searches read and the model's code: a memo on disk
    is valid only for the same digest (so an edited checkout never reads results of other code)."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(DATA_DIR.glob("*.csv")):
        if path.name not in ("prices.csv", "fx_rates.csv", "claims.csv", "measurements.csv", "out_of_sample.csv",
                             "predictions.csv", "prediction_outcomes.csv"):
            digest.update(path.name.encode() + path.read_bytes())
    package = Path(__file__).resolve().parents[1]
    for layer in MODEL_LAYERS:
        for path in sorted((package / layer).rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def save_memo(folder: str | Path) -> Path:
    """Write :data:`MEMO`, with what another process saved there meanwhile, to ``folder/searches-<digest>.pickle``
    (the folder is created; the file is replaced whole, never left half-written, even by processes saving at
    the same time); return the path."""
    path = Path(folder) / f"searches-{data_digest()}.pickle"
    path.parent.mkdir(parents=True, exist_ok=True)
    load_memo(folder)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    with partial.open("wb") as handle:
        pickle.dump(MEMO.tables, handle, protocol=pickle.HIGHEST_PROTOCOL)
    partial.replace(path)
    return path


def load_memo(folder: str | Path) -> int:
    """Read the memo written by :func:`save_memo` for this digest into :data:`MEMO`, if there is one;
    return how many results it held (0 if none)."""
    path = Path(folder) / f"searches-{data_digest()}.pickle"
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        tables = pickle.load(handle)  # written by save_memo of this package version and data
    for name, table in tables.items():
        MEMO.tables.setdefault(name, {}).update(table)
    return sum(len(t) for t in tables.values())


# ------------------------------------------------------------------ training


@dataclass(frozen=True)
class TrainingLayout:
    """One evaluated training layout: the parallel split, its options and its step time split into parts.

    Times are seconds per step; ``tp_s``, ``pp_s``, ``dp_s``, ``ep_s`` are
    the exposed (not hidden) communication of each kind; memory in GB (1e9 B).
    """

    tp: int
    pp: int
    dp: int
    micro_batch: int
    interleave: int
    recompute: str
    sequence_parallel: bool
    zero_stage: int
    microbatches: int
    step_time_s: float
    mfu: float
    model_tflops_per_gpu: float
    memory_per_gpu_GB: float
    compute_s: float
    bubble_s: float
    tp_s: float
    pp_s: float
    dp_s: float
    ep_s: float
    pp_last_layers: int = 0  #: transformer layers on the last pipeline stage, 0 = an even split
    optimizer_s: float = 0.0  #: the optimizer step
    ep: int = 1  #: expert parallelism (a mixture-of-experts model's routed experts over tp x ep ranks)
    cp: int = 1  #: context parallelism: each sequence split over cp GPUs
    cp_s: float = 0.0  #: exposed context-parallel (ring attention) communication

    @property
    def label(self) -> str:
        """A short name, e.g. ``tp2 pp4 cp2 dp8 ep4 mb1 v2 selective-recompute SP ZeRO-3``: context and expert
        parallelism, interleaving, the last stage's layers (``last3``), recompute, sequence parallelism and a ZeRO
        stage other than 1 only when used."""
        text = f"tp{self.tp} pp{self.pp}" + (f" cp{self.cp}" if self.cp > 1 else "") + f" dp{self.dp}"
        text += f" ep{self.ep}" if self.ep > 1 else ""
        text += f" mb{self.micro_batch}"
        text += f" v{self.interleave}" if self.interleave > 1 else ""
        text += f" last{int(self.pp_last_layers)}" if self.pp_last_layers else ""
        text += f" {self.recompute}-recompute" if self.recompute != "none" else ""
        text += " SP" if self.sequence_parallel else ""
        return text + (f" ZeRO-{self.zero_stage}" if self.zero_stage != 1 else "")

    @property
    def exposed_comm_s(self) -> float:
        """All exposed communication of one step, seconds."""
        return self.tp_s + self.pp_s + self.dp_s + self.ep_s + self.cp_s

    @property
    def noncomm_s(self) -> float:
        """Compute of one step, the compute share of the pipeline bubble and the optimizer step, seconds."""
        compute_mb = self.compute_s / self.microbatches
        comm_mb = (self.tp_s + self.ep_s + self.cp_s) / self.microbatches
        bubble_comm = self.bubble_s * comm_mb / (compute_mb + comm_mb)
        return self.compute_s + self.bubble_s - bubble_comm + self.optimizer_s

    @property
    def comm_s(self) -> float:
        """What communication adds to a step (the exposed part and its share of the bubble), seconds."""
        return self.step_time_s - self.noncomm_s

    def to_dict(self) -> dict[str, Any]:
        """The layout as a flat dict (the CLI's object), with ``layout`` (:attr:`label`)."""
        return {**asdict(self), "layout": self.label}


@dataclass(frozen=True)
class TrainingSearch:
    """The outcome of :func:`train`: the best layouts (best first), how many were evaluated, and why
    none fits when none does."""

    model: str
    system: str
    gpus: int
    global_batch: int
    seq: int
    dtype: str
    zero_stages: tuple[int, ...]
    evaluated: int
    valid: int
    seconds: float
    top: tuple[TrainingLayout, ...]
    reason: str
    table: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    method: str = "pretrain"  #: training method: pretrain, full (fine-tune) or lora
    lora_rank: int = 0  #: LoRA adapter rank (``method`` lora)
    grad_dtype: str = DEFAULT_GRAD_DTYPE  #: gradient buffer and reduction precision (:data:`layout.GRAD_DTYPES`)
    stack: str = DEFAULT_TRAINING_STACK  #: training stack (:data:`layout.TRAINING_STACKS`)

    @property
    def best(self) -> TrainingLayout | None:
        """The fastest layout that fits, or None."""
        return self.top[0] if self.top else None

    @property
    def layouts_per_s(self) -> float:
        """Layouts evaluated per second of search."""
        return self.evaluated / self.seconds if self.seconds > 0 else math.inf


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def layouts(model: models.Model, system: catalog.System, gpus: int, global_batch: int, *, seq: int = 2048,
            max_micro_batch: int = MAX_MICRO_BATCH, max_interleave: int = MAX_INTERLEAVE) -> pd.DataFrame:
    """Every (tp, pp, cp, dp, ep, micro_batch, interleave, pp_last_layers) that divides, as integer columns of a
    DataFrame.

    ``tp`` divides the heads and fits in a node; ``pp`` divides the layers and
    the GPUs left by ``tp``; ``cp`` (context parallelism) divides the GPUs left
    by ``tp x pp`` and leaves each rank at least :data:`MIN_CP_TOKENS` of a
    ``seq``-token sequence, in two of its ``2 cp`` equal chunks; ``dp`` is what remains; ``ep``, for a
    mixture-of-experts model, divides both ``dp`` and the routed experts (the
    experts are split over ``tp x ep`` of a stage's ``tp x dp`` ranks, as
    Megatron-Core places them; 1 for a dense model); ``micro_batch`` divides
    the batch of a data-parallel rank (up to ``max_micro_batch``);
    ``interleave`` divides the layers of a stage (only with ``pp > 1``);
    ``pp_last_layers`` is 0 (an even split) or, without interleaving, the even
    share less 1 to :data:`MAX_LAST_STAGE_SHIFT` layers, which the other stages
    take, since the last stage also runs the output layer.
    """
    rows = []
    for tp in _divisors(min(system.gpus_per_node, gpus)):
        if model.heads % tp or gpus % tp:
            continue
        for pp in _divisors(gpus // tp):
            if model.layers % pp:
                continue
            for cp in (c for c in _divisors(gpus // (tp * pp)) if c == 1 or seq >= c * MIN_CP_TOKENS
                       and not seq % (2 * c)):
                rows.extend(_split(model, tp, pp, cp, gpus // (tp * pp * cp), global_batch, max_micro_batch,
                                   max_interleave))
    return pd.DataFrame(rows, columns=["tp", "pp", "cp", "dp", "ep", "micro_batch", "interleave", "pp_last_layers"],
                        dtype=int)


def _split(model: models.Model, tp: int, pp: int, cp: int, dp: int, global_batch: int, max_micro_batch: int,
           max_interleave: int) -> list[tuple[int, ...]]:
    """The (tp, pp, cp, dp, ep, micro_batch, interleave, pp_last_layers) rows of one (tp, pp, cp, dp) split."""
    if global_batch % dp:
        return []
    eps = [e for e in _divisors(dp) if not model.experts % e] if model.is_moe else [1]
    micro = [b for b in _divisors(global_batch // dp) if b <= max_micro_batch]
    inter = [v for v in _divisors(model.layers // pp) if v <= max_interleave] if pp > 1 else [1]
    share = model.layers // pp
    lasts = [0] + [share - k for k in range(1, MAX_LAST_STAGE_SHIFT + 1) if share - k >= 1] if pp > 1 else [0]
    return [(tp, pp, cp, dp, e, b, v, last) for e in eps for b in micro for v in inter for last in lasts
            if v == 1 or not last]


def _options(tp: np.ndarray, zero_stages: Iterable[int]) -> list[tuple[str, bool, int, np.ndarray]]:
    """(recompute, sequence_parallel, zero stage, mask of layouts it applies to): SP only where tp > 1."""
    return [(recompute, sp, stage, (tp > 1) if sp else np.ones(tp.shape, dtype=bool))
            for stage, recompute, sp in itertools.product(zero_stages, RECOMPUTE, (False, True))]


def evaluate_layouts(model_id: str, system_id: str, gpus: int, global_batch: int, seq: int = 2048, *,
                     dtype: str = "bf16", zero_stages: Iterable[int] = ZERO_STAGES, cal: Calibration | None = None,
                     progress: Progress | None = None, method: str = "pretrain",
                     lora_rank: int = 0, grad_dtype: str = DEFAULT_GRAD_DTYPE,
                     stack: str = DEFAULT_TRAINING_STACK) -> pd.DataFrame:
    """Every layout of the job evaluated: one row per layout and option set, with the columns of
    :class:`TrainingLayout` and ``fits``. ``method``: pretrain, full (fine-tune) or lora with adapters of rank
    ``lora_rank`` (:mod:`multigpu.compute.training`); ``grad_dtype``: the gradients' precision
    (:data:`multigpu.compute.layout.GRAD_DTYPES`); ``stack``: the training stack
    (:data:`multigpu.compute.layout.TRAINING_STACKS`); under a stack that runs data parallelism alone, only its
    layouts are tried, and under a stack that always runs one ZeRO stage (0 under DDP, 3 under FSDP), only that
    stage, whatever ``zero_stages`` says. Raises :class:`InputError` when the job cannot be
    split."""
    model, system = models.model(model_id), catalog.system(system_id)
    training.check_method(method, lora_rank)
    training.check_grad_dtype(grad_dtype)
    training.check_stack(stack)
    training.nodes_spanned(system, gpus)
    base = layouts(model, system, gpus, global_batch, seq=seq)
    if TRAINING_STACKS[stack].data_parallel_only:  # every GPU holds the whole model: DP alone
        base = base[(base["tp"] == 1) & (base["pp"] == 1) & (base["cp"] == 1)
                    & (base["ep"] == 1)].reset_index(drop=True)
    if TRAINING_STACKS[stack].zero_stage is not None:  # DDP's ZeRO 0, FSDP's ZeRO 3
        zero_stages = (TRAINING_STACKS[stack].zero_stage,)
    if base.empty:
        raise InputError(f"no layout of {gpus} GPUs divides '{model.id}' with global batch {global_batch}"
                         + (f" under the {stack} stack (data parallelism alone)"
                            if TRAINING_STACKS[stack].data_parallel_only else ""))
    cal = calibration.resolve(cal)
    base_columns = {c: base[c].to_numpy() for c in base.columns}
    option_list = _options(base_columns["tp"], zero_stages)
    columns: dict[str, list[np.ndarray]] = {}
    for done, (recompute, sp, stage, mask) in enumerate(option_list, start=1):
        part = {c: v[mask] for c, v in base_columns.items()}
        n = int(mask.sum())
        arrays = Layout(**{c: part[c] for c in ("tp", "pp", "cp", "dp", "ep", "micro_batch", "interleave",
                                                "pp_last_layers")}, global_batch=global_batch, seq=seq,
                        recompute=recompute, sequence_parallel=sp, dtype=dtype, zero_stage=stage,
                        method=method, lora_rank=lora_rank, grad_dtype=grad_dtype, stack=stack)
        result = training.evaluate(model, system, arrays, cal)
        extra = {"recompute": np.full(n, recompute, dtype=object), "sequence_parallel": np.full(n, sp),
                 "zero_stage": np.full(n, stage), "microbatches": arrays.microbatches}
        for name, values in {**part, **extra, **result}.items():
            columns.setdefault(name, []).append(np.broadcast_to(np.asarray(values), (n,)))
        if progress:
            progress(done, len(option_list))
    return pd.DataFrame({name: np.concatenate(parts) for name, parts in columns.items()})


def _layout(record: dict[str, Any]) -> TrainingLayout:
    names = TrainingLayout.__dataclass_fields__
    return TrainingLayout(**{k: (v.item() if hasattr(v, "item") else v) for k, v in record.items() if k in names})


def train(model_id: str, system_id: str, gpus: int, global_batch: int, seq: int = 2048, *, dtype: str = "bf16",
          zero_stages: Iterable[int] = ZERO_STAGES, top: int = 1, cal: Calibration | None = None,
          keep_table: bool = False, progress: Progress | None = None, method: str = "pretrain",
          lora_rank: int = 0, grad_dtype: str = DEFAULT_GRAD_DTYPE,
          stack: str = DEFAULT_TRAINING_STACK) -> TrainingSearch:
    """The fastest layouts of a training job of ``gpus`` GPUs on a system, over the ZeRO stages given.

    Ranked by step time (seconds; then fewer tensor and pipeline ranks, smaller
    micro-batches); ``top`` layouts kept. When no layout fits, ``reason``
    says why (the leanest layout's memory against the GPU's). A job that
    cannot be split at all is an :class:`InputError`. ``keep_table`` keeps
    every evaluated layout in ``table`` (not cached). ``method``: pretrain
    (default), full (fine-tuning: the same maths) or lora, with adapters of
    rank ``lora_rank`` (:mod:`multigpu.compute.training`); ``grad_dtype``
    the gradients' precision (fp32, or bf16 as NVIDIA's performance recipes);
    ``stack`` the training stack (:data:`multigpu.compute.layout.TRAINING_STACKS`); all are part of the memo's
    key.
    """
    key = (models.memo_key(model_id), system_id, gpus, global_batch, seq, dtype, tuple(zero_stages), max(top, 1),
           method, int(lora_rank or 0), grad_dtype, stack, calibration.resolve(cal))
    if keep_table or progress:
        return _train(*key, keep_table=keep_table, progress=progress)
    return _train_cached(*key)


@MEMO
def _train_cached(*key: Any) -> TrainingSearch:
    return _train(*key)


def _train(model_id: str, system_id: str, gpus: int, global_batch: int, seq: int, dtype: str,
           zero_stages: tuple[int, ...], top: int, method: str, lora_rank: int, grad_dtype: str, stack: str,
           cal: Calibration, keep_table: bool = False, progress: Progress | None = None) -> TrainingSearch:
    start = time.perf_counter()
    table = evaluate_layouts(model_id, system_id, gpus, global_batch, seq, dtype=dtype, zero_stages=zero_stages,
                             cal=cal, progress=progress, method=method, lora_rank=lora_rank, grad_dtype=grad_dtype,
                             stack=stack)
    valid = table[table["fits"]].sort_values(["step_time_s", "tp", "pp", "ep", "micro_batch", "zero_stage"],
                                             kind="stable")
    reason = ""
    if valid.empty:
        gpu = catalog.gpu(catalog.system(system_id).gpu)
        reason = say(TOO_BIG_TRAINING, n_gpus=gpus, n_need=Number(table["memory_per_gpu_GB"].min(), ".0f"),
                     gpu=gpu.name, n_have=Number(gpu.usable_memory_GB, ".0f"))
    best = tuple(_layout(r) for r in valid.head(top).to_dict("records"))
    return TrainingSearch(models.model(model_id).id, system_id, gpus, global_batch, seq, dtype, zero_stages,
                          len(table), len(valid), time.perf_counter() - start, best, reason,
                          table if keep_table else None, method=method, lora_rank=lora_rank, grad_dtype=grad_dtype,
                          stack=stack)


# ------------------------------------------------------------------- serving


@dataclass(frozen=True)
class ServingOption:
    """Serving on ``tp`` GPUs, or for a mixture-of-experts model with its routed experts over ``ep`` GPUs and
    attention in ``ep / tp`` data-parallel groups (``infer --ep``): the largest batch (1..:data:`MAX_BATCH`
    queries per group) that meets the per-user floor.

    A user's speed is one token per decode step (``1 / tpot``); each GPU's
    throughput counts the prefills too (``batch x output_tokens / cycle / tp``,
    :mod:`multigpu.compute.inference`). ``batch`` is 0 when no batch meets the
    floor (too slow, or does not fit); then the throughput is 0. The per-batch
    decode steps and cycles (non-communication and communication parts,
    seconds) and whether each batch fits are kept, so a what-if on compute or
    bandwidth can re-pick the batch (:meth:`at`).
    """

    tp: int
    floor_tokens_per_s_per_user: float
    output_tokens: int
    batch: int
    tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    tokens_per_s_per_user_at_1: float  #: one query alone: the fastest a user can be served
    fits_one: bool  #: whether one query fits in memory
    ttft_s: float  #: time to first token (the prefill of one prompt), seconds
    decode_noncomm_s: tuple[float, ...] = field(repr=False)
    decode_comm_s: tuple[float, ...] = field(repr=False)
    cycle_noncomm_s: tuple[float, ...] = field(repr=False)
    cycle_comm_s: tuple[float, ...] = field(repr=False)
    fits: tuple[bool, ...] = field(repr=False)
    ep: int = 1  #: GPUs the routed experts are spread over (1: none, tensor parallelism only)

    @property
    def groups(self) -> int:
        """Data-parallel attention groups of ``tp`` GPUs: the batch is a whole number of queries per group."""
        return self.ep // self.tp if self.ep > 1 else 1

    @property
    def gpus(self) -> int:
        """GPUs of one copy of the model: ``ep`` with expert parallelism, else ``tp``."""
        return self.ep if self.ep > 1 else self.tp

    @property
    def label(self) -> str:
        """The degrees in words: ``tp8``, or ``tp1 ep8`` with expert parallelism."""
        return f"tp{self.tp} ep{self.ep}" if self.ep > 1 else f"tp{self.tp}"

    @property
    def tpot_s(self) -> float:
        """Time between a user's tokens at the chosen batch (one decode step), seconds."""
        return 1.0 / self.tokens_per_s_per_user if self.tokens_per_s_per_user > 0 else math.inf

    def at(self, compute_efficiency: float = 1.0, comm_bandwidth: float = 1.0) -> ServingOption:
        """The same degree with non-communication time divided by ``compute_efficiency`` and
        communication time by ``comm_bandwidth``, its batch picked again."""
        parts = [np.asarray(x) / f for x, f in ((self.decode_noncomm_s, compute_efficiency),
                                                 (self.decode_comm_s, comm_bandwidth),
                                                 (self.cycle_noncomm_s, compute_efficiency),
                                                 (self.cycle_comm_s, comm_bandwidth))]
        return _pick(self.tp, self.floor_tokens_per_s_per_user, self.output_tokens, self.ttft_s, *parts,
                     np.asarray(self.fits), self.ep)


def _pick(tp: int, floor: float, output_tokens: int, ttft_s: float, decode_noncomm: np.ndarray,
          decode_comm: np.ndarray, cycle_noncomm: np.ndarray, cycle_comm: np.ndarray,
          fits: np.ndarray, ep: int = 1) -> ServingOption:
    """The option at the largest batch that meets ``floor``: the arrays hold batches of 1.. queries per
    data-parallel group (``ep / tp`` groups with expert parallelism, else one)."""
    groups = ep // tp if ep > 1 else 1
    batches = groups * np.arange(1, decode_noncomm.size + 1)
    per_user = 1.0 / (decode_noncomm + decode_comm)
    per_gpu = batches * output_tokens / (cycle_noncomm + cycle_comm) / (ep if ep > 1 else tp)
    ok = (per_user >= floor) & fits
    last = int(np.flatnonzero(ok)[-1]) if ok.any() else -1
    batch = int(batches[last]) if last >= 0 else 0
    user = float(per_user[last]) if batch else 0.0
    gpu = float(per_gpu[last]) if batch else 0.0
    return ServingOption(tp, floor, output_tokens, batch, gpu, user, float(per_user[0]), bool(fits[0]), ttft_s,
                         *(tuple(x.tolist()) for x in (decode_noncomm, decode_comm, cycle_noncomm, cycle_comm,
                                                       fits)), ep=ep)


@MEMO
def _serving_option(model_id: str, system_id: str, tp: int, input_tokens: int, output_tokens: int, floor: float,
                    dtype: str, cal: Calibration, stack: str = inference.DEFAULT_STACK, ep: int = 1) -> ServingOption:
    batches = (ep // tp if ep > 1 else 1) * np.arange(1, MAX_BATCH + 1)
    r = inference.run(model_id, system_id, tp, batches, input_tokens, output_tokens, dtype=dtype, cal=cal,
                      stack_name=stack, ep=ep)
    decode = np.asarray(r.decode_step_s, dtype=float)
    decode_comm = np.asarray(r.decode_comm_s, dtype=float)
    cycle = np.asarray(r.cycle_s, dtype=float)
    cycle_comm = np.asarray(r.comm_fraction, dtype=float) * cycle
    ttft = float(np.asarray(r.ttft_s, dtype=float)[0])
    return _pick(tp, floor, output_tokens, ttft, decode - decode_comm, decode_comm, cycle - cycle_comm, cycle_comm,
                 np.asarray(r.fits, dtype=bool), ep)


def serving_option(model_id: str, system_id: str, tp: int, input_tokens: int, output_tokens: int,
                   min_tokens_per_s_per_user: float, *, dtype: str = "bf16",
                   cal: Calibration | None = None, stack: str = inference.DEFAULT_STACK, ep: int = 1) -> ServingOption:
    """Serving on ``tp`` GPUs of a system (with ``ep`` > 1: a mixture-of-experts model's routed experts over
    ``ep`` GPUs, attention in ``ep / tp`` data-parallel groups) at the largest batch that meets
    ``min_tokens_per_s_per_user``, with the kernels of the serving ``stack``
    (:data:`multigpu.compute.inference.STACKS`)."""
    return _serving_option(models.memo_key(model_id), system_id, tp, input_tokens, output_tokens,
                           float(min_tokens_per_s_per_user), dtype, calibration.resolve(cal), inference.stack(stack).name,
                           ep)


@dataclass(frozen=True)
class ServingSearch:
    """The outcome of :func:`serve`: every tensor-parallel degree tried, the best, and why none works
    when none does."""

    model: str
    system: str
    gpus: int
    input_tokens: int
    output_tokens: int
    floor_tokens_per_s_per_user: float
    dtype: str
    options: tuple[ServingOption, ...]
    best: ServingOption | None
    reason: str
    max_ttft_s: float | None = None  #: the ceiling on time to first token (None: no ceiling), seconds
    stack: str = inference.DEFAULT_STACK  #: the serving stack (its tensor-parallel all-reduce kernels)


def serve(model_id: str, system_id: str, gpus: int, input_tokens: int, output_tokens: int,
          min_tokens_per_s_per_user: float, *, dtype: str = "bf16", max_ttft_s: float | None = None,
          cal: Calibration | None = None, stack: str = inference.DEFAULT_STACK) -> ServingSearch:
    """The best way to serve on an instance of ``gpus`` GPUs: every tensor-parallel degree that divides the
    instance, the model's heads, and fits in one node; for a mixture-of-experts model also every expert-parallel
    degree above it that is a multiple of it and divides both the instance and the routed experts (attention in
    data-parallel groups, :class:`ServingOption`). A serving target is the per-user floor (one token per
    decode step) and, if given, a ceiling ``max_ttft_s`` on the time to first token. The most tokens/s per
    GPU wins (then the faster per-user speed, then the fewer GPUs per copy, then the smaller tensor-parallel
    degree). ``stack``: the serving stack, whose kernels the tensor-parallel and expert-parallel traffic runs on
    (:data:`multigpu.compute.inference.STACKS`)."""
    ceiling = None if max_ttft_s is None else float(max_ttft_s)
    return _serve(models.memo_key(model_id), system_id, gpus, input_tokens, output_tokens,
                  float(min_tokens_per_s_per_user), dtype,
                  ceiling, calibration.resolve(cal), inference.stack(stack).name)


@MEMO
def _serve(model_id: str, system_id: str, gpus: int, input_tokens: int, output_tokens: int, floor: float,
           dtype: str, max_ttft_s: float | None, cal: Calibration,
           stack: str = inference.DEFAULT_STACK) -> ServingSearch:
    model, system = models.model(model_id), catalog.system(system_id)
    tps = [tp for tp in _divisors(gpus) if tp <= system.gpus_per_node and not model.heads % tp]
    degrees = [(tp, 1) for tp in tps] + [(tp, ep) for tp in tps for ep in _divisors(gpus)
                                         if model.is_moe and ep > tp and not ep % tp and not model.experts % ep]
    options = tuple(_serving_option(models.memo_key(model), system.id, tp, input_tokens, output_tokens, floor, dtype,
                                    cal, stack, ep) for tp, ep in degrees)
    quick = [o for o in options if max_ttft_s is None or o.ttft_s <= max_ttft_s]
    ok = [o for o in quick if o.batch]
    best = (max(ok, key=lambda o: (o.tokens_per_s_per_gpu, o.tokens_per_s_per_user, -o.gpus, -o.tp)) if ok
            else None)
    reason = "" if best is not None else _why_not(options, quick, gpus, system, floor, max_ttft_s)
    return ServingSearch(model.id, system.id, gpus, input_tokens, output_tokens, floor, dtype, options, best, reason,
                         max_ttft_s, stack)


def _why_not(options: tuple[ServingOption, ...], quick: list[ServingOption], gpus: int, system: catalog.System,
             floor: float, max_ttft_s: float | None) -> str:
    """Why no tensor-parallel degree serves: nothing fits, every prefill is over the TTFT ceiling, or the
    fastest layout is below the per-user floor."""
    gpu = catalog.gpu(system.gpu)
    fitting = [o for o in options if o.fits_one]
    if not fitting:
        return say(TOO_BIG_SERVING, n_gpus=gpus, n_memory=Number(gpu.usable_memory_GB, ".0f"),
                   n_tp=min(gpus, system.gpus_per_node))
    if not any(o.fits_one for o in quick):
        fastest = min(o.ttft_s for o in fitting)
        return say(TOO_SLOW_PREFILL, n_fastest=Number(fastest, ".2f"), n_ceiling=Number(max_ttft_s))
    fastest = max(o.tokens_per_s_per_user_at_1 for o in quick if o.fits_one)
    return say(TOO_SLOW_DECODE, n_fastest=Number(fastest, ".1f"), n_floor=Number(floor))
