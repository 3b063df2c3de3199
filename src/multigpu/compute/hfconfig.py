"""Model shapes from Hugging Face ``config.json`` files.

:func:`load_config` reads the ``config.json`` that ships with a Hugging Face
checkpoint (or a folder holding one) and returns the same :class:`Model` a row
of ``data/models.csv`` gives, checked by the same rules. The keys are those of
the ``transformers`` configuration classes (``LlamaConfig``, ``MixtralConfig``,
``DeepseekV3Config``, ``GPT2Config``, ...); the file is parsed with the
standard library only.

Model types (``model_type``) and what they map to:

- ``llama``, ``mistral``, ``qwen2``, ``qwen3``: dense, gated (SwiGLU) MLP of
  ``intermediate_size``, RMSNorm, RoPE; ``gqa`` when ``num_key_value_heads``
  is below ``num_attention_heads``, else ``mha``. ``head_dim`` is read when
  given, else ``hidden_size / num_attention_heads`` (Qwen3: 128, its class
  default). Biases: Qwen2 has them on Q, K and V (``qkv``); Llama and Qwen3
  follow ``attention_bias`` (and Llama ``mlp_bias``: ``all``).
- ``mixtral``: every layer MoE, ``num_local_experts`` experts of
  ``intermediate_size``, ``num_experts_per_tok`` per token, no shared expert.
- ``qwen2_moe``, ``qwen3_moe``: ``num_experts`` of ``moe_intermediate_size``;
  Qwen2-MoE's shared expert of ``shared_expert_intermediate_size`` is counted
  as that many routed-expert widths (it must be a multiple); dense layers
  (``mlp_only_layers``, ``decoder_sparse_step``) must be the first ones.
- ``deepseek_v3`` (and ``deepseek_v2``): MLA with ``q_lora_rank`` (null: no
  query compression), ``kv_lora_rank``; ``head_dim`` = ``qk_nope_head_dim`` +
  ``qk_rope_head_dim``, ``rope_head_dim`` = ``qk_rope_head_dim``,
  ``v_head_dim``; the first ``first_k_dense_replace`` layers dense
  (``intermediate_size``), then ``n_routed_experts`` of
  ``moe_intermediate_size``, ``num_experts_per_tok`` per token plus
  ``n_shared_experts``. The multi-token-prediction layers are not counted.
- ``gpt_oss``: every layer MoE, ``num_local_experts`` experts of
  ``intermediate_size``, ``num_experts_per_tok`` per token, no shared expert;
  grouped-query attention of ``head_dim`` (64 by default; heads x head_dim
  need not be the hidden size), biases on Q, K and V (``attention_bias``,
  true by default). The experts' biases, the attention sinks and the
  sliding-window layers' shorter KV cache (``sliding_window``, counted at
  full length) are noted, not modelled.
- ``glm4_moe`` (GLM-4.5): the first ``first_k_dense_replace`` layers dense
  (``intermediate_size``), then ``n_routed_experts`` of
  ``moe_intermediate_size``, ``num_experts_per_tok`` per token plus
  ``n_shared_experts``; grouped-query attention of ``head_dim`` (128 by
  default), ``attention_bias`` (false by default). The multi-token-prediction
  layers and the Q/K norms (``use_qk_norm``) are noted, not counted.
- ``gpt2``: ``n_layer``, ``n_embd``, ``n_head``, ``n_positions`` (learned
  positions), MLP ``n_inner`` or 4 x ``n_embd``, LayerNorm, biases everywhere,
  tied embeddings.
- ``gpt_neox``: LayerNorm, RoPE, GELU MLP of ``intermediate_size``, biases
  (``attention_bias``), untied embeddings.
- ``opt``: ``ffn_dim``, learned positions, ReLU MLP, biases (``enable_bias``),
  tied embeddings; ``word_embed_proj_dim`` other than ``hidden_size``
  (OPT-350m) is noted, not modelled.
- ``bloom``: ``n_layer``, ``hidden_size``, ``n_head``, MLP 4 x hidden, ALiBi
  (no position parameters), biases everywhere, tied embeddings.

A key the shape needs (layers, hidden size, heads, MLP width, vocabulary, the
MoE and MLA widths) must be present. Switches and sizes that ``transformers``
fills in when a key is absent (``tie_word_embeddings``,
``max_position_embeddings``, dropout rates, biases, Llama's
``num_key_value_heads``, ...) take that class default, and the model's
``notes`` list each default taken.

Every problem is an :class:`InputError` naming the file and the key, printed by
the CLI as ``error: <file>: <key>: <what is wrong>; expected ...`` (exit 2);
invalid JSON is reported at its line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from multigpu.common.errors import InputError
from multigpu.compute.shapes import POSITION_KINDS, Model, ModelRow, check_shape

_ABSENT = object()


def _show(value: Any) -> str:
    """A config value as it reads in JSON (``"4096"``, ``true``, ``-2``)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class _Config:
    """One config.json's keys, read with checks; remembers the defaults taken and the key behind each field."""

    def __init__(self, data: dict[str, Any], file: str) -> None:
        self.data = data
        self.file = file
        self.assumed: list[str] = []  #: ``key=value`` for each class default taken
        self.caveats: list[str] = []  #: what the Model leaves out of this config or approximates (noun phrases)
        self.origin: dict[str, str] = {}  #: Model field -> config key it was read from

    def error(self, key: str, what: str) -> InputError:
        return InputError(f"{key}: {what}", file=self.file)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def _find(self, keys: Sequence[str]) -> tuple[str, Any]:
        """The first of ``keys`` with a value (aliases); absent or null: (first key, _ABSENT or None)."""
        for key in keys:
            if self.data.get(key) is not None:
                return key, self.data[key]
        nulls = [key for key in keys if key in self.data]
        return (nulls[0], None) if nulls else (keys[0], _ABSENT)

    def _default(self, key: str, value: Any, default: Any, expected: str, note: bool) -> Any:
        if default is _ABSENT:
            state = "is missing" if value is _ABSENT else "is null"
            raise self.error(key, f"{state}; expected {expected}")
        if note:
            self.assumed.append(f"{key}={_show(default)}")
        return default

    def count(self, *keys: str, default: Any = _ABSENT, minimum: int = 1, field: str | None = None,
              note: bool = True) -> int:
        """A whole number >= ``minimum`` under the first of ``keys`` present; ``default`` when absent or null."""
        expected = f"a whole number >= {minimum}"
        key, value = self._find(keys)
        if field:
            self.origin[field] = key
        if value is _ABSENT or value is None:
            return int(self._default(key, value, default, expected, note))
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"{_show(value)} is not a whole number; expected {expected}")
        if value < minimum:
            what = "is negative" if value < 0 else f"is below {minimum}"
            raise self.error(key, f"{value} {what}; expected {expected}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        """``true`` or ``false``; ``default`` (noted) when absent or null."""
        value = self.data.get(key)
        if value is None:
            return bool(self._default(key, value, default, "true or false", True))
        if not isinstance(value, bool):
            raise self.error(key, f"{_show(value)} is not true or false; expected true or false")
        return value

    def rate(self, key: str, default: float) -> float:
        """A probability (dropout rate) in [0, 1]; ``default`` (noted) when absent or null."""
        value = self.data.get(key)
        if value is None:
            return float(self._default(key, value, default, "a number from 0 to 1", True))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise self.error(key, f"{_show(value)} is not a rate; expected a number from 0 to 1")
        return float(value)

    def dropout(self, defaults: dict[str, float]) -> bool:
        """True when any of these dropout rates is above 0."""
        return any(self.rate(key, default) > 0 for key, default in defaults.items())

    def layer_list(self, key: str, layers: int) -> list[int]:
        """A list of layer indices in [0, layers); absent or null: []."""
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in value):
            raise self.error(key, f"{_show(value)} is not a list of layer indices; expected e.g. [0, 1]")
        outside = [i for i in value if not 0 <= i < layers]
        if outside:
            raise self.error(key, f"layer {outside[0]} is outside 0..{layers - 1}; expected indices of existing layers")
        return sorted(set(value))


# ------------------------------------------------------------------ shared pieces


def _heads(c: _Config, hidden: int, kv_default: Any, head_dim_default: int | None = None) -> dict[str, Any]:
    """Heads, KV heads and head widths of a standard attention block; ``gqa`` when KV heads are fewer.

    ``kv_default``: ``num_key_value_heads`` when absent ("heads": as many as the query heads; _ABSENT:
    required; None: the type has no such key). ``head_dim_default``: ``head_dim`` when absent (None:
    ``hidden / heads``).
    """
    heads = c.count("num_attention_heads", field="heads")
    if kv_default is None:  # the model type has no such key: multi-head attention
        kv = heads
        c.origin["kv_heads"] = "num_attention_heads"
    else:
        kv = c.count("num_key_value_heads", default=heads if kv_default == "heads" else kv_default, field="kv_heads")
    if c.has("head_dim") or head_dim_default is not None:
        head_dim = c.count("head_dim", default=head_dim_default if head_dim_default is not None else _ABSENT,
                           field="head_dim")
    else:
        head_dim = _divide(c, hidden, heads, c.origin["heads"])
        c.origin["head_dim"] = c.origin["heads"]
    c.origin["v_head_dim"] = c.origin["head_dim"]
    return dict(heads=heads, kv_heads=kv, head_dim=head_dim, v_head_dim=head_dim,
                attention="gqa" if kv < heads else "mha")


def _divide(c: _Config, hidden: int, heads: int, key: str) -> int:
    if hidden % heads:
        raise c.error(key, f"{heads} does not divide the hidden size {hidden}; expected a divisor of it "
                           "(or a head_dim key)")
    return hidden // heads


def _dense(ffn: int) -> dict[str, Any]:
    return dict(ffn_hidden=ffn, experts=0, experts_per_token=0, shared_experts=0, moe_ffn_hidden=0,
                first_dense_layers=0)


def _no_mla() -> dict[str, Any]:
    return dict(q_lora_rank=0, kv_lora_rank=0, rope_head_dim=0)


def _first_dense(c: _Config, layers: int) -> int:
    """Qwen-MoE layout: layer i is MoE unless listed in ``mlp_only_layers`` or (i+1) is off ``decoder_sparse_step``."""
    step = c.count("decoder_sparse_step", default=1, note=False)
    dense_only = c.layer_list("mlp_only_layers", layers)
    moe = [i for i in range(layers) if i not in dense_only and (i + 1) % step == 0]
    first = layers - len(moe)
    if moe != list(range(first, layers)):
        key = "mlp_only_layers" if dense_only else "decoder_sparse_step"
        raise c.error(key, f"makes MoE layers {moe[:4]}... with dense layers between them; expected dense layers "
                           "only at the start (the model's first_dense_layers)")
    c.origin["first_dense_layers"] = "mlp_only_layers"
    return first


def _attention_bias(c: _Config, mlp_key: str | None = None) -> str:
    """Llama-style ``attention_bias`` (Q, K, V and output) and ``mlp_bias`` as a bias kind."""
    mlp = c.flag(mlp_key, False) if mlp_key else False
    attention = c.flag("attention_bias", False)
    if mlp:
        return "all"
    if attention:
        c.caveats.append("the output projection's bias (attention_bias)")
        return "qkv"
    return "none"


# ------------------------------------------------------------------ one mapper per model_type


#: class defaults of ``max_position_embeddings`` (``transformers``) when a config leaves it out
_MAX_POSITIONS = {"llama": 2048, "mistral": 131072, "mixtral": 131072, "qwen2": 32768, "qwen2_moe": 32768,
                  "qwen3": 32768, "qwen3_moe": 32768, "deepseek_v2": 2048, "deepseek_v3": 4096, "gpt_neox": 2048,
                  "opt": 2048, "gpt_oss": 131072, "glm4_moe": 131072}

#: ``num_key_value_heads`` when absent: "heads" (MHA) for Llama and DeepSeek, required for the others
_KV_DEFAULT: dict[str, Any] = {"llama": "heads", "deepseek_v2": "heads", "deepseek_v3": "heads"}


def _llama_like(c: _Config, kind: str) -> dict[str, Any]:
    """Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3 and Qwen3-MoE: pre-RMSNorm, RoPE, SwiGLU."""
    layers = c.count("num_hidden_layers", field="layers")
    hidden = c.count("hidden_size", field="hidden")
    out = dict(layers=layers, hidden=hidden,
               **_heads(c, hidden, _KV_DEFAULT.get(kind, _ABSENT), 128 if kind.startswith("qwen3") else None))
    out["vocab"] = c.count("vocab_size", field="vocab")
    out["max_seq"] = c.count("max_position_embeddings", default=_MAX_POSITIONS[kind], minimum=0, field="max_seq")
    out["tied_embeddings"] = c.flag("tie_word_embeddings", False)
    if kind == "qwen2":
        out["bias"] = "qkv"
    elif kind == "qwen2_moe":
        out["bias"] = "qkv" if c.flag("qkv_bias", True) else "none"
    elif kind in ("mistral", "mixtral"):
        out["bias"] = "none"
    else:
        out["bias"] = _attention_bias(c, "mlp_bias" if kind == "llama" else None)
    if kind.startswith("qwen3"):
        c.caveats.append("the per-head q_norm and k_norm gains (2 x head_dim per layer)")
    out["dropout"] = c.dropout({"attention_dropout": 0.0})

    if kind == "mixtral":
        ffn = c.count("intermediate_size", field="ffn_hidden")
        out.update(ffn_hidden=ffn, moe_ffn_hidden=ffn, first_dense_layers=0, shared_experts=0,
                   experts=c.count("num_local_experts", "num_experts", field="experts"),
                   experts_per_token=c.count("num_experts_per_tok", field="experts_per_token"))
        c.origin["moe_ffn_hidden"] = c.origin["ffn_hidden"]
    elif kind in ("qwen2_moe", "qwen3_moe"):
        moe_ffn = c.count("moe_intermediate_size", field="moe_ffn_hidden")
        ffn = (c.count("intermediate_size", field="ffn_hidden") if kind == "qwen2_moe"
               else c.count("intermediate_size", default=moe_ffn, field="ffn_hidden"))
        out.update(ffn_hidden=ffn, moe_ffn_hidden=moe_ffn,
                   experts=c.count("num_experts", "num_local_experts", field="experts"),
                   experts_per_token=c.count("num_experts_per_tok", field="experts_per_token"),
                   first_dense_layers=_first_dense(c, layers), shared_experts=0)
        if kind == "qwen2_moe":
            shared = c.count("shared_expert_intermediate_size", minimum=0, field="shared_experts")
            if shared % moe_ffn:
                raise c.error("shared_expert_intermediate_size",
                              f"{shared} is not a multiple of moe_intermediate_size {moe_ffn}; expected a shared "
                              "expert as wide as a whole number of routed experts")
            out["shared_experts"] = shared // moe_ffn
            if shared:
                c.caveats.append("the shared expert's sigmoid gate (hidden_size per MoE layer)")
    else:
        out.update(_dense(c.count("intermediate_size", field="ffn_hidden")))
    out.update(_no_mla(), gated_mlp=True, norm="rmsnorm", position="rope")
    return out


def _deepseek(c: _Config, kind: str) -> dict[str, Any]:
    """DeepSeek-V2/V3: MLA attention, dense first layers, then routed plus shared experts."""
    layers = c.count("num_hidden_layers", field="layers")
    hidden = c.count("hidden_size", field="hidden")
    heads = c.count("num_attention_heads", field="heads")
    kv_heads = c.count("num_key_value_heads", default=heads, field="kv_heads")
    if "q_lora_rank" not in c.data:
        raise c.error("q_lora_rank", "is missing; expected a whole number >= 1, or null for no query compression")
    q_lora = c.count("q_lora_rank", default=0, field="q_lora_rank", note=False)
    kv_lora = c.count("kv_lora_rank", field="kv_lora_rank")
    nope = c.count("qk_nope_head_dim", field="head_dim")
    rope = c.count("qk_rope_head_dim", field="rope_head_dim")
    v_dim = c.count("v_head_dim", field="v_head_dim")
    ffn = c.count("intermediate_size", field="ffn_hidden")
    experts = c.count("n_routed_experts", field="experts")
    per_token = c.count("num_experts_per_tok", field="experts_per_token")
    shared = c.count("n_shared_experts", minimum=0, field="shared_experts")
    moe_ffn = c.count("moe_intermediate_size", field="moe_ffn_hidden")
    first = c.count("first_k_dense_replace", minimum=0, field="first_dense_layers")
    frequency = c.count("moe_layer_freq", default=1, note=False)
    if frequency != 1:
        raise c.error("moe_layer_freq", f"{frequency} puts dense layers between MoE layers; expected 1 (every layer "
                                        "after first_k_dense_replace is MoE)")
    mtp = c.count("num_nextn_predict_layers", default=0, minimum=0, note=False)
    if mtp:
        c.caveats.append(f"the multi-token-prediction module (num_nextn_predict_layers {mtp})")
    return dict(layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=nope + rope, v_head_dim=v_dim,
                vocab=c.count("vocab_size", field="vocab"),
                max_seq=c.count("max_position_embeddings", default=_MAX_POSITIONS[kind], minimum=0, field="max_seq"),
                ffn_hidden=ffn, experts=experts, experts_per_token=per_token, shared_experts=shared,
                moe_ffn_hidden=moe_ffn, first_dense_layers=first, gated_mlp=True, attention="mla",
                q_lora_rank=q_lora, kv_lora_rank=kv_lora, rope_head_dim=rope,
                tied_embeddings=c.flag("tie_word_embeddings", False), bias=_attention_bias(c), norm="rmsnorm",
                position="rope", dropout=c.dropout({"attention_dropout": 0.0}), **_expert_groups(c))


def _expert_groups(c: _Config) -> dict[str, int]:
    """Group-limited routing (``n_group``, ``topk_group``; DeepSeek-V2's device-limited and V3's node-limited
    routing), or none where a config leaves it out or states one group."""
    groups = c.count("n_group", default=0, minimum=0, note=False)
    per_token = c.count("topk_group", default=0, minimum=0, note=False)
    if groups <= 1:
        return {}
    return dict(expert_groups=groups, expert_groups_per_token=per_token)


def _routed_moe(c: _Config, layers: int, hidden: int, kind: str) -> dict[str, Any]:
    """What gpt-oss and GLM-4.5 share: grouped-query attention of ``head_dim``, RMSNorm, RoPE, SwiGLU experts."""
    out = dict(layers=layers, hidden=hidden, **_heads(c, hidden, _ABSENT, 64 if kind == "gpt_oss" else 128),
               vocab=c.count("vocab_size", field="vocab"),
               max_seq=c.count("max_position_embeddings", default=_MAX_POSITIONS[kind], minimum=0, field="max_seq"),
               tied_embeddings=c.flag("tie_word_embeddings", False), gated_mlp=True, norm="rmsnorm",
               position="rope", dropout=c.dropout({"attention_dropout": 0.0}), **_no_mla())
    out["experts_per_token"] = c.count("num_experts_per_tok", "experts_per_token", field="experts_per_token")
    return out


def _gpt_oss(c: _Config, kind: str) -> dict[str, Any]:
    """gpt-oss: every layer MoE, no shared expert, biased Q, K and V."""
    layers, hidden = c.count("num_hidden_layers", field="layers"), c.count("hidden_size", field="hidden")
    out = _routed_moe(c, layers, hidden, kind)
    ffn = c.count("intermediate_size", field="ffn_hidden")
    out.update(ffn_hidden=ffn, moe_ffn_hidden=ffn, first_dense_layers=0, shared_experts=0,
               experts=c.count("num_local_experts", "num_experts", field="experts"),
               bias="qkv" if c.flag("attention_bias", True) else "none")
    c.origin["moe_ffn_hidden"] = c.origin["ffn_hidden"]
    c.caveats += ["the output projection's and the experts' biases", "the attention sinks (one per head and layer)"]
    if c.has("sliding_window"):
        c.caveats.append(f"the sliding-window layers' KV cache ({c.count('sliding_window', note=False)} tokens), "
                         "counted at full length")
    return out


def _glm4_moe(c: _Config, kind: str) -> dict[str, Any]:
    """GLM-4.5: dense first layers, then routed plus shared experts."""
    layers, hidden = c.count("num_hidden_layers", field="layers"), c.count("hidden_size", field="hidden")
    out = _routed_moe(c, layers, hidden, kind)
    out.update(ffn_hidden=c.count("intermediate_size", field="ffn_hidden"),
               moe_ffn_hidden=c.count("moe_intermediate_size", field="moe_ffn_hidden"),
               experts=c.count("n_routed_experts", field="experts"),
               shared_experts=c.count("n_shared_experts", minimum=0, field="shared_experts"),
               first_dense_layers=c.count("first_k_dense_replace", minimum=0, field="first_dense_layers"),
               bias=_attention_bias(c))
    mtp = c.count("num_nextn_predict_layers", default=0, minimum=0, note=False)
    if mtp:
        c.caveats.append(f"the multi-token-prediction layers (num_nextn_predict_layers {mtp})")
    if c.data.get("use_qk_norm"):
        c.caveats.append("the per-head Q and K norms (use_qk_norm)")
    return out


def _gpt2(c: _Config, kind: str) -> dict[str, Any]:
    """GPT-2: learned positions, LayerNorm, GELU MLP, biases everywhere, tied embeddings."""
    layers = c.count("n_layer", field="layers")
    hidden = c.count("n_embd", field="hidden")
    heads = c.count("n_head", field="heads")
    head_dim = _divide(c, hidden, heads, "n_head")
    c.origin.update(kv_heads="n_head", head_dim="n_head", v_head_dim="n_head")
    if c.has("n_inner"):
        ffn = c.count("n_inner", field="ffn_hidden")
    else:
        ffn = 4 * hidden
        c.origin["ffn_hidden"] = "n_embd"
        c.assumed.append(f"n_inner=4*n_embd={ffn}")
    return dict(layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=head_dim, v_head_dim=head_dim,
                vocab=c.count("vocab_size", field="vocab"),
                max_seq=c.count("n_positions", "n_ctx", default=1024, field="max_seq"),
                **_dense(ffn), **_no_mla(), gated_mlp=False, attention="mha",
                tied_embeddings=c.flag("tie_word_embeddings", True), bias="all", norm="layernorm",
                position="learned", dropout=c.dropout({"resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1}))


def _gpt_neox(c: _Config, kind: str) -> dict[str, Any]:
    """GPT-NeoX / Pythia: LayerNorm, (partial) RoPE, GELU MLP, untied embeddings."""
    layers = c.count("num_hidden_layers", field="layers")
    hidden = c.count("hidden_size", field="hidden")
    out = dict(layers=layers, hidden=hidden, **_heads(c, hidden, None))
    if c.flag("attention_bias", True):
        bias = "all"
    else:
        bias = "none"
        c.caveats.append("the MLP biases GPT-NeoX keeps when attention_bias is false")
    out.update(vocab=c.count("vocab_size", field="vocab"),
               max_seq=c.count("max_position_embeddings", default=_MAX_POSITIONS[kind], minimum=0, field="max_seq"),
               **_dense(c.count("intermediate_size", field="ffn_hidden")), **_no_mla(), gated_mlp=False,
               tied_embeddings=c.flag("tie_word_embeddings", False), bias=bias, norm="layernorm", position="rope",
               dropout=c.dropout({"attention_dropout": 0.0, "hidden_dropout": 0.0}))
    return out


def _opt(c: _Config, kind: str) -> dict[str, Any]:
    """OPT: learned positions, LayerNorm, ReLU MLP of ``ffn_dim``, tied embeddings."""
    layers = c.count("num_hidden_layers", field="layers")
    hidden = c.count("hidden_size", "d_model", field="hidden")
    heads = c.count("num_attention_heads", field="heads")
    head_dim = _divide(c, hidden, heads, "num_attention_heads")
    c.origin.update(kv_heads="num_attention_heads", head_dim="num_attention_heads", v_head_dim="num_attention_heads")
    projection = c.count("word_embed_proj_dim", default=hidden, note=False)
    if projection != hidden:
        c.caveats.append(f"word_embed_proj_dim {projection} (OPT's embedding is vocab x {projection} with "
                         "project_in/project_out matrices; counted as vocab x hidden)")
    if not c.flag("do_layer_norm_before", True):
        c.caveats.append("post-LayerNorm without a final norm (do_layer_norm_before false; counted with one)")
    c.caveats.append("the 2 extra rows of OPT's learned position table (offset 2)")
    return dict(layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=head_dim, v_head_dim=head_dim,
                vocab=c.count("vocab_size", field="vocab"),
                max_seq=c.count("max_position_embeddings", default=_MAX_POSITIONS[kind], field="max_seq"),
                **_dense(c.count("ffn_dim", field="ffn_hidden")), **_no_mla(), gated_mlp=False, attention="mha",
                tied_embeddings=c.flag("tie_word_embeddings", True),
                bias="all" if c.flag("enable_bias", True) else "none", norm="layernorm", position="learned",
                dropout=c.dropout({"dropout": 0.1, "attention_dropout": 0.0}))


def _bloom(c: _Config, kind: str) -> dict[str, Any]:
    """BLOOM: ALiBi (no position parameters), LayerNorm, GELU MLP of 4 x hidden, tied embeddings."""
    layers = c.count("n_layer", "num_hidden_layers", field="layers")
    hidden = c.count("hidden_size", "n_embed", field="hidden")
    heads = c.count("n_head", "num_attention_heads", field="heads")
    head_dim = _divide(c, hidden, heads, c.origin["heads"])
    c.origin.update(kv_heads=c.origin["heads"], head_dim=c.origin["heads"], v_head_dim=c.origin["heads"],
                    ffn_hidden=c.origin["hidden"])
    if c.has("n_inner") and c.data["n_inner"] != 4 * hidden:
        c.caveats.append(f"n_inner {_show(c.data['n_inner'])} (BloomMLP is 4 x hidden_size wide regardless)")
    position = "alibi" if "alibi" in POSITION_KINDS else "rope"
    if position != "alibi":
        c.caveats.append("ALiBi positions (no parameters; recorded as 'rope', the kind without a position table)")
    c.caveats.append("the LayerNorm after the word embedding (2 x hidden)")
    return dict(layers=layers, hidden=hidden, heads=heads, kv_heads=heads, head_dim=head_dim, v_head_dim=head_dim,
                vocab=c.count("vocab_size", field="vocab"),
                max_seq=c.count("seq_length", default=2048, minimum=0, field="max_seq"),
                **_dense(4 * hidden), **_no_mla(), gated_mlp=False, attention="mha",
                tied_embeddings=c.flag("tie_word_embeddings", True), bias="all", norm="layernorm",
                position=position, dropout=c.dropout({"hidden_dropout": 0.0, "attention_dropout": 0.0}))


_MAPPERS: dict[str, Callable[[_Config, str], dict[str, Any]]] = {
    "llama": _llama_like, "mistral": _llama_like, "mixtral": _llama_like, "qwen2": _llama_like,
    "qwen2_moe": _llama_like, "qwen3": _llama_like, "qwen3_moe": _llama_like,
    "deepseek_v2": _deepseek, "deepseek_v3": _deepseek, "gpt_oss": _gpt_oss, "glm4_moe": _glm4_moe,
    "gpt2": _gpt2, "gpt_neox": _gpt_neox, "opt": _opt, "bloom": _bloom,
}

#: the ``model_type`` values :func:`load_config` reads
MODEL_TYPES: tuple[str, ...] = tuple(_MAPPERS)


# ------------------------------------------------------------------ reading


def _read(path: str | os.PathLike[str]) -> tuple[Path, dict[str, Any]]:
    """The config file (``path`` or ``path/config.json``) and its JSON object."""
    given = Path(path)
    file = given / "config.json" if given.is_dir() else given
    name = str(file)
    if not file.is_file():
        if given.is_dir():
            raise InputError("has no config.json; expected a folder holding a Hugging Face config.json",
                             file=str(given))
        raise InputError("no such file; expected a Hugging Face config.json or a folder holding one", file=name)
    try:
        text = file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text; expected a JSON file", file=name) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror}); expected a readable config.json", file=name) from None
    if not text.strip():
        raise InputError("is empty; expected a Hugging Face config.json (a JSON object of config keys)", file=name,
                         line=1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"is not valid JSON: {exc.msg} (column {exc.colno})", file=name, line=exc.lineno) from None
    if not isinstance(data, dict):
        kind = {list: "an array", str: "a string"}.get(type(data), "a single value")
        raise InputError(f"holds {kind}; expected a JSON object of config keys", file=name)
    return file, data


def _identity(data: dict[str, Any], file: Path) -> tuple[str, str]:
    """(id, name): from ``_name_or_path`` when set, else from the folder (``config.json``) or the file's stem."""
    named = data.get("_name_or_path")
    if isinstance(named, str) and named.strip().rstrip("/\\"):
        text = named.strip().rstrip("/\\")
        last = PurePosixPath(text.replace("\\", "/")).name
        hub_id = text.count("/") <= 1 and not text.startswith((".", "/", "~")) and ":" not in text
        return last.lower(), text if hub_id else last
    label = file.resolve().parent.name if file.name == "config.json" else file.stem
    return label.lower(), label


def load_config(path: str | os.PathLike[str]) -> Model:
    """The :class:`Model` of a Hugging Face ``config.json`` (or of the ``config.json`` in folder ``path``).

    The shape is mapped by ``model_type`` (see the module docstring and
    :data:`MODEL_TYPES`) and checked by the rules of ``data/models.csv``
    (:class:`~multigpu.compute.shapes.ModelRow` and its cross-column rules).
    ``id`` is the last part of ``_name_or_path`` when the config has one, else
    the folder's name (the file's stem if it is not called ``config.json``),
    lower-cased; ``name`` the same, case kept (a Hub id such as
    ``meta-llama/Llama-3.1-8B`` whole); ``family`` the ``model_type``;
    ``source`` the file read. ``params_total_B_published`` (and, for MoE,
    ``params_active_B_published``) hold the counts :attr:`Model.params_total`
    and :attr:`Model.params_active` give for the shape, in billions, since a
    config.json publishes none. ``notes`` says where the shape came from, the
    class defaults taken for absent keys and what the shape leaves out.

    A missing or unreadable file, invalid JSON, an unsupported
    ``model_type``, a missing key, a value of the wrong type or sign, or a
    shape the rules reject raises :class:`InputError` with ``file`` set and
    the config key first in the message.
    """
    file, data = _read(path)
    c = _Config(data, str(file))
    kind = data.get("model_type")
    if kind is None:
        raise c.error("model_type", f"is missing; expected one of {', '.join(MODEL_TYPES)}")
    if not isinstance(kind, str) or kind not in _MAPPERS:
        raise c.error("model_type", f"{_show(kind)} is not supported; expected one of {', '.join(MODEL_TYPES)}")
    shape = _MAPPERS[kind](c, kind)
    model_id, name = _identity(data, file)
    values: dict[str, Any] = dict(id=model_id, name=name, family=kind, **shape, params_total_B_published=0.0,
                                  params_active_B_published=None, source=str(file), notes="")
    try:
        row = ModelRow(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "model"
        raise c.error(c.origin.get(field, field), first["msg"]) from None
    try:
        check_shape(row, file, 0)
    except InputError as exc:
        column = exc.column or "model"
        raise c.error(c.origin.get(column, column), exc.message) from None

    model = Model(**values)
    total = model.params_total / 1e9
    active = model.params_active / 1e9 if model.is_moe else None
    notes = [f"shape read from a Hugging Face config.json (model_type {kind})"]
    if c.assumed:
        notes.append("class defaults assumed for absent keys: " + ", ".join(c.assumed))
    if c.caveats:
        notes.append("left out or approximated: " + "; ".join(c.caveats))
    counted = f"counted {total:.3f}B parameters" + (f", {active:.3f}B active per token" if active else "")
    notes.append(counted + " (no published figure in a config.json; the params_*_B_published fields hold these)")
    return replace(model, params_total_B_published=round(total, 4),
                   params_active_B_published=None if active is None else round(active, 4), notes=". ".join(notes))
