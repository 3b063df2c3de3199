"""Transformer shapes: the :class:`Model` value (one row of ``data/models.csv`` or a Hugging Face config), its
parameter counts, the schema of its file and the rules across its columns.

A leaf of the compute layer: :mod:`multigpu.compute.models` (FLOPs, memory) and
:mod:`multigpu.compute.hfconfig` (configs) both build on it, and neither on the other's shape code.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from multigpu.common import datafiles
from multigpu.common.datafiles import (
    BlankText,
    Count,
    PositiveCount,
    Text,
    TrueFalse,
    one_of,
)
from multigpu.common.errors import InputError

#: Bytes per element of each number format. The 4-bit floating-point formats carry their block scales:
#: ``fp4`` is NVFP4 (E2M1 values and one FP8 E4M3 scale per 16, 4.5 bits; its one FP32 scale per tensor is left
#: out) and ``mxfp4`` the OCP microscaling format (E2M1 values and one power-of-two E8M0 scale per 32, 4.25 bits)
#: (https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference, table 1).
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "fp4": (4 + 8 / 16) / 8,
    "mxfp4": (4 + 8 / 32) / 8, "int4": 0.5,
}
#: The 4-bit floating-point weight formats (:data:`DTYPE_BYTES`): NVFP4 (``fp4``) and MXFP4.
FP4_FORMATS = ("fp4", "mxfp4")
ATTENTION_KINDS = ("mha", "gqa", "mla")
RECOMPUTE = ("none", "selective", "full")
#: The parts of a layer selective recomputation may recompute, by Megatron-Core's names (``TransformerConfig``'s
#: ``recompute_modules`` with ``recompute_granularity`` selective; NVIDIA/Megatron-LM at d2c5e8b,
#: ``megatron/core/transformer/transformer_config.py``; default ``core_attn``): ``core_attn``, the attention
#: scores; ``layernorm``, the two norms' outputs; ``mla_up_proj``, MLA's up-projections and RoPE (queries, keys
#: and values); ``mlp``, a dense layer's MLP; ``moe_act``, the routed experts' activation function; ``moe``, the
#: whole MoE block; ``shared_experts``, its shared experts. ``layernorm``, ``moe_act`` and ``mla_up_proj`` discard
#: their outputs and recompute them from inputs that are kept anyway; the others keep only their inputs.
RECOMPUTE_MODULES = ("core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts")
#: Finer parts of a dense layer, for MaxText's named remat policies (:data:`MAXTEXT_SAVES`), which keep the
#: outputs of named GEMMs and recompute the rest from the layer's input: ``qkv_proj``, the query, key and value
#: projections' outputs; ``context``, the attention output (the output projection's input); ``out_proj``, the
#: output projection's output (from which the residual the second norm reads is rebuilt); ``mlp_in``, a dense
#: MLP's first GEMMs' outputs (gate and up under SwiGLU); ``mlp_act``, its activation's output (the down
#: projection's input); ``k_proj``, the key projection's output alone; ``mlp_up``, a gated MLP's up GEMM's output
#: alone. Recomputing a part drops what it stores and, for the GEMM parts, runs their forward again.
LAYER_PARTS = RECOMPUTE_MODULES + ("qkv_proj", "context", "out_proj", "mlp_in", "mlp_act", "k_proj", "mlp_up")
#: MaxText's named remat policies (``remat_policy``) by the GEMM outputs each keeps, in :data:`LAYER_PARTS`' names
#: (``jax.checkpoint_policies.save_only_these_names`` over ``query_proj``/``key_proj``/``value_proj``/``qkv_proj``,
#: ``context``, ``out_proj``, ``mlpwi_0``/``mlpwi_1``/``mlpwi`` and ``mlpwo``: AI-Hypercomputer/maxtext
#: ``src/MaxText/layers/decoders.py`` at 02bc28ce534d, ``Decoder.minimal_policy`` and ``get_remat_policy``). A kept
#: ``mlpwo`` output is not needed by the backward pass and changes nothing here. ``full`` keeps only the layer's
#: input (the model's full recomputation); the offloading policies move tensors to host memory, which the model
#: does not price.
MAXTEXT_SAVES: dict[str, frozenset[str]] = {
    "minimal_with_context": frozenset({"qkv_proj", "context", "out_proj", "mlp_in"}),
    "minimal": frozenset({"qkv_proj", "out_proj", "mlp_in"}),
    "save_dot_with_context_except_mlp": frozenset({"qkv_proj", "context", "out_proj"}),
    "save_dot_except_mlpwi": frozenset({"qkv_proj", "out_proj"}),
    "save_dot_except_mlp": frozenset({"qkv_proj", "out_proj"}),
    "save_qkv_proj": frozenset({"qkv_proj"}),
    "save_out_proj": frozenset({"out_proj"}),
}
MAXTEXT_POLICIES = (*MAXTEXT_SAVES, "full")
#: torchtitan's per-operator selective activation checkpointing (``activation_checkpoint.mode = "selective"``,
#: ``selective_ac_option = "op"``; pytorch/torchtitan at e7c0cae, ``torchtitan/models/llama3/parallelize_llama.py``,
#: ``_save_list`` and ``_custom_policy``), in :data:`LAYER_PARTS`' names: it keeps the outputs of the attention
#: kernel and of every second matrix multiply of a block, counted in the order they run (the query, value, gate
#: and down projections of a Llama block) and recomputes the rest: the key and output projections, the MLP's up
#: projection, and the elementwise norms and activation.
TORCHTITAN_OP_PARTS = ("layernorm", "k_proj", "out_proj", "mlp_up", "mlp_act")
#: The named recomputation policies ``train --remat-policy`` takes: MaxText's, and torchtitan's per-operator one.
REMAT_POLICIES = (*MAXTEXT_POLICIES, "torchtitan-op")
#: attention kernels: FlashAttention (scores never stored) or the score matrix materialised (Megatron before 2022)
ATTENTION_KERNELS = ("flash", "materialised")
BIAS_KINDS = ("none", "qkv", "all")
NORM_KINDS = ("layernorm", "rmsnorm")
POSITION_KINDS = ("learned", "rope")



@dataclass(frozen=True)
class Model:
    """One transformer's shape (a row of ``data/models.csv``); counts are derived.

    Dimensions are element counts. ``head_dim`` is the query/key width per head
    (for MLA: no-position part + decoupled RoPE part), ``v_head_dim`` the value
    width per head. Dense models have ``experts`` 0 (or 1). In an MoE model the
    first ``first_dense_layers`` layers have a dense MLP of ``ffn_hidden``; the
    others have ``experts`` routed experts of ``moe_ffn_hidden``, of which
    ``experts_per_token`` are used per token, plus ``shared_experts`` always used.
    """

    id: str
    name: str
    family: str
    layers: int
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    vocab: int
    max_seq: int
    experts: int
    experts_per_token: int
    shared_experts: int
    moe_ffn_hidden: int
    first_dense_layers: int
    gated_mlp: bool
    attention: str
    q_lora_rank: int
    kv_lora_rank: int
    rope_head_dim: int
    tied_embeddings: bool
    bias: str
    norm: str
    position: str
    dropout: bool
    params_total_B_published: float
    params_active_B_published: float | None
    source: str
    notes: str
    #: group-limited routing (DeepSeek-V3's ``n_group`` and ``topk_group``): the routed experts fall in
    #: ``expert_groups`` equal groups and a token picks its experts among ``expert_groups_per_token`` of them;
    #: 0 = no limit. Placed one group per node (or more nodes per group), it caps the nodes a token reaches.
    expert_groups: int = 0
    expert_groups_per_token: int = 0

    # ---- structure

    @property
    def is_moe(self) -> bool:
        """True when the model has routed experts."""
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        """Number of layers with an MoE MLP."""
        return self.layers - self.first_dense_layers if self.is_moe else 0

    @property
    def dense_layers(self) -> int:
        """Number of layers with a dense MLP."""
        return self.layers - self.moe_layers

    # ---- parameters per layer (element counts)

    @property
    def attention_matmul_params(self) -> int:
        """Weights of one attention block's projections (Q, K, V, output; MLA down/up projections)."""
        h, a = self.hidden, self.heads
        out = a * self.v_head_dim * h
        if self.attention == "mla":
            q = (h * self.q_lora_rank + self.q_lora_rank * a * self.head_dim
                 if self.q_lora_rank else h * a * self.head_dim)
            kv_down = h * (self.kv_lora_rank + self.rope_head_dim)
            kv_up = self.kv_lora_rank * a * (self.head_dim - self.rope_head_dim + self.v_head_dim)
            return q + kv_down + kv_up + out
        kv = self.kv_heads
        return h * a * self.head_dim + h * kv * (self.head_dim + self.v_head_dim) + out

    @property
    def attention_other_params(self) -> int:
        """Biases of the attention block, and MLA's two latent norms."""
        qkv_bias = self.heads * self.head_dim + self.kv_heads * (self.head_dim + self.v_head_dim)
        extra = {"none": 0, "qkv": qkv_bias, "all": qkv_bias + self.hidden}[self.bias]
        if self.attention == "mla":
            extra += self.q_lora_rank + self.kv_lora_rank
        return extra

    def mlp_matmul_params(self, ffn: int) -> int:
        """Weights of one MLP (or one expert) of inner width ``ffn``: 3 matrices if gated (SwiGLU), else 2."""
        return (3 if self.gated_mlp else 2) * self.hidden * ffn

    def mlp_bias_params(self, ffn: int) -> int:
        """Biases of one MLP (only when ``bias`` is ``all``)."""
        return ((2 if self.gated_mlp else 1) * ffn + self.hidden) if self.bias == "all" else 0

    @property
    def norm_params(self) -> int:
        """Parameters of one norm over ``hidden`` (LayerNorm: gain and bias; RMSNorm: gain)."""
        return (2 if self.norm == "layernorm" else 1) * self.hidden

    @property
    def router_params(self) -> int:
        """Router weights of one MoE layer."""
        return self.hidden * self.experts if self.is_moe else 0

    @property
    def dense_layer_params(self) -> int:
        """All parameters of one dense-MLP layer."""
        f = self.ffn_hidden
        return (self.attention_matmul_params + self.attention_other_params
                + self.mlp_matmul_params(f) + self.mlp_bias_params(f) + 2 * self.norm_params)

    @property
    def moe_shared_params(self) -> int:
        """Parameters of one MoE layer that every token uses (attention, shared experts, router, norms)."""
        f = self.moe_ffn_hidden
        shared = self.shared_experts * (self.mlp_matmul_params(f) + self.mlp_bias_params(f))
        return (self.attention_matmul_params + self.attention_other_params + shared
                + self.router_params + 2 * self.norm_params)

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert."""
        f = self.moe_ffn_hidden
        return self.mlp_matmul_params(f) + self.mlp_bias_params(f) if self.is_moe else 0

    @property
    def embedding_params(self) -> int:
        """Input embeddings: token table plus learned positions (if any)."""
        pos = self.max_seq * self.hidden if self.position == "learned" else 0
        return self.vocab * self.hidden + pos

    @property
    def head_params(self) -> int:
        """Output (vocabulary) projection, 0 when tied to the input embedding."""
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    # ---- totals

    @property
    def expert_params_total(self) -> int:
        """Parameters in routed experts, all layers (what expert parallelism splits)."""
        return self.moe_layers * self.experts * self.expert_params

    @property
    def params_total(self) -> int:
        """All parameters."""
        return (self.dense_layers * self.dense_layer_params
                + self.moe_layers * self.moe_shared_params + self.expert_params_total
                + self.embedding_params + self.head_params + self.norm_params)

    @property
    def params_active(self) -> int:
        """Parameters used per token (routed experts: ``experts_per_token`` of them)."""
        routed = self.moe_layers * self.experts_per_token * self.expert_params
        return self.params_total - self.expert_params_total + routed

    @property
    def matmul_params_active(self) -> int:
        """Weights multiplied per token, vocabulary projection included, input embedding lookup excluded.

        Twice this is the forward FLOPs per token outside attention scores.
        """
        mlp_dense = self.mlp_matmul_params(self.ffn_hidden)
        mlp_moe = ((self.experts_per_token + self.shared_experts) * self.mlp_matmul_params(self.moe_ffn_hidden)
                   + self.router_params)
        return (self.layers * self.attention_matmul_params + self.dense_layers * mlp_dense
                + self.moe_layers * mlp_moe + self.vocab * self.hidden)

    def to_dict(self) -> dict[str, Any]:
        """The row's fields plus the derived counts."""
        row = {f.name: getattr(self, f.name) for f in fields(self)}
        row.update(params_total=self.params_total, params_active=self.params_active)
        return row


