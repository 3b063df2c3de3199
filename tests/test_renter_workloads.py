"""The workloads renters run besides pre-training: fine-tuning (full and LoRA), MoE serving, long prompts.

Properties from the literature, not pinned outputs:

- [LoRA] Hu et al. 2021, https://arxiv.org/abs/2106.09685: frozen weights, trainable ``B A`` of rank r
  (r (d_in + d_out) parameters per adapted matrix, section 4); no gradients or optimizer states for the base
  weights; the frozen weights' gradient GEMMs are skipped (~4N instead of ~6N FLOPs per token).
- [PEFT] Llama 3 8B with rank-16 adapters on all 7 linear layers of every block has 41,943,040 trainable
  parameters (the count PEFT's ``print_trainable_parameters`` reports, e.g. in Unsloth's Llama 3 notebooks).
- [ZeRO] Rajbhandari et al. 2020, https://arxiv.org/abs/1910.02054: mixed-precision Adam holds 16 bytes of
  model states per parameter (18 here, with FP32 gradients).
- [Mixtral] Jiang et al. 2024, https://arxiv.org/abs/2401.04088: 46.7B parameters, 12.9B used per token.
- [DSV3] DeepSeek-V3 report, https://arxiv.org/abs/2412.19437: 671B parameters, FP8 weights.
- Prefill attention grows with the square of the prompt: a 4x longer prompt takes more than 4x as long.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time

import pytest

from multigpu.comm import calibration
from multigpu.common.errors import InputError
from multigpu.compute import inference, models, stepflops, training
from multigpu.hardware import catalog
from multigpu.market import cost, search, workloads

NEW = ("finetune-llama3.1-8b", "lora-llama3.1-8b", "finetune-llama3.1-70b", "lora-llama3.1-70b",
       "serve-mixtral-8x7b-30tps", "serve-deepseek-v3-20tps", "serve-llama3.1-8b-32k-30tps",
       "serve-llama3.1-70b-32k-30tps")


# ------------------------------------------------------------------ the rows


def test_new_workloads_are_sourced_and_sized():
    table = workloads.workloads_table()
    for wid in NEW:
        w = table[wid]
        assert w.source.startswith("http") and w.rationale and w.title
        if w.kind == "train":
            assert w.tokens == 1e9 and w.train_tokens == 1e9
            assert w.tokens == pytest.approx(w.tokens_per_param * w.params)  # both views of the budget agree
            assert w.steps == pytest.approx(1e9 / (w.global_batch * w.seq))
            assert w.method in ("full", "lora") and (w.lora_rank is not None) == (w.method == "lora")
    assert table["lora-llama3.1-70b"].gpus == 8 and table["finetune-llama3.1-8b"].gpus == 8
    # pre-training rows keep their budget: tokens_per_param x parameters, method pretrain
    pre = table["train-llama3.1-8b"]
    assert pre.method == "pretrain" and pre.train_tokens is None and pre.tokens == 20 * pre.params


def test_every_new_workload_is_listed_by_the_cli():
    out = subprocess.run([sys.executable, "-m", "multigpu", "cost", "--list-workloads", "--format", "json"],
                         capture_output=True, text=True, check=True)
    listed = {row["id"] for row in json.loads(out.stdout)}
    assert set(NEW) <= listed


def _rows(tmp_path, change):
    text = workloads.WORKLOADS_CSV.read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(text) if t.startswith("lora-llama3.1-8b,"))
    text[line] = change(text[line])
    path = tmp_path / "w.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path, line + 1


@pytest.mark.parametrize("change, column", [
    (lambda t: t.replace(",lora,16,", ",lora,,", 1), "lora_rank"),        # LoRA without a rank
    (lambda t: t.replace(",lora,16,", ",full,16,", 1), "lora_rank"),      # a rank without LoRA
    (lambda t: t.replace(",lora,16,", ",qlora,16,", 1), "method"),        # an unknown method
    (lambda t: t.replace(",1e9,lora,", ",,lora,", 1), "tokens_per_param"),  # no token budget at all
    (lambda t: t.replace(",1e9,lora,", ",-1,lora,", 1), "tokens"),        # a negative budget
])
def test_bad_training_rows_name_line_and_column(tmp_path, change, column):
    path, line = _rows(tmp_path, change)
    with pytest.raises(InputError) as err:
        workloads.load_workloads(path)
    assert err.value.line == line and err.value.column == column


# ------------------------------------------------------------------ LoRA maths


def test_lora_trainable_parameters_are_the_adapter_count():
    # [LoRA] section 4: A (r x d_in) and B (d_out x r) per adapted matrix; [PEFT] 41,943,040 for Llama 3 8B r=16
    m = models.model("llama3.1-8b")
    h, kv, f = m.hidden, m.kv_heads * m.head_dim, m.ffn_hidden
    per_layer = sum(16 * (d_in + d_out) for d_in, d_out in
                    [(h, h), (h, kv), (h, kv), (h, h), (h, f), (h, f), (f, h)])
    assert stepflops.lora_params(m, 16) == per_layer * m.layers == 41_943_040
    assert stepflops.lora_params(m, 32) == 2 * stepflops.lora_params(m, 16)  # linear in the rank
    assert stepflops.lora_params(m, 16) < 0.01 * m.params_total


@pytest.mark.parametrize("model_id", ["llama3.1-70b", "mixtral-8x7b", "deepseek-v3"])
def test_lora_adapts_every_block_weight(model_id):
    # the adapted matrices are exactly the transformer blocks' weights (all linear layers, QLoRA's choice):
    # attention (GQA or MLA), dense MLPs and every routed and shared expert; not embeddings, head or router
    m = models.model(model_id)
    covered = sum(d_in * d_out * n for d_in, d_out, n in stepflops.lora_matrices(m))
    blocks = (m.layers * m.attention_matmul_params + m.dense_layers * m.mlp_matmul_params(m.ffn_hidden)
              + m.moe_layers * (m.experts + m.shared_experts) * m.mlp_matmul_params(m.moe_ffn_hidden))
    assert covered == blocks
    if m.is_moe:  # a token trains only the adapters of the experts it is routed to
        assert stepflops.lora_params(m, 16, active=True) < stepflops.lora_params(m, 16)


def test_lora_flops_are_two_thirds_of_full_training():
    # [LoRA]: no gradient GEMMs for frozen weights: the weight GEMMs cost 2x forward instead of 3x forward;
    # attention scores (no weights) still cost forward + 2x backward, adapters 6 FLOPs per parameter and token
    m = models.model("llama3.1-8b")
    batch, seq = 128, 4096
    full, full_hw, attention = stepflops.training_flops(m, batch, seq, method="full")
    lora, lora_hw, _ = stepflops.training_flops(m, batch, seq, method="lora", lora_rank=16)
    adapters = 6 * stepflops.lora_params(m, 16) * batch * seq
    assert (lora - attention - adapters) / (full - attention) == pytest.approx(2 / 3, rel=1e-9)
    assert 2 / 3 < lora / full < 3 / 4  # the score share at 4K tokens lifts the whole above 2/3
    short, _, _ = stepflops.training_flops(m, batch, 128, method="lora", lora_rank=16)
    short_full, _, _ = stepflops.training_flops(m, batch, 128, method="full")
    assert short / short_full == pytest.approx(2 / 3, abs=0.01)  # ~4N vs ~6N per token on short sequences
    assert full == pytest.approx(stepflops.training_flops(m, batch, seq)[0])  # full fine-tune = pre-training
    for recompute in ("selective", "full"):  # recomputation re-runs the same forward work in both
        fm, fh, _ = stepflops.training_flops(m, batch, seq, recompute, "full")
        lm, lh, _ = stepflops.training_flops(m, batch, seq, recompute, "lora", 16)
        assert lh - lm == pytest.approx(fh - fm)


def test_lora_memory_drops_the_base_weights_states():
    # [ZeRO]: full training holds 2 (weights) + 4 (FP32 gradients) + 12 (Adam) bytes per parameter; LoRA keeps
    # the 16-bit weights and 16 bytes per adapter parameter: 8B does not fit one 141 GB GPU, its LoRA does
    options = dict(seq=4096, zero_stage=0)
    full = training.step("llama3.1-8b", "hgx-h200", 1, 1, 1, 4, 1, method="full", **options)
    lora = training.step("llama3.1-8b", "hgx-h200", 1, 1, 1, 4, 1, method="lora", lora_rank=16, **options)
    m = models.model("llama3.1-8b")
    adapters = stepflops.lora_params(m, 16)
    assert lora.memory_per_gpu_GB < full.memory_per_gpu_GB
    assert full.memory_per_gpu_GB - lora.memory_per_gpu_GB == pytest.approx(
        (16 * m.params_total - 16 * adapters) / 1e9, rel=1e-9)
    assert not full.fits and lora.fits
    assert lora.step_time_s < full.step_time_s


def test_lora_reduces_only_the_adapters_gradients():
    # data parallelism over PCIe: full fine-tuning all-reduces 8B FP32 gradients, LoRA ~42M
    full = training.step("llama3.1-8b", "pcie-a100-8", 8, 1, 1, 64, 1, seq=4096, method="full")
    lora = training.step("llama3.1-8b", "pcie-a100-8", 8, 1, 1, 64, 1, seq=4096, method="lora", lora_rank=16)
    assert full.exposed_comm_s.dp > 0.1
    assert lora.exposed_comm_s.dp < 0.05 * full.exposed_comm_s.dp


def test_method_is_checked_and_part_of_the_search_key():
    with pytest.raises(InputError, match="method"):
        training.step("llama3.1-8b", "dgx-a100", 8, 1, 1, 64, 1, method="qlora")
    with pytest.raises(InputError, match="rank"):
        search.train("llama3.1-8b", "dgx-a100", 8, 128, 4096, method="lora")
    args = ("llama3.1-8b", "dgx-a100", 8, 128, 4096)
    full = search.train(*args, method="full")
    r16 = search.train(*args, method="lora", lora_rank=16)
    r64 = search.train(*args, method="lora", lora_rank=64)
    assert (full.method, r16.method, r16.lora_rank, r64.lora_rank) == ("full", "lora", 16, 64)
    assert r16.best.step_time_s < full.best.step_time_s
    assert r16.best.memory_per_gpu_GB < r64.best.memory_per_gpu_GB
    keys = search.MEMO.tables["_train_cached"]
    assert {k[8:10] for k in keys if k[:5] == args} >= {("full", 0), ("lora", 16), ("lora", 64)}


# ------------------------------------------------------------------ fine-tuning jobs


@pytest.mark.parametrize("wid", ["finetune-llama3.1-8b", "lora-llama3.1-8b", "lora-llama3.1-70b",
                                 "finetune-llama3.1-70b"])
def test_fine_tuning_plans_use_the_workloads_method(wid):
    w = workloads.workload(wid)
    for system in ("dgx-a100", "pcie-a100-8"):
        plan = cost.plan(wid, system, 8)
        found = search.train(w.model, system, w.gpus, w.global_batch, w.seq, dtype=w.dtype, method=w.method,
                             lora_rank=w.lora_rank or 0)
        assert plan.feasible and plan.training == found.best and plan.steps == w.steps


def test_fine_tune_gpu_hours_scale_with_tokens():
    w = workloads.workload("lora-llama3.1-8b")
    double = dataclasses.replace(w, train_tokens=2e9)
    system = catalog.system("dgx-a100")
    one = cost._plan_train(w, system, 8, calibration.resolve(None), "megatron")
    two = cost._plan_train(double, system, 8, calibration.resolve(None), "megatron")
    assert two.training == one.training
    assert two.time_h() == pytest.approx(2 * one.time_h(), rel=1e-12)


def test_lora_70b_is_cheaper_than_full_fine_tuning_and_needs_fewer_gpus():
    lora, full = (cost.plan(w, "dgx-a100", 8) for w in ("lora-llama3.1-70b", "finetune-llama3.1-70b"))
    gpu_hours = {p.workload: p.time_h() * p.job_gpus for p in (lora, full)}
    assert lora.job_gpus < full.job_gpus
    assert gpu_hours["lora-llama3.1-70b"] < gpu_hours["finetune-llama3.1-70b"]
    # 70B's model states (~18 bytes per parameter, 1.26 TB) exceed 8 x 85 GB but fit 16 A100s with ZeRO-3 and
    # full recomputation, as Hugging Face's FSDP fine-tune of Llama 2 70B ran on 2 nodes of 8 A100 80GB
    # (https://huggingface.co/blog/ram-efficient-pytorch-fsdp)
    assert search.train("llama3.1-70b", "dgx-a100", 8, 128, 4096, method="full").best is None
    sixteen = search.train("llama3.1-70b", "dgx-a100", 16, 128, 4096, method="full").best
    assert sixteen is not None and sixteen.zero_stage == 3


# ------------------------------------------------------------------ MoE and long-prompt serving


def test_mixtral_holds_every_expert_but_computes_with_two():
    # [Mixtral]: 46.7B parameters held, 12.9B used per token
    m = models.model("mixtral-8x7b")
    weights = models.inference_memory_per_gpu_bytes(m, tp=1)["weights_bytes"]
    assert weights == pytest.approx(2 * m.params_total, rel=0.01)  # BF16, all 8 experts
    assert weights / 1e9 > 80  # does not fit one 80 GB GPU ...
    flops = models.decode_flops_per_token(m, 0)
    assert flops == pytest.approx(2 * 12.9e9, rel=0.05)  # ... but a token computes like a 13B model
    one, two = (inference.run("mixtral-8x7b", "dgx-a100", tp, 1, 8192, 256) for tp in (1, 2))
    assert not one.fits and two.fits


def test_deepseek_v3_fits_h200_and_h20_nodes_not_a100_in_fp8():
    # [DSV3]: 671B parameters, ~671 GB in FP8: more than 8 x 80 GB, less than 8 x 96 GB and 8 x 141 GB
    w = workloads.workload("serve-deepseek-v3-20tps")
    assert w.dtype == "fp8"
    weights = models.inference_memory_per_gpu_bytes("deepseek-v3", tp=8, weight_dtype="fp8")["weights_bytes"]
    assert 8 * weights == pytest.approx(671e9, rel=0.02)
    a100 = cost.plan(w.id, "dgx-a100", 8)
    assert not a100.feasible and a100.reason.startswith("does not fit")
    for system in ("hgx-h200", "hgx-h20"):
        plan = cost.plan(w.id, system, 8)
        assert plan.feasible and plan.serving.gpus == 8  # a copy takes the whole node, TP 8 or EP 8 alike
    # in BF16 it would not fit even 8 x 141 GB: the workload's FP8 is what makes one node enough
    assert search.serve("deepseek-v3", "hgx-h200", 8, 2048, 512, 20).best is None


def test_fp8_without_fp8_tensor_cores_is_served_weight_only():
    # vLLM serves FP8 checkpoints on Ampere as W8A16 (FP8 Marlin): half the weight bytes, 16-bit GEMMs
    fp8, bf16 = (inference.run("llama3.1-8b", "dgx-a100", 1, 1, 2048, 128, dtype=d) for d in ("fp8", "bf16"))
    # the linear layers halve; the two vocabulary tables (13 % of Llama 3.1 8B's weights) stay 16-bit
    assert fp8.memory_per_gpu_GB < 0.6 * bf16.memory_per_gpu_GB
    # decode streams half the bytes; the layers' fixed kernel time is the same in both
    assert fp8.decode_fixed_s == bf16.decode_fixed_s > 0
    assert fp8.decode_step_s - fp8.decode_fixed_s < 0.6 * (bf16.decode_step_s - bf16.decode_fixed_s)
    assert fp8.ttft_s == pytest.approx(bf16.ttft_s, rel=0.15)  # prefill still runs at the BF16 rate


def test_a_32k_prompt_takes_more_than_four_times_an_8k_prompt_to_first_token():
    long, short = (inference.run("llama3.1-70b", "dgx-a100", 8, 1, n, 512) for n in (32768, 8192))
    assert long.ttft_s > 4 * short.ttft_s
    # and its prefill all-reduces, 32K x hidden per layer, are where the interconnect shows
    pcie = inference.run("llama3.1-70b", "pcie-a100-8", 8, 1, 32768, 512)
    assert pcie.ttft_s > long.ttft_s


@pytest.mark.parametrize("wid", ["serve-mixtral-8x7b-30tps", "serve-deepseek-v3-20tps",
                                 "serve-llama3.1-8b-32k-30tps", "serve-llama3.1-70b-32k-30tps"])
def test_serving_plans_meet_the_workloads_targets(wid):
    w = workloads.workload(wid)
    for system in ("dgx-a100", "pcie-a100-8", "hgx-h200"):
        plan = cost.plan(wid, system, 8)
        found = search.serve(w.model, system, 8, w.input_tokens, w.output_tokens, w.min_tokens_per_s_per_user,
                             dtype=w.dtype, max_ttft_s=w.max_ttft_s)
        assert plan.serving == found.best and plan.feasible == (found.best is not None)
        if plan.feasible:
            assert plan.serving.tokens_per_s_per_user >= w.min_tokens_per_s_per_user
            assert w.max_ttft_s is None or plan.serving.ttft_s <= w.max_ttft_s
        else:
            assert plan.reason


def test_the_new_workloads_search_quickly():
    # the book costs every workload on every offer: the new ones must add seconds, not minutes
    search.MEMO.clear()
    cost._plan.cache_clear()
    start = time.perf_counter()
    for wid in NEW:
        cost.offer_costs(wid)
    assert time.perf_counter() - start < 30
