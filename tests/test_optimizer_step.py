"""The optimizer step and the pipeline transfers of the training model, against the published facts they rest on."""

import numpy as np
import pytest

from multigpu.comm import calibration
from multigpu.compute import memorybw, models, training
from multigpu.compute.layout import Layout
from multigpu.hardware import catalog


def test_the_optimizer_streams_at_the_measured_triad_bandwidth_not_the_datasheet():
    """Azure's ND A100 v4 measured a STREAM triad at 1.70 TB/s on an A100-SXM4-80GB (nominal 2.039 TB/s;
    Azure/AI-benchmarking-guide, ND_A100_v4_results.md): 1e9 parameters (12 GB of Adam state) and a 4 GB FP32
    gradient buffer move 38 GB + 4 GB at that rate."""
    gpu = catalog.gpu("a100-sxm4-80gb")
    assert memorybw.hbm_efficiency(gpu.id, "triad") == pytest.approx(1.70 / 2.039)
    assert float(training._optimizer_s(12e9, 4e9, gpu)) == pytest.approx(42e9 / 1.70e12)


def test_a_gpu_without_a_measurement_takes_the_median_fraction_of_those_measured():
    fractions = sorted(r["fraction"] for r in memorybw.measured_hbm_fractions() if r["kernel"] == "triad")
    measured = {r["gpu"] for r in memorybw.measured_hbm_fractions()}
    unmeasured = next(g for g in catalog.gpus() if g not in measured)
    assert memorybw.hbm_efficiency(unmeasured, "triad") == pytest.approx(float(np.median(fractions)))
    assert all(0 < f < 1 for f in fractions)


def _pp_s(overlap: bool, interleave: int) -> float:
    r = training.step("gpt3-175b", "dgx-a100", 64, 8, 8, 64, 1, interleave=interleave, overlap_p2p=overlap,
                      sequence_parallel=True, recompute="selective")
    return r.exposed_comm_s.pp


def test_blocking_transfers_of_the_interleaved_schedule_are_all_on_the_critical_path():
    """Before Megatron-LM's overlap_p2p_comm (2023), the interleaved schedule waited for each of its 2 v (m + p - 1)
    transfers; with it, only the 2 v (p - 1) of the warm-up and cool-down show (m = 64 micro-batches, p = 8)."""
    blocking, overlapped = _pp_s(False, 3), _pp_s(True, 3)
    assert blocking / overlapped == pytest.approx((64 + 8 - 1) / (8 - 1))
    # without interleaving there is nothing to overlap: the flag changes nothing
    assert _pp_s(False, 1) == pytest.approx(_pp_s(True, 1))


def test_blocking_transfers_never_make_a_step_faster():
    base = dict(sequence_parallel=True, recompute="selective", interleave=3)
    fast = training.step("gpt3-175b", "dgx-a100", 64, 8, 8, 64, 1, **base)
    slow = training.step("gpt3-175b", "dgx-a100", 64, 8, 8, 64, 1, overlap_p2p=False, **base)
    assert slow.step_time_s > fast.step_time_s


def test_a_reduction_after_the_backward_pass_hides_nothing():
    """Megatron-LM before 2023 reduced the gradients once the backward pass had ended: the whole reduction
    shows; with overlap_grad_reduce only what outlasts the last micro-batch's backward pass shows."""
    base = dict(sequence_parallel=True, recompute="selective", dp=8)
    after = training.step("gpt3-175b", "dgx-a100", 512, 8, 8, 512, 1, overlap_grad_reduce=False, **base)
    overlapped = training.step("gpt3-175b", "dgx-a100", 512, 8, 8, 512, 1, **base)
    lay = Layout(tp=8, pp=8, dp=8, global_batch=512, sequence_parallel=True, recompute="selective")
    grads, params = training._dp_parts_s(models.model("gpt3-175b"), catalog.system("dgx-a100"), lay,
                                         calibration.resolve(None))
    assert after.exposed_comm_s.dp == pytest.approx(float(grads + params))
    assert overlapped.exposed_comm_s.dp < after.exposed_comm_s.dp
