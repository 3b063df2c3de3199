"""Inference model: the 20 GB per query, properties of decode, throughput identities, CLI."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.common.errors import InputError
from multigpu.compute import efficiency, inference, models
from multigpu.market import search


def test_tp_traffic_per_query_matches_the_blog_arithmetic():
    # NVIDIA's Aug-2024 NVSwitch blog: "up to 20 GB of TP synchronization data" per GPU for one Llama 3.1 70B
    # query of 8K input + 256 output tokens. Arithmetic (shared/reference/nvidia_blog_claims.md 1.1):
    # 80 layers x 2 all-reduces x 8192 x 2 B x 8448 tokens ~ 22 GB with BF16, TP=2 (ring factor 1).
    nbytes = inference.tp_bytes_per_query_per_gpu("llama3.1-70b", 2, 8192, 256, "bf16")
    assert nbytes == 80 * 2 * 8192 * 2 * (8192 + 256)
    assert 20e9 <= nbytes <= 23e9


def test_serving_metrics_as_users_read_them():
    r = inference.run("llama3.1-70b", "hgx-h200", 2, np.arange(1, 17), 8192, 256)
    # a user sees one token per decode step, after the prefill of their own prompt
    assert np.allclose(r.tpot_s, r.decode_step_s) and np.allclose(r.tokens_per_s_per_user, 1 / r.decode_step_s)
    assert np.allclose(r.query_time_s, r.ttft_s + 256 * r.tpot_s)
    # the GPUs also run every query's prefill: throughput per GPU is below batch x per-user rate / GPUs by the
    # prefills' share of the cycle (NVIDIA's modelled Table 2 sits at 0.83-0.89 of that product)
    assert np.allclose(r.cycle_s, r.batch * r.ttft_s + 256 * r.decode_step_s)
    share = r.tokens_per_s_per_gpu / (r.batch * r.tokens_per_s_per_user / 2)
    assert np.allclose(share, 256 * r.decode_step_s / r.cycle_s) and np.all(share < 1)


def test_fp8_serving_sends_16_bit_activations():
    bf16, fp8 = (inference.run("llama3.1-70b", "hgx-h200", 8, 4, 2048, 128, dtype=d) for d in ("bf16", "fp8"))
    assert fp8.decode_comm_s == pytest.approx(bf16.decode_comm_s)


def test_decode_step_grows_with_kv_length():
    steps = [inference.run("llama3.1-8b", "hgx-h100", 1, 16, kv, 2).decode_step_s for kv in (1024, 8192, 65536)]
    assert steps == sorted(steps) and steps[-1] > steps[0]


def test_bigger_batches_trade_user_speed_for_throughput():
    r = inference.run("llama3.1-70b", "hgx-h200", 2, np.array([1, 4, 16]), 2048, 256)
    assert np.all(np.diff(r.tokens_per_s_per_user) < 0)
    assert np.all(np.diff(r.tokens_per_s_per_gpu) > 0)


def test_switch_beats_point_to_point_at_the_same_rate():
    # the blog's setting: Llama 3.1 70B, TP=2, 8K/256, 30 tokens/s/user; the switch must not lose
    switch = search.serving_option("llama3.1-70b", "hgx-h200", 2, 8192, 256, 30, dtype="fp8")
    mesh = search.serving_option("llama3.1-70b", "h200-p2p-8", 2, 8192, 256, 30, dtype="fp8")
    assert switch.tokens_per_s_per_gpu > mesh.tokens_per_s_per_gpu > 0


def test_decode_is_memory_bound_at_small_batch():
    r = inference.run("llama3.1-8b", "hgx-h100", 1, 1, 1024, 128)
    m = models.model("llama3.1-8b")  # every weight but the input embedding, which is looked up, not streamed
    weights_s = (m.params_total - m.vocab * m.hidden) * 2 / (3350e9 * inference.hbm_read_efficiency("h100-sxm"))
    fixed_s = m.layers * efficiency.constants().decode_layer_overhead_s
    assert r.decode_compute_s == pytest.approx(weights_s + fixed_s, rel=0.05)


def test_bad_layouts():
    with pytest.raises(InputError, match="heads"):
        inference.run("llama3.1-70b", "hgx-h200", 3, 1, 128, 16)
    with pytest.raises(InputError, match="do not fill whole"):
        inference.run("llama3.1-70b", "hgx-h200", 4, 1, 128, 16, pp=5)


def test_cli_infer_json():
    out = subprocess.run([sys.executable, "-m", "multigpu", "infer", "--model", "llama3.1-70b", "--system",
                          "hgx-h200", "--tp", "2", "--batch", "8", "--input-tokens", "8192", "--output-tokens", "256",
                          "--format", "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    for key in ("ttft_s", "tpot_s", "tokens_per_s_per_user", "tokens_per_s_per_gpu", "tp_bytes_per_query_per_gpu",
                "comm_fraction"):
        assert isinstance(row[key], (int, float)), key


def test_closed_loop_users_see_the_other_users_prefills():
    """The closed-loop concurrency model (fixed-concurrency benchmarks such as AIPerf): one user alone sees the
    bare prefill and the decode-only step; with more users, their prefills land between a user's tokens and
    ahead of its first one, and a cycle's tokens come out at the engine's throughput."""
    from multigpu.compute import inference as inf
    runs = inf.run("llama3.1-70b", "hgx-h100", 2, np.array([1, 25, 50]), 5000, 500, dtype="fp8")
    loaded = inf.closed_loop(runs)
    assert loaded.ttft_s[0] == pytest.approx(runs.ttft_s[0]) and loaded.itl_s[0] == pytest.approx(runs.tpot_s[0])
    assert np.all(np.diff(loaded.ttft_s) > 0) and np.all(np.diff(loaded.itl_s) > 0)
    assert np.all(loaded.itl_s >= runs.decode_step_s) and np.all(loaded.ttft_s >= runs.ttft_s)
    # 25 users: 24 other prefills and 500 decode steps between the first and the last token of one answer
    one = inf.run("llama3.1-70b", "hgx-h100", 2, 25, 5000, 500, dtype="fp8")
    assert inf.closed_loop(one).itl_s == pytest.approx((24 * one.ttft_s + 500 * one.decode_step_s) / 500)


def test_closed_loop_ttft_waits_for_half_the_others_when_prefills_fill_the_engine():
    """The wait ahead of a user's prefill is an M/D/1 queue (Pollaczek-Khinchine): it vanishes with the others'
    load and, when prefills are all the engine does (no decode steps), equals half of the other users'
    prefills, what a user arriving at a random point of a round of ``batch`` prefills waits on average."""
    import types

    from multigpu.compute import inference as inf
    one_a_pass = dict(ttft_s=1.0, prefill_prompts_per_pass=1, prefill_pass_s=1.0, pp=1, tp=1, ep=1, output_tokens=100)
    for users in (2, 10, 50):
        alone = types.SimpleNamespace(batch=users, cycle_s=users * 1.0, **one_a_pass)
        assert inf.closed_loop(alone).ttft_s == pytest.approx(1.0 + (users - 1) / 2)
    light = types.SimpleNamespace(batch=50, cycle_s=1e6, **one_a_pass)
    assert inf.closed_loop(light).ttft_s == pytest.approx(1.0, rel=1e-4)


def test_the_stack_decides_the_all_reduce_kernels():
    """``--stack``: TensorRT-LLM takes the fastest of NCCL, one-shot and two-shot; vLLM its own kernels below
    8 MiB by its size rule (vllm custom_all_reduce.py: one-shot below 512 KiB on 4 ranks, two-shot up to
    max_size 8 MiB, NCCL above); NCCL alone is never faster than either."""
    from multigpu.comm import calibration, collectives
    cal = calibration.default()
    sizes = np.array([64e3, 2**20, 16 * 2**20])
    times = {name: inference._allreduce_us("hgx-h100", 4, sizes, cal, name) for name in inference.STACKS}
    nccl = collectives.time_us("allreduce", "hgx-h100", 4, sizes, cal=cal)
    one, two = (collectives.time_us("allreduce", "hgx-h100", 4, sizes, algorithm=a, cal=cal)
                for a in ("direct", "two-shot"))
    assert times["nccl"] == pytest.approx(nccl)
    assert times["tensorrt-llm"] == pytest.approx(np.minimum(nccl, np.minimum(one, two)))
    assert times["vllm"] == pytest.approx([one[0], two[1], nccl[2]])
    assert np.all(times["tensorrt-llm"] <= times["vllm"] + 1e-9)
    assert np.all(times["tensorrt-llm"] <= times["nccl"] + 1e-9)
    # PCIe beyond two GPUs: no custom kernel, so every stack runs NCCL
    pcie = {name: inference._allreduce_us("pcie-a100-8", 4, sizes, cal, name) for name in inference.STACKS}
    assert pcie["vllm"] == pytest.approx(pcie["nccl"]) and pcie["tensorrt-llm"] == pytest.approx(pcie["nccl"])


def test_cli_infer_takes_a_stack_and_names_it():
    base = [sys.executable, "-m", "multigpu", "infer", "--model", "llama3.1-70b", "--system", "hgx-h100", "--tp",
            "4", "--batch", "1", "--input-tokens", "2048", "--output-tokens", "128", "--format", "json"]
    rows = {}
    for name in ("tensorrt-llm", "nccl"):
        out = subprocess.run(base + ["--stack", name], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        rows[name] = json.loads(out.stdout)
    assert rows["nccl"]["stack"] == "nccl" and rows["tensorrt-llm"]["stack"] == "tensorrt-llm"
    assert rows["nccl"]["decode_comm_s"] > rows["tensorrt-llm"]["decode_comm_s"]
    bad = subprocess.run(base + ["--stack", "tgi"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--stack" in bad.stderr
    with pytest.raises(InputError, match="serving stack"):
        inference.run("llama3.1-70b", "hgx-h100", 4, 1, 128, 16, stack_name="tgi")


def test_the_serving_search_follows_the_stack():
    """NCCL alone is slower than TensorRT-LLM's kernels at decode sizes, so every tensor-parallel degree serves a
    user more slowly and the best option is never better."""
    trt = search.serve("llama3.1-70b", "hgx-h100", 8, 2048, 256, 20.0, dtype="fp8")
    nccl = search.serve("llama3.1-70b", "hgx-h100", 8, 2048, 256, 20.0, dtype="fp8", stack="nccl")
    assert (trt.stack, nccl.stack) == ("tensorrt-llm", "nccl")
    for a, b in zip(trt.options, nccl.options):
        assert a.tp == b.tp
        assert (b.tokens_per_s_per_user_at_1 < a.tokens_per_s_per_user_at_1) if a.tp > 1 else \
            (b.tokens_per_s_per_user_at_1 == a.tokens_per_s_per_user_at_1)
    assert nccl.best.tokens_per_s_per_gpu <= trt.best.tokens_per_s_per_gpu
    with pytest.raises(InputError, match="serving stack"):
        search.serve("llama3.1-70b", "hgx-h100", 8, 2048, 256, 20.0, stack="tgi")


def test_vllm_keeps_a_16_bit_kv_cache_under_fp8_weights():
    """vLLM's --kv-cache-dtype defaults to 'auto' (the model's 16-bit type): serving FP8 weights, its KV cache holds
    and reads twice the bytes of TensorRT-LLM's FP8 one, so long contexts decode more slowly and fewer queries fit;
    BF16 weights are the same on both."""
    trt, vllm = (inference.run("llama3.1-70b", "hgx-h100", 8, 64, 8192, 1024, dtype="fp8", stack_name=s)
                 for s in ("tensorrt-llm", "vllm"))
    kv = models.inference_memory_per_gpu_bytes("llama3.1-70b", tp=8, kv_tokens=64 * (8192 + 1024),
                                               weight_dtype="fp8", kv_dtype="fp8")["kv_cache_bytes"] / 1e9
    assert vllm.memory_per_gpu_GB - trt.memory_per_gpu_GB == pytest.approx(kv, rel=1e-6)
    assert vllm.decode_compute_s > trt.decode_compute_s
    bf16 = [inference.run("llama3.1-70b", "hgx-h100", 8, 64, 8192, 1024, stack_name=s).memory_per_gpu_GB
            for s in ("tensorrt-llm", "vllm")]
    assert bf16[0] == bf16[1]


def test_serving_memory_follows_the_engine_default_share():
    """TensorRT-LLM gives the KV cache 0.9 of the memory the weights leave free; vLLM takes 0.9 of the whole GPU
    (and serves FP8 weights on GPUs without FP8 tensor cores). DeepSeek-V3 in FP8 (671 GB of weights) therefore
    fits 8 H20 (96 GB) and 8 H200, not 8 A100 80GB, whose 85 GB each it would need 99 % of."""
    fits = {s: inference.run("deepseek-v3", s, 8, 1, 8192, 256, dtype="fp8").fits
            for s in ("dgx-a100", "hgx-h20", "hgx-h200")}
    assert fits == {"dgx-a100": False, "hgx-h20": True, "hgx-h200": True}
    trt, vllm = (inference.STACKS[s] for s in ("tensorrt-llm", "vllm"))
    assert trt.memory_budget_GB(85.0, 70.0) == pytest.approx(70.0 + 0.9 * 15.0)
    assert vllm.memory_budget_GB(85.0, 70.0) == pytest.approx(0.9 * 85.0)


def test_decode_reads_at_the_measured_read_only_bandwidth_of_its_gpu():
    # Azure/AI-benchmarking-guide (8fd0c6e) Azure_Results, "HBM Bandwidth": ND H100 v5 dot 3.18 TB/s of the
    # H100 SXM's 3.35, ND A100 v4 dot 1.75 of 2.039; a GPU not measured takes the median of the measured ones
    rows = {(r["gpu"], r["kernel"]): r for r in inference.measured_hbm_fractions()}
    assert rows[("h100-sxm", "triad")]["fraction"] == pytest.approx(2.97 / 3.35)
    assert inference.hbm_read_efficiency("h100-sxm") == pytest.approx(3.18 / 3.35)
    assert inference.hbm_read_efficiency("a100-sxm4-80gb") == pytest.approx(1.75 / 2.039)
    reads = sorted(r["fraction"] for r in rows.values() if r["kernel"] == "dot")
    assert inference.hbm_read_efficiency("b200") == pytest.approx(reads[len(reads) // 2])
    # reading is never slower than the kernels that also write, and nothing measured beats the nominal bandwidth
    for gpu in {g for g, _ in rows}:
        assert inference.hbm_read_efficiency(gpu) >= max(r["fraction"] for (g, k), r in rows.items()
                                                         if g == gpu and k != "dot")
    assert all(0 < r["fraction"] < 1 for r in rows.values())


def test_each_layer_adds_its_fixed_kernel_time_to_a_decode_step_and_a_prefill():
    m = models.model("llama3.1-8b")
    base = inference.run("llama3.1-8b", "hgx-h100", 1, 1, 128, 128, layer_overhead_s=0.0)
    more = inference.run("llama3.1-8b", "hgx-h100", 1, 1, 128, 128, layer_overhead_s=50e-6)
    assert float(more.tpot_s - base.tpot_s) == pytest.approx(m.layers * 50e-6)
    assert float(more.ttft_s - base.ttft_s) == pytest.approx(m.layers * 50e-6)
    # with pipeline stages a token still passes every layer, one stage after another
    two = inference.run("llama3.1-8b", "hgx-h100", 1, 1, 128, 128, pp=2, layer_overhead_s=50e-6)
    two0 = inference.run("llama3.1-8b", "hgx-h100", 1, 1, 128, 128, pp=2, layer_overhead_s=0.0)
    assert float(two.tpot_s - two0.tpot_s) == pytest.approx(m.layers * 50e-6)


def test_a_memory_bandwidth_row_on_an_unknown_gpu_names_file_line_and_column(tmp_path):
    bad = tmp_path / "hbm.csv"
    bad.write_text("id,gpu,kernel,measured_TBps,source\nx,h900,copy,1.0,somewhere\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        inference.measured_hbm_fractions(bad)
    assert "h900" in err.value.message and err.value.line == 2


@settings(max_examples=25, deadline=None)
@given(input_tokens=st.sampled_from([64, 128, 500, 2048, 9000]), batch=st.integers(1, 512),
       max_num_tokens=st.sampled_from([1024, 2048, 8192, 16384]), tp=st.sampled_from([1, 2, 8]))
def test_packing_prompts_into_a_pass_never_slows_the_cycle_or_changes_what_a_user_sees(input_tokens, batch,
                                                                                       max_num_tokens, tp):
    """A pass of several prompts (TensorRT-LLM's iteration of up to max_num_tokens tokens) pays the layers' fixed
    time and the all-reduces' latency once: never slower than its prompts one at a time, never faster than one of
    them alone. A user's TTFT and the decode step do not depend on it."""
    args = ("llama3.1-70b", "hgx-h100", tp, batch, input_tokens, 128)
    if tp == 1:
        args = ("llama3.1-8b", "hgx-h100", tp, batch, input_tokens, 128)
    alone = inference.run(*args, dtype="fp8", max_num_tokens=input_tokens)
    packed = inference.run(*args, dtype="fp8", max_num_tokens=max_num_tokens)
    k = packed.prefill_prompts_per_pass
    assert k == max(1, min(batch, max_num_tokens // input_tokens))
    assert packed.ttft_s == alone.ttft_s and packed.decode_step_s == alone.decode_step_s
    assert alone.ttft_s * (1 - 1e-12) <= packed.prefill_pass_s <= k * alone.ttft_s * (1 + 1e-12)
    assert packed.tokens_per_s_per_gpu >= alone.tokens_per_s_per_gpu * (1 - 1e-12)


def test_short_prompts_gain_most_from_packing():
    """128-token prompts fill a pass of 8192 tokens 64 at a time, so their prefills cost far less of the cycle than
    one at a time; 8192-token prompts take a pass each, and nothing changes."""
    short = [inference.run("llama3.1-70b", "hgx-h100", 8, 1024, 128, 128, dtype="fp8", max_num_tokens=t)
             for t in (128, 8192)]
    assert short[1].prefill_prompts_per_pass == 64
    assert short[1].tokens_per_s_per_gpu > 1.3 * short[0].tokens_per_s_per_gpu
    long = [inference.run("llama3.1-70b", "hgx-h100", 8, 16, 8192, 128, dtype="fp8", max_num_tokens=t)
            for t in (8192, 8192 * 2)]
    assert long[0].prefill_prompts_per_pass == 1 and long[1].prefill_prompts_per_pass == 2
    assert long[1].tokens_per_s_per_gpu == pytest.approx(long[0].tokens_per_s_per_gpu, rel=0.05)


def test_uneven_pipeline_stages_move_at_the_largest_stages_pace():
    """126 layers over 8 stages: TensorRT-LLM serves Llama 3.1 405B so on 8 RTX PRO 6000 (its performance
    overview; data/RUNS-NOTES.md). The first stages take 16 layers, and a token waits for them at every stage:
    at batch 1 a token reads 8 stages of 16 layers' weights, never less, where an even split would read
    126 layers' worth."""
    m = models.model("llama3.1-405b")
    assert inference.stage_imbalance(126, 8) == pytest.approx(8 * 16 / 126)
    assert inference.stage_imbalance(80, 8) == 1.0
    r = inference.run("llama3.1-405b", "pcie-rtxpro6000-8", 1, 1, 128, 128, pp=8, dtype="fp4")
    layer_bytes = (m.params_total - 2 * m.vocab * m.hidden) / m.layers * 0.5  # FP4: half a byte a weight
    read_Bps = 1597e9 * inference.hbm_read_efficiency("rtx-pro-6000")
    assert r.decode_compute_s >= 8 * 16 * layer_bytes / read_Bps
    # a lone prompt passes each stage once: its prefill is not paced
    even = inference.run("llama3.1-405b", "pcie-rtxpro6000-8", 1, 1, 128, 128, pp=2, dtype="fp4")
    assert r.ttft_s < 1.05 * even.ttft_s
    with pytest.raises(InputError, match="more than the 126 layers"):
        inference.run("llama3.1-405b", "pcie-rtxpro6000-8", 1, 1, 128, 128, pp=127, dtype="fp4")