_POSITIVE = "a whole number >= 1"
_COUNT = "a whole number >= 0"


class ModelRow(datafiles.Row):
    """Schema of ``data/models.csv``: the fields of :class:`Model`, one row per model."""

    id: Text
    name: Text
    family: BlankText
    layers: PositiveCount
    hidden: PositiveCount
    ffn_hidden: PositiveCount
    heads: PositiveCount
    kv_heads: PositiveCount
    head_dim: PositiveCount
    v_head_dim: PositiveCount
    vocab: PositiveCount
    max_seq: Count
    experts: Count
    experts_per_token: Count
    shared_experts: Count
    moe_ffn_hidden: Count
    first_dense_layers: Count
    gated_mlp: TrueFalse
    attention: one_of(ATTENTION_KINDS)  # type: ignore[valid-type]
    q_lora_rank: Count
    kv_lora_rank: Count
    rope_head_dim: Count
    tied_embeddings: TrueFalse
    bias: one_of(BIAS_KINDS)  # type: ignore[valid-type]
    norm: one_of(NORM_KINDS)  # type: ignore[valid-type]
    position: one_of(POSITION_KINDS)  # type: ignore[valid-type]
    dropout: TrueFalse
    params_total_B_published: float
    params_active_B_published: float | None
    source: Text
    notes: BlankText
    expert_groups: Count = 0
    expert_groups_per_token: Count = 0

    NOUN = "model"
    EXPECTED = {
        **dict.fromkeys(("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "v_head_dim", "vocab"),
                        _POSITIVE),
        **dict.fromkeys(("max_seq", "experts", "experts_per_token", "shared_experts", "moe_ffn_hidden",
                         "first_dense_layers", "q_lora_rank", "kv_lora_rank", "rope_head_dim", "expert_groups",
                         "expert_groups_per_token"), _COUNT),
        **dict.fromkeys(("gated_mlp", "tied_embeddings", "dropout"), "true or false"),
        **dict.fromkeys(("params_total_B_published", "params_active_B_published"), "billions of parameters"),
        "id": "the model's id", "name": "the model's name", "source": "where the shape comes from",
    }


def check_shape(row: ModelRow, path: Path, line: int) -> None:
    """The rules across the columns of one model; the first broken one is an InputError at its column."""
    def fail(column: str, what: str) -> InputError:
        return InputError(what, file=str(path), line=line, column=column)

    if row.heads % row.kv_heads:
        raise fail("kv_heads", f"{row.kv_heads} does not divide heads {row.heads}; expected a divisor of heads")
    if row.attention == "mla" and not row.kv_lora_rank:
        raise fail("kv_lora_rank", "is 0 but attention is mla; expected MLA's latent width")
    if row.experts > 1 and not (0 < row.experts_per_token <= row.experts and row.moe_ffn_hidden > 0):
        raise fail("experts_per_token", "an MoE model needs 0 < experts_per_token <= experts and a moe_ffn_hidden")
    if row.first_dense_layers > row.layers:
        raise fail("first_dense_layers", f"{row.first_dense_layers} exceeds layers {row.layers}")
    if row.expert_groups and (row.experts % row.expert_groups or not 0 < row.expert_groups_per_token
                              <= row.expert_groups):
        raise fail("expert_groups_per_token", f"expected expert groups that divide the {row.experts} experts and "
                                              "0 < groups per token <= groups")
