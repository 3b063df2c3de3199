"""What one training step computes, in FLOPs (not FLOP/s): the model and hardware FLOPs of pre-training, full
fine-tuning and LoRA (:func:`training_flops`), the linear layers LoRA adapts and its trainable parameters
(:func:`lora_matrices`, :func:`lora_params`), and the memory traffic of casting GEMM operands to FP8 per FLOP
(:func:`fp8_cast_bytes_per_flop`). The step's time is :mod:`multigpu.compute.training`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from multigpu.compute import models
from multigpu.compute.layout import DEFAULT_FP8_RECIPE

#: Memory traffic of quantizing one element of an FP8 GEMM operand (bytes), by Transformer Engine's scaling
#: recipe. Each activation entering an FP8 linear layer (forward) and each gradient leaving one (backward) is
#: read in BF16 and written in FP8 twice, as it is and transposed (the backward's other GEMM takes the
#: transpose on Hopper): 2 + 1 + 1 = 4 bytes under delayed scaling, whose scale comes from the amax history;
#: current scaling (per tensor) first reads the tensor once more for its amax, 6 bytes. Weights are cast once per
#: optimizer step (Megatron's ``is_first_microbatch``), so they are not charged.
FP8_CAST_BYTES = {"delayed": 4.0, "current": 6.0}


def lora_matrices(model: models.Model | str, active: bool = False) -> list[tuple[int, int, int]]:
    """The linear layers LoRA adapts, as ``(d_in, d_out, count)``: every projection of every transformer block
    (attention Q, K, V, output, or MLA's down- and up-projections; each MLP's gate, up and down, each routed and
    shared expert included), not the embeddings, the vocabulary projection or the MoE router.

    All linear layers, as QLoRA found necessary to match full fine-tuning (Dettmers et al. 2023 section 4,
    https://arxiv.org/abs/2305.14314) and PEFT's ``all-linear`` target does; the LoRA paper adapted W_q and
    W_v only."""
    m = models.model(model)
    h, a = m.hidden, m.heads
    if m.attention == "mla":
        q = [(h, m.q_lora_rank), (m.q_lora_rank, a * m.head_dim)] if m.q_lora_rank else [(h, a * m.head_dim)]
        kv = [(h, m.kv_lora_rank + m.rope_head_dim),
              (m.kv_lora_rank, a * (m.head_dim - m.rope_head_dim + m.v_head_dim))]
        attention = q + kv + [(a * m.v_head_dim, h)]
    else:
        attention = [(h, a * m.head_dim), (h, m.kv_heads * m.head_dim), (h, m.kv_heads * m.v_head_dim),
                     (a * m.v_head_dim, h)]

    def mlp(ffn: int) -> list[tuple[int, int]]:
        return [(h, ffn)] * (2 if m.gated_mlp else 1) + [(ffn, h)]

    out = [(d_in, d_out, m.layers) for d_in, d_out in attention]
    if m.dense_layers:
        out += [(d_in, d_out, m.dense_layers) for d_in, d_out in mlp(m.ffn_hidden)]
    if m.moe_layers:
        experts = (m.experts_per_token if active else m.experts) + m.shared_experts
        out += [(d_in, d_out, m.moe_layers * experts) for d_in, d_out in mlp(m.moe_ffn_hidden)]
    return out


def fp8_cast_bytes_per_flop(model: models.Model | str, recipe: str = DEFAULT_FP8_RECIPE) -> float:
    """Memory traffic of quantizing FP8 GEMM operands per FLOP of the linear layers (bytes/FLOP): each token's
    inputs to every linear layer (forward) and gradients out of it (backward), :data:`FP8_CAST_BYTES` each, over
    the layers' 6 x d_in x d_out training FLOPs per token (an MoE token counts its routed experts only)."""
    shapes = lora_matrices(model, active=True)
    elements = sum(n * (d_in + d_out) for d_in, d_out, n in shapes)
    flops = sum(6.0 * n * d_in * d_out for d_in, d_out, n in shapes)
    return FP8_CAST_BYTES[recipe] * elements / flops


def lora_params(model: models.Model | str, rank: int, active: bool = False) -> float:
    """Trainable parameters of rank-``rank`` LoRA adapters (:func:`lora_matrices`): ``r (d_in + d_out)`` per
    adapted ``d_in x d_out`` matrix (A is r x d_in, B is d_out x r; Hu et al. 2021 section 4). ``active``: those
    one token uses (an MoE model's routed experts: ``experts_per_token`` of them). A count of parameters."""
    m = models.model(model)
    total = float(sum(rank * (d_in + d_out) * count for d_in, d_out, count in lora_matrices(m)))
    if active and m.moe_layers:
        idle = m.experts - m.experts_per_token
        routed = sum(rank * (d_in + d_out) for d_in, d_out in
                     ([(m.hidden, m.moe_ffn_hidden)] * (2 if m.gated_mlp else 1) + [(m.moe_ffn_hidden, m.hidden)]))
        total -= m.moe_layers * idle * routed
    return total


def training_flops(model: models.Model | str, global_batch: ArrayLike, seq: ArrayLike, recompute: str = "none",
                   method: str = "pretrain", lora_rank: int = 0,
                   modules: tuple[str, ...] = ()) -> tuple[Any, Any, Any]:
    """(model FLOPs, hardware FLOPs, attention-score hardware FLOPs) of one step of ``global_batch`` sequences
    of ``seq`` tokens (FLOPs, not FLOP/s).

    Pre-training and full fine-tuning: :func:`multigpu.compute.models.training_flops_per_step`, ``6 N`` per
    token plus attention scores (forward + 2x backward). LoRA: the frozen weights' gradient GEMMs are skipped,
    so the weight GEMMs cost forward + backward-data = 2x forward (``4 N`` per token instead of ``6 N``:
    Hu et al. 2021 section 4.2 report LoRA's training throughput ~25 % above full fine-tuning's on GPT-3 175B,
    below the 1.5x these FLOPs allow); attention scores still take forward + 2x backward, and each adapter
    parameter 6 FLOPs per token it sees. Recomputation adds the same forward work in both (``modules``: the parts
    selective recomputation covers, :func:`multigpu.compute.models.recomputed_modules`). An approximation
    (see the module docstring)."""
    m = models.model(model)
    model_flops, hardware = models.training_flops_per_step(m, global_batch, seq, recompute, modules=modules)
    attention = models.attention_training_flops_per_step(m, global_batch, seq, recompute, modules=modules)
    if method != "lora":
        return model_flops, hardware, attention
    tokens = np.asarray(global_batch, dtype=float) * np.asarray(seq, dtype=float)
    scores_fwd = np.asarray(models.attention_training_flops_per_step(m, global_batch, seq, "none")) / 3.0
    weights_fwd = np.asarray(model_flops) / 3.0 - scores_fwd
    lora = 2.0 * weights_fwd + 3.0 * scores_fwd + 6.0 * lora_params(m, lora_rank, active=True) * tokens
    return lora, lora + (np.asarray(hardware) - np.asarray(model_flops)), attention
