"""Chapter 3 helpers (multigpu.evidence.bottlenecks): breakdowns, scaling, sensitivity, NVIDIA's tables, training runs.

Sources of the reference values:

- [MLM] NVIDIA/Megatron-LM README, "GPT-3 Example": GPT-3 175B on 1024 A100 (TP 8, PP 16), global batch
  1536, sequence 2048, 138 TFLOP/s per GPU with full recomputation (data/measurements.csv row 75).
- [SC21] Narayanan et al., SC21, https://arxiv.org/abs/2104.04473, eq. 3 (FLOPs per iteration, full recompute).
- [K22] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
  https://arxiv.org/abs/2205.05198: Table 3 (layouts), Table 5 (iteration times: present work / full
  recompute: 22B 1.10 / 1.42 s, 175B 13.75 / 18.13 s, 530B 37.83 / 49.05 s, 1T 71.49 / 94.42 s), section 6.3
  (530B on 2240 GPUs: 39.15 s).
- [NV] NVIDIA Technical Blog, "NVIDIA NVLink and NVIDIA NVSwitch Supercharge Large Language Model
  Inference", Aug 2024, Tables 2 and 3 (data/measurements.csv rows 83-93).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from multigpu.book import ch03_figures as ch03fig
from multigpu.book import plotting
from multigpu.comm import calibration, collectives
from multigpu.compute import efficiency, inference, models, training
from multigpu.evidence import bottlenecks as b
from multigpu.evidence import measurements
from multigpu.evidence import trainingruns as tr

SWITCH_OF = {"8x A100, PCIe": "8x A100, NVSwitch", "8x H200, NVLink mesh": "8x H200, NVSwitch"}


# ----------------------------------------------------------------------------- training breakdown


def test_training_breakdown_parts_add_up_and_pcie_tensor_parallelism_collapses():
    t = b.training_breakdown()
    assert len(t) == len(b.TRAINING_SETUPS) * len(b.LAYOUTS)
    parts = t[[f"{k}_s" for k in b.PARTS]].sum(axis=1)
    assert np.allclose(parts, t["step_s"], rtol=1e-9)
    assert np.allclose(t[[f"{k}_pct" for k in b.PARTS]].sum(axis=1), 100)
    row = t.set_index(["setup", "layout"])
    # the same A100s: TP 8 over PCIe exposes several times the communication of NVSwitch, and takes longer
    assert row.loc[("8x A100, PCIe", "TP 8"), "tp_pct"] > 3 * row.loc[("8x A100, NVSwitch", "TP 8"), "tp_pct"]
    assert row.loc[("8x A100, PCIe", "TP 8"), "step_s"] > 2 * row.loc[("8x A100, NVSwitch", "TP 8"), "step_s"]
    # data parallelism only: the gradient reduction hides behind the backward pass on NVLink
    assert row.loc[("8x H200, NVSwitch", "DP only"), "comm_pct"] < 1
    # a switch is never slower than the mesh of the same GPUs
    for layout, _, _ in b.LAYOUTS:
        assert row.loc[("8x H200, NVSwitch", layout), "step_s"] <= row.loc[("8x H200, NVLink mesh", layout), "step_s"]


def test_decode_breakdown_is_memory_bound_and_pcie_across_sockets_is_not():
    d = b.decode_breakdown()
    parts = d[["weights_ms", "kv_cache_ms", "layer_fixed_ms", "other_compute_ms", "allreduce_ms"]].sum(axis=1)
    assert np.allclose(parts, d["step_ms"], rtol=1e-9)
    assert (d["other_compute_ms"] == 0).all()  # BF16 decode at batch <= 32 is memory-bound everywhere
    # the layers' fixed kernel time does not depend on the batch or the GPU: 80 layers x the fitted constant
    assert np.allclose(d["layer_fixed_ms"], 80 * 1e3 * efficiency.constants().decode_layer_overhead_s)
    row = d.set_index(["setup", "tp", "batch"])
    # weights split over the TP group: TP 8 reads a quarter of what TP 2 reads on the same GPU
    assert row.loc[("8x H200, NVSwitch", 8, 1), "weights_ms"] == pytest.approx(
        row.loc[("8x H200, NVSwitch", 2, 1), "weights_ms"] / 4)
    # across the sockets of the PCIe server the all-reduces cost several times what they cost behind NVSwitch
    assert row.loc[("8x A100, PCIe", 8, 1), "allreduce_ms"] > 3 * row.loc[("8x A100, NVSwitch", 8, 1), "allreduce_ms"]
    assert row.loc[("8x H200, NVSwitch", 2, 1), "allreduce_pct"] < 10


# ----------------------------------------------------------------------------- scaling and Amdahl


def test_scaling_starts_at_100_and_never_beats_compute_only_scaling():
    s = b.scaling()
    assert np.allclose(s[s["gpus"] == 1]["efficiency_pct"], 100)
    assert (s["efficiency_pct"] <= s["compute_efficiency_pct"] + 1e-9).all()
    for (setup, kind), part in s.groupby(["setup", "kind"]):
        if kind == "TP":
            assert np.all(np.diff(part["efficiency_pct"]) < 0), setup
    by = s.set_index(["setup", "kind", "gpus"])
    for slow, fast in SWITCH_OF.items():  # same GPUs: the switch is never less efficient
        for kind, counts in b.SCALING_COUNTS.items():
            for n in counts:
                assert by.loc[(fast, kind, n), "step_s"] <= by.loc[(slow, kind, n), "step_s"] * (1 + 1e-9)
    assert by.loc[("8x A100, PCIe", "TP", 8), "efficiency_pct"] < 40 < by.loc[("8x A100, NVSwitch", "TP", 8),
                                                                              "efficiency_pct"]


def test_amdahl_limit_bounds_the_speedup():
    a = b.amdahl()
    assert (a["speedup_x"] < a["limit_x"]).all()
    assert (a["speedup_x"] <= a["compute_only_speedup_x"]).all()
    assert np.allclose(a["limit_x"], a["one_gpu_s"] / a["exposed_comm_s"])
    limit = a.set_index("setup")["limit_x"]
    assert limit["8x A100, PCIe"] < 8 < limit["8x A100, NVSwitch"]


# ----------------------------------------------------------------------------- batch at which comm stops dominating


def test_dp_share_falls_with_batch_and_crossover_is_the_first_batch_under_half():
    sweep = b.dp_batch_sweep()
    for setup, part in sweep.groupby("setup"):
        assert np.all(np.diff(part["dp_comm_pct"]) <= 1e-9), setup
        assert np.allclose(part["dp_comm_s"], part["dp_comm_s"].iloc[0])  # once per step, whatever the batch
    cross = b.dp_crossover(sweep).set_index("setup")
    pcie = sweep[sweep["setup"] == "8x A100, PCIe"].set_index("seqs_per_gpu")["dp_comm_pct"]
    k = cross.loc["8x A100, PCIe", "seqs_per_gpu"]
    assert pcie[k] < 50 <= pcie[k // 2]
    # over 100 GbE more batch is needed than inside one PCIe server
    assert cross.loc["4 x 8 A100, PCIe + 100 GbE", "seqs_per_gpu"] > k
    assert np.isnan(b.dp_crossover(sweep, share_pct=0.0)["seqs_per_gpu"]).all()


def test_decode_ratio_above_one_only_across_pcie_sockets():
    r = b.decode_ratio()
    pcie8 = r[(r.setup == "8x A100, PCIe") & (r.tp == 8)].set_index("batch")["ratio"]
    nvlink = r[~r.setup.str.contains("PCIe")]
    assert (nvlink["ratio"] < 1).all()
    assert (pcie8 > nvlink.groupby("batch")["ratio"].max()).all()  # worst across the sockets at every batch
    assert pcie8.max() > 1
    assert np.allclose(r.ratio, r.allreduce_ms / r.compute_ms)


# ----------------------------------------------------------------------------- C27 sensitivity


def test_scaled_network_is_a_what_if_copy_of_the_calibration():
    shipped = calibration.default()
    slow_bytes = collectives.time_us("allreduce", "dgx-a100", 8, 1e9)
    small = collectives.time_us("allreduce", "dgx-a100", 8, 1024.0)
    half = b.scaled_network(bandwidth=0.5)
    assert collectives.time_us("allreduce", "dgx-a100", 8, 1e9, cal=half) == pytest.approx(2 * slow_bytes, rel=0.02)
    assert collectives.time_us("allreduce", "dgx-a100", 8, 1024.0, cal=b.scaled_network(latency=2.0)) > 1.8 * small
    assert calibration.default() == shipped and half != shipped
    assert collectives.time_us("allreduce", "dgx-a100", 8, 1e9) == slow_bytes


def test_tensor_parallelism_is_sensitive_and_data_parallelism_is_not():
    s = b.sensitivity().set_index(["setup", "case"])
    assert (s["half_bandwidth_pct"] >= 0).all() and (s["double_latency_pct"] >= 0).all()
    pcie = "8x A100, PCIe"
    assert s.loc[(pcie, "training, DP 8"), "double_latency_pct"] < 1
    assert s.loc[(pcie, "training, TP 8"), "half_bandwidth_pct"] > 3 * s.loc[(pcie, "training, DP 8"),
                                                                               "half_bandwidth_pct"]
    decode = s.loc[(pcie, "decode, TP 8")]
    assert decode["double_latency_pct"] > 3 * decode["half_bandwidth_pct"]  # tiny messages: latency-bound
    m = models.model(b.TRAIN_MODEL)
    # ZeRO-1 per GPU: (n-1)/n x params x (4-byte gradients + 2-byte weights)
    assert s.loc[(pcie, "training, DP 8"), "bytes_per_gpu_GB"] == pytest.approx(7 / 8 * m.params_total * 6 / 1e9)


# ----------------------------------------------------------------------------- the article's inference claims


def test_tp_bytes_per_query_is_the_blog_arithmetic():
    t = b.tp_bytes_per_query().set_index(["dtype", "tp"])
    # [NV] "up to 20 GB" per GPU for 8K + 256 tokens; 80 layers x 2 all-reduces x 8192 x 2 B per token, TP=2
    assert t.loc[("bf16", 2), "per_query_GB"] * 1e9 == 80 * 2 * 8192 * 2 * (8192 + 256)
    assert t.loc[("fp8", 2), "per_query_GB"] == pytest.approx(t.loc[("bf16", 2), "per_query_GB"] / 2)
    assert t.loc[("bf16", 8), "per_query_GB"] == pytest.approx(1.75 * t.loc[("bf16", 2), "per_query_GB"])
    assert t.loc[("bf16", 2), "per_query_GiB"] == pytest.approx(t.loc[("bf16", 2), "per_query_GB"] * 1e9 / 2**30)


def test_volume_grows_with_batch_but_time_does_not():
    v = b.volume_vs_batch()
    assert np.allclose(v["per_step_MB"], v["batch"] * v["per_token_MB"])
    for system, part in v.groupby("system"):
        growth = part["allreduce_ms"].iloc[-1] / part["allreduce_ms"].iloc[0]
        assert 1 < growth < part["batch"].iloc[-1] / part["batch"].iloc[0] / 4, system


def test_transfer_times_from_arithmetic_to_schedule():
    t = b.transfer_times().set_index("method")
    mesh, sw = f"{b.MESH}_ms", f"{b.SWITCH}_ms"
    article = t.loc["article: 20 GB / bidirectional GB/s"]
    assert article[mesh] == pytest.approx(1e3 * 20 / 128) and article[sw] == pytest.approx(1e3 * 20 / 900)
    per_dir = t.loc["20 GB / per-direction GB/s"]
    assert per_dir[mesh] == pytest.approx(2 * article[mesh]) and per_dir[sw] == pytest.approx(2 * article[sw])
    # no collective is faster than its bytes over the raw per-direction rate
    one = t.loc["one 20 GB all-reduce, collective model"]
    assert one[mesh] >= per_dir[mesh] and one[sw] >= per_dir[sw]
    total = t.loc["query schedule: total"]
    parts = t.loc["query schedule: prefill all-reduces"] + t.loc["query schedule: decode all-reduces"]
    assert total[mesh] == pytest.approx(parts[mesh]) and total[sw] == pytest.approx(parts[sw])
    assert total["ratio_x"] < article["ratio_x"] / 2  # latency-bound decode all-reduces shrink the gap


def test_nvidia_tables_are_read_as_published():
    t2 = b.nvidia_table2().set_index("rate_tokens_per_s_per_user")
    # [NV] Table 2, 30 tok/s/user: TP=1 67 (batch 2), point-to-point 80 (6), NVSwitch 115 (9)
    assert tuple(t2.loc[30.0, ["tp1_tokens_per_s_per_gpu", "tp1_batch", "mesh_tokens_per_s_per_gpu", "mesh_batch",
                               "switch_tokens_per_s_per_gpu", "switch_batch"]]) == (67, 2, 80, 6, 115, 9)
    assert (t2.loc[35.0:, "tp1_batch"] == 0).all()  # "Does Not Meet"
    t3 = b.nvidia_table3().set_index("batch")
    # [NV] Table 3: batch 32, 112 vs 168 tok/s/GPU, "1.5x"
    assert tuple(t3.loc[32, ["mesh_tokens_per_s_per_gpu", "switch_tokens_per_s_per_gpu"]]) == (112, 168)
    assert t3.loc[32, "benefit_x"] == pytest.approx(1.5)
    ident = b.nvidia_identity().set_index("rate_tokens_per_s_per_user")
    assert ident.loc[30.0, "switch_identity"] == 9 * 30 / 2 == 135
    assert ident.loc[30.0, "switch_ratio"] == pytest.approx(115 / 135)


def test_our_tables_keep_the_rate_and_the_switch_never_loses():
    fixed = b.compare_fixed_batch()
    for dtype in ("bf16", "fp8"):
        assert (fixed[f"{dtype}_switch"] >= fixed[f"{dtype}_mesh"]).all()
    rate = b.compare_at_rate()
    ours = rate[rate["source"].str.startswith("our model")]
    for _, row in ours.iterrows():
        dtype = row["source"].split(", ")[1]
        for name, system, tp in (("mesh", b.MESH, 2), ("switch", b.SWITCH, 2)):
            if row[f"{name}_batch"] > 0:  # the chosen batch keeps the rate, and is throughput = batch x rate / GPUs
                r = inference.run(b.SERVE_MODEL, system, tp, int(row[f"{name}_batch"]), b.INPUT_TOKENS,
                                  b.OUTPUT_TOKENS, dtype=dtype)
                assert r.tokens_per_s_per_user >= row["rate_tokens_per_s_per_user"]
                assert r.tokens_per_s_per_gpu == pytest.approx(row[f"{name}_tokens_per_s_per_gpu"])


# ----------------------------------------------------------------------------- training measurements


def test_every_training_row_of_the_measurements_is_listed():
    frame = measurements.measurements()
    ids = set(frame[frame["collective_or_metric"].isin(tr.TRAINING_METRICS)]["id"])
    listed = tr.training_measurements()
    assert set(listed["id"]) == ids and {75, 79, 80, 81, 82} <= ids
    assert set(listed[listed["comparable"]]["id"]) == {75}


def test_row75_measured_time_is_138_tflops_of_sc21_eq3():
    # [MLM] 138 TFLOP/s per GPU; [SC21] eq. 3: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))
    B, s, l, h, V = 1536, 2048, 96, 12288, 51200
    flops = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    row = tr.training_validation().iloc[0]
    assert row["measured_s"] == pytest.approx(flops / (138e12 * 1024), rel=1e-9)
    assert 31 < row["measured_s"] < 33  # the README's "~32 s/iteration"


#: Error bounds (|model / measured - 1|) of training_validation's runs, matched on the end of the run name
#: (first match wins).
ERROR_BOUNDS = (
    # [MLM] 2021 Megatron-LM, at the megatron stack's fitted kernels, overlapping no communication: +0.5 %
    ("full recompute (row 75)", 0.05),
    # [K22] section 6.3, 2240 GPUs: -7.1 %; the 8-way data parallelism adds 1.3 s to the measured iteration and
    # less to the model's (the scale-out reduction is undercharged, issue 46)
    ("SP + selective, DP 8", 0.085),
    # [K22] Table 5, out of sample since the line rests on Table 4's layer timings and a matmul
    # microbenchmark (multigpu.evidence.computefit): -1.9 % to -5.9 %, mean 3.8 %; Calculon, in sample, 3.7 % and 8.9 %
    ("SP + selective", 0.07),
    ("full recompute", 0.07),
)


def _bound(run: str) -> float:
    return next(bound for suffix, bound in ERROR_BOUNDS if run.endswith(suffix))


def test_training_model_error_on_every_comparable_run():
    v = tr.training_validation()
    assert len(v) == 1 + 2 * len(tr.K22_RUNS) + 1
    for _, row in v.iterrows():
        assert abs(row["error_pct"]) / 100 <= _bound(row["run"]), (row["run"], row["error_pct"])
    assert not v["fitted"].any()  # Table 5 is in no fit
    # the K22 present-work times as published
    table5 = tr.table5_errors()
    assert sorted(table5[table5["run"].str.endswith("SP + selective")]["measured_s"]) == [1.10, 13.75, 37.83, 71.49]
    # the goal (issue 46): mean within 4 % and worst within 9 %, out of sample (Calculon, in sample: 3.7 % and
    # 8.9 %, Isaev et al. 2023); today 3.8 % and 5.9 %
    assert table5["error_pct"].abs().mean() <= 4 and table5["error_pct"].abs().max() <= 9


def test_row75_error_bound_directly():
    # [MLM] GPT-3 175B, 1024 A100, TP 8 PP 16, batch 1536: model within 5 % of 138 TFLOP/s per GPU
    # (Megatron-LM in 2021: the attention scores materialised, before FlashAttention, and no communication
    # overlapped, no distributed optimizer), at the megatron stack's fitted kernels (data/stack_efficiency.csv):
    # about 138.
    r = training.step("gpt3-175b", "dgx-a100", 1024, 8, 16, 1536, 1, recompute="full", attention="materialised",
                      overlap_p2p=False, overlap_grad_reduce=False, zero_stage=0)
    flops = models.megatron_flops_per_iteration("gpt3-175b", 1536, 2048, full_recompute=True)
    assert flops / r.step_time_s / 1024 / 1e12 == pytest.approx(138, rel=0.05)


# ----------------------------------------------------------------------------- model fixes found by chapter 3


def test_fp8_decode_reads_weights_at_one_byte():
    # memory-bound decode at batch 1: FP8 weights are half the bytes of BF16, so the step is about half
    bf16 = inference.run("llama3.1-70b", "hgx-h200", 2, 1, 8192, 256, dtype="bf16")
    fp8 = inference.run("llama3.1-70b", "hgx-h200", 2, 1, 8192, 256, dtype="fp8")
    m = models.model("llama3.1-70b")
    weights_s = m.params_total / 2 / (4800e9 * inference.hbm_read_efficiency("h200-sxm"))
    fixed_s = m.layers * efficiency.constants().decode_layer_overhead_s
    assert fp8.decode_compute_s == pytest.approx(weights_s + fixed_s, rel=0.05)
    assert fp8.decode_compute_s - fixed_s == pytest.approx((bf16.decode_compute_s - fixed_s) / 2, rel=0.05)


def test_inference_sees_calibration_what_ifs():
    base = inference.run("llama3.1-70b", "hgx-h200", 2, 1, 8192, 256).decode_comm_s
    slow = inference.run("llama3.1-70b", "hgx-h200", 2, 1, 8192, 256, cal=b.scaled_network(latency=2.0))
    assert slow.decode_comm_s > 1.5 * base
    assert inference.run("llama3.1-70b", "hgx-h200", 2, 1, 8192, 256).decode_comm_s == base


def test_pipeline_boundaries_between_nodes_use_the_network():
    # 16 stages of one GPU on two 8-GPU nodes: one stage boundary crosses 100 GbE and paces every transfer
    r = training.step("llama3.1-8b", "pcie-a100-8", 16, 1, 16, 256, 1)
    transfers = 2 * (r.microbatches + 16 - 1)
    nbytes = 2048 * models.model("llama3.1-8b").hidden * 2
    over_net = collectives.time_us("sendrecv", "pcie-a100-8", 2, nbytes, nodes=2) * 1e-6
    assert r.exposed_comm_s.pp == pytest.approx(transfers * over_net, rel=1e-6)


# ----------------------------------------------------------------------------- figures


@pytest.mark.parametrize("draw, data, count", [
    (ch03fig.plot_training_breakdown, b.training_breakdown, len(b.PARTS)),
    (ch03fig.plot_decode_breakdown, b.decode_breakdown, 4),  # memory-bound: no "compute beyond the reads" bars
])
def test_stacked_bar_plots_draw_one_container_per_part(draw, data, count):
    fig, ax = plotting.figure("t", "x (unit)", "y (unit)", source="test")
    draw(ax, data())
    assert len(ax.containers) == count
    plt.close(fig)


def test_line_plots_draw_their_series():
    fig, axes = plotting.figure("t", "GPUs", "efficiency (%)", source="test", ncols=3)
    ch03fig.plot_scaling(axes, b.scaling())
    assert [len(ax.lines) for ax in axes] == [len(b.SCALING_SETUPS) + 1, len(b.SCALING_SETUPS),
                                              len(b.SCALING_SETUPS) + 1]  # + the node boundary
    plt.close(fig)
    fig, ax = plotting.figure("t", "batch", "ratio", source="test")
    ch03fig.plot_switch_benefit(ax, b.compare_fixed_batch())
    ch03fig.plot_throughput_vs_rate(ax)
    assert len(ax.lines) == 3 + 6
    plt.close(fig)
