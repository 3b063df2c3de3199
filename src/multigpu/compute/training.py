"""Training step time on a system: compute, the pipeline bubble and the exposed communication.

One step of a Megatron-style 3D-parallel layout (tensor ``tp`` x pipeline
``pp`` x data ``dp`` GPUs; ranks ordered tp, then dp, then pp, so that a
tensor-parallel group sits inside a node) is::

    step = m * t_busiest                        # m micro-batches, paced by the busiest stage
         + (sum of the stages' t - t_busiest) / v      # 1F1B bubble, v interleaved stages
         + t_pp                                 # stage-to-stage send/recv on the critical path
         + t_dp                                 # gradient reduction not hidden by the backward pass
         + t_opt                                # the optimizer step

where a stage's ``t`` is ``t_compute + t_tp + t_ep + t_cp`` of its transformer layers
(:meth:`multigpu.compute.layout.Layout.stage_layers`: an even split, or the first and last stages' stated
counts), and the last stage also runs the output layer's GEMMs (:func:`_pipeline`). With layers split evenly
and no output layer this is ``(m + (pp - 1) / v) x t``. The training stack (:data:`TRAINING_STACKS`) sets
two switches: ``nemo`` overlaps each pass's TP collectives with that pass's GEMMs, and ``nanotron`` takes
layers off the last stage until the step is fastest (:func:`_balanced`); ``megatron`` and ``pytorch-ddp`` set
neither.

- ``t_compute``: hardware FLOPs of one micro-batch on one stage over the
  achievable FLOP/s (:func:`multigpu.compute.efficiency.achievable_fraction`, carried
  from the A100 fit to each GPU and precision by its measured matmul ceiling,
  :mod:`multigpu.compute.gemm`); attention runs at the 16-bit rate under FP8.
  Without FlashAttention the score matrix also goes through memory
  (:func:`multigpu.compute.models.score_traffic_bytes`).
- ``t_tp``: tensor-parallel collectives of one micro-batch on one stage
  (Megatron: 2 all-reduces per layer and pass, or reduce-scatter + all-gather
  with sequence parallelism). Forward ones (and those of a full-recompute
  forward) are exposed; backward ones overlap the weight-gradient GEMMs, so
  only what exceeds a third of the micro-batch's compute shows.
- ``t_ep``: MoE all-to-all (dispatch and combine, forward and backward), exposed.
- ``t_pp``: 2 v (m + pp - 1) activation transfers of ``b s h`` elements,
  scattered over the stage's ``tp`` ranks (Megatron's scatter-gather); the
  interleaved schedule (v > 1) overlaps the steady-state ones with compute, so
  only the 2 v (pp - 1) of warm-up and cool-down are exposed.
- Bytes on the wire: BF16 activations and parameters under FP8 training
  (:data:`WIRE_DTYPE`), FP32 gradients in the data-parallel reduction; an
  FP8 MoE dispatch only where a layout names it (``ep_dispatch``, DeepSeek-V3's).
- ``t_dp``: all-reduce of this stage's gradients, or with ZeRO 1-2 a
  reduce-scatter, which overlaps the backward compute of one micro-batch,
  and an all-gather of the updated parameters, which overlaps the next
  step's first forward pass; with ZeRO-3 (FSDP) also a parameter all-gather
  per pass of each micro-batch, prefetched during that pass's compute, so
  only what outlasts the compute shows.

- ``t_opt``: the mixed-precision Adam step over the parameters this GPU updates
  (its ZeRO shard), memory-bound: :data:`ADAM_STEP_BYTES` per parameter, and the
  gradient buffer zeroed for the next step, at the memory bandwidth a STREAM
  triad reaches on the GPU (:func:`_optimizer_s`; :func:`adam_step_bytes` under
  FP32 weights or BF16 moments).

The compute's efficiency is a reference line (:mod:`multigpu.compute.efficiency`, Megatron-LM's kernels as
Korthikanti et al. 2022 timed them) with two constants of the training stack's own: its share of the GEMM
ceiling and its non-GEMM memory traffic (``data/stack_efficiency.csv``,
:func:`multigpu.compute.efficiency.stack_kernels`).

Collective times come from :mod:`multigpu.comm.collectives` on the system's
topology, so a slower interconnect shows up here, and only here.

Training methods (``method``): ``pretrain`` and ``full`` (full fine-tuning)
are the same maths; ``lora`` (Hu et al. 2021, https://arxiv.org/abs/2106.09685)
freezes the base weights and trains rank-``r`` adapters ``B A`` beside every
linear layer of the transformer blocks (:func:`lora_params`). Per step it
then

- computes the forward pass and the backward pass's activation gradients,
  but not the frozen weights' gradient GEMMs: about ``4 N`` FLOPs per token
  instead of ``6 N`` (attention scores, which have no weights, keep their
  forward + 2x backward), plus ``6`` per adapter parameter
  (:func:`training_flops`). An approximation: it ignores the first layer's
  unneeded input gradient and the adapters' poor GEMM efficiency;
- holds the base weights in 16 bits (no gradients, no optimizer states for
  them) and the adapters in FP32 with their FP32 gradients and Adam moments
  (16 bytes per adapter parameter); activations as full training (every
  adapted layer keeps its input for its adapter's gradient);
- reduces only the adapters' gradients over the data-parallel ranks (ZeRO-3
  still gathers the frozen, sharded base weights every pass), and has no
  weight-gradient GEMMs for backward tensor-parallel traffic to hide behind.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from multigpu.comm import calibration, collectives, expert
from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.compute import efficiency, gemm, memorybw, models
from multigpu.compute.layout import (
    ACTIVATION_CACHES,
    DEFAULT_FP8_RECIPE,
    DEFAULT_GRAD_DTYPE,
    DEFAULT_TRAINING_STACK,
    EP_DISPATCH_DTYPES,
    EP_KERNELS,
    FP8_RECIPES,
    GRAD_DTYPES,
    METHODS,
    MOMENT_DTYPES,
    PP_SCHEDULES,
    TRAINING_DTYPES,
    TRAINING_STACKS,
    Layout,
)
from multigpu.compute.stepflops import (
    fp8_cast_bytes_per_flop,
    lora_params,
    training_flops,
)
from multigpu.hardware import catalog

#: Bytes per gradient element in the default data-parallel reduction (FP32 main gradients).
GRAD_REDUCE_BYTES = models.dtype_bytes(DEFAULT_GRAD_DTYPE)
#: What frameworks send between GPUs for each training precision: FP8 training (Transformer Engine) keeps BF16
#: activations and parameters on the wire; only the GEMMs run in FP8. TF32 and FP32 training hold and send FP32.
WIRE_DTYPE = {"bf16": "bf16", "fp16": "fp16", "fp8": "bf16", "tf32": "fp32", "fp32": "fp32"}
#: The precision of the work FP8 does not reach, for each training precision: 16-bit under FP8. FP8 applies to
#: the transformer layers' linear GEMMs (Transformer Engine modules) only. Attention (FlashAttention) runs in 16
#: bits, and so does the vocabulary projection: Megatron-Core's output layer is a ``ColumnParallelLinear``
#: (``megatron/core/models/gpt/gpt_model.py``), not a Transformer Engine module, so ``fp8_autocast`` leaves it
#: in BF16.
ATTENTION_DTYPE = {"bf16": "bf16", "fp16": "fp16", "fp8": "bf16", "tf32": "tf32", "fp32": "fp32"}
#: Precisions whose GEMMs run on the CUDA cores, not the tensor cores (FP32 without TF32).
CUDA_CORE_DTYPES = ("fp32",)
#: Bytes per element of an FP8 dispatch: one byte plus one FP32 scale per 128 elements (DeepSeek-V3's 1 x 128
#: tile-wise activation scaling, section 3.3.2).
FP8_DISPATCH_BYTES = 1.0 + 4.0 / 128
#: Share of a micro-batch's compute that is the backward weight-gradient GEMMs
#: (forward : backward-data : backward-weight = 1 : 1 : 1), which backward TP comm can hide behind.
WGRAD_SHARE = 1.0 / 3.0
#: Share of a micro-batch's compute that is its backward pass, which the DP reduction can hide behind.
BACKWARD_SHARE = 2.0 / 3.0
#: Bytes one mixed-precision Adam step moves per parameter it updates: the three FP32 states read and written
#: (24), the FP32 gradient read for the gradient-norm clipping and again for the update (8), and the FP32 master
#: copy read again and written to the 16-bit weight (6) by a pass of its own, as Megatron-LM's
#: ``_copy_main_params_to_model_params`` (``megatron/optimizer/optimizer.py``) does after the update.
#: Megatron-LM clips at norm 1.0 by default (``--clip-grad``); Kingma & Ba 2015, Micikevicius et al.
#: 2018 (https://arxiv.org/abs/1710.03740) for the mixed-precision master copy. Other precisions:
#: :func:`adam_step_bytes`.
ADAM_STEP_BYTES = 38.0
#: The STREAM-style kernel (``data/hbm_bandwidth.csv``) whose access pattern the optimizer step follows: its
#: passes read several arrays and write fewer, as ``triad`` reads two and writes one
#: (:func:`multigpu.compute.memorybw.hbm_efficiency`).
OPTIMIZER_KERNEL = "triad"
#: LoRA's backward pass is the activation-gradient GEMMs only (forward : backward = 1 : 1 of the weight GEMMs):
#: the share of a micro-batch's compute the DP reduction can hide behind, and none for backward TP traffic.
LORA_BACKWARD_SHARE = 1.0 / 2.0
LORA_WGRAD_SHARE = 0.0
#: Bytes per LoRA adapter parameter in memory: FP32 weight, FP32 gradient, Adam's two FP32 moments (no separate
#: master copy), as PEFT keeps trainable adapters in FP32 beside 16-bit frozen weights.
LORA_STATE_DTYPE = "fp32"


def make_layout(model: models.Model, gpus: int, tp: int, pp: int, dp: int | None, global_batch: int,
                micro_batch: int, **options: Any) -> Layout:
    """Check that the layout divides (GPUs, heads, layers, batch, sequence) and return it; InputError if not.
    GPUs = tp x cp x pp x dp."""
    cp = options.get("cp", 1)
    if min(gpus, tp, pp, global_batch, micro_batch, cp) < 1:
        raise InputError("gpus, tp, pp, cp, global batch and micro-batch must be positive")
    if gpus % (tp * pp * cp):
        raise InputError(f"--gpus {gpus} is not divisible by tp x pp x cp = {tp * pp * cp}")
    dp = gpus // (tp * pp * cp) if dp is None else dp
    if tp * pp * cp * dp != gpus:
        raise InputError(f"tp x pp x cp x dp = {tp * pp * cp * dp} is not --gpus {gpus}")
    if model.heads % tp or model.kv_heads % tp and tp % model.kv_heads:
        raise InputError(f"tp {tp} does not divide the {model.heads} heads of '{model.id}'")
    seq = options.get("seq", 2048)
    if cp > 1 and seq % (2 * cp):
        raise InputError(f"--seq {seq} does not split into 2 x cp = {2 * cp} equal chunks (ring attention)")
    interleave = options.get("interleave", 1)
    if pp * interleave > model.layers:
        raise InputError(f"pp x interleave = {pp * interleave} is more than the {model.layers} layers of "
                         f"'{model.id}'")
    if global_batch % (micro_batch * dp):
        raise InputError(f"global batch {global_batch} is not divisible by micro-batch x dp = {micro_batch * dp}")
    if interleave > 1 and pp == 1:
        raise InputError("--interleave needs pipeline parallelism (pp > 1)")
    check_method(options.get("method", "pretrain"), options.get("lora_rank", 0))
    if options.get("etp", 0) not in (0, 1, tp):
        raise InputError(f"expert tensor parallelism {options['etp']} is neither 1 nor tp {tp}")
    check_grad_dtype(options.get("grad_dtype", DEFAULT_GRAD_DTYPE))
    if options.get("dtype", TRAINING_DTYPES[0]) not in TRAINING_DTYPES:
        raise InputError(f"unknown training precision '{options['dtype']}'; expected {', '.join(TRAINING_DTYPES)}")
    if options.get("fp8_recipe", DEFAULT_FP8_RECIPE) not in FP8_RECIPES:
        raise InputError(f"unknown FP8 recipe '{options['fp8_recipe']}'; expected {' or '.join(FP8_RECIPES)}")
    if options.get("ep_dispatch", EP_DISPATCH_DTYPES[0]) not in EP_DISPATCH_DTYPES:
        raise InputError(f"unknown MoE dispatch precision '{options['ep_dispatch']}'; expected "
                         f"{' or '.join(EP_DISPATCH_DTYPES)}")
    check_stage_layers(model, pp, interleave, options.get("pp_first_layers", 0), options.get("pp_last_layers", 0))
    check_ep_kernel(options.get("ep_kernel", EP_KERNELS[0]), options.get("dtype", TRAINING_DTYPES[0]))
    check_pp_schedule(options.get("pp_schedule", PP_SCHEDULES[0]), pp, interleave, global_batch // (micro_batch * dp))
    check_stack(options.get("stack", DEFAULT_TRAINING_STACK))
    check_stack_layout(options.get("stack", DEFAULT_TRAINING_STACK), tp, pp, options.get("cp", 1),
                       options.get("ep", 1), options.get("zero_stage", 1))
    check_recompute_layers(model, pp, interleave, options.get("recompute", "none"), options.get("recompute_layers", 0))
    models.recomputed_modules(options.get("recompute", "none"), tuple(options.get("recompute_modules", ())))
    check_memory_savers(options.get("dtype", TRAINING_DTYPES[0]), options.get("activation_cache", ACTIVATION_CACHES[0]),
                        options.get("moment_dtype", MOMENT_DTYPES[0]))
    check_shard_group(options.get("shard_group", 0), dp * cp, options.get("zero_stage", 1),
                      options.get("method", "pretrain"))
    return Layout(tp=tp, pp=pp, dp=dp, global_batch=global_batch, micro_batch=micro_batch, **options)


def check_shard_group(group: int, ranks: int, zero_stage: int, method: str) -> None:
    """An InputError unless a hybrid-sharding group (``group`` > 0; 0 = none) divides the ``ranks`` data-parallel
    ranks (dp x cp) and shards something (ZeRO 1 to 3) of a job that is not LoRA, whose adapters the model shards
    over every rank."""
    if not group:
        return
    if group < 0 or ranks % group:
        raise InputError(f"a shard group of {group} does not divide the {ranks} data-parallel ranks (dp x cp)")
    if zero_stage == 0 or method == "lora":
        raise InputError("hybrid sharding (a shard group) needs ZeRO 1 to 3 and a job that is not LoRA")


def check_stage_layers(model: models.Model, pp: int, interleave: int, first: int, last: int) -> None:
    """An InputError unless the first and last stages' stated layer counts (0 = not stated; with interleaving,
    the layers a GPU holds over its chunks) leave every other pipeline stage at least one layer and add up to
    the model's layers on two stages."""
    stated = [n for n in (first, last) if n]
    if not stated:
        return
    if min(stated) < 0 or pp < 2:
        raise InputError("first- and last-stage layer counts need pipeline parallelism (pp > 1) and are > 0")
    others = pp - len(stated)
    if sum(stated) + others > model.layers or (others == 0 and sum(stated) != model.layers):
        raise InputError(f"first- and last-stage layers {' + '.join(map(str, stated))} leave the other "
                         f"{others} stages of '{model.id}' ({model.layers} layers) "
                         f"{model.layers - sum(stated)} layers; each stage needs at least one"
                         if others else f"first- and last-stage layers {first} + {last} are not the "
                         f"{model.layers} layers of '{model.id}'")


