"""Training step model: literature values, properties, and the CLI contract."""

import json
import subprocess
import sys

import pytest

from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.compute.layout import Layout

GPT3 = dict(model_id="gpt3-175b", system_id="dgx-a100", gpus=1024, tp=8, pp=16, global_batch=1536, micro_batch=1)


def test_gpt3_175b_on_1024_a100_matches_megatron():
    # Megatron-LM README, "GPT-3 Example": 1024 A100, TP 8, PP 16, global batch 1536, seq 2048,
    # 138 TFLOP/s per GPU counted with full recomputation (Narayanan et al. SC21 eq. 3) -> about 32 s/iteration.
    result = training.step(**GPT3, recompute="full")
    flops = models.megatron_flops_per_iteration("gpt3-175b", 1536, 2048, full_recompute=True)
    measured_s = flops / (138e12 * 1024)
    assert result.step_time_s == pytest.approx(measured_s, rel=0.15)


def test_step_is_the_sum_of_its_parts():
    r = training.step(**GPT3, recompute="full")
    parts = r.compute_s + r.bubble_s + r.optimizer_s + r.exposed_comm_s.total
    # the optimizer step: Adam's 38 bytes per parameter it updates, and its FP32 gradient buffer (4 bytes per
    # parameter it holds) zeroed, at the 1.70 TB/s of a STREAM triad on the A100 80GB (Azure's ND A100 v4,
    # data/hbm_bandwidth.csv); each GPU holds about 1/(8 x 16) of the parameters (tensor, pipeline) and
    # updates 1/8 of those (ZeRO 1 over the 8 replicas)
    held = models.model("gpt3-175b").params_total / (8 * 16)
    assert r.optimizer_s == pytest.approx((38 * held / 8 + 4 * held) / 1.70e12, rel=0.15)
    assert r.step_time_s == pytest.approx(parts, rel=1e-9)
    assert 0 < r.mfu < r.compute_fraction_of_peak < 1


def test_bubble_vanishes_as_microbatches_grow():
    shares = []
    for batch in (128, 512, 2048, 16384):
        r = training.step("gpt3-175b", "dgx-a100", 1024, 8, 16, batch, 1)
        shares.append(r.bubble_s / r.step_time_s)
    assert shares == sorted(shares, reverse=True)
    assert shares[-1] < 0.01


def test_interleaving_shrinks_the_bubble():
    plain = training.step(**GPT3)
    interleaved = training.step(**GPT3, interleave=2)
    assert interleaved.bubble_s == pytest.approx(plain.bubble_s / 2, rel=0.05)


def test_more_gpus_never_raise_compute_time_per_step():
    times = [training.step("llama3.1-8b", "hgx-h100", n, 1, 1, 512, 1).compute_s for n in (8, 16, 32, 64)]
    assert all(a >= b for a, b in zip(times, times[1:]))


def test_faster_interconnect_is_never_slower():
    # same H100 compute behind a switch (hgx-h100) vs behind the capped NVLink of the H800 (same GPU die)
    fast = training.step("llama3.1-70b", "hgx-h100", 8, 8, 1, 64, 1)
    slow = training.step("llama3.1-70b", "hgx-h800", 8, 8, 1, 64, 1)
    assert fast.exposed_comm_s.tp < slow.exposed_comm_s.tp
    assert fast.step_time_s < slow.step_time_s


def test_tp_over_pcie_costs_more_than_over_nvlink():
    nvlink = training.step("llama3.1-8b", "dgx-a100", 8, 8, 1, 64, 1)
    pcie = training.step("llama3.1-8b", "pcie-a100-8", 8, 8, 1, 64, 1)
    assert pcie.exposed_comm_s.tp > 3 * nvlink.exposed_comm_s.tp


def test_memory_and_fit():
    small = training.step("llama3.1-70b", "hgx-h100", 8, 1, 1, 8, 1)
    assert not small.fits  # 70B x 18 bytes of weights and optimizer state does not fit one 80 GB GPU
    assert training.step(**GPT3).fits


