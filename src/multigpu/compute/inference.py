"""Inference under tensor (and pipeline) parallelism, with in-flight (continuous) batching.

``batch`` queries are in flight at once, as TensorRT-LLM and vLLM serve them:

- **Prefill** of one prompt of ``input_tokens`` is compute-bound: its FLOPs
  over the achievable FLOP/s of a stage's ``tp`` GPUs (the stages in turn), plus two
  tensor-parallel all-reduces per layer of ``input_tokens x hidden``
  elements. Time to first token (TTFT) is that prefill time.
- **A decode step** produces one token for each of the ``batch`` queries. It
  reads every weight and the whole KV cache once (memory-bound) at an
  achievable fraction of HBM bandwidth, unless its FLOPs take longer; then it
  pays two all-reduces per layer of ``batch x hidden`` elements, which are
  small and latency-bound. Which all-reduce runs is the serving stack's
  (:data:`STACKS`, ``infer --stack``): TensorRT-LLM (the default) the fastest
  of NCCL and its one-shot and two-shot kernels; vLLM its one-shot / two-shot
  kernels below 8 MiB by its own size rule, NCCL above; ``nccl`` NCCL alone.
  The stack also decides the KV cache's precision under FP8 weights: FP8
  with TensorRT-LLM (its FP8 checkpoints carry an FP8 KV cache; assumed),
  BF16 with vLLM (its ``--kv-cache-dtype auto`` default).
- **Pipeline stages** (``pp``): the layers are split over ``pp`` stages of
  ``tp`` GPUs and the batch into ``pp`` micro-batches of up to
  ``ceil(batch / pp)`` queries, each stage working on one micro-batch at a time, as vLLM's and
  TensorRT-LLM's pipeline parallelism run. A user's token passes every stage:
  the time per output token is ``pp`` stage steps, each reading the stage's
  weights and its micro-batch's KV cache, so the weights are read once per
  micro-batch and a token is never faster than the weights over ``tp`` GPUs'
  bandwidth; a prompt's prefill runs its stages one after another. Between
  stages each micro-batch's activations (``tokens x hidden``, 16-bit) are
  sent once per stage boundary. Where ``pp`` does not divide the layers, the
  first stages take one more (``ceil(layers / pp)``, as the memory model
  places them) and the pipeline moves at that stage's pace: a decode step and
  the cycle's prefill passes take :func:`stage_imbalance` times the even
  split's; a lone prompt's prefill, which passes each stage once, does not.
  A release whose pipeline loop does not overlap its host's work (scheduling,
  sampling, passing the new tokens back) with the GPUs' adds that work to each
  stage once an engine iteration: TensorRT-LLM's PyTorch executor runs
  ``_executor_loop_pp`` for ``pp`` > 1 and its overlap scheduler only with one
  stage (``tensorrt_llm/_torch/pyexecutor/py_executor.py``). A token's pass then
  waits ``pp`` such times (``pipeline_host_s``), fitted per release on its
  pipelined runs (``data/pipeline_host.csv``).
- **Across nodes**: a tensor-parallel group wider than a node runs its
  all-reduces over the nodes' NICs (NCCL; the serving stacks' one-shot and
  two-shot kernels work within a node only), and a stage boundary between two
  nodes sends over them; nodes are rented whole, and a tensor-parallel group
  never straddles two nodes.
- **What a user sees**: the time to first token (TTFT, the prefill of their
  prompt, no queueing) and then one token per decode step: the time per
  output token is the decode step (``tpot_s``; decode only) and
  ``tokens_per_s_per_user = 1 / tpot_s``. ``query_time_s = ttft_s +
  output_tokens x tpot_s``.
- **What the GPUs deliver**: in steady state of in-flight batching they serve
  ``batch`` queries in a cycle of ``batch`` prefills and ``output_tokens``
  decode steps (``cycle_s``), so each GPU delivers ``batch x output_tokens /
  cycle_s / gpus`` tokens per second: the prefill work is counted, and
  throughput per GPU is below ``batch x tokens/s per user / GPUs`` by the
  prefills' share of the cycle (NVIDIA's modelled tables sit at 0.83-0.89 of
  that product).
- **Prefills packed into passes**: an iteration of the engine holds up to
  ``max_num_tokens`` tokens (TensorRT-LLM's engine limit, :data:`DEFAULT_MAX_NUM_TOKENS`
  by default), so the cycle runs its prefills ``max_num_tokens // input_tokens``
  prompts to a pass (at least one, at most the queries of one data-parallel
  attention group, the whole batch without expert parallelism): a pass pays the layers'
  fixed time and its all-reduces' latency once, and its GEMMs see all its
  prompts' tokens. A user's own TTFT stays the prefill of their prompt alone.

- **Mixture of experts**: every expert's weights are held (split over the
  ``tp`` ranks, as tensor-parallel MoE serving in vLLM and TensorRT-LLM
  shards each expert), each token's FLOPs count only its
  ``experts_per_token`` routed (and shared) experts, and a decode step reads
  the distinct experts its batch touches
  (:func:`multigpu.compute.models.decode_bytes_per_step`).
- **KV cache under tensor parallelism**: each GPU holds and reads its KV
  heads; an MLA latent (DeepSeek-V3) is not split by heads, so every
  tensor-parallel rank holds and reads all of it
  (:func:`multigpu.compute.models.kv_share_per_gpu`).
- **Expert parallelism** (``ep`` > 1, wide EP with DP-attention as SGLang,
  vLLM and DeepSeek's own service run it): the ``ep`` GPUs hold the routed
  experts, ``experts / ep`` each and whole; attention and the dense layers
  run ``tp``-way tensor-parallel in ``ep / tp`` data-parallel groups, each
  serving its share of the batch (so an MLA latent cache is held once per
  group, not once per GPU). Every MoE layer dispatches each GPU's tokens to
  their experts and combines the outputs back
  (:mod:`multigpu.comm.expert`): DeepEP's low-latency kernels in a decode
  step and its normal kernels in a prefill, an NCCL all-to-all with the
  ``nccl`` stack or where there is no NVLink. A decode step reads the
  group's dense weights over ``tp`` GPUs and the experts the whole batch
  touches over ``ep`` GPUs; one pipeline stage.
- **FP8 on a GPU without FP8 tensor cores** (A100, other Ampere): served
  weight-only (W8A16) as vLLM does with its FP8 Marlin kernels, weights and
  KV cache held and read in 8 bits, GEMMs at the 16-bit rate
  (https://docs.vllm.ai/en/stable/features/quantization/fp8/). Whether the
  model fits is then decided by its memory alone.
- **FP4** (``fp4``: NVFP4; ``mxfp4``: the OCP format; :data:`FP4_FORMATS`):
  weights held and read at their width with their block scales
  (:data:`multigpu.compute.shapes.DTYPE_BYTES`), the vocabulary projection in
  16 bits (quantizers exclude ``lm_head``), the linear GEMMs at the GPU's
  dense FP4 rate (Blackwell), attention at the 16-bit rate, and the KV cache
  in FP8 with TensorRT-LLM (NVIDIA Model Optimizer's NVFP4 checkpoints set
  ``kv_cache_quant_algo`` FP8; https://nvidia.github.io/TensorRT-LLM/features/quantization.html),
  16-bit with vLLM's default. On a GPU with no FP4 rate (Hopper and older)
  they are served weight-only (W4A16) as vLLM's FP4 Marlin kernels do ("for
  GPUs that lack FP4 hardware support", ``marlin_utils_fp4.py``,
  https://docs.vllm.ai/en/v0.10.2/api/vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.html):
  GEMMs at the 16-bit rate, so a prefill gains nothing and a decode step
  only its fewer bytes.
- **On the wire**: tensor-parallel all-reduces carry 16-bit activations
  whatever the weights' format (:func:`wire_dtype`).

Sizes in elements, times in seconds, bytes as bytes, GB = 1e9 bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from multigpu.comm import calibration, collectives, expert
from multigpu.comm.calibration import Calibration
from multigpu.common.errors import InputError
from multigpu.compute import efficiency, gemm, memorybw, models
from multigpu.compute.memorybw import measured_hbm_fractions
from multigpu.compute.shapes import FP4_FORMATS
from multigpu.compute.training import nodes_spanned, peak_flops
from multigpu.hardware import catalog

#: The weight formats ``infer --dtype`` takes: 16-bit, FP8, and the 4-bit floating-point formats.
DTYPES = ("bf16", "fp16", "fp8") + FP4_FORMATS

#: Tokens one iteration of the engine holds by default: TensorRT-LLM's engine limit ``max_num_tokens``
#: (``BuildConfig.max_num_tokens = 8192``; the role is explained in its performance tuning guide, "Tuning Max Batch
#: Size and Max Num Tokens", cited in :mod:`multigpu.compute.queueing`). The maximum-load cycle packs its prefills
#: into passes of up to this many tokens.
DEFAULT_MAX_NUM_TOKENS = 8192

#: The STREAM-style kernel (``data/hbm_bandwidth.csv``) whose access pattern a decode step's memory traffic
#: follows: its GEMVs and attention stream weights and KV cache and write almost nothing, as ``dot`` reads two
#: arrays and writes none (:func:`hbm_read_efficiency`).
DECODE_READ_KERNEL = "dot"


def hbm_read_efficiency(gpu_id: str) -> float:
    """Achievable fraction of ``gpu_id``'s nominal HBM bandwidth when a decode step streams weights and KV cache:
    the measured read-only kernel (:data:`DECODE_READ_KERNEL`) of ``data/hbm_bandwidth.csv`` on that GPU, else
    the median of that kernel over the GPUs measured. What a decode step loses besides, to its many small kernels,
    is the per-layer fixed time (``decode_layer_overhead_s``, :func:`multigpu.compute.efficiency.constants`)."""
    return memorybw.hbm_efficiency(gpu_id, DECODE_READ_KERNEL)


#: Share of GPU memory a serving engine takes by default: vLLM's ``gpu_memory_utilization`` (0.9 of the GPU's memory,
#: https://docs.vllm.ai/en/v0.4.2/models/engine_args.html) and TensorRT-LLM's ``KvCacheConfig.free_gpu_memory_fraction``
#: (0.9 of the memory free once the model is loaded, for the KV cache; tensorrt_llm/llmapi/llm_args.py). The rest is
#: the engine's activations, workspaces and CUDA graphs.
MEMORY_SHARE = 0.9


@dataclass(frozen=True)
class Stack:
    """A serving stack's tensor-parallel all-reduce: which kernels it runs at which message size.

    ``custom_max_bytes``: messages below it take the stack's own one-shot / two-shot kernels (where the GPUs
    allow them: one node, NVLink between every pair beyond 2 GPUs; ``custom_ranks`` if given), larger ones NCCL; None
    means the fastest of NCCL and both kernels at every size. ``one_shot_below``: (ranks up to, bytes) pairs,
    the one-shot / two-shot crossover; two ranks always run one-shot."""

    name: str
    custom: bool
    custom_max_bytes: float | None
    custom_ranks: tuple[int, ...] | None  #: the group sizes the kernels take (None: any the GPUs allow)
    one_shot_below: tuple[tuple[int, float], ...]
    source: str
    kv_cache_16_bit: bool = False  #: the KV cache stays 16-bit under FP8 weights unless asked (vLLM's "auto")
    memory_of_free: bool = False  #: the memory share is of what the weights leave free (TensorRT-LLM), else of all

    def kv_dtype(self, dtype: str) -> str:
        """The KV cache's precision when serving weights of ``dtype``: FP8 under FP8 or FP4 weights, or the 16-bit
        type where the stack keeps it unless asked (:attr:`kv_cache_16_bit`)."""
        if dtype == "fp8" or dtype in FP4_FORMATS:
            return "bf16" if self.kv_cache_16_bit else "fp8"
        return dtype

    def memory_budget_GB(self, usable_GB: float, weights_GB: Any) -> Any:
        """What weights and KV cache may take on a GPU with ``usable_GB`` (GB = 1e9 bytes): the engine's default
        share (:data:`MEMORY_SHARE`) of all of it (vLLM's ``gpu_memory_utilization``), or the weights plus that
        share of what they leave free (TensorRT-LLM's ``free_gpu_memory_fraction`` for the KV cache)."""
        if self.memory_of_free:
            return weights_GB + MEMORY_SHARE * (usable_GB - np.asarray(weights_GB))
        return MEMORY_SHARE * usable_GB * np.ones_like(np.asarray(weights_GB, dtype=float))


#: The serving stacks ``infer --stack`` takes; the first is the default.
STACKS = {
    "tensorrt-llm": Stack(
        "tensorrt-llm", True, None, None, (),
        "assumption: TensorRT-LLM's AUTO all-reduce strategy picks NCCL, one-shot or two-shot by a tuned "
        "heuristic; taken as the fastest of the three at every size", memory_of_free=True),
    "vllm": Stack(
        "vllm", True, 8 * 2**20, (2, 4, 6, 8), ((4, 512 * 2**10), (8, 256 * 2**10)),
        "vllm-project/vllm vllm/distributed/device_communicators/custom_all_reduce.py: CustomAllreduce "
        "(_SUPPORTED_WORLD_SIZES 2, 4, 6, 8; max_size 8192 x 1024 bytes, NCCL above; should_fuse_ar_norm's "
        "one-shot / two-shot crossover of custom_all_reduce.cuh: 512 KiB up to 4 ranks, 256 KiB beyond); "
        "KV cache: --kv-cache-dtype defaults to 'auto', the model's own 16-bit type, so FP8 weights keep a "
        "BF16 KV cache unless fp8 is asked for (engine arguments, https://docs.vllm.ai/en/v0.4.2/models/engine_args.html)",
        kv_cache_16_bit=True),
    "nccl": Stack(
        "nccl", False, None, None, (),
        "NCCL only: torch.distributed without custom kernels (e.g. vLLM with --disable-custom-all-reduce)"),
}
DEFAULT_STACK = "tensorrt-llm"


def stack(name: str) -> Stack:
    """The serving stack ``name`` (:data:`STACKS`); an unknown name is an :class:`InputError`."""
    if name not in STACKS:
        raise InputError(f"unknown serving stack '{name}'; expected one of {', '.join(STACKS)}")
    return STACKS[name]


def _allreduce_us(system_id: str, tp: int, nbytes: np.ndarray, cal: Calibration,
                  stack_name: str = DEFAULT_STACK, nodes: int = 1) -> np.ndarray:
    """One tensor-parallel all-reduce of ``tp`` ranks over ``nodes`` nodes as ``stack_name`` runs it,
    microseconds per size (bytes)."""
    if tp < 2:
        return np.zeros(np.atleast_1d(nbytes).shape)
    return np.asarray(_allreduce_cached(system_id, tp, tuple(np.atleast_1d(nbytes).tolist()), cal, stack_name,
                                        nodes))


@lru_cache(maxsize=4096)
def _allreduce_cached(system_id: str, tp: int, sizes: tuple[float, ...], cal: Calibration,
                      stack_name: str, nodes: int = 1) -> tuple[float, ...]:
    run_as = stack(stack_name)
    nbytes = np.array(sizes)
    nccl = collectives.time_us("allreduce", system_id, tp, nbytes, nodes=nodes, cal=cal)
    usable = run_as.custom and nodes == 1 and (run_as.custom_ranks is None or tp in run_as.custom_ranks) and \
        "direct" in collectives.available("allreduce", system_id, tp, cal=cal)
    if not usable:
        return tuple(np.atleast_1d(nccl).tolist())
    one_shot, two_shot = (collectives.time_us("allreduce", system_id, tp, nbytes, algorithm=a, cal=cal)
                          for a in ("direct", "two-shot"))
    if run_as.custom_max_bytes is None:
        return tuple(np.minimum(nccl, np.minimum(one_shot, two_shot)).tolist())
    crossover = next((b for ranks, b in run_as.one_shot_below if tp <= ranks), 0.0)
    custom = np.where((tp == 2) | (nbytes < crossover), one_shot, two_shot)
    return tuple(np.where(nbytes < run_as.custom_max_bytes, custom, nccl).tolist())


def wire_dtype(dtype: str) -> str:
    """The precision tensor-parallel all-reduces carry when serving weights of ``dtype``: the activations' 16-bit
    type (fp16 under fp16, else bf16), since FP8 and FP4 apply to weights and GEMM inputs, not to the layers'
    outputs that are summed."""
    return "fp16" if dtype == "fp16" else "bf16"


def tp_bytes_per_query_per_gpu(model_id: str, tp: int, input_tokens: int, output_tokens: int,
                               dtype: str = "bf16", ep: int = 1) -> float:
    """Bytes each GPU sends for tensor parallelism over one query (prefill + decode), with activations of
    ``dtype`` on the wire (:func:`wire_dtype` gives it for a weight format).

    Two all-reduces per layer per token of ``hidden`` elements (under expert
    parallelism, ``ep`` > 1, one per layer and one more per dense layer: the
    combine sums a MoE layer's outputs); a ring or two-shot all-reduce sends
    ``2 (tp-1)/tp`` of the buffer per GPU.
    """
    model = models.model(model_id)
    if tp < 2:
        return 0.0
    count = 2 * model.layers if ep == 1 else model.layers + model.dense_layers
    per_token = count * model.hidden * models.dtype_bytes(dtype)
    return per_token * (input_tokens + output_tokens) * 2 * (tp - 1) / tp


def compute_dtype(gpu: catalog.Gpu, dtype: str) -> str:
    """The precision the GEMMs run in when serving weights of ``dtype``: ``dtype`` itself, or the 16-bit type for
    FP8 weights on a GPU with no FP8 tensor-core rate (weight-only W8A16, vLLM's FP8 Marlin path) and for FP4
    weights on a GPU with no FP4 rate (W4A16, vLLM's FP4 Marlin path)."""
    if dtype not in DTYPES:
        raise InputError(f"unknown dtype '{dtype}'; expected {', '.join(DTYPES)}")
    lacking = (dtype == "fp8" and not gpu.fp8_dense_TFLOPS) or (dtype in FP4_FORMATS and not gpu.fp4_dense_TFLOPS)
    if lacking:
        return "bf16" if gpu.bf16_dense_TFLOPS else "fp16"
    return dtype


def _check(model: models.Model, system: catalog.System, tp: int, pp: int, batch: Any,
           ep: int = 1) -> tuple[int, int]:
    """(nodes the GPUs span, nodes one tensor-parallel group spans), or :class:`InputError`."""
    if tp < 1 or pp < 1 or ep < 1 or np.any(np.asarray(batch) < 1):
        raise InputError("tp, pp, ep and batch must be positive")
    if ep > 1:
        _check_ep(model, system, tp, pp, batch, ep)
    if model.heads % tp:
        raise InputError(f"tp {tp} does not divide the {model.heads} heads of '{model.id}'")
    if pp > model.layers:
        raise InputError(f"pp {pp} is more than the {model.layers} layers of '{model.id}'")
    nodes, group_nodes = nodes_spanned(system, ep if ep > 1 else tp * pp), nodes_spanned(system, tp)
    if group_nodes == 1 and nodes > 1 and system.gpus_per_node % tp:
        raise InputError(f"tensor-parallel groups of {tp} GPUs would straddle the {system.gpus_per_node}-GPU nodes "
                         f"of {system.id}")
    return nodes, group_nodes


def stage_imbalance(layers: int, pp: int) -> float:
    """How much longer the largest of ``pp`` pipeline stages is than an even share of ``layers``:
    ``pp x ceil(layers / pp) / layers`` (1 where ``pp`` divides them; 126 layers over 8 stages: 16 / 15.75)."""
    return pp * math.ceil(layers / pp) / layers


def _check_ep(model: models.Model, system: catalog.System, tp: int, pp: int, batch: Any, ep: int) -> None:
    if not model.is_moe:
        raise InputError(f"ep {ep}: '{model.id}' has no experts")
    if pp > 1:
        raise InputError("expert parallelism is modelled with one pipeline stage (pp 1)")
    if ep % tp or model.experts % ep:
        raise InputError(f"ep {ep} must be a multiple of tp {tp} and divide the {model.experts} experts")
    if np.any(np.asarray(batch) < ep // tp):
        raise InputError(f"a batch of fewer than {ep // tp} queries leaves a data-parallel attention group idle")


@dataclass(frozen=True)
class ServingRun:
    """Serving ``batch`` concurrent queries under tensor (and pipeline or expert) parallelism (the ``infer``
    command's object). With an array of batches, the per-batch fields are arrays of the same length. Times in seconds,
    memory in GB (1e9 bytes)."""

    model: str
    system: str
    tp: int
    pp: int
    batch: Any  #: queries in flight (int, or an array)
    input_tokens: int
    output_tokens: int
    dtype: str  #: the weights' format (:data:`DTYPES`)
    stack: str  #: the serving stack whose all-reduce kernels the tensor-parallel traffic runs on (:data:`STACKS`)
    release: str | None  #: the stack's release whose decode kernels are priced (None: the model's kernels)
    decode_time_factor: float  #: its decode kernels' time over the model's (:func:`efficiency.decode_time_factor`)
    #: host time a token's pass waits for on the stages' path: pp x the release's pipeline loop's per iteration
    #: (:func:`efficiency.pipeline_iteration_host_s`); 0 with one stage, or a release without one
    pipeline_host_s: float
    nodes: int  #: the nodes (or NVLink racks) the tp x pp (or ep) GPUs span
    ep: int  #: GPUs the routed experts are spread over (1: none; else ep / tp data-parallel attention groups)
    gemm_dtype: str  #: the linear GEMMs' precision (:func:`compute_dtype`): 16-bit where the GPU lacks dtype's
    kv_cache_dtype: str  #: the KV cache's precision (:meth:`Stack.kv_dtype`)
    ttft_s: Any  #: time to first token: the prefill of the user's prompt (no queueing)
    prefill_prompts_per_pass: Any  #: prompts the cycle prefills in one pass (:func:`prompts_per_pass`)
    prefill_pass_s: Any  #: one such pass: its prompts' prefills, with one layers' fixed time and pipeline_host_s
    tpot_s: Any  #: time per output token a user sees: one decode step of the batch (decode only)
    tokens_per_s_per_user: Any  #: 1 / tpot_s
    tokens_per_s_per_gpu: Any  #: batch x output_tokens / cycle_s / GPUs: prefill work included
    decode_step_s: Any  #: one decode step of the whole batch
    query_time_s: Any  #: what one user waits for a whole answer: ttft_s + output_tokens x tpot_s
    cycle_s: Any  #: steady state: the GPU time to serve ``batch`` queries (their prefills and decode steps)
    tp_bytes_per_query_per_gpu: float  #: bytes each GPU sends for tensor parallelism over one query
    comm_fraction: Any  #: share of the cycle spent communicating: all-reduces, stage sends, dispatch and combine
    decode_comm_s: Any  #: all-reduces (and expert-parallel dispatches and combines) of one decode step
    decode_ep_comm_s: Any  #: the expert-parallel dispatches and combines of one decode step (0 without ep)
    decode_compute_s: Any  #: weights and KV cache read (or FLOPs) of one decode step, with its layers' fixed time
    decode_fixed_s: float  #: the fixed kernel time of one decode step's layers (part of decode_compute_s)
    memory_per_gpu_GB: Any
    gpu_memory_GB: float  #: what a program can allocate on the GPU, GB (1e9 bytes; catalog.Gpu.usable_memory_GB)
    fits: Any  #: weights and KV cache within the stack's share of that memory (Stack.memory_budget_GB)

    def to_dict(self) -> dict[str, Any]:
        """The run as a flat dict of plain values (arrays as lists), for JSON and CSV."""
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}


def run(model_id: str, system_id: str, tp: int, batch: Any, input_tokens: int, output_tokens: int,
        pp: int = 1, dtype: str = "bf16", cal: Calibration | None = None,
        stack_name: str = DEFAULT_STACK, layer_overhead_s: float | None = None, ep: int = 1,
        max_num_tokens: int = DEFAULT_MAX_NUM_TOKENS, release: str | None = None) -> ServingRun:
    """Latency and throughput of serving ``batch`` concurrent queries (``batch`` may be an array) with the
    all-reduce kernels of the serving stack ``stack_name`` (:data:`STACKS`): a :class:`ServingRun`.
    ``layer_overhead_s``: fixed time of one layer's kernels in a prefill or a decode step, seconds (default: the
    fitted ``decode_layer_overhead_s`` of ``data/compute_efficiency.csv``); ``ep``: expert parallelism over that
    many GPUs, with ``ep / tp`` data-parallel attention groups; ``max_num_tokens``: tokens one pass of the engine
    holds, which sets how many prompts the cycle prefills at once (module doc); ``release``: the stack's release,
    whose decode kernels take :func:`multigpu.compute.efficiency.decode_time_factor` times the model's time, and
    whose pipeline loop, with ``pp`` > 1, puts :func:`multigpu.compute.efficiency.pipeline_iteration_host_s` of host
    work on each stage's path once an iteration (None: the model's kernels, and stages that never wait)."""
    run_as = stack(stack_name)
    at = _deployment(model_id, system_id, tp, pp, dtype, cal, stack_name, ep, batch)
    model, system = at.model, at.system
    b = np.asarray(batch, dtype=float)
    micro = np.ceil(b / pp)  # the queries of the largest pipeline micro-batch (a query is not split)
    # the fixed time of each layer's kernels (launches, small kernels, tails): a token passes every layer
    fixed = _fixed_s(model, layer_overhead_s)
    # a pipeline loop that does not overlap its host's work with the GPUs' puts it on every stage's path once an
    # engine iteration: a token's pass (a prefill pass, a decode step) crosses pp stages
    host = pp * efficiency.pipeline_iteration_host_s(stack_name, release) if pp > 1 else 0.0
    prefill_compute, prefill_comm = _prefill_s(at, input_tokens)
    ttft = prefill_compute + prefill_comm + fixed + host
    kv_dtype = run_as.kv_dtype(dtype)
    # the pipeline moves at its largest stage's pace (1 where pp divides the layers)
    paced = stage_imbalance(model.layers, pp)
    factor = efficiency.decode_time_factor(stack_name, release)
    kernels = factor * _decode_compute_s(at, micro, input_tokens + output_tokens / 2, kv_dtype)
    decode_compute = paced * (kernels + fixed)
    group = micro / at.dp  # the queries of one data-parallel attention group
    ep_comm = _ep_comm_s(at, b, decode=True)
    decode_comm = _allreduces_s(at, group * model.hidden) + _stage_sends_s(at, micro * model.hidden) + ep_comm
    decode_step = decode_compute + decode_comm + host

    # what a user sees (decode only between tokens), and the steady-state cycle of in-flight batching, where
    # the stages (or the data-parallel groups) work on different prompts' prefills at once, packed into passes
    tpot = decode_step
    # each data-parallel attention group prefills its own queries
    prompts = prompts_per_pass(input_tokens, np.maximum(1.0, np.floor(b / at.dp)), max_num_tokens)
    pass_s, pass_comm = _prefill_passes_s(at, input_tokens, prompts, fixed + host)
    cycle = b / prompts * paced * pass_s / (pp * at.dp) + output_tokens * decode_step
    comm = b / prompts * paced * pass_comm / (pp * at.dp) + output_tokens * decode_comm
    memory_GB, fits = _memory(at, run_as, b / at.dp * (input_tokens + output_tokens), kv_dtype)
    gpus = at.gpus
    out = {
        "model": model.id, "system": system.id, "tp": tp, "pp": pp, "batch": b, "input_tokens": input_tokens,
        "output_tokens": output_tokens, "dtype": dtype, "stack": stack_name, "release": release,
        "decode_time_factor": factor, "pipeline_host_s": host, "nodes": at.nodes, "ep": ep,
        "ttft_s": ttft * np.ones_like(b), "prefill_prompts_per_pass": prompts, "prefill_pass_s": pass_s,
        "tpot_s": tpot, "tokens_per_s_per_user": 1.0 / tpot,
        "tokens_per_s_per_gpu": b * output_tokens / cycle / gpus, "decode_step_s": decode_step,
        "query_time_s": ttft + output_tokens * tpot, "cycle_s": cycle,
        "gemm_dtype": at.math_dtype, "kv_cache_dtype": kv_dtype,
        "tp_bytes_per_query_per_gpu": tp_bytes_per_query_per_gpu(model, tp, input_tokens, output_tokens,
                                                                  wire_dtype(dtype), ep),
        "comm_fraction": comm / cycle,
        "decode_comm_s": decode_comm, "decode_ep_comm_s": ep_comm * np.ones_like(b),
        "decode_compute_s": decode_compute, "decode_fixed_s": fixed,
        "memory_per_gpu_GB": memory_GB, "gpu_memory_GB": at.gpu.usable_memory_GB, "fits": fits,
    }
    if np.ndim(batch) == 0:
        out = {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in out.items()}
        out["batch"] = int(batch)
        out["prefill_prompts_per_pass"] = int(out["prefill_prompts_per_pass"])
    return ServingRun(**out)


def _deployment(model_id: str, system_id: str, tp: int, pp: int, dtype: str, cal: Calibration | None,
                stack_name: str, ep: int, batch: Any) -> _Deployment:
    """The checked deployment of :func:`run` (its layout, nodes and calibration)."""
    model, system = models.model(model_id), catalog.system(system_id)
    nodes, group_nodes = _check(model, system, tp, pp, batch, ep)
    return _Deployment(model, system, catalog.gpu(system.gpu), tp, pp, dtype, calibration.resolve(cal), stack_name,
                       nodes, group_nodes, ep)


def _fixed_s(model: models.Model, layer_overhead_s: float | None = None) -> float:
    """The fixed time of one pass's layers' kernels (launches, small kernels, tails), seconds: a token passes every
    layer."""
    return model.layers * (efficiency.constants().decode_layer_overhead_s
                           if layer_overhead_s is None else layer_overhead_s)


def prefill_passes_s(model_id: str, system_id: str, tp: int, input_tokens: int, prompts: Any, pp: int = 1,
                     dtype: str = "bf16", cal: Calibration | None = None, stack_name: str = DEFAULT_STACK,
                     ep: int = 1) -> np.ndarray:
    """Seconds of one prefill pass of ``prompts`` prompts of ``input_tokens`` tokens each (an array of counts) on
    one tensor-parallel group, as :func:`run`'s cycle packs them: GEMMs over all the pass's tokens, attention per
    prompt, all-reduces of all its tokens, the layers' fixed time once."""
    at = _deployment(model_id, system_id, tp, pp, dtype, cal, stack_name, ep, max(1, ep // tp))
    counts = np.atleast_1d(np.asarray(prompts, dtype=float))
    return _prefill_passes_s(at, input_tokens, counts, _fixed_s(at.model))[0]


@dataclass(frozen=True)
class _Deployment:
    """One model served on ``tp`` x ``pp`` GPUs of a system in ``dtype``: what the parts of :func:`run` share."""

    model: models.Model
    system: catalog.System
    gpu: catalog.Gpu
    tp: int
    pp: int
    dtype: str
    cal: Calibration
    stack_name: str
    nodes: int = 1  #: nodes the tp x pp (or ep) GPUs span
    group_nodes: int = 1  #: nodes one tensor-parallel group spans
    ep: int = 1  #: GPUs the routed experts are spread over

    @property
    def gpus(self) -> int:
        return self.ep if self.ep > 1 else self.tp * self.pp

    @property
    def dp(self) -> int:
        """Data-parallel attention groups of ``tp`` GPUs (1 without expert parallelism)."""
        return self.ep // self.tp if self.ep > 1 else 1

    @property
    def crossing_boundaries(self) -> int:
        """Stage boundaries between two nodes: every one where a stage fills a node or more, else one between
        each pair of nodes (the stages of a node are consecutive)."""
        if self.pp < 2:
            return 0
        return self.pp - 1 if self.group_nodes > 1 else self.nodes - 1

    @property
    def math_dtype(self) -> str:
        """The precision the GEMMs run in on this GPU (:func:`compute_dtype`)."""
        return compute_dtype(self.gpu, self.dtype)

    @property
    def activation_bw_Bps(self) -> float:
        """HBM bandwidth, bytes/s, as activations (16-bit) stream it."""
        return self.gpu.mem_bw_GBps * 1e9

    @property
    def weight_bw_Bps(self) -> float:
        """HBM bandwidth in bytes/s of 16-bit-equivalent weights: weights held in 8 bits stream twice the elements
        per byte, NVFP4's (4.5 bits with their scales) 16 / 4.5 times (else FP8 decode re-reads weights at BF16
        width); activations, norms and residuals stay 16-bit, as achievable_fraction prices them."""
        return self.activation_bw_Bps * models.dtype_bytes("bf16") / models.dtype_bytes(self.dtype)


def _allreduces_s(at: _Deployment, elements: Any) -> np.ndarray:
    """Seconds of one pass's tensor-parallel all-reduces: two per layer of ``elements`` activations each, on the
    stack's kernels; every layer's all-reduces are on the token's path, whatever ``pp``. FP8 and FP4 serving
    still all-reduce 16-bit activations (:func:`wire_dtype`)."""
    wire = models.dtype_bytes(wire_dtype(at.dtype))
    nbytes = np.asarray(elements * wire, dtype=float)
    # under expert parallelism a MoE layer's combine sums the experts' outputs: attention's all-reduce remains
    count = 2 * at.model.layers if at.ep == 1 else at.model.layers + at.model.dense_layers
    return count * _allreduce_us(at.system.id, at.tp, nbytes, at.cal, at.stack_name, at.group_nodes) * 1e-6


def _ep_kernel(at: _Deployment, decode: bool) -> str:
    """The dispatch-and-combine kernel: DeepEP's low-latency kernels in a decode step and its normal kernels in a
    prefill; NCCL's all-to-all with the nccl stack or on a system without NVLink."""
    if at.stack_name == "nccl" or not at.system.nvlink_GBps_per_dir:
        return "nccl"
    return "deepep-ll" if decode else "deepep"


def _ep_comm_s(at: _Deployment, tokens: Any, decode: bool) -> Any:
    """Seconds of a pass's expert-parallel dispatches and combines (one of each per MoE layer) when the ``ep``
    GPUs hold ``tokens`` tokens in all (an array of counts, or one); 0 without expert parallelism."""
    if at.ep == 1:
        return np.zeros(np.shape(tokens)) if np.ndim(tokens) else 0.0
    m = at.model

    @lru_cache(maxsize=None)
    def one(per_gpu: int) -> float:
        routing = expert.Routing(per_gpu, m.hidden, m.experts_per_token, m.experts)
        phases = expert.layer(routing, at.system.id, at.ep, at.nodes, kernel=_ep_kernel(at, decode), cal=at.cal)
        return m.moe_layers * sum(p.time_us for p in phases) * 1e-6

    per_gpu = np.ceil(np.atleast_1d(np.asarray(tokens, dtype=float)) / at.ep).astype(int)
    out = np.array([one(int(n)) for n in per_gpu])
    return out.reshape(np.shape(tokens)) if np.ndim(tokens) else float(out[0])


def _stage_sends_s(at: _Deployment, elements: Any) -> Any:
    """Seconds of a pass's sends between pipeline stages: one per stage boundary of ``elements`` 16-bit
    activations (each tensor-parallel rank to its peer of the next stage, the pairs at once), within a node or
    across two (:attr:`_Deployment.crossing_boundaries`); 0 without pipeline stages."""
    if at.pp < 2:
        return np.zeros(np.shape(elements))
    nbytes = np.atleast_1d(np.asarray(elements, dtype=float)) * models.dtype_bytes(wire_dtype(at.dtype))
    crossing = at.crossing_boundaries
    inside = at.pp - 1 - crossing
    total = np.zeros(nbytes.shape)
    for count, nodes in ((inside, 1), (crossing, 2)):
        if count:
            total = total + count * collectives.time_us("sendrecv", at.system.id, 2, nbytes, nodes=nodes,
                                                        cal=at.cal) * 1e-6
    return total.reshape(np.shape(elements)) if np.ndim(elements) else float(total[0])


def prompts_per_pass(input_tokens: int, batch: Any, max_num_tokens: int = DEFAULT_MAX_NUM_TOKENS) -> np.ndarray:
    """Prompts of ``input_tokens`` tokens that one pass of ``max_num_tokens`` tokens prefills together: as many as
    fit, at least one (a longer prompt takes a pass of its own) and at most ``batch`` (an array of counts: the
    queries of one data-parallel attention group, which prefills its own)."""
    return np.clip(max_num_tokens // input_tokens, 1, np.asarray(batch, dtype=float))


def _prefill_passes_s(at: _Deployment, input_tokens: int, prompts: np.ndarray,
                      fixed: float) -> tuple[np.ndarray, np.ndarray]:
    """(time, communication) seconds of one prefill pass of ``prompts`` prompts each (an array of counts), the
    layers' ``fixed`` time paid once per pass."""
    counts = np.asarray(prompts, dtype=float)
    time, comm = np.zeros_like(counts), np.zeros_like(counts)
    for n in np.unique(counts):
        compute, sent = _prefill_s(at, input_tokens, int(n))
        time, comm = np.where(counts == n, compute + sent + fixed, time), np.where(counts == n, sent, comm)
    return time, comm


def _prefill_s(at: _Deployment, input_tokens: int, prompts: int = 1) -> tuple[float, float]:
    """(compute, communication) seconds of the prefill of ``prompts`` prompts of ``input_tokens`` tokens in one
    pass, its pipeline stages one after another on ``tp`` GPUs each: its all-reduces and the sends between stages;
    the A100 fit carried over by the GPU's matmul ceiling. The pass's GEMMs see all its prompts' tokens;
    attention runs per prompt."""
    peak = peak_flops(at.gpu, at.math_dtype)
    ceiling = gemm.relative_ceiling(at.gpu.id, at.math_dtype)
    tokens = prompts * input_tokens
    fraction = efficiency.achievable_fraction(peak, at.model.hidden / at.tp, tokens, at.activation_bw_Bps,
                                              ceiling, at.weight_bw_Bps)
    flops = models.prefill_flops(at.model, input_tokens, prompts)
    routed = 2.0 * tokens * at.model.moe_layers * at.model.experts_per_token * at.model.expert_params
    # the routed experts' FLOPs run on the ep GPUs that hold them, the rest on the prompt's tp GPUs
    spread = (flops - routed) / at.tp + routed / at.ep if at.ep > 1 else flops / at.tp
    compute = spread / (peak * fraction)
    elements = np.asarray(tokens * at.model.hidden, dtype=float)
    # the prompts' tokens sit on their tp GPUs: the busiest of them dispatches tokens / tp
    ep_comm = _ep_comm_s(at, np.ceil(tokens / at.tp) * at.ep, decode=False)
    return compute, float(_allreduces_s(at, elements)[0]) + float(_stage_sends_s(at, elements)) + ep_comm


def _decode_compute_s(at: _Deployment, b: np.ndarray, kv_len: float, kv_dtype: str) -> np.ndarray:
    """Seconds between a user's tokens, before the layers' fixed time, with micro-batches of ``b`` queries at KV
    length ``kv_len`` (the mean over the output): ``pp`` stage steps, each the slower of reading its stage's
    weights and its micro-batch's KV cache on ``tp`` GPUs (:func:`_decode_read_bytes`: each holds all of an MLA
    latent), and the FLOPs, i.e. the whole model's for ``b`` queries over ``tp`` GPUs (the whole batch when
    ``pp`` is 1)."""
    model, gpu = at.model, at.gpu
    read_Bps = gpu.mem_bw_GBps * 1e9 * hbm_read_efficiency(gpu.id)
    memory_s = _decode_read_bytes(at, b, kv_len, kv_dtype) / read_Bps
    peak = peak_flops(gpu, at.math_dtype)
    fraction = efficiency.achievable_fraction(peak, model.hidden / at.tp, b, at.activation_bw_Bps,
                                              gemm.relative_ceiling(gpu.id, at.math_dtype), at.weight_bw_Bps)
    # attention has no weights to read (its KV-cache reads are in memory_s) and runs at the 16-bit rate
    linear = 2.0 * model.matmul_params_active
    attention = models.decode_flops_per_token(model, kv_len) - linear
    peak16 = peak_flops(gpu, "bf16")
    attention_fraction = efficiency.achievable_fraction(peak16, model.hidden / at.tp, b, at.activation_bw_Bps,
                                                        gemm.relative_ceiling(gpu.id, "bf16"), np.inf)
    # each GPU computes 1 / tp of its group's tokens: b / tp, or b / ep with ep / tp groups
    flops_s = b * (linear / (peak * fraction) + attention / (peak16 * attention_fraction)) / (at.tp * at.dp)
    return np.maximum(memory_s, flops_s)


def _decode_read_bytes(at: _Deployment, b: np.ndarray, kv_len: float, kv_dtype: str) -> np.ndarray:
    """Bytes one GPU reads in a decode step of ``b`` queries (the whole model's, over its stages): 1 / tp of the
    weights, or under expert parallelism 1 / tp of the dense weights and 1 / ep of the experts the whole batch
    touches; and its share of its group's KV cache (:func:`multigpu.compute.models.kv_share_per_gpu`: its KV
    heads, or all of an MLA latent, which every tensor-parallel rank holds and reads)."""
    m = at.model
    whole = models.decode_bytes_per_step(m, b, kv_len, at.dtype, kv_dtype)
    kv = whole["kv_cache_bytes"] / at.dp * models.kv_share_per_gpu(m, at.tp)
    if at.ep == 1:
        return whole["weights_bytes"] / at.tp + kv
    dense = models.decode_bytes_per_step(m, 0, kv_len, at.dtype, kv_dtype)["weights_bytes"]
    return dense / at.tp + (whole["weights_bytes"] - dense) / at.ep + kv


def _memory(at: _Deployment, run_as: Stack, kv_tokens: np.ndarray, kv_dtype: str) -> tuple[Any, Any]:
    """(GB per GPU, whether it fits) for weights and ``kv_tokens`` tokens of KV cache. FP8 weights on a GPU
    without FP8 tensor cores run on vLLM's Marlin kernels (:func:`compute_dtype`): its memory rule applies."""
    memory = models.inference_memory_per_gpu_bytes(at.model, tp=at.tp, pp=at.pp, ep=at.dp, kv_tokens=kv_tokens,
                                                   weight_dtype=at.dtype, kv_dtype=kv_dtype)
    memory_GB = np.asarray(memory["total_bytes"], dtype=float) / 1e9
    engine = STACKS["vllm"] if at.math_dtype != at.dtype else run_as
    budget = engine.memory_budget_GB(at.gpu.usable_memory_GB, np.asarray(memory["weights_bytes"], dtype=float) / 1e9)
    return memory_GB, memory_GB <= budget


@dataclass(frozen=True)
class ClosedLoop:
    """What each of ``batch`` users measures in a closed-loop, fixed-concurrency benchmark (seconds)."""

    ttft_s: Any  #: the user's own prefill plus the wait for the other users' prefills ahead of it (M/D/1)
    itl_s: Any  #: mean time between two output tokens: the decode steps and the prefills between them


def unpacked_cycle_s(run_: ServingRun) -> Any:
    """``run_``'s steady-state cycle (s) with each prompt prefilled in a pass of its own: its ``batch`` prefills at
    ``ttft_s`` each (spread over the pipeline stages and data-parallel groups, at the largest stage's pace) and its
    decode steps."""
    b = np.asarray(run_.batch, dtype=float)
    lanes = run_.pp * (run_.ep // run_.tp if run_.ep > 1 else 1)
    packed = b / np.asarray(run_.prefill_prompts_per_pass) * np.asarray(run_.prefill_pass_s) / lanes
    paced = stage_imbalance(models.model(run_.model).layers, run_.pp) if run_.pp > 1 else 1.0
    return np.asarray(run_.cycle_s) - paced * (packed - b * np.asarray(run_.ttft_s) / lanes)


def closed_loop(run_: ServingRun) -> ClosedLoop:
    """The closed-loop concurrency model, for fixed-concurrency benchmarks (AIPerf / genai-perf, vLLM's
    ``benchmark_serving --max-concurrency``): ``batch`` users each send their next query as soon as the previous
    answer ends, and the engine interleaves prefills with decode steps (in-flight batching). In the steady state
    one cycle (batch x ttft_s + output_tokens x decode_step_s) gives every user one prefill and
    ``output_tokens`` decode steps, so

    - inter-token latency = ``(cycle_s - ttft_s) / output_tokens``: a user's decode steps plus the other
      ``batch - 1`` users' prefills that run between them (the decode-only ``tpot_s`` when ``batch`` is 1);
    - TTFT = ``ttft_s`` + the wait for the other users' prefills, one at a time ahead of it: an M/D/1 queue
      (prefills of a fixed ``ttft_s`` arriving at random), whose mean wait is Pollaczek-Khinchine's
      ``rho ttft_s / (2 (1 - rho))``, ``rho = (batch - 1) ttft_s / cycle_s`` the share of the engine's time the
      others' prefills take (not only the prefill found in progress, ``rho ttft_s / 2``).

    Users who arrive at random seldom find other prompts waiting to share a pass, so here each prefill runs alone
    (``cycle_s`` is recounted with one prompt a pass, :func:`unpacked_cycle_s`).

    No queue beyond the batch: a batch that does not fit in memory is the caller's to refuse."""
    b = np.asarray(run_.batch, dtype=float)
    cycle = unpacked_cycle_s(run_)
    share = np.asarray(run_.ttft_s) / cycle
    rho = (b - 1.0) * share  # < 1: the cycle holds every user's prefill and the decode steps
    ttft = np.asarray(run_.ttft_s) * (1.0 + rho / (2.0 * (1.0 - rho)))
    itl = (cycle - np.asarray(run_.ttft_s)) / run_.output_tokens
    if np.ndim(run_.batch) == 0:
        return ClosedLoop(float(ttft), float(itl))
    return ClosedLoop(ttft, itl)