def check_ep_kernel(kernel: str, dtype: str) -> None:
    """An InputError unless ``kernel`` is one of :data:`EP_KERNELS` and can carry ``dtype``'s activations
    (DeepEP sends BF16 or FP8, not the FP32 of TF32 or FP32 training)."""
    if kernel not in EP_KERNELS:
        raise InputError(f"unknown MoE dispatch kernel '{kernel}'; expected {' or '.join(EP_KERNELS)}")
    if kernel == "deepep" and _wire_bytes(dtype) > 2:
        raise InputError(f"DeepEP's kernels send BF16 or FP8 activations, not the FP32 of --dtype {dtype}; use "
                         "--ep-kernel nccl")


def check_memory_savers(dtype: str, cache: str, moments: str) -> None:
    """An InputError unless ``cache`` is one of :data:`ACTIVATION_CACHES` (``fp8`` with FP8 training only) and
    ``moments`` one of :data:`MOMENT_DTYPES`."""
    if cache not in ACTIVATION_CACHES or cache == "fp8" and dtype != "fp8":
        raise InputError(f"activation cache '{cache}': expected {' or '.join(ACTIVATION_CACHES)}, fp8 with "
                         f"--dtype fp8 only (got {dtype})")
    if moments not in MOMENT_DTYPES:
        raise InputError(f"unknown moment precision '{moments}'; expected {' or '.join(MOMENT_DTYPES)}")


