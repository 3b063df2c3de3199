"""The limits TensorRT-LLM's benchmark tool, ``trtllm-bench``, gives an engine when a published run states none.

TensorRT-LLM's performance pages from v0.12 on were measured with ``trtllm-bench``, which builds (or, on the
PyTorch backend, configures) the engine with a maximum batch and a maximum of tokens per iteration that it
computes from the model, the GPUs and the dataset's lengths (``tensorrt_llm/bench/build/tuning.py``,
``calc_engine_setting`` and ``finetune_setting``, unchanged in substance from v0.12 to v1.0):

1. The requests whose whole KV cache (input plus output tokens) fits in 0.95 of what the weights leave of the
   GPUs' memory: ``kv_requests = 0.95 x (GPUs x memory - weights) / (kv bytes a token x (input + output))``, in
   GiB, each tensor-parallel GPU holding at least one KV head.
2. A micro-batch takes ``min(kv_requests, 4096) / pp`` of them, rounded up to a multiple of 32 (at least 64),
   of 128 from 256, of 256 from 1024: the engine's ``max_batch_size``. The ``pp`` micro-batches in flight hold
   ``pp`` times that.
3. An iteration takes that batch times ``1 + input / output`` tokens, at most 32768, rounded up to a multiple of
   256 (at least 2048), of 512 from 4096, of 1024 from 8192: ``max_num_tokens``.

:func:`limits` gives both. :mod:`multigpu.evidence.serving` applies them to the rows whose ``engine_limits`` is
``trtllm-bench``: a maximum-load row's batch is the largest that fits memory, up to ``pp x max_batch_size``,
and its prefill passes pack ``max_num_tokens`` tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from multigpu.compute import inference, models
from multigpu.hardware import catalog

#: The tool's name in ``serving_runs.csv``'s ``engine_limits`` column.
TOOL = "trtllm-bench"
SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/bench/build/tuning.py"
#: Share of the memory the weights leave that the tool counts for KV cache (``kv_cache_gpu_mem_fraction``).
KV_SHARE = 0.95
#: The most requests the tool lets the micro-batches hold together ("to avoid decoder buffer size becoming too
#: large"), and the most tokens one iteration takes.
MAX_REQUESTS = 4096
MAX_TOKENS = 32768
GIB = 1024**3
#: Bytes a weight of each format takes in the tool's estimate of the engine (``BYTES_PER_ELEM``; others 2).
WEIGHT_BYTES = {"fp8": 1.0, "fp4": 0.5}


@dataclass(frozen=True)
class EngineLimits:
    """What ``trtllm-bench`` configures: queries a micro-batch holds, and tokens an iteration holds."""

    max_batch_size: int
    max_num_tokens: int


def _round_batch(raw: float) -> int:
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    step = 128 if raw < 1024 else 256
    return step * math.ceil(raw / step)


def _round_tokens(raw: float) -> int:
    if raw < 4096:
        return max(2048, 256 * math.ceil(raw / 256))
    step = 512 if raw < 8192 else 1024
    return step * math.ceil(raw / step)


def kv_requests(model_id: str, system_id: str, tp: int, pp: int, dtype: str, input_tokens: int,
                output_tokens: int) -> float:
    """Requests whose whole KV cache fits in the tool's share of the memory the weights leave (step 1): the GPU's
    stated memory read as GiB, the weights at the tool's bytes for their format (:data:`WEIGHT_BYTES`), the KV
    cache at the precision TensorRT-LLM keeps under them (:meth:`multigpu.compute.inference.Stack.kv_dtype`)."""
    m = models.model(model_id)
    gpu = catalog.gpu(catalog.system(system_id).gpu)
    kv_dtype = inference.stack("tensorrt-llm").kv_dtype(dtype)
    heads = max(tp, m.kv_heads)  # each GPU of a tensor-parallel group holds at least one KV head
    per_token = models.kv_cache_bytes_per_token(m, kv_dtype) * heads / m.kv_heads / GIB
    weights = m.params_total * WEIGHT_BYTES.get(dtype, 2.0) / GIB
    free = gpu.memory_GB * tp * pp - weights
    return KV_SHARE * free / (per_token * (input_tokens + output_tokens))


def limits(model_id: str, system_id: str, tp: int, pp: int, dtype: str, input_tokens: int,
           output_tokens: int) -> EngineLimits:
    """The engine's ``max_batch_size`` (queries of one micro-batch) and ``max_num_tokens`` (steps 2 and 3)."""
    raw_batch = min(kv_requests(model_id, system_id, tp, pp, dtype, input_tokens, output_tokens), MAX_REQUESTS) / pp
    raw_tokens = min(raw_batch * (1 + input_tokens / output_tokens), MAX_TOKENS)
    return EngineLimits(_round_batch(raw_batch), _round_tokens(raw_tokens))
