"""The compute-efficiency constants and the materialised attention scores' memory traffic
(multigpu.evidence.computefit, multigpu.compute.models.score_traffic_bytes)."""

from __future__ import annotations

import numpy as np
import pytest

from multigpu.compute import efficiency, models, training
from multigpu.comm.calibration import DETERMINED
from multigpu.evidence import computefit, fitquality, trainingruns


def test_the_line_is_the_measured_gemm_ceiling_and_the_fitted_traffic():
    """eta_max is the A100's best measured matmul over its peak (271.2 of 312 TFLOP/s, data/gemm_throughput.csv),
    not a fit; k and the share of it that sequence parallelism splits are fitted on Korthikanti et al.'s Table 4
    layer timings, and the shipped values agree with the refit by multigpu.evidence.fitquality's rule, with the
    standard error and status the file records."""
    shipped, rows = efficiency.constants(), efficiency.rows()
    fitted = computefit.fit_result()
    assert shipped.gemm_efficiency_max == pytest.approx(271.2 / 312, rel=1e-3)
    assert fitted["gemm_efficiency_max"].value == pytest.approx(shipped.gemm_efficiency_max, rel=1e-3)
    bounds = {"traffic_per_hidden": computefit.TRAFFIC_BOUNDS, "sp_traffic_share": computefit.SP_SHARE_BOUNDS}
    for name, limits in bounds.items():
        estimate = fitted[name]
        assert rows[name].fit_status == estimate.status, name
        assert rows[name].std_error == pytest.approx(estimate.std_error, rel=0.05), name
        assert fitquality.agrees(getattr(shipped, name), estimate, limits), name
    assert fitted["traffic_per_hidden"].status == DETERMINED


def test_sequence_parallelism_shortens_the_22b_layer_as_table_4_measures():
    """[K22] Table 4: sequence parallelism takes a layer of the 22B model (TP 8) from 19.6 to 19.0 ms without
    recomputation and from 20.9 to 20.3 ms with selective recomputation; the model's layer is shorter by as much,
    within a third of a millisecond, and by its norms' and residuals' share of the non-GEMM traffic alone (the
    same bytes cross the wire with and without)."""
    errors = computefit.layer_errors().set_index("id")
    for base, sp in (("baseline", "sp"), ("selective", "selective-sp")):
        gain = errors.loc[f"L-k22-22b-{base}", "model_ms"] - errors.loc[f"L-k22-22b-{sp}", "model_ms"]
        assert gain == pytest.approx(0.6, abs=0.3), base
    with efficiency.trying(sp_traffic_share=0.0):
        errors = computefit.layer_errors().set_index("id")
    assert errors.loc["L-k22-22b-sp", "model_ms"] >= errors.loc["L-k22-22b-baseline", "model_ms"] - 0.05


def test_table_5_is_in_no_fit():
    """The step times of Korthikanti et al.'s Table 5 are out of sample: the line rests on Table 4 and a GEMM
    microbenchmark, and no training run of the paper is among the rows a stack is fitted on."""
    assert not trainingruns.training_validation()["fitted"].any()
    assert {row.id for row in computefit.layer_timings()} == {f"L-k22-22b-{name}" for name in (
        "baseline", "sp", "full", "selective", "selective-sp")}
    for (_, _), row in efficiency.stack_rows().items():
        assert "Korthikanti" not in (row.fitted_on or "") and "k22" not in (row.fitted_on or "").lower()


def _stack_loss(stack: str, kernels: efficiency.StackKernels) -> float:
    ids = computefit.stack_runs(stack, "fit")
    with efficiency.trying(stacks={stack: kernels}):
        frame = computefit.compared("fit")
    errors = np.log1p(frame.loc[frame["id"].isin(ids), "rel_error"].to_numpy()) / computefit.LOSS_SCALE
    return float(np.sum(2 * (np.sqrt(1 + errors**2) - 1)))  # scipy's soft_l1, up to the scale factor


