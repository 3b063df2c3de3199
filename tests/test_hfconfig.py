"""Model shapes read from Hugging Face config.json files (multigpu.compute.hfconfig).

The fixtures in tests/data/hf/ are the published config.json files of the
checkpoints (sources in tests/data/hf/README.md):

- https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
- https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
- https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json
- https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
- https://huggingface.co/openai-community/gpt2/blob/main/config.json
- https://huggingface.co/bigscience/bloom-560m/blob/main/config.json

The configs written inline below keep only the shape keys of their published
config.json (sources next to each); their published sizes come from the model
cards named there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from multigpu.common.errors import InputError
from multigpu.compute import models as w
from multigpu.compute.hfconfig import MODEL_TYPES, load_config

HF = Path(__file__).parent / "data" / "hf"

#: fields that fix the shape (and so the counts): a config must give the catalogue's values
SHAPE_FIELDS = ("layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "v_head_dim", "vocab", "experts",
                "experts_per_token", "shared_experts", "moe_ffn_hidden", "first_dense_layers", "gated_mlp",
                "attention", "q_lora_rank", "kv_lora_rank", "rope_head_dim", "tied_embeddings", "bias", "norm",
                "position", "dropout")

CATALOGUED = ["llama3.1-8b", "mixtral-8x7b", "qwen2.5-14b", "deepseek-v3"]


def write(tmp_path: Path, config: dict[str, Any], folder: str = "model") -> Path:
    """``config`` as ``tmp_path/folder/config.json``; the folder is returned."""
    where = tmp_path / folder
    where.mkdir(parents=True, exist_ok=True)
    (where / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return where


def fixture(name: str) -> dict[str, Any]:
    return json.loads((HF / name / "config.json").read_text(encoding="utf-8"))


# ----------------------------------------------------------------- published configs against the catalogue


@pytest.mark.parametrize("model_id", CATALOGUED)
def test_published_config_gives_the_catalogue_shape(model_id):
    loaded, row = load_config(HF / model_id), w.model(model_id)
    assert {f: getattr(loaded, f) for f in SHAPE_FIELDS} == {f: getattr(row, f) for f in SHAPE_FIELDS}
    assert loaded.params_total == row.params_total and loaded.params_active == row.params_active
    assert loaded.id == model_id and loaded.source == str(HF / model_id / "config.json")


@pytest.mark.parametrize("model_id", CATALOGUED)
def test_counted_size_is_within_2_percent_of_the_published_one(model_id):
    loaded, row = load_config(HF / model_id), w.model(model_id)
    assert loaded.params_total_B_published == pytest.approx(row.params_total_B_published, rel=0.02)
    assert loaded.params_total_B_published == pytest.approx(loaded.params_total / 1e9, abs=1e-4)
    if row.params_active_B_published is None:
        assert loaded.params_active_B_published is None
    else:
        assert loaded.params_active_B_published == pytest.approx(row.params_active_B_published, rel=0.02)


def test_context_length_follows_the_config():
    # Llama, Mixtral and DeepSeek rows keep the config's max_position_embeddings; the Qwen2.5-14B row keeps the
    # native 32768 of its note while the base model's config.json says 131072
    for model_id in ("llama3.1-8b", "mixtral-8x7b", "deepseek-v3"):
        assert load_config(HF / model_id).max_seq == w.model(model_id).max_seq
    assert load_config(HF / "qwen2.5-14b").max_seq == 131072 != w.model("qwen2.5-14b").max_seq


def test_deepseek_v3_maps_mla_and_moe_fields():
    ds = load_config(HF / "deepseek-v3")
    assert (ds.attention, ds.q_lora_rank, ds.kv_lora_rank, ds.head_dim, ds.rope_head_dim, ds.v_head_dim) == (
        "mla", 1536, 512, 128 + 64, 64, 128)
    assert (ds.dense_layers, ds.moe_layers, ds.experts, ds.experts_per_token, ds.shared_experts) == (3, 58, 256, 8, 1)
    assert (ds.ffn_hidden, ds.moe_ffn_hidden) == (18432, 2048)
    assert "multi-token-prediction" in ds.notes


def test_gpt2_small_is_124m():
    # GPT2LMHeadModel of openai-community/gpt2: 124,439,808 parameters (tied head, learned positions)
    m = load_config(HF / "gpt2")
    assert (m.layers, m.hidden, m.ffn_hidden, m.heads, m.kv_heads, m.head_dim, m.vocab, m.max_seq) == (
        12, 768, 3072, 12, 12, 64, 50257, 1024)
    assert (m.attention, m.bias, m.norm, m.position, m.gated_mlp, m.tied_embeddings, m.dropout) == (
        "mha", "all", "layernorm", "learned", False, True, True)
    assert m.params_total == 124_439_808
    assert "tie_word_embeddings=true" in m.notes and "n_inner=4*n_embd=3072" in m.notes


def test_bloom_560m():
    # bigscience/bloom-560m model card: 559,214,592 parameters; the shape leaves out the word-embedding LayerNorm
    m = load_config(HF / "bloom-560m")
    assert (m.layers, m.hidden, m.ffn_hidden, m.heads, m.head_dim, m.vocab) == (24, 1024, 4096, 16, 64, 250880)
    assert (m.bias, m.norm, m.tied_embeddings, m.dropout, m.embedding_params) == (
        "all", "layernorm", True, False, 250880 * 1024)
    assert m.position != "learned" and "ALiBi" in m.notes
    assert m.params_total == 559_214_592 - 2 * 1024
    assert m.params_total == pytest.approx(559_214_592, rel=1e-5)


def test_notes_say_where_the_shape_came_from():
    m = load_config(HF / "llama3.1-8b")
    assert "config.json" in m.notes and "model_type llama" in m.notes and "8.030B" in m.notes
    assert m.family == "llama" and m.name == "llama3.1-8b"


# ----------------------------------------------------------------- other model types (shape keys of published configs)

OTHER_TYPES = {
    # https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json; 7.24B
    "mistral-7b": (dict(model_type="mistral", hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                        num_attention_heads=32, num_key_value_heads=8, vocab_size=32000,
                        max_position_embeddings=32768, sliding_window=4096, tie_word_embeddings=False),
                   7.24, None),
    # https://huggingface.co/mistralai/Mistral-Nemo-Base-2407/blob/main/config.json: head_dim 128 != 5120 / 32; 12.2B
    "mistral-nemo": (dict(model_type="mistral", hidden_size=5120, intermediate_size=14336, num_hidden_layers=40,
                          num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=131072,
                          max_position_embeddings=1024000, tie_word_embeddings=False), 12.2, None),
    # https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json; model card 8.2B
    "qwen3-8b": (dict(model_type="qwen3", hidden_size=4096, intermediate_size=12288, num_hidden_layers=36,
                      num_attention_heads=32, num_key_value_heads=8, head_dim=128, vocab_size=151936,
                      max_position_embeddings=40960, tie_word_embeddings=False, attention_bias=False), 8.2, None),
    # https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json; model card 14.3B total, 2.7B activated
    "qwen1.5-moe-a2.7b": (dict(model_type="qwen2_moe", hidden_size=2048, intermediate_size=5632, num_hidden_layers=24,
                               num_attention_heads=16, num_key_value_heads=16, vocab_size=151936,
                               moe_intermediate_size=1408, shared_expert_intermediate_size=5632, num_experts=60,
                               num_experts_per_tok=4, decoder_sparse_step=1, max_position_embeddings=8192,
                               tie_word_embeddings=False), 14.3, 2.7),
    # https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json; model card 30.5B total, 3.3B activated
    "qwen3-30b-a3b": (dict(model_type="qwen3_moe", hidden_size=2048, intermediate_size=6144, num_hidden_layers=48,
                           num_attention_heads=32, num_key_value_heads=4, head_dim=128, vocab_size=151936,
                           moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8, decoder_sparse_step=1,
                           mlp_only_layers=[], max_position_embeddings=40960, tie_word_embeddings=False), 30.5, 3.3),
    # https://huggingface.co/EleutherAI/gpt-neox-20b/blob/main/config.json; model card 20,554,567,680
    "gpt-neox-20b": (dict(model_type="gpt_neox", hidden_size=6144, intermediate_size=24576, num_hidden_layers=44,
                          num_attention_heads=64, vocab_size=50432, max_position_embeddings=2048, rotary_pct=0.25,
                          tie_word_embeddings=False, use_parallel_residual=True), 20.554567680, None),
    # https://huggingface.co/facebook/opt-125m/blob/main/config.json; Zhang et al. 2022 Table 1: 125M
    "opt-125m": (dict(model_type="opt", hidden_size=768, ffn_dim=3072, num_hidden_layers=12, num_attention_heads=12,
                      vocab_size=50272, max_position_embeddings=2048, word_embed_proj_dim=768,
                      do_layer_norm_before=True, dropout=0.1, enable_bias=True), 0.125, None),
}


@pytest.mark.parametrize("name", OTHER_TYPES)
def test_other_model_types_count_their_published_size(tmp_path, name):
    config, total_B, active_B = OTHER_TYPES[name]
    m = load_config(write(tmp_path, config, name))
    assert m.params_total / 1e9 == pytest.approx(total_B, rel=0.02)
    if active_B is None:
        assert not m.is_moe and m.params_active_B_published is None
    else:
        assert m.params_active / 1e9 == pytest.approx(active_B, rel=0.02)


def test_other_model_types_map_their_special_fields(tmp_path):
    def load(name: str) -> w.Model:
        return load_config(write(tmp_path, OTHER_TYPES[name][0], name))

    assert load("mistral-7b").head_dim == 128 and load("mistral-nemo").head_dim == 128
    assert load("gpt-neox-20b").params_total == 20_554_567_680
    qwen_moe = load("qwen1.5-moe-a2.7b")
    assert (qwen_moe.bias, qwen_moe.shared_experts, qwen_moe.experts, qwen_moe.first_dense_layers) == ("qkv", 4, 60, 0)
    qwen3_moe = load("qwen3-30b-a3b")
    assert (qwen3_moe.attention, qwen3_moe.moe_layers, qwen3_moe.moe_ffn_hidden) == ("gqa", 48, 768)
    opt = load("opt-125m")
    assert (opt.position, opt.tied_embeddings, opt.dropout, opt.ffn_hidden) == ("learned", True, True, 3072)


def test_llama_defaults_are_listed(tmp_path):
    # a Llama 2 style config without num_key_value_heads or tie_word_embeddings: multi-head attention, untied
    config = dict(model_type="llama", hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                  num_attention_heads=32, vocab_size=32000)
    m = load_config(write(tmp_path, config))
    assert (m.kv_heads, m.attention, m.tied_embeddings, m.max_seq) == (32, "mha", False, 2048)
    for default in ("num_key_value_heads=32", "tie_word_embeddings=false", "max_position_embeddings=2048"):
        assert default in m.notes
    assert m.params_total / 1e9 == pytest.approx(6.74, rel=0.01)  # Llama 2 7B: 6.74B (Touvron et al. 2023)


def test_dense_layers_first_in_qwen_moe(tmp_path):
    config = dict(OTHER_TYPES["qwen3-30b-a3b"][0], mlp_only_layers=[0, 1])
    m = load_config(write(tmp_path, config))
    assert (m.first_dense_layers, m.moe_layers, m.ffn_hidden) == (2, 46, 6144)


def test_ids_names_and_paths(tmp_path):
    # the folder, the file itself, a file of another name (its stem), and _name_or_path
    assert load_config(HF / "gpt2" / "config.json").id == "gpt2"
    config = fixture("llama3.1-8b")
    other = tmp_path / "My-Llama.json"
    other.write_text(json.dumps(config), encoding="utf-8")
    assert (load_config(other).id, load_config(other).name) == ("my-llama", "My-Llama")
    named = load_config(write(tmp_path, dict(config, _name_or_path="meta-llama/Llama-3.1-8B"), "x"))
    assert (named.id, named.name) == ("llama-3.1-8b", "meta-llama/Llama-3.1-8B")
    local = load_config(write(tmp_path, dict(config, _name_or_path="/models/Llama-3.1-8B/"), "y"))
    assert (local.id, local.name) == ("llama-3.1-8b", "Llama-3.1-8B")


#: gpt-oss (OpenAI, gpt-oss-120b and gpt-oss-20b model card, arXiv 2508.10925, Table 1: total and active parameters,
#: the active ones counting the unembedding but not the embedding) and GLM-4.5 (Zhipu, arXiv 2508.06471, Table 1:
#: 355B and 106B total); shape keys of https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json,
#: .../openai/gpt-oss-20b, .../zai-org/GLM-4.5 and .../zai-org/GLM-4.5-Air
_GPT_OSS = dict(model_type="gpt_oss", hidden_size=2880, intermediate_size=2880, num_attention_heads=64,
                num_key_value_heads=8, head_dim=64, vocab_size=201088, num_experts_per_tok=4, attention_bias=True,
                sliding_window=128, max_position_embeddings=131072, tie_word_embeddings=False)
_GLM = dict(model_type="glm4_moe", num_attention_heads=96, num_key_value_heads=8, head_dim=128, vocab_size=151552,
            n_shared_experts=1, num_experts_per_tok=8, attention_bias=True, num_nextn_predict_layers=1,
            max_position_embeddings=131072, tie_word_embeddings=False)
NEW_MOE_TYPES = {
    "gpt-oss-120b": (_GPT_OSS | dict(num_hidden_layers=36, num_local_experts=128), 116.83, 5.13),
    "gpt-oss-20b": (_GPT_OSS | dict(num_hidden_layers=24, num_local_experts=32), 20.91, 3.61),
    "glm-4.5": (_GLM | dict(hidden_size=5120, intermediate_size=12288, moe_intermediate_size=1536,
                            num_hidden_layers=92, n_routed_experts=160, first_k_dense_replace=3, use_qk_norm=True),
                355, None),
    "glm-4.5-air": (_GLM | dict(hidden_size=4096, intermediate_size=10944, moe_intermediate_size=1408,
                                num_hidden_layers=46, n_routed_experts=128, first_k_dense_replace=1), 106, None),
}


@pytest.mark.parametrize("name", NEW_MOE_TYPES)
def test_gpt_oss_and_glm_count_their_published_size(tmp_path, name):
    config, total_B, active_B = NEW_MOE_TYPES[name]
    m = load_config(write(tmp_path, config, name))
    assert m.is_moe and m.params_total / 1e9 == pytest.approx(total_B, rel=0.02)
    if active_B is not None:  # OpenAI's active count leaves the input embedding (a lookup) out
        assert (m.params_active - m.vocab * m.hidden) / 1e9 == pytest.approx(active_B, rel=0.02)


def test_gpt_oss_and_glm_map_their_special_fields(tmp_path):
    oss = load_config(write(tmp_path, NEW_MOE_TYPES["gpt-oss-120b"][0], "gpt-oss-120b"))
    assert (oss.attention, oss.head_dim, oss.heads * oss.head_dim, oss.hidden) == ("gqa", 64, 4096, 2880)
    assert (oss.moe_layers, oss.shared_experts, oss.bias) == (36, 0, "qkv")
    assert "sliding-window" in oss.notes and "attention sinks" in oss.notes
    glm = load_config(write(tmp_path, NEW_MOE_TYPES["glm-4.5"][0], "glm-4.5"))
    assert (glm.first_dense_layers, glm.moe_layers, glm.shared_experts, glm.experts) == (3, 89, 1, 160)
    assert "multi-token-prediction" in glm.notes and "use_qk_norm" in glm.notes


def test_supported_types():
    for kind in ("llama", "mistral", "mixtral", "qwen2", "qwen3", "deepseek_v3", "gpt2", "gpt_neox", "opt", "bloom",
                 "gpt_oss", "glm4_moe"):
        assert kind in MODEL_TYPES


# ----------------------------------------------------------------- bad configs

DROP = object()


def _mutated(base: str, **changes: Any) -> dict[str, Any]:
    config = fixture(base)
    for key, value in changes.items():
        if value is DROP:
            config.pop(key, None)
        else:
            config[key] = value
    return config


BAD = [
    # (config, key named, words in the message)
    (_mutated("llama3.1-8b", num_hidden_layers=DROP), "num_hidden_layers", "is missing; expected a whole number >= 1"),
    (_mutated("llama3.1-8b", hidden_size=-4096), "hidden_size", "-4096 is negative"),
    (_mutated("llama3.1-8b", num_attention_heads=0), "num_attention_heads", "0 is below 1"),
    (_mutated("llama3.1-8b", vocab_size="128256"), "vocab_size", '"128256" is not a whole number'),
    (_mutated("llama3.1-8b", intermediate_size=14336.5), "intermediate_size", "14336.5 is not a whole number"),
    (_mutated("llama3.1-8b", num_key_value_heads=True), "num_key_value_heads", "true is not a whole number"),
    (_mutated("llama3.1-8b", vocab_size=None), "vocab_size", "is null"),
    (_mutated("llama3.1-8b", tie_word_embeddings="no"), "tie_word_embeddings", "is not true or false"),
    (_mutated("llama3.1-8b", attention_dropout=1.5), "attention_dropout", "expected a number from 0 to 1"),
    (_mutated("llama3.1-8b", num_key_value_heads=5), "num_key_value_heads", "5 does not divide heads 32"),
    (_mutated("llama3.1-8b", model_type="t5"), "model_type", '"t5" is not supported; expected one of llama'),
    (_mutated("llama3.1-8b", model_type=["llama"]), "model_type", "is not supported"),
    (_mutated("llama3.1-8b", model_type=DROP), "model_type", "is missing"),
    (_mutated("mixtral-8x7b", num_experts_per_tok=9), "num_experts_per_tok", "0 < experts_per_token <= experts"),
    (_mutated("mixtral-8x7b", num_local_experts=DROP), "num_local_experts", "is missing"),
    (_mutated("deepseek-v3", first_k_dense_replace=62), "first_k_dense_replace", "62 exceeds layers 61"),
    (_mutated("deepseek-v3", kv_lora_rank=0), "kv_lora_rank", "0 is below 1"),
    (_mutated("deepseek-v3", q_lora_rank=DROP), "q_lora_rank", "is missing"),
    (_mutated("deepseek-v3", n_shared_experts=-1), "n_shared_experts", "-1 is negative; expected a whole number >= 0"),
    (_mutated("deepseek-v3", moe_layer_freq=2), "moe_layer_freq", "expected 1"),
    (_mutated("gpt2", n_head=7), "n_head", "7 does not divide the hidden size 768"),
    (_mutated("bloom-560m", n_layer=DROP), "n_layer", "is missing"),
    (dict(OTHER_TYPES["qwen1.5-moe-a2.7b"][0], shared_expert_intermediate_size=2000),
     "shared_expert_intermediate_size", "not a multiple of moe_intermediate_size 1408"),
    (dict(OTHER_TYPES["qwen3-30b-a3b"][0], decoder_sparse_step=2), "decoder_sparse_step", "dense layers between"),
    (dict(OTHER_TYPES["qwen3-30b-a3b"][0], mlp_only_layers=[5]), "mlp_only_layers", "dense layers between"),
    (dict(OTHER_TYPES["qwen3-30b-a3b"][0], mlp_only_layers=[48]), "mlp_only_layers", "outside 0..47"),
]


@pytest.mark.parametrize(("config", "key", "words"), BAD, ids=[f"{key}-{i}" for i, (_, key, _) in enumerate(BAD)])
def test_bad_config_names_file_and_key(tmp_path, config, key, words):
    folder = write(tmp_path, config)
    file = str(folder / "config.json")
    with pytest.raises(InputError) as err:
        load_config(folder)
    assert err.value.file == file
    line = f"error: {err.value.lines()[0]}"  # as the CLI prints it
    assert line.startswith(f"error: {file}: {key}: "), line
    assert words in line, line


def test_invalid_json_is_reported_at_its_line(tmp_path):
    file = tmp_path / "config.json"
    file.write_text('{\n  "model_type": "llama",\n  "hidden_size": 4096,,\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_config(file)
    assert (err.value.file, err.value.line) == (str(file), 3)
    assert str(err.value).startswith(f"{file}:3: is not valid JSON")


@pytest.mark.parametrize(("text", "words"), [("[1, 2]", "holds an array; expected a JSON object"),
                                             ('"llama"', "holds a string"), ("", "is empty; expected a Hugging Face config.json")])
def test_config_must_be_a_json_object(tmp_path, text, words):
    file = tmp_path / "config.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_config(file)
    assert err.value.file == str(file) and words in str(err.value)


def test_missing_file_and_folder_without_config(tmp_path):
    with pytest.raises(InputError) as err:
        load_config(tmp_path / "nowhere" / "config.json")
    assert err.value.file == str(tmp_path / "nowhere" / "config.json") and "no such file" in str(err.value)
    with pytest.raises(InputError) as err:
        load_config(tmp_path)
    assert err.value.file == str(tmp_path) and "has no config.json" in str(err.value)


def test_not_utf8(tmp_path):
    file = tmp_path / "config.json"
    file.write_bytes(b'{"model_type": "\xff"}')
    with pytest.raises(InputError, match="not UTF-8"):
        load_config(file)


def test_the_cli_takes_a_config_path_wherever_it_takes_a_model_id(tmp_path):
    """``--model`` accepts a config.json (or its folder) and gives what the catalogue id gives; a bad config is
    one line naming the file and the key, exit 2."""
    import subprocess
    import sys

    args = ["train", "--system", "hgx-h100", "--gpus", "8", "--global-batch", "64", "--tp", "1", "--pp", "1",
            "--micro-batch", "1", "--format", "json"]

    def run(model: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "multigpu", *args, "--model", model], capture_output=True,
                              text=True)

    by_id, by_path = run("llama3.1-8b"), run(str(HF / "llama3.1-8b"))
    assert by_id.returncode == by_path.returncode == 0
    assert json.loads(by_id.stdout)["step_time_s"] == json.loads(by_path.stdout)["step_time_s"]
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama"}')
    failed = run(str(bad))
    assert failed.returncode == 2 and failed.stderr.startswith(f"error: {bad}") and "num_hidden_layers" in failed.stderr
    assert "Traceback" not in failed.stderr
