"""Transformer workloads: shapes, parameter counts, FLOPs and memory.

The compute side of the training and inference model. Shapes live in
``data/models.csv`` (one row per model, with its source); everything else is
computed from the shape:

- parameter counts, total and active per token (:class:`Model`);
- FLOPs: model FLOPs (what MFU counts) and hardware FLOPs (what the GPU
  executes, recomputation included) per training step; the closed form of
  Narayanan et al. (SC21, eq. 3); prefill and decode FLOPs for inference;
- memory per GPU: weights, gradients, optimizer states (ZeRO / FSDP) and
  activations (Korthikanti et al. 2022) for training; weights and KV cache for
  inference;
- the achievable fraction of peak FLOP/s as a function of GEMM size, with
  constants from ``data/compute_efficiency.csv``.

Units are in the names: ``_bytes`` are bytes, ``_flops`` are floating-point
operations (a multiply-add is 2), ``flops_peak`` is FLOP/s, ``_Bps`` is
bytes/s. The FLOP and memory functions take plain numbers or numpy arrays for
the sizes (batch, sequence, layout) and broadcast; they return a float when
every size is a scalar.

Conventions, as in the sources the tests check:

- Model FLOPs count the matrix multiplies only (weights, attention scores and
  the vocabulary projection); element-wise work is left out. Training counts
  attention over the full ``seq`` x ``seq`` score matrix, as Megatron-LM and
  PaLM's MFU do; prefill counts the causal half that is actually computed.
- Mixed-precision Adam holds 2 (BF16 weights) + 2 (BF16 gradients) + 12
  (FP32 master weights, momentum, variance) = 16 bytes per parameter
  (Rajbhandari et al., ZeRO, SC20). Megatron-LM accumulates gradients in FP32
  (``grad_dtype="fp32"``: 18 bytes per parameter).
"""

from __future__ import annotations

import functools
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.compute.hfconfig import load_config
from multigpu.compute.layout import Layout
from multigpu.compute.shapes import (  # noqa: F401  (re-exported: the model's shapes, as callers name them)
    ATTENTION_KERNELS,
    ATTENTION_KINDS,
    BIAS_KINDS,
    DTYPE_BYTES,
    NORM_KINDS,
    POSITION_KINDS,
    LAYER_PARTS,
    MAXTEXT_POLICIES,
    MAXTEXT_SAVES,
    RECOMPUTE,
    RECOMPUTE_MODULES,
    REMAT_POLICIES,
    TORCHTITAN_OP_PARTS,
    Model,
    ModelRow,
    check_shape,
)

MODELS_CSV = DATA_DIR / "models.csv"

Number = float | np.ndarray


@functools.cache
def _load(path: Path = MODELS_CSV) -> dict[str, Model]:
    table: dict[str, Model] = {}
    for line, row in datafiles.read(path, ModelRow, unique=("id",)):
        check_shape(row, path, line)
        table[row.id] = Model(**{f.name: getattr(row, f.name) for f in fields(Model)})
    return table


def models() -> dict[str, Model]:
    """Every model of ``data/models.csv``, by id, in file order."""
    return dict(_load())


def plain_name(model_id: str | Model) -> str:
    """A model's name as people write it: the catalogue's name without its note in brackets ("MPT 3B", not "MPT 3B
    (llm-foundry benchmark config)"), the same in every language."""
    return re.sub(r"\s*\([^)]*\)", "", model(model_id).name)


def model(model_id: str | Model) -> Model:
    """The model with this id, or read from a Hugging Face ``config.json`` (a path to the file or its folder;
    :func:`multigpu.compute.hfconfig.load_config`); a :class:`Model` passes through. Unknown ids raise
    :class:`InputError`."""
    if isinstance(model_id, Model):
        return model_id
    table = _load()
    if model_id in table:
        return table[model_id]
    if model_id.endswith(".json") or Path(model_id).is_dir():
        return _from_config(str(Path(model_id).resolve()))
    raise InputError(f"unknown model '{model_id}'; expected a catalogue id ({', '.join(table)}) or the path of a "
                     f"Hugging Face config.json")


def memo_key(model_id: str | Model) -> str | Model:
    """What a memo of results keys a model by: its catalogue id when it is one, else the :class:`Model` itself
    (a config.json path is read here, so an edited file is a new key, and a config's model is never looked up
    again by an id the catalogue does not have)."""
    if isinstance(model_id, str) and model_id in _load():
        return model_id
    return model(model_id)


@functools.cache
def _from_config(path: str) -> Model:
    return load_config(path)


# --------------------------------------------------------------------------- helpers


def _resolve(model_id: str | Model) -> Model:
    """:func:`model`, callable from functions whose argument is named ``model``."""
    return model(model_id)


def dtype_bytes(dtype: str) -> float:
    """Bytes per element of a number format (``bf16`` -> 2); unknown formats raise :class:`InputError`."""
    if dtype not in DTYPE_BYTES:
        raise InputError(f"unknown dtype '{dtype}'; known: {', '.join(DTYPE_BYTES)}")
    return DTYPE_BYTES[dtype]


def as_number(value: Any) -> Number:
    """A float for a 0-d result, the array otherwise."""
    array = np.asarray(value, dtype=float)
    return float(array) if array.ndim == 0 else array