def test_each_stack_reaches_its_fits_loss_and_agrees_where_determined():
    """Each stack's shipped constants reach the soft-L1 loss of a refit on its fit-split runs (within the file's
    4-digit rounding: 1 %), and each constant the runs determine is within one standard error of the refit, or at
    the same bound."""
    fits = computefit.stack_fits()
    assert set(fits) == {stack for stack, _ in efficiency.stack_rows()}
    assert set(fits) == {"megatron", "nemo", "pytorch-ddp", "pytorch-fsdp", "maxtext"}
    rows = efficiency.stack_rows()
    for stack, fit in fits.items():
        shipped = efficiency.stack_kernels(stack, stack)
        assert _stack_loss(stack, shipped) == pytest.approx(_stack_loss(stack, fit.kernels), rel=0.01), stack
        bounds = {"share": computefit.SHARE_BOUNDS, "traffic_per_hidden": computefit.TRAFFIC_BOUNDS}
        for name, estimate in fit.constants.items():
            row = rows[(stack, name)]
            assert row.fit_status == estimate.status and row.fit_runs == len(fit.fit_runs), (stack, name)
            assert fitquality.agrees(getattr(shipped, name), estimate, bounds[name]), (stack, name)


def test_a_stack_with_too_few_runs_takes_the_default_stacks_kernels():
    # nanotron has no published runs in data/training_runs.csv: no constants of its own
    assert computefit.fit_stack("nanotron") is None
    assert efficiency.stack_kernels("nanotron", "megatron") == efficiency.stack_kernels("megatron", "megatron")


def test_bert_fine_tuning_fits_its_own_stack_and_no_other():
    """DeepLearningExamples' BERT under PyTorch DDP (Lambda's runs, the PCIe side's training runs) is a stack of its
    own: its fit-split runs fit ``pytorch-ddp`` and are not among the decoder stacks' rows."""
    ddp = computefit.stack_runs("pytorch-ddp", "fit")
    assert len(ddp) >= 10 and all(i.startswith("T-lambda") for i in ddp)
    for stack in ("megatron", "nemo"):
        assert not any(i.startswith("T-lambda") for i in computefit.stack_runs(stack, "fit"))


def test_eager_pytorch_runs_bert_slower_than_megatron_s_kernels():
    """Eager PyTorch with apex AMP (a kernel per operation, the loss read back every step) runs a BERT-Large step
    well below Megatron-LM's kernels: Lambda's runs are 27-44 % slower than the megatron stack predicts them
    (2026-12-05, tests/test_out_of_sample_runs.py), and the stack fitted on them says so."""
    args = ("bert-large", "dgx-a100", 8, 1, 1, 256, 32)
    ddp = training.step(*args, seq=384, attention="materialised", zero_stage=0, stack="pytorch-ddp")
    megatron = training.step(*args, seq=384, attention="materialised", zero_stage=0, stack="megatron")
    assert 1.2 <= ddp.step_time_s / megatron.step_time_s <= 1.8


def test_no_stack_beats_the_best_measured_matmul():
    assert all(row.value <= computefit.SHARE_BOUNDS[1] for (_, name), row in efficiency.stack_rows().items()
               if name == "share")


def test_fused_kernels_move_less_non_gemm_traffic():
    """NeMo's recipes (Transformer Engine's fused norms and activations) move less non-GEMM memory traffic per
    FLOP than Megatron-LM as it ran in 2021-2022, whose layers set the reference."""
    nemo, megatron = (efficiency.stack_kernels(s, s) for s in ("nemo", "megatron"))
    assert nemo.traffic_per_hidden < megatron.traffic_per_hidden <= 1.2 * efficiency.constants().traffic_per_hidden


def test_without_the_score_traffic_the_fit_puts_it_into_k(monkeypatch):
    # without the materialised attention scores' memory traffic, the layer timings need more non-GEMM traffic
    shipped = efficiency.constants().traffic_per_hidden
    monkeypatch.setattr(models, "score_traffic_bytes", lambda *args, **kwargs: 0.0)
    assert computefit.fit_traffic()[0].value > 1.2 * shipped