def test_bf16_gradients_halve_the_gradient_buffer_and_the_reduction_bytes():
    """grad_reduce_in_fp32 = False (NVIDIA's performance recipes): the gradient buffer holds 2 bytes per parameter
    instead of 4, so memory falls by 2 bytes x the stage's parameters (ZeRO 1 keeps the buffer whole), and the
    data-parallel reduce-scatter carries half the bytes, so it is never slower. FP32 stays the default."""
    # Google Cloud's A3 High (GPUDirect-TCPX): a network slow enough that the reduction shows past the backward pass
    layout = dict(model_id="llama3.1-70b", system_id="hgx-h100-a3high", gpus=64, tp=4, pp=4, global_batch=64,
                  micro_batch=1, seq=4096)
    fp32, bf16 = training.step(**layout), training.step(**layout, grad_dtype="bf16")
    assert fp32 == training.step(**layout, grad_dtype="fp32")
    per_gpu_params = models.model("llama3.1-70b").params_total / (4 * 4)
    assert fp32.memory_per_gpu_GB - bf16.memory_per_gpu_GB == pytest.approx(2 * per_gpu_params / 1e9, rel=0.05)
    assert 0 < bf16.exposed_comm_s.dp <= fp32.exposed_comm_s.dp
    assert bf16.step_time_s <= fp32.step_time_s
    with pytest.raises(InputError, match="gradient precision 'fp8'"):
        training.step(**layout, grad_dtype="fp8")


@pytest.mark.parametrize("kwargs, message", [
    (dict(gpus=1000), "not divisible"),
    (dict(tp=7, gpus=7 * 16 * 8), "heads"),
    (dict(pp=128, gpus=8 * 128 * 1, global_batch=1536), "layers"),  # more stages than layers (uneven is fine)
    (dict(global_batch=1540), "global batch"),
])
def test_layouts_that_do_not_divide_are_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        training.step(**{**GPT3, **kwargs})


def test_cli_train_json_and_exit_2():
    base = [sys.executable, "-m", "multigpu", "train", "--model", "gpt3-175b", "--system", "dgx-a100",
            "--tp", "8", "--pp", "16", "--global-batch", "1536", "--micro-batch", "1"]
    ok = subprocess.run(base + ["--gpus", "1024", "--format", "json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    row = json.loads(ok.stdout)
    for key in ("step_time_s", "model_tflops_per_gpu", "mfu", "bubble_s", "exposed_comm_s", "memory_per_gpu_GB",
                "fits"):
        assert key in row
    assert set(row["exposed_comm_s"]) == {"tp", "pp", "dp", "ep", "cp"}
    bad = subprocess.run(base + ["--gpus", "1000"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and bad.stdout == ""


def test_fp8_speedup_is_below_its_peak_ratio_and_grows_with_the_hidden_size():
    """FP8 training doubles the GEMM peak but not the memory traffic: Transformer Engine keeps activations, norms
    and residuals in BF16 and casts each GEMM operand on the way in. So FP8's compute speedup over BF16 stays below
    the ratio of the two measured matmul rates (peak x ceiling), and is smallest where traffic weighs most: a
    small hidden size (MPT 3B's 2560 against Llama 3.1 405B's 16384, both on one GPU)."""
    from multigpu.compute import gemm
    from multigpu.hardware import catalog

    gpu = catalog.gpu("h100-sxm")
    peak_ratio = (training.peak_flops(gpu, "fp8") * gemm.relative_ceiling(gpu.id, "fp8")
                  / (training.peak_flops(gpu, "bf16") * gemm.relative_ceiling(gpu.id, "bf16")))

    def speedup(model_id: str) -> float:
        model = models.model(model_id)
        lay = {dtype: Layout(tp=1, pp=1, dp=8, micro_batch=4, global_batch=32, seq=2048, dtype=dtype).batched()
               for dtype in ("bf16", "fp8")}
        rate = {d: training.peak_flops(gpu, d) * training._fraction(model, gpu, lay[d], d)[0] for d in lay}
        return float(rate["fp8"] / rate["bf16"])

    small, large = speedup("mpt-3b"), speedup("llama3.1-405b")
    assert 1.0 < small < large < peak_ratio