def _check_choice(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value not in allowed:
        raise InputError(f"{what} '{value}' is not one of {', '.join(allowed)}")


def _check_positive(**sizes: ArrayLike) -> None:
    for name, value in sizes.items():
        if np.any(np.asarray(value) < 1):
            raise InputError(f"{name} must be >= 1")


def _attention_widths(m: Model, absorbed: bool = False) -> tuple[int, int]:
    """(q.k width, attention-over-values width) summed over heads.

    ``absorbed``: MLA decode with the up-projections folded into the query and
    output (scores against the cached latent: width ``kv_lora + rope`` and
    ``kv_lora`` per head), as DeepSeek's inference does.
    """
    if absorbed and m.attention == "mla":
        return m.heads * (m.kv_lora_rank + m.rope_head_dim), m.heads * m.kv_lora_rank
    return m.heads * m.head_dim, m.heads * m.v_head_dim


# --------------------------------------------------------------------------- FLOPs


def forward_flops_per_token(model: Model | str, context: ArrayLike) -> Number:
    """Forward FLOPs of one token attending to ``context`` tokens (weights + scores + vocabulary).

    ``2 * matmul_params_active + 2 * layers * context * heads * (d_qk + d_v)``.
    """
    m = _resolve(model)
    qk, v = _attention_widths(m)
    return as_number(2.0 * m.matmul_params_active + 2.0 * m.layers * np.asarray(context) * (qk + v))


def recomputed_modules(recompute: str, modules: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The parts of a layer that ``recompute`` runs again (:data:`RECOMPUTE_MODULES`, or the finer
    :data:`LAYER_PARTS` a MaxText policy maps to, :func:`maxtext_recompute`): under selective
    recomputation ``modules``, or ``core_attn`` where none is stated (Megatron-Core's default); none otherwise
    (full recomputation is every part). An InputError for an unknown part, or parts without selective."""
    _check_choice(recompute, RECOMPUTE, "recompute")
    for name in modules:
        _check_choice(name, LAYER_PARTS, "recompute module")
    if modules and recompute != "selective":
        raise InputError(f"recompute modules ({', '.join(modules)}) need selective recomputation; got {recompute}")
    return (tuple(modules) or ("core_attn",)) if recompute == "selective" else ()


def maxtext_recompute(model: Model | str, policy: str) -> tuple[str, tuple[str, ...]]:
    """(recompute, parts) of MaxText's remat ``policy`` (:data:`MAXTEXT_POLICIES`) on ``model``: ``full``, or
    selective recomputation of every part of :data:`LAYER_PARTS` it does not keep (:data:`MAXTEXT_SAVES`): the
    norms and the MLP's activation always, the attention core with its output (``core_attn`` and ``context``).
    An InputError for another policy, or for a mixture-of-experts or MLA model, whose layers' names the mapping
    does not cover."""
    _check_choice(policy, MAXTEXT_POLICIES, "MaxText remat policy")
    if policy == "full":
        return "full", ()
    _check_dense(model, f"MaxText's remat policy '{policy}'")
    saves = MAXTEXT_SAVES[policy]
    parts = ["layernorm", "mlp_act"] + [p for p in ("qkv_proj", "context", "out_proj", "mlp_in") if p not in saves]
    if "context" in parts:
        parts.insert(0, "core_attn")
    return "selective", tuple(parts)


def named_recompute(model: Model | str, policy: str) -> tuple[str, tuple[str, ...]]:
    """(recompute, parts) of a named recomputation ``policy`` (:data:`REMAT_POLICIES`) on ``model``: MaxText's
    (:func:`maxtext_recompute`), or torchtitan's per-operator policy, ``torchtitan-op``: selective recomputation
    of :data:`TORCHTITAN_OP_PARTS`. Dense layers with multi-head or grouped-query attention only."""
    _check_choice(policy, REMAT_POLICIES, "remat policy")
    if policy in MAXTEXT_POLICIES:
        return maxtext_recompute(model, policy)
    _check_dense(model, f"torchtitan's policy '{policy}'")
    return "selective", TORCHTITAN_OP_PARTS


def _check_dense(model: Model | str, what: str) -> None:
    """An InputError where ``model`` has experts or MLA, whose layers' names a named policy's mapping does not
    cover."""
    m = _resolve(model)
    if m.is_moe or m.attention == "mla":
        raise InputError(f"{what} is priced for dense layers with multi-head or grouped-query attention only; "
                         f"{m.name} has {'experts' if m.is_moe else 'MLA'} (use --recompute with Megatron-Core's "
                         f"module names)")


def recompute_module_flops_per_token(model: Model | str, modules: tuple[str, ...]) -> float:
    """Forward FLOPs per token that recomputing ``modules`` (:data:`LAYER_PARTS`) adds to a training step,
    weight GEMMs only: MLA's up-projections (``mla_up_proj``), the dense layers' MLPs (``mlp``), or their first
    GEMMs alone (``mlp_in``: gate and up), the query, key and value projections (``qkv_proj``), the output
    projection (``out_proj``), the key projection alone (``k_proj``), a gated MLP's up GEMM alone (``mlp_up``),
    the MoE blocks' routed and shared experts (``moe``) or shared experts alone (``shared_experts``). The attention
    scores
    (``core_attn``) are :func:`training_flops_per_step`'s; norms and activation functions (``layernorm``,
    ``moe_act``) are elementwise and not counted."""
    m = _resolve(model)
    h, flops = m.hidden, 0.0
    qk, v = _attention_widths(m)
    if "qkv_proj" in modules:
        flops += 2.0 * m.layers * h * (qk + m.kv_heads * (m.head_dim + m.v_head_dim))
    elif "k_proj" in modules:
        flops += 2.0 * m.layers * h * m.kv_heads * m.head_dim
    if "out_proj" in modules:
        flops += 2.0 * m.layers * v * h
    if "mlp_in" in modules and "mlp" not in modules:
        flops += 2.0 * m.dense_layers * (2 if m.gated_mlp else 1) * h * m.ffn_hidden
    elif "mlp_up" in modules and "mlp" not in modules and m.gated_mlp:
        flops += 2.0 * m.dense_layers * h * m.ffn_hidden
    if "mla_up_proj" in modules and m.attention == "mla":
        flops += 2.0 * m.layers * m.heads * (m.q_lora_rank * m.head_dim + m.kv_lora_rank
                                             * (m.head_dim - m.rope_head_dim + m.v_head_dim))
    mlp_params = (3 if m.gated_mlp else 2) * h
    if "mlp" in modules:
        flops += 2.0 * m.dense_layers * mlp_params * m.ffn_hidden
    experts = (m.experts_per_token + m.shared_experts if "moe" in modules
               else m.shared_experts if "shared_experts" in modules else 0)
    return flops + 2.0 * m.moe_layers * experts * mlp_params * m.moe_ffn_hidden


def training_flops_per_step(model: Model | str, global_batch: ArrayLike, seq: ArrayLike,
                            recompute: str = "none", causal: bool = False,
                            modules: tuple[str, ...] = ()) -> tuple[Number, Number]:
    """(model FLOPs, hardware FLOPs) of one training step of ``global_batch`` sequences of ``seq`` tokens.

    Model FLOPs (what MFU counts) are forward + backward = 3 x forward:
    ``6 * matmul_params_active * tokens + 12 * layers * seq * heads*(d_qk+d_v)/2 * tokens``;
    for a GPT shape this is Korthikanti et al. 2022 eq. 7,
    ``72 B L s h^2 (1 + s/(6h) + v/(12hL))``, exactly.

    Hardware FLOPs add what recomputation runs again:

    - ``none``: nothing;
    - ``selective``: one more forward of the attention scores (QK^T and
      attention over V). Korthikanti et al.'s eq. 8 counts this part twice
      (``s/(3h)`` instead of ``s/(6h)``); one forward is what is executed.
      With ``modules`` (:func:`recomputed_modules`), the scores only if they include
      ``core_attn``, and the GEMMs of :func:`recompute_module_flops_per_token`;
    - ``full``: one more forward of every transformer layer (not the vocabulary
      projection): Narayanan et al. SC21 eq. 3,
      ``96 B s l h^2 (1 + s/(6h) + V/(16lh))``, for a GPT shape.

    ``causal=True`` counts only the causal half of the score matrix
    (``(seq+1)/2`` keys per query) instead of the full square.
    """
    m = _resolve(model)
    parts = recomputed_modules(recompute, modules)
    tokens = np.asarray(global_batch, dtype=float) * np.asarray(seq, dtype=float)
    fwd_scores = _forward_score_flops(m, global_batch, seq, causal)
    fwd_head = 2.0 * m.vocab * m.hidden * tokens
    fwd_weights = 2.0 * m.matmul_params_active * tokens - fwd_head
    model_flops = 3.0 * (fwd_weights + fwd_scores + fwd_head)
    if recompute == "full":
        extra = fwd_weights + fwd_scores
    else:
        extra = (fwd_scores if "core_attn" in parts else 0.0) + recompute_module_flops_per_token(m, parts) * tokens
    return as_number(model_flops), as_number(model_flops + extra)


def attention_training_flops_per_step(model: Model | str, global_batch: ArrayLike, seq: ArrayLike,
                                     recompute: str = "none", causal: bool = False,
                                     modules: tuple[str, ...] = ()) -> Number:
    """The hardware FLOPs of :func:`training_flops_per_step` that are attention scores (QK^T and attention over
    V: forward, backward and what recomputation runs again); the rest are the weight GEMMs."""
    m = _resolve(model)
    again = recompute == "full" or "core_attn" in recomputed_modules(recompute, modules)
    return as_number(_forward_score_flops(m, global_batch, seq, causal) * (4.0 if again else 3.0))


def head_training_flops_per_step(model: Model | str, global_batch: ArrayLike, seq: ArrayLike,
                                method_passes: float = 3.0) -> Number:
    """The hardware FLOPs of :func:`training_flops_per_step` that are the vocabulary projection (the output
    layer, ``2 * vocab * hidden`` per token forward): ``method_passes`` forward-equivalents (3: forward,
    backward-data and backward-weight; 2 for a frozen head); never recomputed."""
    m = _resolve(model)
    tokens = np.asarray(global_batch, dtype=float) * np.asarray(seq, dtype=float)
    return as_number(method_passes * 2.0 * m.vocab * m.hidden * tokens)


#: Reads and writes of each attention-score element (one head, one query-key pair) when the score matrix is
#: materialised (Megatron's fused scale-mask-softmax, before FlashAttention), by pass and by whether attention
#: dropout runs; each moves one score-width value (:data:`SCORE_WIDTH_BYTES`), and dropout adds its one-byte mask:
#:
#: - forward, 6 (13 B at 16 bits): the QK^T GEMM writes the scores, the fused softmax reads them and writes the
#:   probabilities, dropout reads those and writes its output (and its mask), the GEMM over V reads that output;
#:   without dropout 4 (8 B);
#: - backward, 9 (19 B at 16 bits): dV reads the dropped-out probabilities, dP is written, dropout's backward reads
#:   dP (and the mask) and writes its gradient, softmax's backward reads it and the probabilities and writes dS,
#:   dQ and dK read dS; without dropout 7 (14 B).
#:
#: Selective and full recomputation both run the forward pass of the scores once more. Derived from the
#: kernels' reads and writes (the tensors of Korthikanti et al. 2022, section 4.1), not fitted.
SCORE_ACCESSES = {("forward", True): 6, ("backward", True): 9, ("forward", False): 4, ("backward", False): 7}
#: Bytes of attention dropout's mask per score element, read or written once in each pass.
DROPOUT_MASK_BYTES = 1.0
#: Bytes of one attention score by the precision the scores are computed in: 16 bits under mixed precision
#: (FP8 training computes attention in BF16), 32 bits under TF32 and FP32, whose softmax runs in FP32.
SCORE_WIDTH_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 2.0, "tf32": 4.0, "fp32": 4.0}


def score_bytes_per_element(pass_: str, dropout: bool, dtype: str = "bf16") -> float:
    """Bytes one materialised attention-score element moves in one pass (``forward`` or ``backward``) when the
    model trains in ``dtype``: :data:`SCORE_ACCESSES` at :data:`SCORE_WIDTH_BYTES`, and the dropout mask."""
    _check_choice(dtype, tuple(SCORE_WIDTH_BYTES), "dtype")
    return SCORE_ACCESSES[(pass_, dropout)] * SCORE_WIDTH_BYTES[dtype] + (DROPOUT_MASK_BYTES if dropout else 0.0)


def score_traffic_bytes(model: Model | str, micro_batch: ArrayLike, seq: ArrayLike, tp: ArrayLike = 1,
                        recompute: str = "none", attention: str = "flash", cp: ArrayLike = 1,
                        dtype: str = "bf16") -> Number:
    """Memory traffic of the attention scores of one layer and one micro-batch on one GPU, bytes: 0 for
    FlashAttention (the scores stay on chip); for a materialised score matrix, ``heads / tp`` heads of
    ``seq / cp`` queries by ``seq`` keys, times :func:`score_bytes_per_element` (at the width of ``dtype``'s
    scores) for the forward, the backward and the forward that recomputation runs again."""
    m = _resolve(model)
    _check_choice(recompute, RECOMPUTE, "recompute")
    _check_choice(attention, ATTENTION_KERNELS, "attention")
    if attention == "flash":
        return as_number(np.zeros(np.broadcast(np.asarray(micro_batch), np.asarray(seq), np.asarray(tp)).shape))
    s = np.asarray(seq, dtype=float)
    elements = m.heads / np.asarray(tp, dtype=float) * np.asarray(micro_batch, dtype=float) * s * s / np.asarray(cp)
    forward = score_bytes_per_element("forward", m.dropout, dtype)
    backward = score_bytes_per_element("backward", m.dropout, dtype)
    per_element = forward * (1.0 if recompute == "none" else 2.0) + backward
    return as_number(elements * per_element)


def _forward_score_flops(m: Model, global_batch: ArrayLike, seq: ArrayLike, causal: bool) -> np.ndarray:
    """Forward FLOPs of the attention scores (QK^T and attention over V) of ``global_batch`` sequences."""
    seq = np.asarray(seq, dtype=float)
    qk, v = _attention_widths(m)
    context = (seq + 1) / 2 if causal else seq
    return 2.0 * m.layers * context * (qk + v) * np.asarray(global_batch, dtype=float) * seq


def megatron_flops_per_iteration(model: Model | str, batch: ArrayLike, seq: ArrayLike,
                                 full_recompute: bool = True) -> Number:
    """FLOPs per iteration by Narayanan et al. SC21 eq. 3 (GPT shapes: MHA, 4h MLP, tied vocabulary).

    ``F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` with full recomputation
    (4 passes), ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))`` without (3 passes,
    = model FLOPs). Uses ``layers``, ``hidden`` and ``vocab`` of the model only.
    """
    m = _resolve(model)
    b, s = np.asarray(batch, dtype=float), np.asarray(seq, dtype=float)
    l, h, v = m.layers, float(m.hidden), m.vocab
    if full_recompute:
        return as_number(96.0 * b * s * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h)))
    return as_number(72.0 * b * s * l * h**2 * (1 + s / (6 * h) + v / (12 * l * h)))


def prefill_flops(model: Model | str, tokens: ArrayLike, batch: ArrayLike = 1,
                  logits_all: bool = False) -> Number:
    """FLOPs to prefill ``batch`` prompts of ``tokens`` tokens each (causal attention).

    ``2 * weights * tokens + 2 * layers * heads*(d_qk+d_v) * tokens*(tokens+1)/2``,
    plus the vocabulary projection for the last token only (every token if
    ``logits_all``). MLA runs un-absorbed here (per-head K and V of width 192
    and 128 for DeepSeek-V3), as in DeepSeek's prefill.
    """
    m = _resolve(model)
    t = np.asarray(tokens, dtype=float)
    qk, v = _attention_widths(m)
    head = 2.0 * m.vocab * m.hidden
    weights = (2.0 * m.matmul_params_active - head) * t + head * (t if logits_all else 1.0)
    scores = 2.0 * m.layers * (qk + v) * t * (t + 1) / 2
    return as_number(np.asarray(batch, dtype=float) * (weights + scores))


def decode_flops_per_token(model: Model | str, kv_len: ArrayLike) -> Number:
    """FLOPs to generate one token whose query attends to ``kv_len`` cached tokens.

    ``2 * matmul_params_active + 2 * layers * kv_len * heads*(d_qk+d_v)``; MLA
    uses the absorbed form (scores against the cached latent: per head
    ``kv_lora + rope`` for q.k and ``kv_lora`` for attention over values), as
    DeepSeek's decode does. Approximate: the absorbed weight products are
    counted as the up-projection weights they replace.
    """
    m = _resolve(model)
    qk, v = _attention_widths(m, absorbed=True)
    return as_number(2.0 * m.matmul_params_active + 2.0 * m.layers * np.asarray(kv_len, dtype=float) * (qk + v))


# --------------------------------------------------------------------------- memory: model states


def model_state_bytes_per_gpu(params: ArrayLike, dp: ArrayLike = 1, zero_stage: ArrayLike = 0,
                              dtype: str = "bf16", grad_dtype: str | None = None,
                              optimizer_bytes_per_param: float | None = None) -> dict[str, Number]:
    """Weights, gradients and Adam states (bytes) of ``params`` parameters held by one data-parallel rank.

    ZeRO (Rajbhandari et al. SC20) shards across the ``dp`` ranks: stage 1 the
    optimizer states, stage 2 also the gradients, stage 3 (= FSDP FULL_SHARD)
    also the weights; FSDP SHARD_GRAD_OP is stage 2. Bytes per parameter:
    weights ``dtype``, gradients ``grad_dtype`` (default: ``dtype``), optimizer
    12 (FP32 master copy + momentum + variance), or 8 when ``dtype`` is fp32
    (no separate master copy).
    """
    w = dtype_bytes(dtype)
    g = dtype_bytes(grad_dtype or dtype)
    o = optimizer_bytes_per_param if optimizer_bytes_per_param is not None else (8.0 if w == 4 else 12.0)
    p = np.asarray(params, dtype=float)
    dp, stage = np.asarray(dp, dtype=float), np.asarray(zero_stage)
    if np.any((stage < 0) | (stage > 3)):
        raise InputError("zero_stage must be 0, 1, 2 or 3")
    _check_positive(dp=dp)
    return {
        "weights_bytes": as_number(p * w / np.where(stage >= 3, dp, 1.0)),
        "gradients_bytes": as_number(p * g / np.where(stage >= 2, dp, 1.0)),
        "optimizer_bytes": as_number(p * o / np.where(stage >= 1, dp, 1.0)),
    }


def optimizer_bytes_per_param(dtype: str, moment_dtype: str = "fp32") -> float:
    """Adam's state per parameter, bytes: an FP32 master copy (none when the weights are FP32 already) and two
    moments in ``moment_dtype``."""
    return (0.0 if dtype_bytes(dtype) == 4 else 4.0) + 2 * dtype_bytes(moment_dtype)


def _stage_params(m: Model, pp: np.ndarray, first: bool,
                  layers: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(non-expert params, expert params, layers) of the first or the last pipeline stage.

    Layers are split evenly unless ``layers`` gives the stage's count: the first stage taking ceil(L/pp), the
    last floor(L/pp); the first stage holds the input embedding, the last the vocabulary projection (Megatron
    keeps a copy of a tied embedding there) and the final norm. With pp = 1 the one stage holds all of it.
    """
    if layers is None:
        layers = np.ceil(m.layers / pp) if first else np.floor(m.layers / pp)
    if first:
        dense = np.minimum(layers, m.dense_layers)
    else:
        dense = np.clip(m.dense_layers - (m.layers - layers), 0, None)
    moe = layers - dense
    shared = dense * m.dense_layer_params + moe * m.moe_shared_params
    experts = moe * m.experts * m.expert_params
    return shared + _stage_ends(m, pp, first), experts, layers


def _stage_ends(m: Model, pp: np.ndarray, first: bool) -> np.ndarray:
    """Params of the first or the last pipeline stage outside its transformer layers: the input embedding
    (first), the vocabulary projection and the final norm (last); all of them with pp = 1."""
    ends = m.embedding_params + m.head_params + m.norm_params
    if first:
        return np.where(pp == 1, ends, m.embedding_params)
    return np.where(pp == 1, ends, m.vocab * m.hidden + m.norm_params)


def vocabulary_table_bytes(dtype: str) -> float:
    """Bytes per element of the vocabulary tables (input embedding, vocabulary projection) when the linear
    layers are held in ``dtype``: 16 bits under 8-bit weights, since quantizers leave them out (NVIDIA Model
    Optimizer's ``_default_disabled_quantizer_cfg`` disables ``*lm_head*`` and ``*output_layer*`` in every
    preset, and an embedding is not a linear layer; NVIDIA/TensorRT-Model-Optimizer
    modelopt/torch/quantization/config.py at 0991404), else ``dtype``'s own width."""
    return max(dtype_bytes(dtype), dtype_bytes("bf16"))


def weights_bytes_per_gpu(model: Model | str, tp: ArrayLike = 1, pp: ArrayLike = 1, ep: ArrayLike = 1,
                          dtype: str = "bf16") -> Number:
    """Bytes of weights on the most loaded GPU under tensor (tp), pipeline (pp) and expert (ep) parallelism.

    Everything is split ``tp`` ways (vocabulary-parallel embeddings included,
    norms approximated as split); routed experts also ``ep`` ways. The
    vocabulary tables (and the final norm) stay 16-bit under 8-bit weights (:func:`vocabulary_table_bytes`).
    """
    m = _resolve(model)
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    _check_positive(tp=tp, pp=pp, ep=ep)
    width = dtype_bytes(dtype)
    per_stage = []
    for first in (True, False):
        shared, experts, _ = _stage_params(m, pp, first)
        ends = _stage_ends(m, pp, first)
        held = (shared - ends) * width + ends * vocabulary_table_bytes(dtype)
        per_stage.append(held / tp + experts * width / (tp * ep))
    return as_number(np.maximum(*per_stage))


# --------------------------------------------------------------------------- memory: activations


def _activation_coefficients(m: Model, moe_layer: bool) -> tuple[float, float, float]:
    """Bytes per token of one layer's stored activations: (outside TP regions, inside TP regions, per key).

    Generalises Korthikanti et al. 2022 section 4.1 (16-bit activations,
    1-byte dropout masks). Outside the tensor-parallel regions: both norms'
    inputs (4h), the attention and MLP inputs (2h + 2h), two dropout masks (2h,
    if dropout). Inside: Q, K, V and the output projection's input; the MLP's
    activation input and output (4f; SwiGLU stores gate and up outputs and the
    product, 6f); for MoE each routed copy of the token (2h) and its expert's
    activations. Per key of context: softmax output (2a), its dropout mask and
    output (3a) if dropout. For a GPT shape: (10h, 24h, 5a), i.e.
    ``sbh(34 + 5as/h)`` per layer.
    """
    h, a = m.hidden, m.heads
    outside = 8 * h + (2 * h if m.dropout else 0)
    qk, v = _attention_widths(m)
    if m.attention == "mla":
        kv_k, kv_v = qk, v
        latent = 4 * (m.q_lora_rank + m.kv_lora_rank) + 2 * m.rope_head_dim
    else:
        kv_k, kv_v = m.kv_heads * m.head_dim, m.kv_heads * m.v_head_dim
        latent = 0
    attention = 2 * (qk + kv_k + kv_v + v) + latent
    inner = _moe_bytes(m) if moe_layer else _mlp_bytes(m, m.ffn_hidden)
    per_key = (5 if m.dropout else 2) * a
    return float(outside), float(attention + inner), float(per_key)


def _mlp_bytes(m: Model, ffn: int) -> int:
    """Bytes per token one MLP of ``ffn`` stores: its activation's input and output (4f), SwiGLU's gate and up
    outputs and their product (6f)."""
    return (6 if m.gated_mlp else 4) * ffn


def _moe_bytes(m: Model) -> int:
    """Bytes per token an MoE block stores: each routed copy of the token (2h) and its expert's MLP, and the
    shared experts' MLPs."""
    f = m.moe_ffn_hidden
    return m.experts_per_token * (2 * m.hidden + _mlp_bytes(m, f)) + m.shared_experts * _mlp_bytes(m, f)


def _recomputed_bytes(m: Model, moe_layer: bool, modules: tuple[str, ...]) -> tuple[float, float]:
    """(outside, inside) bytes per token of :func:`_activation_coefficients` that recomputing ``modules`` does not
    store: the norms' outputs, the inputs of the QKV and first MLP GEMMs (``layernorm``, 4h); the residual the
    second norm reads (``out_proj``, 2h); MLA's queries, keys and values (``mla_up_proj``), or any attention's
    (``qkv_proj``), or the keys alone (``k_proj``); the attention output (``context``, 2v); a dense MLP's
    (``mlp``), or its first GEMMs' outputs (``mlp_in``), or a gated MLP's up output alone (``mlp_up``, 2f), or
    its activation's (``mlp_act``, 2f); the whole MoE block's (``moe``), or the routed experts'
    activation outputs (``moe_act``, 2f a copy) and the shared experts' MLPs (``shared_experts``). What a
    recomputed part keeps, its input, is stored by the part before it."""
    outside = (4.0 * m.hidden if "layernorm" in modules else 0.0) + (2.0 * m.hidden if "out_proj" in modules else 0.0)
    inside = 0.0
    qk, v = _attention_widths(m)
    if "mla_up_proj" in modules and m.attention == "mla":
        inside += 2 * (2 * qk + v)
    if "qkv_proj" in modules:
        inside += 2 * (qk + m.kv_heads * (m.head_dim + m.v_head_dim))
    elif "k_proj" in modules:
        inside += 2 * m.kv_heads * m.head_dim
    if "context" in modules:
        inside += 2 * v
    if not moe_layer:
        if "mlp" in modules:
            return outside, inside + _mlp_bytes(m, m.ffn_hidden)
        first = (4 if m.gated_mlp else 2) * m.ffn_hidden  # the gate and up outputs, or the activation's input
        if "mlp_in" not in modules and "mlp_up" in modules and m.gated_mlp:
            first = 2 * m.ffn_hidden  # the up output alone
        elif "mlp_in" not in modules:
            first = 0.0
        return outside, inside + first + (2 * m.ffn_hidden if "mlp_act" in modules else 0.0)
    if "moe" in modules:
        return outside, inside + _moe_bytes(m)
    if "moe_act" in modules:
        inside += m.experts_per_token * 2 * m.moe_ffn_hidden
    if "shared_experts" in modules:
        inside += m.shared_experts * _mlp_bytes(m, m.moe_ffn_hidden)
    return outside, inside


def _fp8_cached_bytes(m: Model, moe_layer: bool, modules: tuple[str, ...]) -> tuple[float, float]:
    """(outside, inside) bytes per token that caching the linear layers' inputs in FP8 saves against 16 bits
    (DeepSeek-V3 Technical Report, arXiv:2412.19437, section 3.3.3, "Low-Precision Storage"): half of each
    input kept for a weight gradient (the norms' outputs, MLA's latents, a dense MLP's second GEMM input, the
    routed copies and the inputs of the experts' SwiGLU, whose output is recomputed), and a quarter of the
    attention output, kept in E5M6 (12 bits). What a recomputed part does not store saves nothing
    (:func:`_recomputed_bytes`)."""
    h, f = m.hidden, m.moe_ffn_hidden
    outside = 0.0 if "layernorm" in modules else 2.0 * h
    _, v = _attention_widths(m)
    inside = (0.0 if "context" in modules else 0.5 * v) + (m.q_lora_rank + m.kv_lora_rank if m.attention == "mla"
                                                           else 0)
    if not moe_layer:
        return outside, inside + (0.0 if "mlp" in modules or "mlp_act" in modules else m.ffn_hidden)
    if "moe" in modules:
        return outside, inside
    swiglu = (2 if m.gated_mlp else 1) * f  # half of the gate and up outputs
    return outside, inside + m.experts_per_token * (h + swiglu + (0 if "moe_act" in modules else f))


def activation_bytes_per_layer(model: Model | str, micro_batch: ArrayLike, seq: ArrayLike, tp: ArrayLike = 1,
                               sequence_parallel: bool = False, recompute: str = "none",
                               moe_layer: bool | None = None, attention: str = "flash",
                               modules: tuple[str, ...] = (), cache: str = "bf16") -> Number:
    """Bytes of activations one layer stores for one micro-batch (Korthikanti et al. 2022, Table 2).

    With ``s`` = seq, ``b`` = micro-batch, for a GPT shape:

    ======================  ===========================================
    no parallelism          ``sbh(34 + 5as/h)``
    tensor parallel (t)     ``sbh(10 + 24/t + 5as/(ht))``
    + sequence parallel     ``sbh(34/t + 5as/(ht))``
    + selective recompute   drops the ``5as/h`` term
    full recompute          ``2sbh`` (the layer input; ``/t`` with SP)
    ======================  ===========================================

    Other shapes (GQA, SwiGLU, MoE, MLA, no dropout) use the same accounting
    (see :func:`_activation_coefficients`). ``attention`` is the kernel: with
    ``"flash"`` (FlashAttention, the default of every current stack) the score
    matrix is never stored, only its softmax statistics (4 bytes per head and
    token); ``"materialised"`` stores it as Korthikanti et al. count
    (``5as/h``), which ``selective`` recompute drops. ``moe_layer`` picks the
    layer kind (default: MoE if the model has experts). ``modules``: what
    selective recomputation covers (:func:`recomputed_modules`; default the
    scores), less what each part does not store (:func:`_recomputed_bytes`).
    ``cache``: ``fp8`` keeps the linear layers' inputs in FP8 (:func:`_fp8_cached_bytes`).
    """
    m = _resolve(model)
    parts = recomputed_modules(recompute, modules)
    _check_choice(attention, ATTENTION_KERNELS, "attention")
    tp = np.asarray(tp, dtype=float)
    _check_positive(tp=tp)
    s = np.asarray(seq, dtype=float)
    tokens = np.asarray(micro_batch, dtype=float) * s
    sp_div = tp if sequence_parallel else 1.0
    if recompute == "full":
        return as_number(tokens * 2 * m.hidden / sp_div)
    moe = m.is_moe if moe_layer is None else moe_layer
    outside, inside, per_key = _activation_coefficients(m, moe)
    not_outside, not_inside = _recomputed_bytes(m, moe, parts)
    if cache == "fp8":
        less_outside, less_inside = _fp8_cached_bytes(m, moe, parts)
        not_outside, not_inside = not_outside + less_outside, not_inside + less_inside
    if attention == "flash":
        scores = 4.0 * m.heads / tp  # log-sum-exp per head and token, FP32
    else:
        scores = 0.0 if "core_attn" in parts else per_key * s / tp
    return as_number(tokens * ((outside - not_outside) / sp_div + (inside - not_inside) / tp + scores))


def memory_per_gpu_bytes(model: Model | str, layout: Layout) -> dict[str, Number]:
    """Training memory (bytes) on the most loaded GPU of ``layout``, by part.

    Returns ``weights_bytes``, ``gradients_bytes``, ``optimizer_bytes``,
    ``activations_bytes`` and ``total_bytes`` of the pipeline stage (first or
    last) with the larger total, and ``largest_optimizer_bytes``, the larger
    of the two stages' optimizer states. Not counted: CUDA context, communication
    buffers, allocator fragmentation (typically a few GB). A context-parallel
    rank holds 1/cp of each sequence and shards the model states like a
    data-parallel rank, so ``cp`` divides the sequence and multiplies ``dp``.

    - Weights per GPU: :func:`weights_bytes_per_gpu` split (``tp``, ``pp``,
      ``ep``), then sharded across ``dp`` by ZeRO ``zero_stage`` (see
      :func:`model_state_bytes_per_gpu`) with gradients in ``grad_dtype``;
      experts are split over ``expert_tp`` x ``ep`` ranks carved out of the
      ``tp x dp`` ranks of a stage, and sharded across their own data-parallel
      group of ``tp x dp / (expert_tp x ep)`` ranks. Stage 3 adds a gather
      buffer of two unsharded layers (the one computed and the one prefetched).
    - Activations (Korthikanti et al. 2022 sections 4.2.3, 4.3): under 1F1B
      the first stage holds ``min(pp, microbatches)`` micro-batches (``pp``
      without a global batch) of its ``ceil(L/pp)`` layers, times
      ``1 + (pp-1)/(pp*v)`` with ``v`` = ``interleave`` virtual stages; plus the
      embedding dropout mask (``sbhp/t``). The stage holding the vocabulary
      projection adds ``4sbh/t (1 + v/h)`` (last norm, projection input, FP32
      logits). Full recomputation adds one layer's full activations,
      re-materialised during its backward pass; with ``recompute_layers``, only
      that share of the layers is recomputed and the others keep everything.
      ``attention``: the kernel
      (:func:`activation_bytes_per_layer`).
    - DualPipe (``pp_schedule``): the first GPU holds the first and the last stage, the model states of both, and
      ``pp + 1`` micro-batches of the larger stage's activations (deepseek-ai/DualPipe's README table: 2x
      parameters, PP + 1 activations per device).
    """
    m = _resolve(model)
    lay = _checked_layout(m, layout)
    acts = _activation_parts(m, layout, lay)
    parts = [_stage_memory(m, layout, lay, acts, first) for first in (True, False)]
    if layout.pp_schedule == "dualpipe":
        return _dualpipe_memory(parts, lay, acts)
    for part in parts:
        part.pop("per_microbatch_bytes")
    first_part, last_part = parts
    pick_first = first_part["total_bytes"] >= last_part["total_bytes"]
    out = {k: as_number(np.where(pick_first, first_part[k], last_part[k])) for k in first_part}
    #: the larger of the end stages' optimizer states (the stage whose optimizer step ends last), bytes
    out["largest_optimizer_bytes"] = as_number(np.maximum(first_part["optimizer_bytes"], last_part["optimizer_bytes"]))
    return out


def _dualpipe_memory(parts: list[dict[str, Any]], lay: dict[str, np.ndarray],
                     acts: dict[str, Any]) -> dict[str, Number]:
    """:func:`memory_per_gpu_bytes` of the first GPU under DualPipe, which holds the first and the last stage."""
    first, last = parts
    out = {k: first[k] + last[k] for k in ("gradients_bytes", "optimizer_bytes")}
    out["weights_bytes"] = first["weights_bytes"] + last["weights_bytes"]
    in_flight = (lay["pp"] + 1) * np.maximum(first["per_microbatch_bytes"], last["per_microbatch_bytes"])
    out["activations_bytes"] = in_flight + acts["output_layer"] + acts["embed_dropout"] + acts["working"]
    out["total_bytes"] = sum(out[k] for k in ("weights_bytes", "gradients_bytes", "optimizer_bytes",
                                              "activations_bytes"))
    out["largest_optimizer_bytes"] = out["optimizer_bytes"]
    return {k: as_number(v) for k, v in out.items()}


def _checked_layout(m: Model, layout: Layout) -> dict[str, np.ndarray]:
    """The layout's degrees as float arrays, with cp folded into dp and the sequence, and ``shards``, the ranks
    the ZeRO shards span (:attr:`Layout.shards`); InputError where the
    layout cannot hold ``m`` (a degree below 1, experts that do not split, more stages than layers)."""
    _check_choice(layout.recompute, RECOMPUTE, "recompute")
    tp, pp, ep, vs, cp = (np.asarray(x, dtype=float) for x in (layout.tp, layout.pp, layout.ep, layout.interleave,
                                                                layout.cp))
    dp = np.asarray(layout.dp, dtype=float) * cp
    etp = np.asarray(layout.expert_tp, dtype=float)
    b, s = np.asarray(layout.micro_batch, dtype=float), np.asarray(layout.seq, dtype=float) / cp
    _check_positive(tp=tp, pp=pp, dp=dp, ep=ep, etp=etp, virtual_stages=vs, micro_batch=b, seq=s)
    if np.any(np.mod(tp * dp, etp * ep) != 0) or np.any((etp != tp) & (etp != 1)):
        raise InputError("etp x ep must divide tp x dp (expert-parallel ranks are tensor- or data-parallel "
                         "ranks), with etp 1 or tp")
    if np.any(ep > 1) and (not m.is_moe or np.any(np.mod(m.experts, ep) != 0)):
        raise InputError(f"ep must divide the number of experts of '{m.id}' ({m.experts})")
    if np.any(pp > m.layers):
        raise InputError(f"pp must not exceed the {m.layers} layers of '{m.id}'")
    count = layout.microbatches
    in_flight = pp if count is None else np.minimum(pp, np.asarray(count, dtype=float))
    shards = np.asarray(layout.shards, dtype=float)
    return {"tp": tp, "pp": pp, "dp": dp, "ep": ep, "etp": etp, "vs": vs, "b": b, "s": s, "in_flight": in_flight,
            "shards": shards}


def _activation_parts(m: Model, layout: Layout, lay: dict[str, np.ndarray]) -> dict[str, Any]:
    """Activation bytes of one micro-batch: per dense and per MoE layer, the full-recompute working layer, the
    vocabulary projection's and the embedding dropout mask's (all micro-batches in flight). Activations are
    16-bit (BF16 under FP8) unless the layout trains in a 32-bit type (tf32, fp32), which doubles them (the
    1-byte dropout masks too, an over-count of at most 2h of 34h bytes per token and layer)."""
    tp, b, s = lay["tp"], lay["b"], lay["s"]
    width = max(dtype_bytes(layout.dtype), dtype_bytes("bf16")) / dtype_bytes("bf16")
    sp_div = tp if layout.sequence_parallel else 1.0
    kw = dict(tp=tp, sequence_parallel=layout.sequence_parallel, attention=layout.attention)
    share = layout.recomputed_share(m.layers) if layout.recompute == "full" else 1.0

    def per_layer(moe_layer: bool) -> np.ndarray:  # recomputed layers and kept ones, in proportion
        done = np.asarray(activation_bytes_per_layer(m, b, s, moe_layer=moe_layer, recompute=layout.recompute,
                                                     modules=tuple(layout.recompute_modules),
                                                     cache=layout.activation_cache, **kw))
        kept = np.asarray(activation_bytes_per_layer(m, b, s, moe_layer=moe_layer, recompute="none", **kw))
        return share * done + (1 - share) * kept

    dense = width * per_layer(False)
    moe = width * per_layer(True) if m.is_moe else dense
    working = (width * np.asarray(activation_bytes_per_layer(m, b, s, recompute="none", **kw))
               if layout.recompute == "full" else 0.0)
    tokens = b * s
    return {"dense": dense, "moe": moe, "working": working,
            "output_layer": width * tokens * (4 * m.hidden / sp_div + 4 * m.vocab / tp),
            "embed_dropout": tokens * m.hidden * lay["in_flight"] / sp_div if m.dropout else 0.0}


def _stated_layers(m: Model, layout: Layout, first: bool) -> np.ndarray | None:
    """The first or last stage's layers, as :meth:`Layout.stage_layers` counts them where the layout states a
    count for either stage, else as :func:`_stage_params` splits them (None where no layout states one). The
    first stage is counted with the larger of its layers and a middle stage's, an upper bound for the second
    stage, which holds one micro-batch fewer in flight."""
    stated = (np.asarray(layout.pp_first_layers) > 0) | (np.asarray(layout.pp_last_layers) > 0)
    if not stated.any():
        return None
    first_layers, middle, last = layout.stage_layers(m.layers)
    pp = np.asarray(layout.pp, dtype=float)
    if first:
        return np.where(stated, np.maximum(first_layers, middle), np.ceil(m.layers / pp))
    return np.where(stated, last, np.floor(m.layers / pp))


def _stage_memory(m: Model, layout: Layout, lay: dict[str, np.ndarray], acts: dict[str, Any],
                  first: bool) -> dict[str, Any]:
    """Memory (bytes) by part of the first or the last pipeline stage."""
    tp, pp, dp, ep, etp, vs = (lay[k] for k in ("tp", "pp", "dp", "ep", "etp", "vs"))
    stage = np.asarray(layout.zero_stage)
    shared, experts, layers = _stage_params(m, pp, first, _stated_layers(m, layout, first))
    dense_layers = (np.minimum(layers, m.dense_layers) if first
                    else np.clip(m.dense_layers - (m.layers - layers), 0, None))
    adam = optimizer_bytes_per_param(layout.dtype, layout.moment_dtype)
    states_shared = model_state_bytes_per_gpu(shared / tp, lay["shards"], stage, layout.dtype, layout.grad_dtype,
                                              adam)
    states_expert = model_state_bytes_per_gpu(experts / (etp * ep), tp * dp / (etp * ep), stage, layout.dtype,
                                              layout.grad_dtype, adam)
    part = {k: np.asarray(states_shared[k]) + np.asarray(states_expert[k]) for k in states_shared}
    largest_layer = np.maximum(m.dense_layer_params / tp if m.dense_layers else 0.0,
                               m.moe_shared_params / tp + m.experts * m.expert_params / (etp * ep)
                               if m.moe_layers else 0.0)
    part["weights_bytes"] = part["weights_bytes"] + np.where(stage >= 3, 2 * largest_layer * dtype_bytes(layout.dtype),
                                                             0.0)
    per_mb = dense_layers * acts["dense"] + (layers - dense_layers) * acts["moe"]
    part["per_microbatch_bytes"] = per_mb
    if first:
        interleave = np.where(vs > 1, 1 + (pp - 1) / (pp * vs), 1.0)
        held = (per_mb * lay["in_flight"] * interleave + acts["embed_dropout"]
                + np.where(pp == 1, acts["output_layer"], 0.0))
    else:
        held = per_mb + acts["output_layer"]
    part["activations_bytes"] = held + acts["working"]
    part["total_bytes"] = sum(part[k] for k in ("weights_bytes", "gradients_bytes", "optimizer_bytes",
                                                "activations_bytes"))
    return part


# --------------------------------------------------------------------------- memory: inference


def kv_cache_bytes_per_token(model: Model | str, dtype: str = "bf16") -> float:
    """Bytes of KV cache per token for the whole model (all layers, all KV heads).

    MHA/GQA: ``layers * kv_heads * (head_dim + v_head_dim) * bytes`` (= 2 x
    layers x kv_heads x head_dim x bytes when K and V are equally wide). MLA
    caches the compressed latent and the decoupled RoPE key:
    ``layers * (kv_lora_rank + rope_head_dim) * bytes`` (DeepSeek-V2 section 2.1).
    """
    m = _resolve(model)
    width = (m.kv_lora_rank + m.rope_head_dim if m.attention == "mla"
             else m.kv_heads * (m.head_dim + m.v_head_dim))
    return float(m.layers * width * dtype_bytes(dtype))


def kv_share_per_gpu(model: Model | str, tp: ArrayLike = 1) -> Number:
    """The share of a layer's KV cache one of ``tp`` tensor-parallel GPUs holds and reads: its KV heads (a head
    is replicated when tp exceeds the KV heads), or all of an MLA latent, which is not split by heads and is
    replicated on every TP rank."""
    m = _resolve(model)
    tp = np.asarray(tp, dtype=float)
    return as_number(np.ones_like(tp) if m.attention == "mla" else np.ceil(m.kv_heads / tp) / m.kv_heads)


def kv_cache_bytes_per_token_per_gpu(model: Model | str, tp: ArrayLike = 1, pp: ArrayLike = 1,
                                     dtype: str = "bf16") -> Number:
    """KV-cache bytes per token on one GPU of a tp x pp group: :func:`kv_share_per_gpu` of each layer's, the
    layers split across ``pp`` (first stage: ceil(L/pp))."""
    m = _resolve(model)
    tp, pp = np.asarray(tp, dtype=float), np.asarray(pp, dtype=float)
    _check_positive(tp=tp, pp=pp)
    per_layer = kv_cache_bytes_per_token(m, dtype) / m.layers
    if m.attention != "mla":
        per_layer = per_layer / m.kv_heads * np.ceil(m.kv_heads / tp)
    return as_number(per_layer * np.ceil(m.layers / pp))


def inference_memory_per_gpu_bytes(model: Model | str, tp: ArrayLike = 1, pp: ArrayLike = 1, ep: ArrayLike = 1,
                                   kv_tokens: ArrayLike = 0, weight_dtype: str = "bf16",
                                   kv_dtype: str = "bf16") -> dict[str, Number]:
    """Serving memory (bytes) per GPU: ``weights_bytes``, ``kv_cache_bytes`` for ``kv_tokens``, ``total_bytes``.

    ``kv_tokens`` is every cached token on the group (sum of context lengths
    over the batch). Activations and runtime buffers are not counted.
    """
    weights = np.asarray(weights_bytes_per_gpu(model, tp, pp, ep, weight_dtype))
    kv = np.asarray(kv_tokens, dtype=float) * np.asarray(kv_cache_bytes_per_token_per_gpu(model, tp, pp, kv_dtype))
    return {"weights_bytes": as_number(weights), "kv_cache_bytes": as_number(kv), "total_bytes": as_number(weights + kv)}


def decode_bytes_per_step(model: Model | str, batch: ArrayLike, kv_len: ArrayLike, weight_dtype: str = "bf16",
                          kv_dtype: str = "bf16") -> dict[str, Number]:
    """Bytes read from memory by one decode step of ``batch`` sequences at ``kv_len`` cached tokens each.

    ``weights_bytes``: every non-expert weight once, plus the routed experts
    the batch touches: with uniform independent routing, a layer's expected
    distinct experts are ``E (1 - (1 - k/E)^batch)``. The vocabulary
    projection is read whole, 16-bit under 8-bit weights (:func:`vocabulary_table_bytes`);
    the input embedding is a lookup of the batch's own rows, not a stream of
    the table (those ``batch x hidden`` elements are left out). ``kv_cache_bytes``:
    ``batch * kv_len`` cached tokens. Whole model, not per GPU.
    """
    m = _resolve(model)
    batch = np.asarray(batch, dtype=float)
    head = m.vocab * m.hidden  # the vocabulary projection (a tied embedding table serves as it)
    lookup = m.embedding_params + m.head_params - head  # tables read a row per token: not streamed
    layers = m.params_total - m.expert_params_total - lookup - head
    if m.is_moe:
        touched = m.experts * (1 - (1 - m.experts_per_token / m.experts) ** batch)
        experts = m.moe_layers * touched * m.expert_params
    else:
        experts = 0.0
    weights = (layers + experts) * dtype_bytes(weight_dtype) + head * vocabulary_table_bytes(weight_dtype)
    kv = batch * np.asarray(kv_len, dtype=float) * kv_cache_bytes_per_token(m, kv_dtype)
    return {"weights_bytes": as_number(weights), "kv_cache_bytes": as_number(kv)}


