"""Training in TF32 and FP32: sourced rates, the GEMMs' rate, 32-bit memory and traffic, refusals."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.hardware import catalog

JOB = dict(global_batch=64, micro_batch=1, seq=2048)


def _step(model_id, system_id, gpus, tp, pp, dtype, **options):
    return training.step(model_id, system_id, gpus, tp, pp, dtype=dtype, **JOB, **options)


def test_the_catalogue_holds_the_datasheets_tf32_and_fp32_rates():
    # NVIDIA A100 datasheet (nvidia.com/en-us/data-center/a100): FP32 19.5 TFLOPS, TF32 Tensor Core 156 TFLOPS
    # (312 with sparsity), BF16 312; H100 SXM (nvidia.com/en-us/data-center/h100): FP32 67, TF32 989 with
    # sparsity; L40S: FP32 91.6, TF32 366 with sparsity
    a100, h100, l40s = (catalog.gpu(g) for g in ("a100-sxm4-80gb", "h100-sxm", "l40s"))
    assert (a100.tf32_dense_TFLOPS, a100.fp32_TFLOPS) == (156, 19.5)
    assert a100.tf32_dense_TFLOPS == a100.bf16_dense_TFLOPS / 2
    assert (h100.tf32_dense_TFLOPS, h100.fp32_TFLOPS) == (494.7, 67)
    assert (l40s.tf32_dense_TFLOPS, l40s.fp32_TFLOPS) == (183, 91.6)
    # every TF32 rate sits between the FP32 and the BF16 rates of its GPU
    for gpu in catalog.gpus().values():
        if gpu.tf32_dense_TFLOPS:
            assert gpu.fp32_TFLOPS <= gpu.tf32_dense_TFLOPS < (gpu.bf16_dense_TFLOPS or gpu.fp16_dense_TFLOPS)


def test_pytorchs_default_fp32_matmul_runs_an_a100_at_its_cuda_core_rate():
    """PyTorch leaves TF32 off for matrix multiplies by default (since 1.12): an FP32 run of the same job computes
    at 19.5 TFLOPS where TF32 computes at 156, 8x the rate. Its CUDA-core GEMMs reach their ceiling whichever
    stack calls them, while the stack's share (Megatron's 0.76) holds back the TF32 run's tensor-core GEMMs, so the
    FP32 step's compute is 8 x 0.76, about 6x, longer, less what the memory traffic both share takes (5.6x)."""
    from multigpu.compute import efficiency

    tf32, fp32 = (_step("llama3.1-8b", "dgx-a100", 8, 1, 1, d) for d in ("tf32", "fp32"))
    share = efficiency.stack_kernels("megatron", "megatron").share
    assert fp32.compute_s / tf32.compute_s == pytest.approx(156 / 19.5 * share, rel=0.10)
    assert fp32.compute_s > 5 * tf32.compute_s


def test_32_bit_training_holds_and_sends_twice_the_bytes():
    bf16, tf32 = (_step("llama3.1-8b", "dgx-a100", 8, 2, 1, d) for d in ("bf16", "tf32"))
    model = models.model("llama3.1-8b")
    # weights 4 bytes, no separate FP32 master copy: 4 + 4 (FP32 gradients) + 8 (Adam) per parameter
    states = models.model_state_bytes_per_gpu(model.params_total, dtype="tf32", grad_dtype="fp32")
    per_param = sum(states.values()) / model.params_total
    assert per_param == 16
    assert tf32.memory_per_gpu_GB > bf16.memory_per_gpu_GB
    # tensor-parallel all-reduces carry FP32 activations: twice the bytes of BF16 (latency aside)
    assert tf32.exposed_comm_s.tp > 1.5 * bf16.exposed_comm_s.tp > 0
    assert training._wire_bytes("tf32") == 2 * training._wire_bytes("bf16")


@settings(max_examples=15, deadline=None)
@given(system=st.sampled_from(["dgx-a100", "hgx-h100", "dgx-b200"]), tp=st.sampled_from([1, 2, 4, 8]))
def test_tf32_is_never_faster_than_bf16_nor_fp32_than_tf32(system, tp):
    steps = {d: _step("llama3.1-8b", system, 8, tp, 1, d).step_time_s for d in ("bf16", "tf32", "fp32")}
    assert steps["bf16"] <= steps["tf32"] <= steps["fp32"]


def test_a_gpu_without_a_published_rate_is_refused_in_one_line():
    with pytest.raises(InputError, match="no published dense tf32 rate"):
        _step("llama3.1-8b", "dgx-1-v100", 8, 1, 1, "tf32")
    with pytest.raises(InputError, match="unknown training precision 'fp64'"):
        _step("llama3.1-8b", "dgx-a100", 8, 1, 1, "fp64")
    out = subprocess.run([sys.executable, "-m", "multigpu", "train", "--model", "llama3.1-8b", "--system", "hgx-h20",
                          "--gpus", "8", "--global-batch", "64", "--tp", "1", "--pp", "1", "--micro-batch", "1",
                          "--dtype", "tf32"], capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "tf32" in out.stderr


def test_cli_train_takes_tf32_and_names_it():
    out = subprocess.run([sys.executable, "-m", "multigpu", "train", "--model", "llama3.1-8b", "--system", "dgx-a100",
                          "--gpus", "8", "--global-batch", "64", "--tp", "1", "--pp", "1", "--micro-batch", "1",
                          "--dtype", "tf32", "--format", "json"], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["dtype"] == "tf32" and data["step_time_s"] > 0


def test_adams_step_under_fp32_weights_has_no_master_copy():
    """Mixed precision keeps an FP32 master copy (Micikevicius et al. 2018): 12 bytes of state and 38 moved per
    parameter, the copy into the 16-bit weights included; FP32 weights are their own master, 8 and 32; BF16
    moments (DeepSeek-V3) 8 and 30."""
    assert (models.optimizer_bytes_per_param("bf16"), training.adam_step_bytes("bf16")) == (12.0, 38.0)
    assert (models.optimizer_bytes_per_param("fp32"), training.adam_step_bytes("fp32")) == (8.0, 32.0)
    assert (models.optimizer_bytes_per_param("bf16", "bf16"), training.adam_step_bytes("bf16", "bf16")) == (8.0, 30.0)
    gpu = catalog.gpu("h100-sxm")
    # the same parameters and no gradient buffer: their optimizer step takes 32/38 as long with FP32 weights
    fp32 = training._optimizer_s(8.0 * 1e9, 0.0, gpu, "fp32")
    bf16 = training._optimizer_s(12.0 * 1e9, 0.0, gpu, "bf16")
    assert float(fp32 / bf16) == pytest.approx(32 / 38)