def test_score_traffic_of_the_22b_layer():
    # [K22] 22B: 64 heads, TP 8, micro-batch 4, seq 2048, attention dropout; selective recompute runs the
    # score forward twice: 8 heads x 4 x 2048^2 elements x (13 + 13 + 19) bytes
    got = models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "materialised")
    assert got == pytest.approx(8 * 4 * 2048**2 * 45)
    assert models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "none", "materialised") == pytest.approx(
        8 * 4 * 2048**2 * 32)
    assert models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "flash") == 0
    no_dropout = models.score_traffic_bytes("llama3.1-8b", 1, 4096, 1, "none", "materialised")
    assert no_dropout == pytest.approx(32 * 4096**2 * (8 + 14))


def test_fp32_scores_move_twice_the_bytes_but_the_same_dropout_mask():
    # A materialised score matrix holds FP32 values under TF32 and FP32 training (4 bytes, not 2); dropout's mask
    # stays one byte. [K22] 22B, selective recompute: forward twice, backward once, 6 + 6 + 9 value accesses and
    # three masks: at 16 bits 45 B an element (the test above), at 32 bits 21 x 4 + 3 = 87 B.
    fp32 = models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "materialised", dtype="fp32")
    assert fp32 == pytest.approx(8 * 4 * 2048**2 * 87)
    assert models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "materialised", dtype="tf32") == fp32
    for dtype in ("bf16", "fp16", "fp8"):  # FP8 training computes its attention in BF16
        assert models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "materialised",
                                          dtype=dtype) == pytest.approx(8 * 4 * 2048**2 * 45)
    # without dropout there is no mask: exactly twice the 16-bit bytes
    assert models.score_traffic_bytes("llama3.1-8b", 1, 4096, 1, "none", "materialised", dtype="fp32") == \
        pytest.approx(2 * models.score_traffic_bytes("llama3.1-8b", 1, 4096, 1, "none", "materialised"))


def test_a_tf32_step_pays_its_wider_scores_at_the_memory_bandwidth():
    args = ("bert-large", "dgx-a100", 1, 1, 1, 32, 32)  # one GPU, one micro-batch of 32 sequences
    kwargs = dict(seq=384, dtype="tf32")
    flash = training.step(*args, **kwargs)
    scores = training.step(*args, attention="materialised", **kwargs)
    per_layer = models.score_traffic_bytes("bert-large", 32, 384, 1, "none", "materialised", dtype="tf32")
    assert scores.step_time_s - flash.step_time_s == pytest.approx(24 * per_layer / 2.039e12, rel=1e-6)


def test_score_traffic_grows_with_the_square_of_the_sequence_and_splits_over_tp_and_cp():
    base = models.score_traffic_bytes("gpt3-175b", 1, 2048, 8, "none", "materialised")
    assert models.score_traffic_bytes("gpt3-175b", 1, 4096, 8, "none", "materialised") == pytest.approx(4 * base)
    assert models.score_traffic_bytes("gpt3-175b", 1, 2048, 4, "none", "materialised") == pytest.approx(2 * base)
    assert models.score_traffic_bytes("gpt3-175b", 1, 4096, 8, "none", "materialised", cp=2) == pytest.approx(
        2 * base)


def test_materialised_scores_cost_their_memory_time_in_the_step():
    args = ("megatron-22b", "dgx-a100", 8, 8, 1, 4, 4)
    flash = training.step(*args, recompute="selective", sequence_parallel=True)
    scores = training.step(*args, recompute="selective", sequence_parallel=True, attention="materialised")
    per_layer = models.score_traffic_bytes("megatron-22b", 4, 2048, 8, "selective", "materialised")
    expected = 48 * per_layer / 2.039e12  # one micro-batch of 48 layers at the A100 80GB's 2039 GB/s
    assert scores.step_time_s - flash.step_time_s == pytest.approx(expected, rel=1e-6)