def check_pp_schedule(schedule: str, pp: int, interleave: int, microbatches: int) -> None:
    """An InputError unless ``schedule`` is one of :data:`PP_SCHEDULES` and, for DualPipe, the layout is one it
    runs: an even number of stages, no interleaving, and an even number of micro-batches, at least twice the
    stages (``DualPipe.step``'s assertions, deepseek-ai/DualPipe at 3da1bbe, ``dualpipe/dualpipe.py``)."""
    if schedule not in PP_SCHEDULES:
        raise InputError(f"unknown pipeline schedule '{schedule}'; expected {' or '.join(PP_SCHEDULES)}")
    if schedule != "dualpipe":
        return
    if pp < 2 or pp % 2 or interleave > 1:
        raise InputError(f"DualPipe needs an even number of pipeline stages and no interleaving; got pp {pp}, "
                         f"interleave {interleave}")
    if microbatches % 2 or microbatches < 2 * pp:
        raise InputError(f"DualPipe needs an even number of micro-batches, at least 2 x pp = {2 * pp}; the layout "
                         f"gives {microbatches}")


def check_recompute_layers(model: models.Model, pp: int, interleave: int, recompute: str, n: int) -> None:
    """An InputError unless ``n`` (layers recomputed per virtual stage, 0 = all) goes with full recomputation
    and is at most the layers of a virtual stage."""
    if n < 0:
        raise InputError(f"--recompute-layers {n} is negative")
    if n and recompute != "full":
        raise InputError(f"--recompute-layers {n} needs --recompute full (it says how many layers of each "
                         f"virtual stage are fully recomputed)")
    per_chunk = -(-model.layers // (pp * interleave))
    if n > per_chunk:
        raise InputError(f"--recompute-layers {n} is more than the {per_chunk} layers of a virtual stage "
                         f"(pp {pp} x interleave {interleave} over {model.layers} layers)")


def check_stack(stack: str) -> None:
    """An InputError unless ``stack`` is one of :data:`TRAINING_STACKS`."""
    if stack not in TRAINING_STACKS:
        raise InputError(f"unknown training stack '{stack}'; expected one of {', '.join(TRAINING_STACKS)}")


def check_stack_layout(stack: str, tp: int, pp: int, cp: int, ep: int, zero_stage: int) -> None:
    """An InputError where the layout asks for what ``stack`` does not run: more than data parallelism under a
    stack that runs it alone (:attr:`TrainingStack.data_parallel_only`: TP, PP, CP and EP 1), or another ZeRO
    stage than the one it always runs (:attr:`TrainingStack.zero_stage`)."""
    kind = TRAINING_STACKS[stack]
    if kind.data_parallel_only and (tp, pp, cp, ep) != (1, 1, 1, 1):
        raise InputError(f"the {stack} stack runs data parallelism alone (TP, PP, CP and EP 1); got TP {tp}, "
                         f"PP {pp}, CP {cp}, EP {ep}")
    if kind.zero_stage is not None and zero_stage != kind.zero_stage:
        raise InputError(f"the {stack} stack runs ZeRO {kind.zero_stage}; got ZeRO {zero_stage}")


def check_grad_dtype(grad_dtype: str) -> None:
    """An InputError unless ``grad_dtype`` is one of :data:`GRAD_DTYPES`."""
    if grad_dtype not in GRAD_DTYPES:
        raise InputError(f"unknown gradient precision '{grad_dtype}'; expected {' or '.join(GRAD_DTYPES)}")


def check_method(method: str, lora_rank: int) -> None:
    """An InputError unless ``method`` is one of :data:`METHODS` and a LoRA rank is a whole number > 0."""
    if method not in METHODS:
        raise InputError(f"unknown training method '{method}'; expected one of {', '.join(METHODS)}")
    if method == "lora" and (int(lora_rank) != lora_rank or lora_rank < 1):
        raise InputError(f"LoRA rank {lora_rank} is not a whole number > 0")


# ------------------------------------------------------------------ LoRA


def _lora_states_bytes(model: models.Model, lay: Layout) -> Any:
    """The LoRA adapters' weights, gradients and Adam moments on one GPU (FP32, 16 bytes per parameter), split
    over the ``tp x pp`` ranks and sharded over the ``dp x cp`` ranks by the ZeRO stage, bytes."""
    adapters = lora_params(model, lay.lora_rank) / (np.asarray(lay.tp) * np.asarray(lay.pp))
    states = models.model_state_bytes_per_gpu(adapters, np.asarray(lay.dp) * np.asarray(lay.cp), lay.zero_stage,
                                              LORA_STATE_DTYPE, LORA_STATE_DTYPE)
    return sum(np.asarray(v, dtype=float) for v in states.values())


def peak_flops(gpu: catalog.Gpu, dtype: str) -> float:
    """Dense peak FLOP/s of ``gpu`` in ``dtype`` (bf16, fp16, fp8, fp4 / mxfp4: both run at the GPU's one
    dense FP4 tensor-core rate, tf32: its TF32 tensor rate, fp32: what an FP32 GEMM gets without TF32)."""
    rates = {"bf16": gpu.bf16_dense_TFLOPS or gpu.fp16_dense_TFLOPS, "fp16": gpu.fp16_dense_TFLOPS,
             "fp8": gpu.fp8_dense_TFLOPS, "fp4": gpu.fp4_dense_TFLOPS, "mxfp4": gpu.fp4_dense_TFLOPS,
             "tf32": gpu.tf32_dense_TFLOPS, "fp32": gpu.fp32_TFLOPS}
    if dtype not in rates:
        raise InputError(f"unknown dtype '{dtype}'; expected {', '.join(rates)}")
    tflops = rates[dtype]
    if not tflops:
        raise InputError(f"{gpu.name} has no published dense {dtype} rate")
    return tflops * 1e12


#: an NVLink domain larger than this is a rack (NVL72): renters get parts of one and parts of several
RACK_SCALE_GPUS = 8


def nodes_spanned(system: catalog.System, gpus: int) -> int:
    """Nodes (or NVLink racks) that ``gpus`` GPUs occupy, or :class:`InputError` when they cannot.

    Past one node, an 8-GPU-class node is rented whole; a rack-scale domain (NVL72) may be partly used, with
    the same number of GPUs in each rack (128 GPUs: 2 racks of 64)."""
    per_node = system.gpus_per_node
    if gpus <= per_node:
        return 1
    if system.gpus_per_node <= RACK_SCALE_GPUS:
        if gpus % per_node:
            raise InputError(f"{gpus} GPUs do not fill whole {system.id} nodes of {per_node}")
        return gpus // per_node
    return _even_split(gpus, per_node)


def _even_split(ranks: int, per_node: int) -> int:
    """The fewest nodes over which ``ranks`` ranks split evenly, at most ``per_node`` to a node."""
    nodes = -(-ranks // per_node)
    while ranks % nodes:
        nodes += 1
    return nodes


def placement(system: catalog.System, group: ArrayLike, stride: ArrayLike) -> np.ndarray:
    """Nodes spanned by groups of ``group`` ranks placed ``stride`` ranks apart (ranks fill nodes in order;
    on a rack-scale system, evenly over the racks they need)."""
    group, stride = np.broadcast_arrays(np.asarray(group), np.asarray(stride))
    span = group * stride
    per_node = system.gpus_per_node
    whole = np.where(span > per_node, np.maximum(1, span // per_node), 1)
    if per_node <= RACK_SCALE_GPUS:
        return whole
    out = np.ones(span.shape, dtype=int)
    for g, sp in set(zip(group.ravel().tolist(), span.ravel().tolist())):
        if sp > per_node:  # the group's ranks over as many racks as the span needs, evenly
            out[(group == g) & (span == sp)] = _even_split(int(g), max(1, int(per_node * g // sp)))
    return out


def _times_s(op: str, system: catalog.System, ranks: ArrayLike, nodes: ArrayLike, nbytes: ArrayLike,
             cal: Calibration) -> np.ndarray:
    """Fastest time of one collective for each layout, seconds (0 where a group has a single rank).

    Layouts are grouped by (ranks, nodes): one vectorised call of
    :func:`multigpu.comm.collectives.time_us` per group, over its message sizes.
    """
    ranks, nodes, nbytes = np.broadcast_arrays(np.asarray(ranks), np.asarray(nodes), np.asarray(nbytes, dtype=float))
    nodes = np.minimum(nodes, ranks)
    out = np.zeros(ranks.shape)
    for r, n in set(zip(ranks.ravel().tolist(), nodes.ravel().tolist())):
        if r < 2:
            continue
        mask = (ranks == r) & (nodes == n) & (nbytes > 0)
        if mask.any():
            out[mask] = collectives.time_us(op, system.id, int(r), nbytes[mask], nodes=int(n), cal=cal) * 1e-6
    return out


def stage_layers(model: models.Model, lay: Layout) -> np.ndarray:
    """Layers of the busiest pipeline stage: its ``interleave`` chunks of ceil(L / (pp x interleave)) layers
    each. Equal to L / pp when the layers divide evenly; otherwise (Llama 3.1 405B's 126 layers on 16 stages)
    the stages that hold one layer more set the pace of the pipeline."""
    chunks = np.asarray(lay.pp) * np.asarray(lay.interleave)
    return np.ceil(model.layers / chunks) * np.asarray(lay.interleave)


def _wire_bytes(dtype: str) -> float:
    """Bytes per element of the activations and parameters a framework sends when training in ``dtype``."""
    return models.dtype_bytes(WIRE_DTYPE.get(dtype, dtype))


def _tp_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """(forward, backward) tensor-parallel communication of one micro-batch on one stage, seconds (each
    context-parallel rank all-reduces its own 1/cp of the sequence)."""
    nbytes = lay.micro_batch * lay.seq / lay.cp * model.hidden * _wire_bytes(lay.dtype)
    nodes = placement(system, lay.tp, 1)
    if lay.sequence_parallel:
        one = _times_s("reducescatter", system, lay.tp, nodes, nbytes, cal) + _times_s("allgather", system, lay.tp,
                                                                                  nodes, nbytes, cal)
    else:
        one = _times_s("allreduce", system, lay.tp, nodes, nbytes, cal)
    per_pass = 2 * one * stage_layers(model, lay)
    forward_passes = 2 if lay.recompute == "full" else 1
    return forward_passes * per_pass, per_pass


def _ep_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> np.ndarray:
    """MoE all-to-all of one micro-batch on one stage (dispatch + combine, forward + backward), seconds: four
    all-to-alls of each token's ``k`` copies (``lay.ep_kernel`` nccl), or DeepEP's kernels (deepep:
    :func:`_deepep_s`); the two towards the experts (forward dispatch, and the output gradients in the backward
    pass) in FP8 where ``lay.ep_dispatch`` says so (:data:`EP_DISPATCH_DTYPES`), the rest in the wire precision.
    Recomputing the MoE block (``moe`` among the recompute modules) runs the forward pair once more."""
    if not model.is_moe:
        return np.zeros(np.shape(lay.tp))
    tokens = lay.micro_batch * lay.seq / lay.cp / (lay.tp if lay.sequence_parallel else 1)
    elements = tokens * model.experts_per_token * model.hidden
    dispatch_bytes = FP8_DISPATCH_BYTES if lay.ep_dispatch == "fp8" else _wire_bytes(lay.dtype)
    nodes = placement(system, lay.ep, lay.expert_tp)  # expert ranks etp apart: tp apart, or adjacent when etp 1
    if lay.ep_kernel == "deepep":
        times = _deepep_s(model, system, lay.ep, nodes, tokens, cal, lay.ep_dispatch)
    else:
        times = sum(2 * _times_s("alltoall", system, lay.ep, nodes, elements * width, cal)
                    for width in (dispatch_bytes, _wire_bytes(lay.dtype)))
    again = 1.5 if "moe" in lay.recomputed else 1.0  # a recomputed MoE block dispatches and combines once more
    return again * times * model.moe_layers / model.layers * stage_layers(model, lay)


def node_limit(model: models.Model, nodes: int) -> int | None:
    """The most nodes a token's experts may lie on when ``model`` routes within groups of experts
    (:attr:`Model.expert_groups`) and its EP group spans ``nodes`` nodes, the groups laid over them in rank
    order: a whole number of nodes per group caps a token at its groups' nodes; otherwise no cap (None)."""
    groups = model.expert_groups
    if not groups or nodes < groups or nodes % groups:
        return None
    return model.expert_groups_per_token * nodes // groups


def _deepep_s(model: models.Model, system: catalog.System, ep: ArrayLike, nodes: ArrayLike, tokens: ArrayLike,
              cal: Calibration, dispatch: str) -> np.ndarray:
    """DeepEP's normal kernels for one MoE layer and one micro-batch, forward and backward, seconds: a
    dispatch (``dispatch``'s precision, FP8 or BF16) and a combine (BF16) each way, the backward pass sending
    the output gradients towards the experts as the forward pass sends tokens (:func:`multigpu.comm.expert.phase`,
    node-limited where the model routes within groups: :func:`node_limit`)."""
    ep, nodes, tokens = np.broadcast_arrays(np.asarray(ep), np.asarray(nodes), np.asarray(tokens, dtype=float))
    out = np.zeros(ep.shape)
    towards = "fp8" if dispatch == "fp8" else "bf16"
    for g, n, t in set(zip(ep.ravel().tolist(), np.minimum(nodes, ep).ravel().tolist(), tokens.ravel().tolist())):
        if g < 2:
            continue
        routing = expert.Routing(tokens=int(round(t)), hidden=model.hidden, topk=model.experts_per_token,
                                 experts=model.experts, node_limit=node_limit(model, int(n)))
        one = sum(expert.phase(routing, system.id, int(g), int(n), kernel="deepep", phase_name=name, dtype=dtype,
                               cal=cal).time_us for name, dtype in (("dispatch", towards), ("combine", "bf16")))
        out[(ep == g) & (np.minimum(nodes, ep) == n) & (tokens == t)] = 2 * one * 1e-6
    return out


def _cp_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration,
               attention_s: np.ndarray) -> np.ndarray:
    """Ring attention of one micro-batch on one stage, seconds not hidden behind attention: each of the ``cp``
    ranks passes its keys and values (``b s/cp`` tokens of ``kv_heads x (d_qk + d_v)`` elements, over the TP
    ranks) cp - 1 times around the ring per layer in the forward pass, and keys, values and their gradients in
    the backward pass, while it computes attention (``attention_s``, the micro-batch's attention time)."""
    kv_width = model.kv_heads * (model.head_dim + model.v_head_dim) / np.minimum(lay.tp, model.kv_heads)
    nbytes = lay.micro_batch * lay.seq / lay.cp * kv_width * _wire_bytes(lay.dtype)
    nodes = placement(system, 2, lay.tp * lay.cp // 2)  # ring neighbours, cp ranks placed tp apart
    one = _times_s("sendrecv", system, np.where(lay.cp > 1, 2, 1), np.minimum(nodes, 2), nbytes, cal)
    passes = 3.0 if lay.recompute == "none" else 4.0  # forward, backward twice (K/V and their gradients)
    total = passes * (lay.cp - 1) * one * stage_layers(model, lay)
    return np.maximum(0.0, total - attention_s)


def _pp_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> np.ndarray:
    """Stage-to-stage activation transfers on the critical path of one step, seconds: Megatron scatters each
    transfer over the stage's TP ranks (each sends 1/tp, with or without sequence parallelism) and gathers it
    over NVLink on the other side."""
    nbytes = lay.micro_batch * lay.seq / lay.cp * model.hidden * _wire_bytes(lay.dtype) / lay.tp
    # ranks run tp, then dp, then pp: once the layout spans nodes, some stage boundary is a node boundary,
    # and that slowest hop paces every micro-batch (tp x dp < a node's GPUs included)
    nodes = np.where(lay.tp * lay.cp * lay.dp * lay.pp > system.gpus_per_node, 2, 1)
    one = _times_s("sendrecv", system, np.where(lay.pp > 1, 2, 1), nodes, nbytes, cal)
    # the interleaved schedule overlaps its steady-state transfers with compute (Megatron's overlap_p2p_comm,
    # unless ``lay.overlap_p2p`` says the software ran each transfer to completion first),
    # and DualPipe each chunk's behind its paired chunk: only those of the warm-up and cool-down, 2 v (pp - 1),
    # stay on the critical path
    overlapped = ((np.asarray(lay.interleave) > 1) & lay.overlap_p2p) | (lay.pp_schedule == "dualpipe")
    exposed = np.where(overlapped, lay.pp - 1, lay.microbatches + lay.pp - 1)
    return 2 * lay.interleave * exposed * one


def _dp_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> np.ndarray:
    """Gradient reduction and the optimizer's parameter all-gather of one step for one stage, seconds
    (:func:`_dp_parts_s` summed)."""
    grads, params = _dp_parts_s(model, system, lay, cal)
    return grads + params


def _dp_parts_s(model: models.Model, system: catalog.System, lay: Layout,
                cal: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """(gradient reduction, parameter all-gather) of one step for one stage, seconds.

    Non-expert parameters are reduced across the ``dp`` ranks; an MoE model's experts, split over ``etp x ep``
    ranks, are reduced across the ranks that hold the same experts (:func:`_expert_group`; the two reductions
    run one after the other). ZeRO 0 all-reduces the gradients and gathers nothing. Under DualPipe a GPU holds
    two stages, and reduces both."""
    if lay.method == "lora":
        return _lora_dp_comm_s(model, system, lay, cal), np.zeros(np.shape(lay.tp))
    experts = model.expert_params_total
    stages = 2.0 if lay.pp_schedule == "dualpipe" else 1.0
    # context-parallel ranks hold the same parameters: gradients reduce over dp x cp, in groups of lay.shards
    parts = [_hybrid_parts_s(system, stages * (model.params_total - experts) / (lay.tp * lay.pp), lay, cal)]
    if experts:
        params, ranks, stride = _expert_group(experts, lay)
        parts.append(_reduce_parts_s(system, stages * params, ranks, stride, lay, cal))
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def _hybrid_parts_s(system: catalog.System, params: ArrayLike, lay: Layout,
                    cal: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_reduce_parts_s` of the dense parameters over the ``dp x cp`` ranks (``tp`` apart), sharded in
    groups of ``lay.shards`` (hybrid sharding): within a group as one sharded reduction; where the groups are
    more than one, each GPU's reduced shard (``params / shards``) is then all-reduced across the groups, whose
    matching ranks are ``tp x shards`` apart (PyTorch's HSDP: reduce-scatter within the shard group, all-reduce
    across the replica groups; one group all-reduces nothing more)."""
    replicas, shards = np.asarray(lay.dp) * np.asarray(lay.cp), np.asarray(lay.shards)
    grads, weights = _reduce_parts_s(system, params, shards, lay.tp, lay, cal)
    groups = replicas // shards
    across = _times_s("allreduce", system, groups, placement(system, groups, np.asarray(lay.tp) * shards),
                      np.asarray(params) / shards * models.dtype_bytes(lay.grad_dtype), cal)
    return grads + across, weights


def _expert_group(experts: float, lay: Layout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(expert parameters per GPU, ranks that hold the same experts, their stride): experts split over
    ``etp x ep`` of a stage's ``tp x dp x cp`` ranks; the ranks holding the same experts are ``etp x ep`` apart."""
    split = lay.expert_tp * lay.ep
    return experts / (split * lay.pp), lay.tp * lay.dp * lay.cp // split, split


def _reduce_s(system: catalog.System, params: ArrayLike, ranks: ArrayLike, stride: ArrayLike, lay: Layout,
              cal: Calibration) -> np.ndarray:
    """One data-parallel reduction of ``params`` elements per GPU over ``ranks`` ranks ``stride`` apart, s
    (ZeRO-3's parameter gathers for each pass are apart: :func:`_gather_s`)."""
    grads, weights = _reduce_parts_s(system, params, ranks, stride, lay, cal)
    return grads + weights


def _reduce_parts_s(system: catalog.System, params: ArrayLike, ranks: ArrayLike, stride: ArrayLike, lay: Layout,
                    cal: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """(gradients, updated parameters) of :func:`_reduce_s`: ZeRO 0 all-reduces the gradients (``lay.grad_dtype``,
    FP32 by default); ZeRO 1-3 reduce-scatter them. ZeRO 1 and 2 (the distributed optimizer) then all-gather the
    updated parameters; ZeRO 3 does not, each rank keeping its shard until the next pass gathers it layer by layer
    (:func:`_gather_s`), s."""
    nodes = placement(system, ranks, stride)
    grads = np.asarray(params) * models.dtype_bytes(lay.grad_dtype)
    weights = np.asarray(params) * _wire_bytes(lay.dtype)
    if lay.zero_stage == 0:
        return _times_s("allreduce", system, ranks, nodes, grads, cal), np.zeros(np.shape(grads))
    gathered = np.where(np.asarray(lay.zero_stage) >= 3, 0.0, _times_s("allgather", system, ranks, nodes, weights,
                                                                        cal))
    return _times_s("reducescatter", system, ranks, nodes, grads, cal), gathered


def _gather_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> np.ndarray:
    """ZeRO-3 (FSDP ``FULL_SHARD``): one all-gather of this stage's sharded parameters (LoRA: the frozen base
    weights), which each forward and each backward pass of each micro-batch needs, seconds; 0 below stage 3.
    Experts, sharded over their own data-parallel group (:func:`_expert_group`), are gathered apart."""
    experts = 0.0 if lay.method == "lora" else model.expert_params_total
    groups = (((model.params_total - experts) / (lay.tp * lay.pp), lay.shards, lay.tp),)
    if experts:
        groups += (_expert_group(experts, lay),)
    total = sum(_times_s("allgather", system, ranks, placement(system, ranks, stride),
                         np.asarray(params) * _wire_bytes(lay.dtype), cal) for params, ranks, stride in groups)
    return np.where(np.asarray(lay.zero_stage) >= 3, total, 0.0)


def _exposed_dp_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration,
                  compute_mb: np.ndarray, backward_share: float) -> np.ndarray:
    """Data-parallel communication of one step that compute does not hide, seconds.

    - The gradient reduction overlaps the backward pass of the last micro-batch only; the distributed
      optimizer's all-gather of the updated parameters overlaps the next step's first forward pass
      (Megatron-Core's ``overlap_grad_reduce`` and ``overlap_param_gather``, :func:`_dp_parts_s`); without
      ``lay.overlap_grad_reduce`` neither is hidden.
    - ZeRO-3's parameter gathers are prefetched, one layer ahead, during the pass that needs them (PyTorch
      FSDP's forward and backward prefetch): each pass of each micro-batch shows only the part of its gather
      that outlasts its compute (forward: ``1 - backward_share`` of a micro-batch's compute; backward: the rest).
    """
    grads, params = _dp_parts_s(model, system, lay, cal)
    hidden = np.where(lay.overlap_grad_reduce, 1.0, 0.0)  # nothing hidden once the backward pass has ended
    reduction = (np.maximum(0.0, grads - hidden * backward_share * compute_mb)
                 + np.maximum(0.0, params - hidden * (1.0 - backward_share) * compute_mb))
    gather = _gather_s(model, system, lay, cal)
    per_mb = (np.maximum(0.0, gather - (1.0 - backward_share) * compute_mb)
              + np.maximum(0.0, gather - backward_share * compute_mb))
    return reduction + lay.microbatches * per_mb


def _lora_dp_comm_s(model: models.Model, system: catalog.System, lay: Layout, cal: Calibration) -> np.ndarray:
    """LoRA's data-parallel communication of one step for one stage, seconds: only the adapters' FP32 gradients
    are reduced (reduce-scatter, then an all-gather of the updated FP32 adapters under ZeRO 1-2; an all-reduce
    under ZeRO 0); under ZeRO-3 the frozen base weights, sharded, are still gathered for every forward and
    backward pass of every micro-batch (:func:`_gather_s`)."""
    replicas = lay.dp * lay.cp
    nodes = placement(system, replicas, lay.tp)
    adapters = lora_params(model, lay.lora_rank) / (lay.tp * lay.pp)
    grads = np.asarray(adapters) * GRAD_REDUCE_BYTES
    if lay.zero_stage == 0:
        total = _times_s("allreduce", system, replicas, nodes, grads, cal)
    else:
        total = (_times_s("reducescatter", system, replicas, nodes, grads, cal)
                 + _times_s("allgather", system, replicas, nodes, np.asarray(adapters) * models.dtype_bytes(
                     LORA_STATE_DTYPE), cal))
    return total


def _fraction(model: models.Model, gpu: catalog.Gpu, lay: Layout, dtype: str) -> np.ndarray:
    """Achievable fraction of ``gpu``'s dense ``dtype`` peak for the layouts' GEMMs: the reference line (A100,
    Megatron-LM's kernels) carried over by the GPU's measured matmul ceiling
    (:func:`multigpu.compute.gemm.relative_ceiling`), with the training stack's share of that ceiling and its
    non-GEMM traffic (:func:`multigpu.compute.efficiency.stack_kernels`; the reference line itself where the
    layout says ``reference_kernels``).

    The memory traffic is priced at the width of what is on the wire (:data:`WIRE_DTYPE`): 16 bits under FP8
    (Transformer Engine keeps weights, activations, norms and residuals in BF16), 32 under TF32 and FP32, where
    the same traffic takes twice the bytes. Under FP8 the quantization of each GEMM operand adds its own traffic
    (:func:`fp8_cast_bytes_per_flop`, by ``lay.fp8_recipe``), at the GPU's memory bandwidth.

    A stack's share of the ceiling is a share of tensor-core GEMMs, where it was fitted: FP32 GEMMs run on the
    CUDA cores, whose cuBLAS kernels reach the ceiling whichever stack calls them (:data:`CUDA_CORE_DTYPES`; on
    Lambda's V100 FP32 runs the share put the step 53-87 % too slow)."""
    peak = peak_flops(gpu, dtype)
    mem_bw = gpu.mem_bw_GBps * 1e9 * models.dtype_bytes("bf16") / _wire_bytes(dtype)
    kernels = (efficiency.reference_kernels() if lay.reference_kernels
               else efficiency.stack_kernels(lay.stack, DEFAULT_TRAINING_STACK))
    share = 1.0 if dtype in CUDA_CORE_DTYPES else kernels.share
    fraction = np.asarray(efficiency.achievable_fraction(
        peak, model.hidden / lay.tp, lay.micro_batch * lay.seq / lay.cp, mem_bw,
        ceiling_scale=gemm.relative_ceiling(gpu.id, dtype) * share,
        traffic_per_hidden=kernels.traffic_per_hidden * sp_traffic_factor(lay.tp, lay.sequence_parallel)))
    if dtype != "fp8":
        return fraction
    return 1.0 / (1.0 / fraction + peak / mem_bw * fp8_cast_bytes_per_flop(model, lay.fp8_recipe))


def sp_traffic_factor(tp: ArrayLike, sequence_parallel: ArrayLike) -> np.ndarray:
    """What remains of a GPU's non-GEMM traffic per GEMM FLOP under sequence parallelism, as a fraction of what it
    is without (1 where ``sequence_parallel`` is off): the share that sequence parallelism splits
    (``sp_traffic_share`` of ``data/compute_efficiency.csv``: the norms, dropouts and residual additions, which
    Korthikanti et al. 2022 split along the sequence) falls to 1 / ``tp``; the rest (GEMM operands, activation
    functions inside the tensor-parallel regions) is unchanged."""
    share = efficiency.constants().sp_traffic_share
    return np.where(np.asarray(sequence_parallel, dtype=bool), 1.0 - share + share / np.asarray(tp, dtype=float), 1.0)


def kernel_overhead_s(recompute: ArrayLike) -> np.ndarray:
    """The fixed time of one transformer layer's kernels in one micro-batch's forward and backward passes,
    seconds: ``decode_layer_overhead_s`` (each kernel's launch, ramp and tail, fitted on decode steps, where
    nothing else is left) for the forward pass, twice that for the backward (a data-gradient and a weight-gradient
    kernel for each forward GEMM, as :data:`BACKWARD_SHARE` counts its FLOPs), and once more where full
    recomputation repeats the forward pass."""
    passes = 1.0 + BACKWARD_SHARE / (1.0 - BACKWARD_SHARE) + np.where(np.asarray(recompute) == "full", 1.0, 0.0)
    return passes * efficiency.constants().decode_layer_overhead_s


def adam_step_bytes(dtype: str, moment_dtype: str = "fp32") -> float:
    """Bytes one Adam step moves per parameter (:data:`ADAM_STEP_BYTES` for BF16 training with FP32 moments): the
    FP32 master copy, or the FP32 weights themselves under TF32 or FP32 training, read and written (8); each
    moment read and written; the FP32 gradient read twice (8); where there is a master copy, the master read again
    and the 16-bit weight written (6)."""
    master = models.dtype_bytes(dtype) < 4
    return 8.0 + 4 * models.dtype_bytes(moment_dtype) + 8.0 + (6.0 if master else 0.0)


def _optimizer_s(optimizer_bytes: ArrayLike, gradient_bytes: ArrayLike, gpu: catalog.Gpu, dtype: str = "bf16",
                 moment_dtype: str = "fp32") -> np.ndarray:
    """The optimizer step on one GPU, seconds: a memory-bound pass over the parameters it updates (its share of
    the optimizer's states, ``optimizer_bytes``, at :func:`multigpu.compute.models.optimizer_bytes_per_param`),
    moving :func:`adam_step_bytes` per parameter, and the GPU's gradient buffer (``gradient_bytes``) zeroed for the
    next step (Megatron-LM's ``zero_grad_buffer``), both at the bandwidth a STREAM triad reaches on the GPU
    (:data:`OPTIMIZER_KERNEL`), not the nominal one."""
    params = np.asarray(optimizer_bytes, dtype=float) / models.optimizer_bytes_per_param(dtype, moment_dtype)
    moved = params * adam_step_bytes(dtype, moment_dtype) + np.asarray(gradient_bytes, dtype=float)
    return moved / (gpu.mem_bw_GBps * 1e9 * memorybw.hbm_efficiency(gpu.id, OPTIMIZER_KERNEL))


def _score_traffic_s(model: models.Model, gpu: catalog.Gpu, lay: Layout) -> np.ndarray:
    """Time of one micro-batch on the busiest stage moving materialised attention scores through memory,
    seconds (0 under FlashAttention): :func:`multigpu.compute.models.score_traffic_bytes` per layer, 32-bit scores
    under TF32 and FP32, at the GPU's memory bandwidth."""
    per_layer = models.score_traffic_bytes(model, lay.micro_batch, lay.seq, lay.tp, lay.recompute, lay.attention,
                                           lay.cp, lay.dtype)
    return stage_layers(model, lay) * np.asarray(per_layer) / (gpu.mem_bw_GBps * 1e9)


def _stages(model: models.Model, lay: Layout, per_layer: np.ndarray,
            head: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, layers, heads) of the first, a middle and the last pipeline stage, stacked on a first axis of 3:
    one micro-batch's time, seconds, the transformer layers (:meth:`Layout.stage_layers`) and whether the stage
    runs the vocabulary projection (1 or 0; the last stage, the only one with pp = 1)."""
    first, middle, last = lay.stage_layers(model.layers)
    one_stage = np.asarray(lay.pp) == 1
    heads = np.stack(np.broadcast_arrays(np.where(one_stage, 1.0, 0.0), 0.0, np.where(one_stage, 0.0, 1.0)))
    layers = np.stack(np.broadcast_arrays(first, middle, last))
    return layers * per_layer + heads * head, layers, heads


def _pipeline(model: models.Model, lay: Layout, per_layer: np.ndarray,
              head: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layers, head, all): the busiest pipeline stage's transformer layers and whether it holds the vocabulary
    projection (1 or 0), and the time of one micro-batch through every stage, seconds.

    A stage's time is its layers at ``per_layer`` seconds each, plus ``head`` seconds on the last stage: the
    output layer's GEMMs run where it sits, as its weights do (:func:`multigpu.compute.models.weights_bytes_per_gpu`).
    The input embedding, a lookup, costs no time here, nor does the loss over the logits."""
    times, layers, heads = _stages(model, lay, per_layer, head)
    busiest = np.argmax(times, axis=0)[None]
    total = times[0] + np.maximum(np.asarray(lay.pp) - 2, 0) * times[1] + times[2]
    return (np.take_along_axis(layers, busiest, axis=0)[0], np.take_along_axis(heads, busiest, axis=0)[0], total)


def _dualpipe_busiest(model: models.Model, lay: Layout, per_layer: np.ndarray,
                     head: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_pipeline`'s (layers, head, all) under DualPipe: GPU ``r`` holds stages ``r`` and ``pp - 1 - r`` and
    runs half the micro-batches through each, so the first GPU's load per micro-batch is the mean of the first
    and the last stage (half a vocabulary projection), a middle GPU's that of a middle stage; the busier sets
    the pace."""
    times, layers, heads = _stages(model, lay, per_layer, head)
    ends = (times[0] + times[2]) / 2
    middle = np.asarray(lay.pp) > 2
    busy_layers = np.where(middle & (times[1] > ends), layers[1], (layers[0] + layers[2]) / 2)
    busy_head = np.where(middle & (times[1] > ends), 0.0, (heads[0] + heads[2]) / 2)
    total = times[0] + np.maximum(np.asarray(lay.pp) - 2, 0) * times[1] + times[2]
    return busy_layers, busy_head, total


def _balanced(model: models.Model, lay: Layout, per_layer: np.ndarray, head: np.ndarray) -> Layout:
    """``lay`` with the last stage's layers that make the step fastest where its stack balances the stages
    (:attr:`TrainingStack.balanced_stages`) and no stage's count is stated: the even share less 0 to all but one
    of its layers, the others taking them; ``lay`` unchanged otherwise."""
    stated = np.any(np.asarray(lay.pp_first_layers) > 0) or np.any(np.asarray(lay.pp_last_layers) > 0)
    if not TRAINING_STACKS[lay.stack].balanced_stages or stated:
        return lay
    even = lay.stage_layers(model.layers)[2]
    pp, m, v = np.asarray(lay.pp), lay.microbatches, np.asarray(lay.interleave)
    best, best_s = np.zeros(np.shape(even)), np.full(np.shape(even), np.inf)
    for shift in range(int(np.max(even))):
        last = np.where((pp > 1) & (even - shift >= 1), even - shift, 0.0) if shift else np.zeros(np.shape(even))
        layers, heads, total = _pipeline(model, replace(lay, pp_last_layers=last), per_layer, head)
        busiest = layers * per_layer + heads * head
        step_s = m * busiest + (total - busiest) / v
        better = (step_s < best_s) & ((last > 0) | (shift == 0))
        best, best_s = np.where(better, last, best), np.where(better, step_s, best_s)
    return replace(lay, pp_last_layers=best.astype(int))


def _layer_parts(model: models.Model, system: catalog.System, lay: Layout,
                 cal: Calibration) -> dict[str, np.ndarray]:
    """One micro-batch's parts on ``layers`` transformer layers (:func:`stage_layers`), seconds: ``compute``
    (GEMMs, attention and score traffic), the exposed ``tp``, ``ep`` and ``cp`` communication, and ``head``,
    the vocabulary projection's GEMMs (on the last stage only). Where full recomputation covers only
    ``recompute_layers`` of each virtual stage, the parts are the recomputed layers' and the others' in
    proportion (:meth:`Layout.recomputed_share`)."""
    if lay.recompute == "full" and np.any(np.asarray(lay.recompute_layers) > 0):
        share = lay.recomputed_share(model.layers)
        full = _layer_parts(model, system, replace(lay, recompute_layers=0), cal)
        kept = _layer_parts(model, system, replace(lay, recompute="none", recompute_layers=0), cal)
        return {k: share * full[k] + (1 - share) * kept[k] if k not in ("layers", "head") else full[k]
                for k in full}
    gpu = catalog.gpu(system.gpu)
    peak = peak_flops(gpu, lay.dtype)
    fraction = _fraction(model, gpu, lay, lay.dtype)
    lora = lay.method == "lora"
    _, hw_flops_mb, attention_mb = training_flops(model, lay.micro_batch, lay.seq, lay.recompute, lay.method,
                                                  lay.lora_rank, tuple(lay.recompute_modules))
    attention_dtype = ATTENTION_DTYPE.get(lay.dtype, lay.dtype)
    attention_rate = peak_flops(gpu, attention_dtype) * _fraction(model, gpu, lay, attention_dtype)
    # the vocabulary projection, at the 16-bit rate under FP8 (see ATTENTION_DTYPE), on the last stage only
    head_mb = models.head_training_flops_per_step(model, lay.micro_batch, lay.seq, 2.0 if lora else 3.0)
    head_compute = head_mb / attention_rate / (lay.tp * lay.cp)
    layers = stage_layers(model, lay)  # the layers the parts of one micro-batch below are computed for
    shards = lay.tp * lay.cp * model.layers / layers
    layer_compute = ((hw_flops_mb - attention_mb - head_mb) / (peak * fraction) + attention_mb / attention_rate) / shards
    layer_compute = layer_compute + _score_traffic_s(model, gpu, lay) + layers * kernel_overhead_s(lay.recompute)
    backward_share = LORA_BACKWARD_SHARE if lora else BACKWARD_SHARE
    tp_fwd, tp_bwd = _tp_comm_s(model, system, lay, cal)
    if TRAINING_STACKS[lay.stack].tp_comm_overlap:  # each pass's collectives behind that pass's own GEMMs
        tp_mb = (np.maximum(0.0, tp_fwd - (1.0 - backward_share) * layer_compute)
                 + np.maximum(0.0, tp_bwd - backward_share * layer_compute))
    else:
        tp_mb = tp_fwd + np.maximum(0.0, tp_bwd - (LORA_WGRAD_SHARE if lora else WGRAD_SHARE) * layer_compute)
    return {"layers": layers, "compute": layer_compute, "head": head_compute, "tp": tp_mb,
            "ep": _ep_comm_s(model, system, lay, cal),
            "cp": _cp_comm_s(model, system, lay, cal, attention_mb / attention_rate / shards)}


def layer_time_s(model: models.Model, system: catalog.System, lay: Layout,
                 cal: Calibration | None = None) -> np.ndarray:
    """Forward and backward pass of one transformer layer for one micro-batch on one GPU, seconds: its compute
    and its exposed tensor-, expert- and context-parallel communication, as :func:`evaluate` charges them
    (Korthikanti et al. 2022's Table 4 measures this)."""
    parts = _layer_parts(model, system, lay, calibration.resolve(cal))
    return (parts["compute"] + parts["tp"] + parts["ep"] + parts["cp"]) / parts["layers"]


def evaluate(model: models.Model, system: catalog.System, lay: Layout,
             cal: Calibration | None = None) -> dict[str, np.ndarray]:
    """Step time and its parts for every layout in ``lay`` (arrays, seconds); no validity checks.

    This is the whole model: :func:`step` calls it for one layout and
    :mod:`multigpu.market.search` for thousands, so both agree by construction.
    """
    cal = calibration.resolve(cal)
    gpu = catalog.gpu(system.gpu)
    peak = peak_flops(gpu, lay.dtype)
    fraction = _fraction(model, gpu, lay, lay.dtype)
    lora = lay.method == "lora"
    parts = _layer_parts(model, system, lay, cal)
    layers, layer_compute, head_compute = parts["layers"], parts["compute"], parts["head"]
    tp_mb, ep_mb, cp_mb = parts["tp"], parts["ep"], parts["cp"]
    backward_share = LORA_BACKWARD_SHARE if lora else BACKWARD_SHARE
    dual = lay.pp_schedule == "dualpipe"
    if dual:  # each chunk's all-to-all behind the compute of the chunk it is paired with
        ep_mb = np.maximum(0.0, ep_mb - layer_compute)
    per_layer = (layer_compute + tp_mb + ep_mb + cp_mb) / layers
    lay = _balanced(model, lay, per_layer, head_compute)
    busy_layers, busy_head, total_mb = (_dualpipe_busiest if dual else _pipeline)(model, lay, per_layer,
                                                                                  head_compute)
    busy = busy_layers / layers  # the busiest stage's parts against those of ``layers`` layers
    compute_mb = busy * layer_compute + busy_head * head_compute
    tp_mb, ep_mb, cp_mb = busy * tp_mb, busy * ep_mb, busy * cp_mb
    per_mb = compute_mb + tp_mb + ep_mb + cp_mb
    m = lay.microbatches
    bubble = (total_mb - per_mb) / lay.interleave
    if dual:  # (PP/2 - 1)(F&B + B - 3W), with F&B = F + B: the pair's compute, its traffic hidden
        bubble = (np.asarray(lay.pp) / 2 - 1) * (1 + BACKWARD_SHARE - 3 * WGRAD_SHARE) * per_mb
    pp_s = _pp_comm_s(model, system, lay, cal)
    # the first stage finishes its backward passes last, so its own compute is what its reduction hides behind
    first_layers = lay.stage_layers(model.layers)[0]
    first_compute = first_layers / layers * layer_compute + np.where(np.asarray(lay.pp) == 1, head_compute, 0.0)
    dp_s = _exposed_dp_s(model, system, lay, cal, first_compute, backward_share)
    memory = models.memory_per_gpu_bytes(model, lay)
    optimizer_s = 0.0 if lora else _optimizer_s(memory["largest_optimizer_bytes"], memory["gradients_bytes"], gpu,
                                                lay.dtype, lay.moment_dtype)
    step_s = m * per_mb + bubble + pp_s + dp_s + optimizer_s
    model_flops, _, _ = training_flops(model, lay.global_batch, lay.seq, lay.recompute, lay.method, lay.lora_rank)
    total_bytes = np.asarray(memory["total_bytes"], dtype=float)
    if lora:  # frozen 16-bit weights and the activations; FP32 adapters, their gradients and Adam moments
        total_bytes = (np.asarray(memory["weights_bytes"], dtype=float)
                       + np.asarray(memory["activations_bytes"], dtype=float) + _lora_states_bytes(model, lay))
    memory_GB = total_bytes / 1e9
    gpus = lay.tp * lay.pp * lay.dp * lay.cp
    return {
        "step_time_s": step_s, "model_tflops_per_gpu": model_flops / step_s / gpus / 1e12,
        "mfu": model_flops / step_s / gpus / peak, "compute_s": m * compute_mb, "compute_fraction_of_peak": fraction,
        "bubble_s": bubble, "optimizer_s": optimizer_s + np.zeros(np.shape(step_s)), "tp_s": m * tp_mb,
        "pp_s": pp_s, "dp_s": dp_s, "ep_s": m * ep_mb, "cp_s": m * cp_mb,
        "memory_per_gpu_GB": memory_GB, "fits": memory_GB <= gpu.usable_memory_GB,
        "pp_last_layers": np.asarray(lay.pp_last_layers) + np.zeros(np.shape(step_s)),
    }


@dataclass(frozen=True)
class ExposedComm:
    """The communication of one training step that computation does not hide, by kind, seconds."""

    tp: float  #: tensor-parallel collectives
    pp: float  #: pipeline stage-to-stage transfers
    dp: float  #: data-parallel gradient (and ZeRO parameter) collectives
    ep: float  #: expert-parallel all-to-all
    cp: float = 0.0  #: context-parallel ring attention, beyond what attention hides

    @property
    def total(self) -> float:
        """All exposed communication, seconds."""
        return self.tp + self.pp + self.dp + self.ep + self.cp


@dataclass(frozen=True)
class TrainingStep:
    """One training step of a layout (the ``train`` command's object): the layout, the step time and its
    parts (seconds), throughput and memory (GB = 1e9 bytes)."""

    model: str
    system: str
    gpus: int
    tp: int
    pp: int
    dp: int
    ep: int
    global_batch: int
    micro_batch: int
    seq: int
    microbatches: int
    recompute: str
    sequence_parallel: bool
    interleave: int
    dtype: str
    step_time_s: float
    model_tflops_per_gpu: float  #: model FLOPs / step time / GPUs, 1e12 FLOP/s
    mfu: float  #: model FLOP/s utilisation, fraction of dense peak
    compute_s: float
    compute_fraction_of_peak: float
    bubble_s: float
    exposed_comm_s: ExposedComm
    memory_per_gpu_GB: float
    gpu_memory_GB: float  #: what a program can allocate on the GPU, GB (1e9 bytes; catalog.Gpu.usable_memory_GB)
    fits: bool
    cp: int = 1  #: context-parallel degree
    ep_dispatch: str = EP_DISPATCH_DTYPES[0]  #: MoE dispatch precision (:data:`EP_DISPATCH_DTYPES`)
    #: transformer layers on the first, a middle and the last pipeline stage (:meth:`Layout.stage_layers`)
    stage_layers: tuple[int, int, int] = (0, 0, 0)
    attention: str = "flash"  #: attention kernel (:data:`multigpu.compute.layout.ATTENTION_KERNELS`)
    stack: str = DEFAULT_TRAINING_STACK  #: training framework (:data:`multigpu.compute.layout.TRAINING_STACKS`)
    optimizer_s: float = 0.0  #: the optimizer step (Adam over this GPU's parameters, memory-bound), seconds
    recompute_layers: int = 0  #: with full recomputation, the layers of each virtual stage it covers (0 = all)
    ep_kernel: str = EP_KERNELS[0]  #: kernels of the MoE dispatch and combine (:data:`EP_KERNELS`)
    pp_schedule: str = PP_SCHEDULES[0]  #: pipeline schedule (:data:`PP_SCHEDULES`)
    #: the parts of each layer selective recomputation covers (:data:`multigpu.compute.layout.RECOMPUTE_MODULES`)
    recompute_modules: tuple[str, ...] = ()
    activation_cache: str = ACTIVATION_CACHES[0]  #: how kept activations are stored (:data:`ACTIVATION_CACHES`)
    moment_dtype: str = MOMENT_DTYPES[0]  #: precision of Adam's moments (:data:`MOMENT_DTYPES`)
    overlap_p2p: bool = True  #: the interleaved schedule's stage-to-stage transfers overlap compute
    overlap_grad_reduce: bool = True  #: the data-parallel reduction overlaps the backward and forward passes
    shard_group: int = 0  #: hybrid sharding: the data-parallel ranks one set of ZeRO shards spans (0 = all)

    def to_dict(self) -> dict[str, Any]:
        """The step as a flat dict (``exposed_comm_s`` a dict of tp, pp, dp, ep), for JSON and CSV."""
        return asdict(self)


def step(model_id: str, system_id: str, gpus: int, tp: int, pp: int, global_batch: int, micro_batch: int,
         dp: int | None = None, cal: Calibration | None = None, **options: Any) -> TrainingStep:
    """Time, throughput and memory of one training step (the ``train`` command's object, :class:`TrainingStep`).

    ``options``: seq, recompute, sequence_parallel, interleave, dtype, zero_stage, ep, etp (expert tensor
    parallelism, 0 = tp, or 1), attention, cp, method (:data:`METHODS`), lora_rank, grad_dtype
    (:data:`GRAD_DTYPES`), fp8_recipe (:data:`FP8_RECIPES`), ep_dispatch (:data:`EP_DISPATCH_DTYPES`),
    pp_first_layers and pp_last_layers (transformer layers on the first and last stages, 0 = an even split),
    recompute_layers (with recompute full, the layers of each virtual stage recomputed, 0 = all),
    stack (:data:`multigpu.compute.layout.TRAINING_STACKS`), ep_kernel (:data:`EP_KERNELS`), pp_schedule
    (:data:`PP_SCHEDULES`), overlap_p2p (False: the interleaved schedule's transfers block, as before Megatron-LM's
    ``overlap_p2p_comm``), overlap_grad_reduce (False: the gradients are reduced after the backward pass, as before
    Megatron-LM's ``overlap_grad_reduce``), shard_group (hybrid sharding: the data-parallel ranks one set of ZeRO
    shards spans, 0 = all).
    """
    model = models.model(model_id)
    system = catalog.system(system_id)
    gpu = catalog.gpu(system.gpu)
    lay = make_layout(model, gpus, tp, pp, dp, global_batch, micro_batch, **options)
    nodes_spanned(system, gpus)
    r = {k: np.asarray(v).item() for k, v in evaluate(model, system, lay.batched(), cal).items()}
    return TrainingStep(
        model.id, system.id, gpus, lay.tp, lay.pp, lay.dp, lay.ep, lay.global_batch, lay.micro_batch, lay.seq,
        lay.microbatches, lay.recompute, lay.sequence_parallel, lay.interleave, lay.dtype, r["step_time_s"],
        r["model_tflops_per_gpu"], r["mfu"], r["compute_s"], r["compute_fraction_of_peak"], r["bubble_s"],
        ExposedComm(r["tp_s"], r["pp_s"], r["dp_s"], r["ep_s"], r["cp_s"]), r["memory_per_gpu_GB"], gpu.usable_memory_GB,
        bool(r["fits"]), lay.cp, lay.ep_dispatch,
        _stage_counts(model, replace(lay, pp_last_layers=int(r["pp_last_layers"]))), lay.attention, lay.stack,
        r["optimizer_s"], int(lay.recompute_layers), lay.ep_kernel, lay.pp_schedule, lay.recomputed,
        lay.activation_cache, lay.moment_dtype, bool(lay.overlap_p2p), bool(lay.overlap_grad_reduce),
        int(lay.shard_group))


def _stage_counts(model: models.Model, lay: Layout) -> tuple[int, int, int]:
    """(first, middle, last): the transformer layers a GPU of each pipeline stage holds (0 where there is no
    such stage)."""
    return tuple(int(np.asarray(n).item()) for n in lay.batched().stage_layers(model.layers))  # type: ignore[return-value]
