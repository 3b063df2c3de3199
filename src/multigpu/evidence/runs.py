"""Published training runs (``data/training_runs.csv``) against the training model.

Each row of ``data/training_runs.csv`` is one published training run: the
model, the system, the parallel layout (tensor ``tp``, pipeline ``pp``,
context ``cp``, expert ``ep``, interleaved stages ``vp``, data ``dp``), the
batch, and one measured value in one of the units of :data:`UNITS`. Its
``split`` was set by a hash of its id before any comparison (see
``data/RUNS-NOTES.md``): ``fit``, ``holdout`` or ``sealed``. The rows are for
validation only; nothing here fits a constant.

Sealed rows are dropped right after the file is read, before any mapping or
model call, unless a caller asks for them by passing ``"sealed"`` in
``splits``; the default splits are :data:`DEFAULT_SPLITS` (fit, holdout).

How a row becomes a call of :func:`multigpu.compute.training.step` (:func:`plan`):

- the catalogue model id is the notes' ``model id ...``, else the published
  name looked up in :data:`MODEL_IDS`;
- ``dp`` is ``gpus / (tp x pp x cp)`` when empty, ``cp`` and ``ep`` are 1 when
  empty, ``vp`` (the model's ``interleave``) is 1 when empty;
- recomputation and sequence parallelism are rarely published. An empty
  ``recompute`` is taken as :data:`UNPUBLISHED_RECOMPUTE`, and an empty
  ``sequence_parallel`` as "on when tp > 1" (the Megatron/NeMo recipe
  default). The ``assumed`` column of :func:`compare` names the values taken
  this way;
- Megatron's distributed optimizer (ZeRO stage 1) is the model's default and is kept;
- NVIDIA's NeMo and Megatron-Bridge runs take the ``nemo`` training stack (:func:`stack`), the others the
  default; a pipeline whose layers divide into its chunks only with the embedding and the loss counted as
  layers takes the split that counting gives (:func:`end_stage_layers`).

A row the model cannot express keeps one line of reasons instead of a guess
(:func:`not_modelled`): a model outside the catalogue, an unpublished layout,
FSDP over part of the data-parallel ranks, expert parallelism that does not
tile a stage's ranks, pipeline stages that do not divide the layers, a
whole-run aggregate unit, a FLOP/s value whose FLOP convention is not known,
or the model's own :class:`~multigpu.common.errors.InputError`.

Errors are errors of step TIME: ``rel_error = predicted step time / measured
step time - 1``, positive when the model is slower than the run. For a
throughput unit this is ``measured throughput / predicted throughput - 1``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.compute.layout import DEFAULT_FP8_RECIPE, DEFAULT_GRAD_DTYPE, DEFAULT_TRAINING_STACK, TRAINING_DTYPES
from multigpu.hardware import catalog

RUNS_CSV = DATA_DIR / "training_runs.csv"
SPLITS = ("fit", "holdout", "sealed")
#: the splits compared unless a caller names others; sealed rows are never touched by default
DEFAULT_SPLITS = ("fit", "holdout")
DTYPES = TRAINING_DTYPES  #: the precisions a run may state (TF32: FP32 weights, TF32 tensor-core matmuls)
STEP_S = "s/step"  #: seconds per optimizer step (one global batch)
TOKENS = "tokens/s/GPU"  #: training tokens per second per GPU
TFLOPS = "TFLOP/s/GPU"  #: 1e12 FLOP per second per GPU, in the row's FLOP convention (:data:`FLOP_CONVENTIONS`)
SAMPLES_JOB = "samples/s"  #: training sequences per second of the whole job (all GPUs)
TOKENS_JOB = "tokens/s"  #: training tokens per second of the whole job (all GPUs)
#: per-step units the model can be compared in; any other unit (e.g. GPU-hours of a whole run) is not modelled
UNITS = (STEP_S, TOKENS, TFLOPS, SAMPLES_JOB, TOKENS_JOB)
#: recomputation assumed where a row does not publish it (NeMo / Megatron-Bridge performance recipes
#: run without activation recomputation for most dense models; flash attention makes "selective" moot)
UNPUBLISHED_RECOMPUTE = "none"

#: published model name -> catalogue model id, for rows whose notes do not name the id
MODEL_IDS = {
    "LLAMA3_8B": "llama3.1-8b", "LLAMA3-8B": "llama3.1-8b", "Llama 3.1 8B": "llama3.1-8b",
    "LLAMA3_70B": "llama3.1-70b", "Llama 3.1 70B": "llama3.1-70b",
    "LLAMA3.1_405B": "llama3.1-405b", "Llama 3.1 405B": "llama3.1-405b",
    "Llama 3 405B (pre-training)": "llama3.1-405b",
    "GPT3-175B": "gpt3-175b", "GPT3 175B (NeMo Megatron)": "gpt3-175b",
    "Mixtral-8x7B": "mixtral-8x7b", "DeepSeek V3 671B": "deepseek-v3", "Nemotron-4 340B": "nemotron4-340b",
}

#: FLOP conventions of TFLOP/s/GPU values, by id prefix. A TFLOP/s row whose prefix is not here has an
#: unknown convention and is not compared. The conventions:
#:
#: - ``model``: model FLOPs without recomputation, as MFU counts them
#:   (:func:`multigpu.compute.models.training_flops_per_step`, first value; = ``TrainingStep.model_tflops_per_gpu``);
#: - ``megatron-full-recompute``: Narayanan et al. SC21 eq. 3, the FLOPs executed with full activation
#:   recomputation (:func:`multigpu.compute.models.megatron_flops_per_iteration`), which is how the
#:   Megatron-LM README / SC21 table counts its "achieved teraFLOP/s per GPU".
FLOP_CONVENTIONS = {"T-megatron-sc21-": "megatron-full-recompute"}

_MODEL_ID = re.compile(r"\bmodel id ([a-z0-9][a-z0-9.-]*)")
_FSDP = re.compile(r"\bFSDP (\d+)")
_ATTENTION = re.compile(r"\battention (flash|materialised)\b")
_ETP = re.compile(r"\bETP (\d+)")
_REMAT = re.compile(r"\bremat_policy ([a-z_]+)")


class TrainingRunRow(datafiles.Row):
    """Schema of ``data/training_runs.csv``: one published training run (layout cells empty when not published)."""

    id: datafiles.Text
    model: datafiles.Text
    gpu: datafiles.LowerId
    system_id: datafiles.LowerId
    gpus: datafiles.PositiveCount
    nodes: datafiles.PositiveCount | None = None
    dtype: datafiles.one_of(DTYPES)  # type: ignore[valid-type]
    tp: datafiles.PositiveCount | None = None
    pp: datafiles.PositiveCount | None = None
    cp: datafiles.PositiveCount | None = None
    ep: datafiles.PositiveCount | None = None
    vp: datafiles.PositiveCount | None = None
    dp: datafiles.PositiveCount | None = None
    global_batch: datafiles.PositiveCount | None = None  #: sequences per optimizer step
    micro_batch: datafiles.PositiveCount | None = None  #: sequences per micro-batch
    seq: datafiles.PositiveCount | None = None  #: tokens per sequence
    recompute: datafiles.one_of(models.RECOMPUTE) | None = None  # type: ignore[valid-type]
    sequence_parallel: datafiles.Flag | None = None
    measured: datafiles.Positive  #: the published value, in ``unit``
    unit: datafiles.Text
    framework: datafiles.BlankText = ""
    source: datafiles.Text
    split: datafiles.one_of(SPLITS)  # type: ignore[valid-type]
    notes: datafiles.BlankText = ""

    EXPECTED = {"dtype": "bf16, fp16 or fp8", "split": "fit, holdout or sealed",
                "measured": "a positive number in the row's unit"}
    NOUN = "training run"


@functools.cache
def runs() -> tuple[TrainingRunRow, ...]:
    """Every row of ``data/training_runs.csv`` (all splits, validated, ids unique), in file order.

    Reading is not comparing: callers select splits with :func:`selected` before any model call.
    """
    return tuple(row for _, row in datafiles.read(RUNS_CSV, TrainingRunRow, unique=("id",)))


#: Sealed rows not opened yet: the runs collected for the PCIe side (Lambda's BERT fine-tuning, ids ``T-lambda...``)
#: and for training as renters run it (MaxText's DGX Cloud runs, ``T-dgxc2504-h100-maxtext...``) keep their own
#: sealed third closed until its one opening; ``"sealed"`` selects only the rows opened before.
UNOPENED = re.compile(r"^T-(lambda|dgxc2504-h100-maxtext|foundry)")


def unopened(row: TrainingRunRow) -> bool:
    """Whether ``row`` is a sealed row not opened yet (:data:`UNOPENED`)."""
    return row.split == "sealed" and bool(UNOPENED.match(row.id))


def selected(splits: Iterable[str] = DEFAULT_SPLITS, include_unopened: bool = False) -> list[TrainingRunRow]:
    """The rows whose split is in ``splits`` (sealed rows only if ``"sealed"`` is named; the sealed rows not
    opened yet, :func:`unopened`, only with ``include_unopened``)."""
    wanted = tuple(splits)
    unknown = [s for s in wanted if s not in SPLITS]
    if unknown:
        raise InputError(f"unknown split {', '.join(unknown)}; expected some of {', '.join(SPLITS)}")
    return [row for row in runs() if row.split in wanted and (include_unopened or not unopened(row))]


# ----------------------------------------------------------------------------- row -> model call


@dataclass(frozen=True)
class ModelCall:
    """The arguments of :func:`multigpu.compute.training.step` for one run (``id`` is the run's)."""

    id: str
    model_id: str
    system_id: str
    gpus: int
    tp: int
    pp: int
    dp: int
    global_batch: int  #: sequences per step
    micro_batch: int  #: sequences per micro-batch
    seq: int  #: tokens per sequence
    recompute: str
    sequence_parallel: bool
    interleave: int
    dtype: str
    ep: int = 1
    zero_stage: int = 1
    cp: int = 1
    attention: str = "flash"  #: the notes' ``attention materialised`` for runs before FlashAttention
    etp: int = 0  #: expert tensor parallelism: the notes' ``ETP n``; 0 (unpublished) is tp, Megatron's default
    grad_dtype: str = DEFAULT_GRAD_DTYPE  #: gradient precision of the framework's recipe (:func:`grad_dtype`)
    fp8_recipe: str = DEFAULT_FP8_RECIPE  #: FP8 scaling recipe the row names (:func:`fp8_recipe`)
    stack: str = DEFAULT_TRAINING_STACK  #: the framework's training stack (:func:`stack`)
    end_layers: int = 0  #: layers on the first and on the last stage (:func:`end_stage_layers`), 0 = even
    overlap_p2p: bool = True  #: the interleaved schedule's transfers overlap compute (:func:`megatron_2022`)
    overlap_grad_reduce: bool = True  #: the gradient reduction overlaps the backward pass (:func:`overlap_grad_reduce`)
    recompute_modules: tuple[str, ...] = ()  #: the parts selective recomputation covers (:func:`recompute_modules`)
    shard_group: int = 0  #: hybrid sharding: FSDP over fewer GPUs than the data-parallel ranks (0 = over all)
    assumed: tuple[str, ...] = field(default=())  #: layout values not published, taken by the rules of the module

    @property
    def tokens_per_step(self) -> int:
        """Tokens of one optimizer step: global batch x sequence length."""
        return self.global_batch * self.seq

    def layout(self) -> str:
        """The layout in words, e.g. ``TP4 PP8 DP2 VP5 EP1, mb 1, gbs 128, seq 8192, recompute none, SP on, ZeRO 1``."""
        return (f"TP{self.tp} CP{self.cp} PP{self.pp} DP{self.dp} VP{self.interleave} EP{self.ep}, mb {self.micro_batch}, "
                f"gbs {self.global_batch}, seq {self.seq}, recompute {self.recompute}, "
                f"SP {'on' if self.sequence_parallel else 'off'}, ZeRO {self.zero_stage}"
                + (f", {self.grad_dtype.upper()} grads" if self.grad_dtype != DEFAULT_GRAD_DTYPE else ""))


def model_id(row: TrainingRunRow) -> str | None:
    """The catalogue model id of ``row`` (the notes' ``model id ...``, else :data:`MODEL_IDS`), or None."""
    match = _MODEL_ID.search(row.notes)
    if match:
        return match.group(1).rstrip(".-")
    return MODEL_IDS.get(row.model)


def grad_dtype(row: TrainingRunRow) -> str:
    """The precision ``row``'s framework keeps and reduces gradients in (:data:`multigpu.compute.layout.GRAD_DTYPES`):
    BF16 where NVIDIA's performance recipes set ``grad_reduce_in_fp32 = False`` (Megatron-Bridge: every recipe,
    ``scripts/performance/utils/overrides.py``; NeMo and the DGX Cloud benchmarks built on it: FP8 recipes,
    ``scripts/performance/helpers.py``), and 16-bit where the notes name apex AMP O2 (FP16 model weights, so
    FP16 gradients: 2 bytes, as BF16) and for FP16 runs of Megatron-LM before 2023 (:func:`megatron_2022`: it
    accumulated and all-reduced the gradients in the weights' precision unless told
    ``--accumulate-allreduce-grads-in-fp32``, which the SC21 scripts do not set), else Megatron-LM's FP32 (which
    BF16 runs force)."""
    if row.framework.startswith("Megatron-Bridge") or (row.framework.startswith("NeMo") and row.dtype == "fp8"):
        return "bf16"
    if "AMP O2" in row.notes:
        return "bf16"
    if megatron_2022(row) and row.dtype == "fp16":
        return "bf16"
    return DEFAULT_GRAD_DTYPE


def fp8_recipe(row: TrainingRunRow) -> str:
    """The FP8 scaling recipe of ``row`` (:data:`multigpu.compute.layout.FP8_RECIPES`): ``current`` where the
    source names per-tensor current scaling (``FP8-CS``), else Transformer Engine's default, delayed scaling."""
    notes = row.notes.lower()
    return "current" if "current scaling" in notes or "fp8-cs" in notes else DEFAULT_FP8_RECIPE


def stack(row: TrainingRunRow) -> str:
    """The training stack of ``row`` (:data:`multigpu.compute.layout.TRAINING_STACKS`): ``nemo`` for NVIDIA's
    NeMo and Megatron-Bridge performance recipes (the DGX Cloud benchmarks run them), ``pytorch-fsdp`` for a
    framework on PyTorch FSDP (llm-foundry, torchtitan), ``maxtext`` for MaxText, ``pytorch-ddp`` for plain
    PyTorch data parallelism (DeepLearningExamples' BERT), else ``megatron``."""
    if row.framework.startswith(("NeMo", "Megatron-Bridge")):
        return "nemo"
    if "FSDP" in row.framework:
        return "pytorch-fsdp"
    if row.framework.startswith("MaxText"):
        return "maxtext"
    return "pytorch-ddp" if row.framework.startswith("PyTorch DDP") else DEFAULT_TRAINING_STACK


def megatron_2022(row: TrainingRunRow) -> bool:
    """Whether ``row`` ran Megatron-LM of a year before 2023: it waited for each stage-to-stage transfer, its own
    DDP reduced the gradients once the backward pass had ended (:func:`overlap_grad_reduce`), and it did not
    shard the optimizer (Megatron-LM added ``overlap_p2p_comm`` on 2023-05-31 and ``overlap_grad_reduce`` on
    2023-08-16; its distributed optimizer came in 2022, opt-in)."""
    match = re.match(r"Megatron-LM \((\d{4})\)", row.framework)
    return bool(match and int(match.group(1)) < 2023)


def overlap_grad_reduce(row: TrainingRunRow) -> bool:
    """Whether ``row``'s gradient reduction overlaps the backward pass: before 2023 (:func:`megatron_2022`) only
    where the notes name ``--DDP-impl torch`` (PyTorch's DDP, whose bucketed all-reduce starts during the backward
    pass), not under Megatron-LM's own DDP (``local``, the default), which reduces once the backward pass ends."""
    return not megatron_2022(row) or "--DDP-impl torch" in row.notes


def recompute_modules(row: TrainingRunRow, model: str, recompute: str) -> tuple[str, ...]:
    """The parts of each layer ``row``'s selective recomputation of ``model`` covers: torchtitan's per-operator
    policy (:data:`multigpu.compute.shapes.TORCHTITAN_OP_PARTS`) where the notes name ``selective_ac_option op``,
    MaxText's named policy where they name ``remat_policy P`` (:func:`multigpu.compute.models.named_recompute`);
    else none stated (Megatron-Core's default, the attention core)."""
    if recompute != "selective":
        return ()
    if "selective_ac_option op" in row.notes:
        return models.named_recompute(model, "torchtitan-op")[1]
    match = _REMAT.search(row.notes)
    return models.named_recompute(model, match.group(1))[1] if match else ()


def framework(row: TrainingRunRow) -> str:
    """The framework ``row`` names, without its version or the source in brackets: ``Megatron-Bridge (NeMo 25.11
    container)`` is ``Megatron-Bridge``, ``NeMo 24.07`` is ``NeMo``."""
    name = re.sub(r"\s*\(.*$", "", row.framework)
    return re.sub(r"\s+v?\d[\d.]*$", "", name) or "not stated"


def end_stage_layers(m: models.Model, pp: int, interleave: int) -> int:
    """Transformer layers on the first and on the last pipeline stage where Megatron-Core must count the input
    embedding and the loss as one layer each to split the model (``account_for_embedding_in_pipeline_split`` and
    ``account_for_loss_in_pipeline_split``, which Megatron-Bridge's Llama 3.1 405B recipe sets:
    ``src/megatron/bridge/recipes/llama/llama31_405b.py``): ``(L + 2) / pp - 1`` when the ``L`` layers do not
    divide into ``pp x interleave`` chunks and ``L + 2`` do (126 layers on 8 x 8 chunks: 15); else 0, an even
    split."""
    chunks = pp * interleave
    if pp > 1 and m.layers % chunks and (m.layers + 2) % chunks == 0:
        return (m.layers + 2) // pp - 1
    return 0


def flop_convention(row: TrainingRunRow) -> str | None:
    """The FLOP convention of a TFLOP/s/GPU row (see :data:`FLOP_CONVENTIONS`), or None if unknown."""
    return next((c for prefix, c in FLOP_CONVENTIONS.items() if row.id.startswith(prefix)), None)


def _etp(row: TrainingRunRow, default: int) -> int:
    """The expert tensor-parallel degree the notes publish (``ETP n``), else ``default``."""
    match = _ETP.search(row.notes)
    return int(match.group(1)) if match else default


def _attention(row: TrainingRunRow) -> str:
    """The attention kernel of ``row``: ``materialised`` where the notes say so (runs before FlashAttention),
    else ``flash``."""
    match = _ATTENTION.search(row.notes)
    return match.group(1) if match else "flash"


def _fsdp(row: TrainingRunRow) -> int:
    """GPUs that FSDP shards parameters across (0: no FSDP). Megatron-Bridge tables give an ``FSDP n``
    column; llm-foundry runs are PyTorch FSDP (``FULL_SHARD``) over all GPUs."""
    match = _FSDP.search(row.notes)
    if match:
        return int(match.group(1))
    if "FULL_SHARD" in row.notes or "FSDP" in row.framework:
        return row.gpus
    return 0


def _zero_stage(row: TrainingRunRow, fsdp: int) -> int:
    """The ZeRO stage of ``row``: 3 under FSDP, 0 under PyTorch DDP (every rank keeps the whole optimizer state
    and all-reduces the gradients) and under Megatron-LM before 2023 (:func:`megatron_2022`: its distributed
    optimizer came in 2022 and is opt-in, ``--use-distributed-optimizer``), else Megatron's distributed
    optimizer (1)."""
    if fsdp:
        return 3
    return 0 if "PyTorch DDP" in row.framework or megatron_2022(row) else 1


def plan(row: TrainingRunRow) -> tuple[ModelCall | None, list[str]]:
    """The model call for ``row``, or None and the reasons the model cannot express it.

    Checks only the row and the catalogues; the model's own checks (heads, whole nodes) are left
    to :func:`multigpu.compute.training.step`. An FSDP run (parameters sharded over all its data-parallel
    ranks) is ZeRO stage 3; sharding over a part of them (hybrid sharding) is not modelled.
    """
    reasons = []
    if row.unit not in UNITS:
        reasons.append(f"unit '{row.unit}' is a whole-run aggregate, not a per-step quantity")
    elif row.unit == TFLOPS and flop_convention(row) is None:
        reasons.append("TFLOP/s/GPU whose FLOP convention (model or hardware FLOPs) is not stated")
    mid = model_id(row)
    m = models.models().get(mid) if mid else None
    if m is None:
        reasons.append(f"model '{row.model}' is not in the model catalogue")
    if row.system_id not in catalog.systems():
        reasons.append(f"system '{row.system_id}' is not in the catalogue")
    elif catalog.system(row.system_id).gpu != row.gpu:
        reasons.append(f"system '{row.system_id}' does not hold GPU '{row.gpu}'")
    missing = [c for c in ("tp", "pp", "micro_batch", "global_batch", "seq") if getattr(row, c) is None]
    if missing:
        reasons.append(f"layout not published: {', '.join(missing)}")
    cp = row.cp or 1
    fsdp = _fsdp(row)
    if missing:
        return None, reasons
    tp, pp, ep, vp = row.tp, row.pp, row.ep or 1, row.vp or 1
    dp = row.dp
    if dp is None:
        if row.gpus % (tp * pp * cp):
            reasons.append(f"{row.gpus} GPUs are not divisible by tp x pp x cp = {tp * pp * cp}")
        dp = row.gpus // (tp * pp * cp)
    elif tp * pp * cp * dp != row.gpus:
        reasons.append(f"tp x pp x cp x dp = {tp * pp * cp * dp} is not the {row.gpus} GPUs")
    if fsdp and (dp * cp) % fsdp:
        reasons.append(f"FSDP over {fsdp} GPUs does not divide the {dp * cp} data-parallel ranks")
    if m is not None:
        if pp * vp > m.layers:
            reasons.append(f"pp x vp = {pp * vp} is more than the {m.layers} layers of '{m.id}'")
        if ep > 1 and not m.is_moe:
            reasons.append(f"expert parallelism (ep {ep}) on the dense model '{m.id}'")
        elif ep > 1 and ((tp * dp * cp) % (_etp(row, tp) * ep) or m.experts % ep):
            reasons.append(f"expert parallelism etp {_etp(row, tp)} x ep {ep} does not divide the tp x dp x cp = "
                           f"{tp * dp * cp} ranks of a stage, or ep the {m.experts} experts")
    if reasons:
        return None, reasons
    assumed = tuple(name for name, value in (("cp", row.cp), ("dp", row.dp), ("recompute", row.recompute),
                                              ("sequence_parallel", row.sequence_parallel)) if value is None)
    recompute = row.recompute or UNPUBLISHED_RECOMPUTE
    sp = row.sequence_parallel if row.sequence_parallel is not None else tp > 1
    call = ModelCall(row.id, m.id, row.system_id, row.gpus, tp, pp, dp, row.global_batch, row.micro_batch, row.seq,
                     recompute, sp, vp, row.dtype, ep=ep, zero_stage=_zero_stage(row, fsdp), cp=cp,
                     attention=_attention(row), etp=_etp(row, 0), grad_dtype=grad_dtype(row), fp8_recipe=fp8_recipe(row),
                     stack=stack(row), end_layers=end_stage_layers(m, pp, vp), overlap_p2p=not megatron_2022(row),
                     overlap_grad_reduce=overlap_grad_reduce(row),
                     recompute_modules=recompute_modules(row, m.id, recompute),
                     shard_group=fsdp if fsdp and fsdp < dp * cp else 0, assumed=assumed)
    return call, []


def model_step(call: ModelCall, cal: Calibration | None = None) -> training.TrainingStep:
    """The one place the model is called: :func:`multigpu.compute.training.step` for ``call``."""
    return training.step(call.model_id, call.system_id, call.gpus, call.tp, call.pp, call.global_batch,
                         call.micro_batch, dp=call.dp, cal=cal, seq=call.seq, recompute=call.recompute,
                         sequence_parallel=call.sequence_parallel, interleave=call.interleave, dtype=call.dtype,
                         zero_stage=call.zero_stage, ep=call.ep, cp=call.cp, attention=call.attention,
                         etp=call.etp, grad_dtype=call.grad_dtype, fp8_recipe=call.fp8_recipe, stack=call.stack,
                         pp_first_layers=call.end_layers, pp_last_layers=call.end_layers,
                         overlap_p2p=call.overlap_p2p, overlap_grad_reduce=call.overlap_grad_reduce,
                         recompute_modules=call.recompute_modules, shard_group=call.shard_group)


# ----------------------------------------------------------------------------- units


def flops_per_step(row: TrainingRunRow, call: ModelCall) -> float:
    """FLOPs of one step in the row's FLOP convention (:data:`FLOP_CONVENTIONS`); only for TFLOP/s/GPU rows."""
    convention = flop_convention(row)
    if convention == "model":
        return float(models.training_flops_per_step(call.model_id, call.global_batch, call.seq, "none")[0])
    if convention == "megatron-full-recompute":
        return float(models.megatron_flops_per_iteration(call.model_id, call.global_batch, call.seq,
                                                         full_recompute=True))
    raise InputError(f"run '{row.id}': TFLOP/s/GPU with an unknown FLOP convention")


def in_unit(row: TrainingRunRow, call: ModelCall, step_s: float) -> float:
    """A step time (seconds) in the row's unit.

    - ``s/step``: ``step_s``;
    - ``tokens/s/GPU``: ``global_batch x seq / (step_s x gpus)``;
    - ``TFLOP/s/GPU``: ``FLOPs per step / (step_s x gpus) / 1e12``, FLOPs in the row's convention;
    - ``samples/s``: ``global_batch / step_s``; ``tokens/s``: ``global_batch x seq / step_s`` (whole job).
    """
    if row.unit == STEP_S:
        return step_s
    if row.unit == TOKENS:
        return call.tokens_per_step / (step_s * call.gpus)
    if row.unit == SAMPLES_JOB:
        return call.global_batch / step_s
    if row.unit == TOKENS_JOB:
        return call.tokens_per_step / step_s
    if row.unit == TFLOPS:
        return flops_per_step(row, call) / (step_s * call.gpus) / 1e12
    raise InputError(f"run '{row.id}': unit '{row.unit}' is not a per-step quantity")


def measured_step_s(row: TrainingRunRow, call: ModelCall) -> float:
    """The step time (seconds) that the row's measured value implies (the inverse of :func:`in_unit`)."""
    if row.unit == STEP_S:
        return row.measured
    return in_unit(row, call, 1.0) / row.measured  # throughput units are inversely proportional to step time


def time_error(row: TrainingRunRow, call: ModelCall, step_s: float) -> float:
    """Relative error of the step TIME: ``predicted step time / measured step time - 1`` (positive: the
    model is slower than the run). For throughput units this is ``measured / predicted - 1``."""
    return step_s / measured_step_s(row, call) - 1


# ----------------------------------------------------------------------------- comparison


def _evaluate(splits: Iterable[str], cal: Calibration | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(compared rows, not-modelled rows) for the runs of ``splits``; other splits are dropped before anything
    is computed."""
    compared, skipped = [], []
    for row in selected(splits):
        call, reasons = plan(row)
        if call is not None:
            try:
                result = model_step(call, cal)
            except InputError as exc:  # the model's own refusal (heads, whole nodes, ...)
                call, reasons = None, [exc.message]
        if call is None:
            skipped.append({"id": row.id, "split": row.split, "reason": "; ".join(reasons)})
            continue
        step_s = float(result.step_time_s)
        compared.append({
            "id": row.id, "split": row.split, "model_id": call.model_id, "system_id": call.system_id,
            "gpu": row.gpu, "gpu_family": gpu_family(row.gpu), "dtype": row.dtype, "gpus": row.gpus,
            "layout": call.layout(), "measured": row.measured, "predicted": in_unit(row, call, step_s),
            "unit": row.unit, "measured_step_s": measured_step_s(row, call), "predicted_step_s": step_s,
            "rel_error": time_error(row, call, step_s), "fits": bool(result.fits), "stack": call.stack,
            "framework": framework(row),
            "assumed": ", ".join(call.assumed), "source": row.source})
    return compared, skipped


COMPARE_COLUMNS = ("id", "split", "model_id", "system_id", "gpu", "gpu_family", "dtype", "gpus", "layout",
                   "measured", "predicted", "unit", "measured_step_s", "predicted_step_s", "rel_error", "fits",
                   "stack", "framework", "assumed", "source")


def compare(splits: Iterable[str] = DEFAULT_SPLITS, cal: Calibration | None = None) -> pd.DataFrame:
    """The training model against every run of ``splits`` it can express, one row per run.

    Columns: ``id, split, model_id, system_id, gpu, gpu_family, dtype, gpus, layout``; ``measured`` and
    ``predicted`` in the row's ``unit``; ``measured_step_s`` (the step time, s, the measurement implies)
    and ``predicted_step_s`` (the model's, s); ``rel_error`` = predicted / measured step time - 1
    (positive: the model is slower); ``fits`` (the model's memory estimate fits the GPU); ``stack`` (the
    training stack the run is modelled with, :func:`stack`); ``framework`` (as published, :func:`framework`);
    ``assumed``
    (layout values not published, see the module docstring); ``source``. ``cal``: a calibration for
    the model (None: the shipped one).
    """
    compared, _ = _evaluate(splits, cal)
    return pd.DataFrame(compared, columns=list(COMPARE_COLUMNS))


def not_modelled(splits: Iterable[str] = DEFAULT_SPLITS, cal: Calibration | None = None) -> pd.DataFrame:
    """The runs of ``splits`` the model cannot express: ``id, split, reason`` (reasons joined by ``; ``)."""
    _, skipped = _evaluate(splits, cal)
    return pd.DataFrame(skipped, columns=["id", "split", "reason"])


def gpu_family(gpu: str) -> str:
    """The GPU family of a catalogue GPU id: ``h100-sxm`` -> ``H100``, ``a100-sxm4-80gb`` -> ``A100``."""
    return gpu.split("-")[0].upper()


def summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median and worst |time error| (fractions) of a :func:`compare` frame.

    One row per split and group: ``by`` is ``all``, ``gpu`` (family), ``dtype`` or ``gpu x dtype``, and
    ``group`` the value. Columns: ``split, by, group, runs, median_abs_error, worst_abs_error``.
    """
    columns = ["split", "by", "group", "runs", "median_abs_error", "worst_abs_error"]
    if comparison.empty:
        return pd.DataFrame(columns=columns)
    data = comparison.assign(abs_error=comparison["rel_error"].abs(), all="all",
                             gpu_x_dtype=comparison["gpu_family"] + " " + comparison["dtype"])
    parts = []
    for by, key in (("all", "all"), ("gpu", "gpu_family"), ("dtype", "dtype"), ("gpu x dtype", "gpu_x_dtype")):
        part = (data.groupby(["split", key])["abs_error"]
                .agg(runs="size", median_abs_error="median", worst_abs_error="max").reset_index()
                .rename(columns={key: "group"}))
        parts.append(part.assign(by=by))
    out = pd.concat(parts, ignore_index=True)[columns]
    return out.astype({"runs": int, "median_abs_error": float, "worst_abs_error": float})
