"""Workloads: shapes, parameter counts, FLOPs, memory and compute efficiency against the literature.

References used below (each test names the table or sentence):

- [SC21] Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
  Clusters Using Megatron-LM", SC21, https://arxiv.org/abs/2104.04473
- [K22] Korthikanti et al., "Reducing Activation Recomputation in Large
  Transformer Models", MLSys 2023, https://arxiv.org/abs/2205.05198
- [ZeRO] Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
  Trillion Parameter Models", SC20, https://arxiv.org/abs/1910.02054
- [MLM] NVIDIA/Megatron-LM README, "GPT-3 Example" (shared/reference/measurements.csv row 75)
- [L3] Llama Team, "The Llama 3 Herd of Models", https://arxiv.org/abs/2407.21783
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from multigpu.common.errors import InputError
from multigpu.compute import efficiency
from multigpu.compute import models as w
from multigpu.compute.layout import Layout
from multigpu.evidence import computefit

A100_PEAK = 312e12  # FLOP/s dense BF16/FP16, as [SC21] and [K22] count it
A100_MEM = 80 * 2**30  # the "80GB" A100 holds 80 GiB
DAY = 86400.0

REQUIRED = ["megatron-22b", "gpt3-175b", "turing-530b", "megatron-1t", "llama3.1-8b", "llama3.1-70b",
            "llama3.1-405b", "mixtral-8x7b", "deepseek-v3", "llama3.2-1b", "llama3.2-3b", "qwen2.5-14b",
            "nemotron4-340b"]

# [K22] Table 3: model, TP, PP, GPUs, global batch, micro-batch; interleaving with 3 stages for 175B and 530B (section 6)
K22_RUNS = {
    "megatron-22b": dict(tp=8, pp=1, gpus=8, batch=4, micro_batch=4, virtual=1),
    "gpt3-175b": dict(tp=8, pp=8, gpus=64, batch=64, micro_batch=1, virtual=3),
    "turing-530b": dict(tp=8, pp=35, gpus=280, batch=280, micro_batch=1, virtual=3),
    "megatron-1t": dict(tp=8, pp=64, gpus=512, batch=512, micro_batch=1, virtual=1),
}
SEQ = 2048  # [K22] section 6, [SC21] section 5


# ----------------------------------------------------------------- shapes and parameter counts


def test_required_models_are_listed():
    assert set(REQUIRED) <= set(w.models())


def test_unknown_model_names_the_known_ones():
    with pytest.raises(InputError) as err:
        w.model("llama-9000")
    assert "llama3.1-70b" in str(err.value) and "llama-9000" in str(err.value)


def test_shapes_match_the_configs():
    # Llama 3.1 config.json files / [L3] Table 3; DeepSeek-V3 config.json
    l8, l70, l405 = (w.model(i) for i in ("llama3.1-8b", "llama3.1-70b", "llama3.1-405b"))
    assert (l8.layers, l8.hidden, l8.ffn_hidden, l8.heads, l8.kv_heads, l8.vocab) == (32, 4096, 14336, 32, 8, 128256)
    assert (l70.layers, l70.hidden, l70.ffn_hidden, l70.heads, l70.kv_heads) == (80, 8192, 28672, 64, 8)
    assert (l405.layers, l405.hidden, l405.ffn_hidden, l405.heads, l405.kv_heads) == (126, 16384, 53248, 128, 8)
    ds = w.model("deepseek-v3")
    assert (ds.dense_layers, ds.moe_layers, ds.experts, ds.experts_per_token, ds.shared_experts) == (3, 58, 256, 8, 1)


@pytest.mark.parametrize("model_id", REQUIRED)
def test_total_parameters_match_the_published_size(model_id):
    m = w.model(model_id)
    assert m.params_total / 1e9 == pytest.approx(m.params_total_B_published, rel=0.02)


@pytest.mark.parametrize("model_id, active_B", [("mixtral-8x7b", 12.9), ("deepseek-v3", 37.0)])
def test_active_parameters_match_the_published_size(model_id, active_B):
    # Mixtral release post: 12.9B of 46.7B per token; DeepSeek-V3 report: 37B of 671B activated
    m = w.model(model_id)
    assert m.params_active / 1e9 == pytest.approx(active_B, rel=0.03)
    assert m.params_active < 0.3 * m.params_total


@pytest.mark.parametrize("model_id, published_B", [("turing-530b", 529.6), ("megatron-1t", 1008.0)])
def test_megatron_parameter_formula(model_id, published_B):
    # [SC21] section 5.1: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh)); Table 1 prints 529.6B and 1008.0B
    m = w.model(model_id)
    l, h, v, s = m.layers, m.hidden, m.vocab, m.max_seq
    formula = 12 * l * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * l * h))
    assert m.params_total == pytest.approx(formula, rel=1e-4)  # only the final LayerNorm differs
    assert round(m.params_total / 1e9, 1) == published_B


def test_dense_model_uses_every_parameter():
    m = w.model("llama3.1-70b")
    assert m.params_active == m.params_total


def test_bad_models_csv_is_reported_with_line_and_column(tmp_path):
    path = tmp_path / "models.csv"
    text = w.MODELS_CSV.read_text().splitlines()
    path.write_text("\n".join([text[0], text[1].replace("megatron-22b,Megatron GPT 22B,megatron-gpt,48",
                                                          "megatron-22b,Megatron GPT 22B,megatron-gpt,4x8")]))
    with pytest.raises(InputError) as err:
        w._load(path)
    assert err.value.line == 2 and err.value.column == "layers"


# ----------------------------------------------------------------- FLOPs


def test_megatron_readme_gpt3_iteration_time():
    # [MLM]: GPT-3 175B on 1024 A100, global batch 1536, seq 2048, 138 TFLOP/s per GPU, about 32 s per iteration
    flops = w.megatron_flops_per_iteration("gpt3-175b", batch=1536, seq=2048, full_recompute=True)
    seconds = flops / (1024 * 138e12)
    assert 31.0 < seconds < 33.0


@pytest.mark.parametrize("model_id, tokens, gpus, tflops, days", [
    ("gpt3-175b", 300e9, 1024, 140, 34),   # [SC21] section 5.1: "34 days"
    ("megatron-1t", 450e9, 3072, 163, 84),  # [SC21] section 5.1: "84 days"
])
def test_sc21_end_to_end_training_time(model_id, tokens, gpus, tflops, days):
    _, hardware = w.training_flops_per_step(model_id, global_batch=tokens / SEQ, seq=SEQ, recompute="full")
    assert hardware / (gpus * tflops * 1e12) / DAY == pytest.approx(days, rel=0.05)


@pytest.mark.parametrize("model_id", list(K22_RUNS))
def test_model_flops_are_korthikanti_eq7_and_full_recompute_is_sc21_eq3(model_id):
    m, b = w.model(model_id), 8
    l, h, v, s = m.layers, m.hidden, m.vocab, SEQ
    eq7 = 72 * b * l * s * h**2 * (1 + s / (6 * h) + v / (12 * h * l))  # [K22] appendix A, eq. 7
    model_flops, hardware_none = w.training_flops_per_step(m, b, s, recompute="none")
    assert model_flops == pytest.approx(eq7, rel=1e-9) and hardware_none == model_flops
    assert w.megatron_flops_per_iteration(m, b, s, full_recompute=False) == pytest.approx(eq7, rel=1e-9)
    _, hardware_full = w.training_flops_per_step(m, b, s, recompute="full")
    eq3 = 96 * b * s * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h))  # [SC21] eq. 3
    assert hardware_full == pytest.approx(eq3, rel=1e-9)


@pytest.mark.parametrize("model_id, seconds, mfu", [
    ("megatron-22b", 1.10, 0.415), ("gpt3-175b", 13.75, 0.514),
    ("turing-530b", 37.83, 0.560), ("megatron-1t", 71.49, 0.563),
])
def test_korthikanti_table5_model_flops_utilization(model_id, seconds, mfu):
    # [K22] Table 5: iteration time (present work) and MFU, configurations of Table 3
    # (times are printed to 3-4 significant digits, hence 0.5%)
    run = K22_RUNS[model_id]
    model_flops, _ = w.training_flops_per_step(model_id, run["batch"], SEQ)
    assert model_flops / (run["gpus"] * A100_PEAK * seconds) == pytest.approx(mfu, rel=0.005)


def test_korthikanti_530b_with_data_parallelism():
    # [K22] section 6.3: 8-way data parallel (2240 GPUs, batch x8): 39.15 s per iteration, MFU 54.2%
    model_flops, _ = w.training_flops_per_step("turing-530b", 280 * 8, SEQ)
    assert model_flops / (2240 * A100_PEAK * 39.15) == pytest.approx(0.542, abs=0.0015)


def test_recompute_costs_order():
    model_flops, none = w.training_flops_per_step("gpt3-175b", 64, SEQ, "none")
    _, selective = w.training_flops_per_step("gpt3-175b", 64, SEQ, "selective")
    _, full = w.training_flops_per_step("gpt3-175b", 64, SEQ, "full")
    assert model_flops == none < selective < full
    # full recompute is one more forward of the layers: close to 4/3 of the model FLOPs
    assert full / model_flops == pytest.approx(4 / 3, rel=0.01)
    # [K22] section 5 puts selective recompute at 2.7% extra FLOPs for GPT-3 (its eq. 8 counts the
    # recomputed scores twice); one forward of QK^T and attention over V is s/(18h) of 72Bsh^2
    assert 0 < selective / model_flops - 1 < 0.027


def test_six_n_d_for_llama3_405b_pretraining():
    # [L3] section 3.2.1 / abstract: 405B parameters, 15.6T tokens, 3.8e25 FLOPs (the 6ND estimate); seq 8192
    m = w.model("llama3.1-405b")
    tokens, seq = 15.6e12, 8192
    model_flops, _ = w.training_flops_per_step(m, tokens / seq, seq)
    assert 6 * m.params_total * tokens == pytest.approx(3.8e25, rel=0.02)
    assert model_flops == pytest.approx(3.8e25, rel=0.10)  # + attention scores, - embedding lookup


def test_moe_flops_follow_active_not_total_parameters():
    m = w.model("mixtral-8x7b")
    model_flops, _ = w.training_flops_per_step(m, 1, 4096)
    assert model_flops / (6 * m.params_active * 4096) == pytest.approx(1.0, abs=0.1)


def test_prefill_is_the_sum_of_single_token_forwards():
    m, t = w.model("llama3.1-8b"), 300
    per_token = w.forward_flops_per_token(m, np.arange(1, t + 1))
    assert w.prefill_flops(m, t, logits_all=True) == pytest.approx(per_token.sum(), rel=1e-12)
    # without logits for every prompt token (only the last), the vocabulary projection is paid once
    saved = (t - 1) * 2 * m.vocab * m.hidden
    assert w.prefill_flops(m, t) == pytest.approx(per_token.sum() - saved, rel=1e-12)
    assert w.prefill_flops(m, t, batch=4) == pytest.approx(4 * w.prefill_flops(m, t))


def test_decode_flops_per_token():
    m = w.model("llama3.1-70b")
    # "2N FLOPs per generated token": short context
    assert w.decode_flops_per_token(m, 0) == pytest.approx(2 * m.params_active, rel=0.02)
    grow = w.decode_flops_per_token(m, [1000, 2000])
    assert grow[1] - grow[0] == pytest.approx(1000 * 2 * m.layers * m.heads * 2 * m.head_dim)
    ds = w.model("deepseek-v3")  # MLA, absorbed: q.k over 512 + 64 latent dims, attention over 512
    step = w.decode_flops_per_token(ds, 1) - w.decode_flops_per_token(ds, 0)
    assert step == pytest.approx(2 * 61 * 128 * (576 + 512))


# ----------------------------------------------------------------- memory


def test_zero_paper_figure1_model_states():
    # [ZeRO] Figure 1: Psi = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per device
    expected = {0: 120, 1: 31.4, 2: 16.6, 3: 1.9}
    for stage, gb in expected.items():
        parts = w.model_state_bytes_per_gpu(7.5e9, dp=64, zero_stage=stage)
        assert sum(parts.values()) / 1e9 == pytest.approx(gb, abs=0.06)


#: Korthikanti et al. 2022 count the attention score matrix as stored (Megatron before FlashAttention)
K22 = "materialised"


def test_korthikanti_table2_per_layer_activations():
    # [K22] Table 2, in bytes, for GPT-3 175B (a=96, h=12288), s=2048, b=1, t=8
    m = w.model("gpt3-175b")
    s, b, h, a, t = SEQ, 1, m.hidden, m.heads, 8
    sbh = s * b * h

    def act(**kw):
        return w.activation_bytes_per_layer(m, b, s, attention=K22, **kw)

    assert act(tp=1) == pytest.approx(sbh * (34 + 5 * a * s / h))
    assert act(tp=t) == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert act(tp=t, sequence_parallel=True) == pytest.approx(sbh * (34 / t + 5 * a * s / (h * t)))
    assert act(tp=t, recompute="selective") == pytest.approx(sbh * (10 + 24 / t))
    assert act(tp=t, sequence_parallel=True, recompute="selective") == pytest.approx(sbh * 34 / t)
    assert act(tp=t, recompute="full") == pytest.approx(sbh * 2)


@pytest.mark.parametrize("model_id, five_as_over_h, saving", [("gpt3-175b", 80, 0.70), ("turing-530b", 64, 0.65)])
def test_selective_recompute_saving(model_id, five_as_over_h, saving):
    # [K22] section 5: 5as/h = 80 (GPT-3) and 64 (MT-NLG); selective recompute saves 70% and 65%
    m = w.model(model_id)
    assert 5 * m.heads * SEQ / m.hidden == five_as_over_h
    full = w.activation_bytes_per_layer(m, 1, SEQ, attention=K22)
    kept = w.activation_bytes_per_layer(m, 1, SEQ, recompute="selective", attention=K22)
    assert 1 - kept / full == pytest.approx(saving, abs=0.01)


@pytest.mark.parametrize("model_id", list(K22_RUNS))
def test_korthikanti_figure7_reductions(model_id):
    # [K22] section 6.1 / Figure 7, relative to tensor parallelism alone (eq. 2): each technique
    # "nearly in half", together "a 5x reduction ... under 20%", full recompute "at 10% of the baseline"
    run = K22_RUNS[model_id]

    def act(**kw):
        return w.activation_bytes_per_layer(model_id, run["micro_batch"], SEQ, tp=run["tp"], attention=K22, **kw)

    base = act()
    assert 0.45 < act(sequence_parallel=True) / base < 0.70
    assert 0.45 < act(recompute="selective") / base < 0.70
    both = act(sequence_parallel=True, recompute="selective") / base
    assert 1 / both == pytest.approx(5, abs=1.3) and both < 0.21
    assert 0.07 < act(recompute="full") / base < 0.11


@pytest.mark.parametrize("model_id", list(K22_RUNS))
def test_korthikanti_figure1_what_fits_on_an_a100(model_id):
    # [K22] Figure 1 / section 6.1: with tensor parallelism alone none of the four configurations fits in
    # 80 GB; with sequence parallelism and selective recompute together they all do.
    # Megatron-LM keeps FP32 gradients: 2 + 4 + 12 = 18 bytes per parameter.
    run = K22_RUNS[model_id]

    def total(**kw):
        layout = Layout(tp=run["tp"], pp=run["pp"], micro_batch=run["micro_batch"], seq=SEQ,
                        interleave=run["virtual"], grad_dtype="fp32", attention=K22, **kw)
        return w.memory_per_gpu_bytes(model_id, layout)["total_bytes"]

    assert total() > A100_MEM
    assert total(sequence_parallel=True, recompute="selective") < A100_MEM
    if model_id != "megatron-22b":  # "none of these models will fit" with only one of the two techniques
        assert total(sequence_parallel=True) > A100_MEM
        assert total(recompute="selective") > A100_MEM


def test_first_pipeline_stage_holds_all_layers_worth_of_activations():
    # [K22] eq. 5 and section 4.3: under 1F1B the first stage stores p micro-batches of L/p layers, i.e. L
    # layers whatever p, plus the embedding dropout mask of p micro-batches: sbhL/t (34 + p/L) for p > 1
    m, t = w.model("megatron-1t"), 8
    layout = Layout(tp=t, seq=SEQ, sequence_parallel=True, recompute="selective", attention=K22)
    acts = {p: w.memory_per_gpu_bytes(m, replace(layout, pp=p))["activations_bytes"] for p in (2, 4, 8, 16, 32, 64)}
    for p, got in acts.items():
        assert got == pytest.approx(SEQ * m.hidden * m.layers / t * (34 + p / m.layers), rel=1e-12)
    acts = list(acts.values())
    # fewer micro-batches than stages: fewer in flight
    few = w.memory_per_gpu_bytes("megatron-1t", replace(layout, pp=64, global_batch=8))["activations_bytes"]
    assert few == pytest.approx(acts[-1] / 8, rel=0.01)


def test_zero_stages_shrink_model_states():
    parts = [w.memory_per_gpu_bytes("llama3.1-8b", Layout(dp=8, zero_stage=z, seq=4096, recompute="full"))
             for z in range(4)]
    totals = [p["total_bytes"] for p in parts]
    assert totals == sorted(totals, reverse=True)
    assert parts[1]["optimizer_bytes"] == pytest.approx(parts[0]["optimizer_bytes"] / 8)
    assert parts[2]["gradients_bytes"] == pytest.approx(parts[0]["gradients_bytes"] / 8)
    assert parts[3]["weights_bytes"] > parts[0]["weights_bytes"] / 8  # plus the gathered layers


def test_memory_layouts_broadcast():
    tp = np.array([1, 2, 4, 8])[:, None]
    pp = np.array([1, 2, 4])[None, :]
    layout = Layout(tp=tp, pp=pp, dp=8, zero_stage=1, seq=8192, recompute="selective", sequence_parallel=True)
    total = w.memory_per_gpu_bytes("llama3.1-70b", layout)["total_bytes"]
    assert total.shape == (4, 3)
    assert np.all(np.diff(total, axis=0) < 0) and np.all(np.diff(total, axis=1) < 0)


def test_expert_parallelism_splits_experts():
    one = w.weights_bytes_per_gpu("mixtral-8x7b", ep=1)
    eight = w.weights_bytes_per_gpu("mixtral-8x7b", ep=8)
    m = w.model("mixtral-8x7b")
    assert one - eight == pytest.approx(m.expert_params_total * 2 * 7 / 8)


@pytest.mark.parametrize("kwargs", [dict(recompute="some"), dict(dtype="bf17"), dict(dp=4, ep=8),
                                    dict(pp=200), dict(tp=0), dict(zero_stage=4)])
def test_bad_layouts_are_input_errors(kwargs):
    with pytest.raises(InputError):
        w.memory_per_gpu_bytes("llama3.1-8b", Layout(**kwargs))


@pytest.mark.parametrize("model_id, per_token", [
    ("llama3.1-70b", 327_680),  # 2 x 80 layers x 8 KV heads x 128 x 2 bytes
    ("llama3.1-8b", 131_072),   # 2 x 32 x 8 x 128 x 2
    ("deepseek-v3", 70_272),    # MLA: 61 layers x (512 latent + 64 RoPE key) x 2 bytes
])
def test_kv_cache_bytes_per_token(model_id, per_token):
    assert w.kv_cache_bytes_per_token(model_id, "bf16") == per_token
    assert w.kv_cache_bytes_per_token(model_id, "fp8") == per_token / 2


def test_inference_memory_under_tensor_parallelism():
    m = w.model("llama3.1-70b")
    mem = w.inference_memory_per_gpu_bytes(m, tp=2, kv_tokens=8448 * 4)
    assert mem["weights_bytes"] == pytest.approx(m.params_total * 2 / 2)
    assert mem["kv_cache_bytes"] == pytest.approx(8448 * 4 * 327_680 / 2)
    # more GPUs than KV heads: each GPU keeps one whole head
    assert w.kv_cache_bytes_per_token_per_gpu(m, tp=16) == w.kv_cache_bytes_per_token_per_gpu(m, tp=8)


def test_decode_streams_the_vocabulary_projection_not_the_input_embedding():
    # An untied model's decode step multiplies by the whole vocabulary projection but only looks up the batch's
    # rows of the input embedding: the table is not streamed
    m = w.model("llama3.1-8b")
    assert not m.tied_embeddings
    table = m.vocab * m.hidden
    bf16 = w.decode_bytes_per_step(m, 1, 0, "bf16")["weights_bytes"]
    assert bf16 == pytest.approx((m.params_total - table) * 2)
    # FP8 weights: the linear layers in one byte, the vocabulary projection left in 16 bits (ModelOpt's
    # default FP8 config disables the *lm_head* quantizer)
    fp8 = w.decode_bytes_per_step(m, 1, 0, "fp8")["weights_bytes"]
    assert fp8 == pytest.approx((m.params_total - 2 * table) * 1 + table * 2)


def test_tied_embedding_table_is_streamed_once_as_the_projection():
    m = w.model("llama3.2-1b")
    assert m.tied_embeddings
    assert w.decode_bytes_per_step(m, 1, 0, "bf16")["weights_bytes"] == pytest.approx(m.params_total * 2)


def test_fp8_weights_keep_the_vocabulary_tables_in_16_bits():
    m = w.model("llama3.1-70b")
    table = m.vocab * m.hidden
    bf16, fp8 = (w.weights_bytes_per_gpu(m, tp=2, dtype=d) for d in ("bf16", "fp8"))
    # the two tables (input embedding and untied projection) keep 2 bytes, the final norm too
    assert bf16 - fp8 == pytest.approx((m.params_total - 2 * table - m.hidden) / 2)


def test_moe_decode_reads_more_experts_with_larger_batches():
    small, large = w.decode_bytes_per_step("deepseek-v3", [1, 1024], 0)["weights_bytes"]
    m = w.model("deepseek-v3")
    lookup = m.vocab * m.hidden  # the input embedding is looked up, not streamed
    assert small == pytest.approx((m.params_active - lookup) * 2, rel=0.01)
    assert large == pytest.approx((m.params_total - lookup) * 2, rel=0.01)


# ----------------------------------------------------------------- compute efficiency

@pytest.mark.parametrize("row", computefit.layer_timings(), ids=lambda r: r.id)
def test_the_reference_line_reproduces_the_timed_layers(row):
    # [K22] Table 4: one layer of the 22B model, forward + backward, in five settings (19.0 to 27.2 ms); the line
    # is fitted on these five through the step model's layer time (multigpu.evidence.computefit.fit_traffic),
    # one constant for five timings: each within 5 %
    errors = computefit.layer_errors().set_index("id")
    assert abs(errors.loc[row.id, "error_pct"]) < 5


@pytest.mark.parametrize("model_id, tp, pp, utilization", [
    ("gpt3-175b", 8, 16, 138 / 312),   # [MLM] GPT-3 175B, TP 8 PP 16, 1024 GPUs: 138 TFLOP/s with full recompute
    ("megatron-1t", 8, 64, 163 / 312),   # [SC21] Table 1, 1T on 3072 GPUs: 163 TFLOP/s (52%)
])
def test_end_to_end_runs_sit_below_the_compute_only_fraction(model_id, tp, pp, utilization):
    # whole-run utilization includes communication, the bubble and the optimizer: below, but not far below,
    # the compute-only rate, once the materialised scores' memory traffic (2021 Megatron) is counted in
    # (Megatron-LM's stack: its share of the GEMM ceiling and its non-GEMM traffic, data/stack_efficiency.csv)
    m, kernels = w.model(model_id), efficiency.stack_kernels("megatron", "megatron")
    flops = 4 * 24 * SEQ * m.hidden**2 * m.layers / (tp * pp)  # one sequence, full recompute: 4 passes
    scores = float(w.score_traffic_bytes(m, 1, SEQ, tp, "full", "materialised")) * m.layers / pp
    fraction = efficiency.achievable_fraction(A100_PEAK, m.hidden / tp, SEQ, ceiling_scale=kernels.share,
                                              traffic_per_hidden=kernels.traffic_per_hidden)
    compute_s = flops / (A100_PEAK * fraction) + scores / 2.039e12
    predicted = flops / compute_s / A100_PEAK
    assert utilization < predicted < 1.4 * utilization


def test_efficiency_properties():
    hidden = np.array([256, 512, 1024, 2048, 4096, 8192])
    f = efficiency.achievable_fraction(A100_PEAK, hidden, 4096)
    assert np.all(np.diff(f) > 0) and np.all(f < efficiency.constants().gemm_efficiency_max)
    tokens = efficiency.achievable_fraction(A100_PEAK, 2048, np.array([256, 1024, 4096, 16384]))
    assert np.all(np.diff(tokens) > 0)
    # same sizes on an H100 SXM (989 TFLOP/s, 3.35 TB/s): a higher FLOP-per-byte balance reaches less of peak
    assert efficiency.achievable_fraction(989e12, 2048, 4096, 3.35e12) < efficiency.achievable_fraction(A100_PEAK, 2048, 4096, 2.039e12)
    with pytest.raises(InputError):
        efficiency.achievable_fraction(A100_PEAK, 0, 4096)
