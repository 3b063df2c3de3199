"""Published training and serving runs the model was never fitted on: the error the validation appendix reports
first, held under bounds so that a change cannot lose accuracy quietly (data/training_runs.csv,
data/serving_runs.csv; sealed rows only in the last test, which records what their one opening found)."""

from __future__ import annotations

import pytest

from multigpu.evidence import decodefit, runs, serving


#: The runs this file's first bounds were set on, before the PCIe side's runs arrived (issue 43) and before
#: llm-foundry's whole tables (issue 46): those runs are Lambda's BERT fine-tuning and llm-foundry's ``T-foundry``
#: rows (training) and TensorRT-LLM's release pages (serving), bounded apart below.
def _earlier(frame, kind_column: str | None = None):
    """The rows compared when these bounds were set: not the later-collected Lambda and Foundry runs, TensorRT-LLM's
    release pages, nor MLPerf's Offline runs (compared at their dataset's mean lengths since 2026-12-07; scored
    apart in tests/test_pcieside.py and the validation appendix)."""
    later = frame["id"].str.startswith(("T-lambda", "T-foundry"))
    if kind_column:
        later |= frame[kind_column].isin(("trtllm-perf", "mlperf"))
    return frame[~later]


@pytest.fixture(scope="module")
def all_training():
    return runs.compare()


@pytest.fixture(scope="module")
def training(all_training):
    return _earlier(all_training)


def test_held_out_training_runs(training):
    """26 held-out runs on A100, H100, H200, B200 and GB200, in FP16, BF16 and FP8 (context parallelism, Llama 3.1
    405B's uneven pipeline stages, PyTorch FSDP, MaxText, Nemotron-4 340B and Mixtral's expert parallelism among
    them): median 6.7 % of the step time, 90th percentile 13.8 %, worst 23.0 % (llm-foundry's MPT 3B in FP8 on
    H100, 512-token sequences, predicted too slow); signed median +0.1 %. With the FSDP stack fitted on 31 runs of
    llm-foundry's whole tables (2026-12-07); before, on three runs: median 6.6 %, worst 25.4 %, signed +4.2 %
    (24 runs, without Nemotron-4 340B's two).

    Since llm-foundry's and torchtitan's FSDP runs fit a ``pytorch-fsdp`` stack of their own (2026-12-07), the
    five llm-foundry runs held out went from 13.2 % at the median, under Megatron-LM's kernels, to 5.6 %; before
    that the median over 21 runs was 7.4 %, the 90th percentile 16.5 %, the worst 20.6 %, the signed median
    +0.4 %.

    Each training stack's share of the GEMM ceiling and its non-GEMM traffic are fitted on its fit-split runs
    (multigpu.evidence.computefit): NeMo's recipes move far less traffic per FLOP than Megatron-LM's kernels,
    though their runs pin down only a combination of the two constants. Before,
    one line fitted on Korthikanti et al.'s runs served every stack: median 9.3 %, signed -5 %. Issue 46's goals
    are median 7 % and below, 90th percentile 20 % and below, signed median within 4 %; the bounds hold what the
    model does now."""
    held = training[training["split"] == "holdout"]
    assert len(held) >= 20
    assert {"A100", "H100", "H200", "B200", "GB200"} <= set(held["gpu_family"])
    assert {"bf16", "fp8"} <= set(held["dtype"])
    error = held["rel_error"].abs()
    assert error.median() <= 0.07 and error.quantile(0.9) <= 0.20 and error.max() <= 0.26
    assert abs(held["rel_error"].median()) <= 0.045


def test_no_sealed_row_is_compared(training):
    assert "sealed" not in set(training["split"])
    assert "sealed" not in set(serving.compare()["split"])


def test_the_pcie_side_s_sealed_third_stays_closed():
    """Naming the sealed split opens only the rows opened before (2026-12-03), not the PCIe side's own third."""
    shut = {r.id for r in runs.runs() if runs.unopened(r)}
    assert len(shut) >= 15 and not shut & set(runs.compare(splits=("sealed",))["id"])
    served = {r.id for r in serving.load(serving.SPLITS, include_unopened=True) if serving.unopened(r)}
    assert len(served) >= 100 and not served & set(serving.compare(splits=("sealed",))["id"])


def test_held_out_serving_throughput():
    """Throughput per GPU on 9 held-out vendor rows in 16 bits and FP8: median 3.6 % (2026-12-07; 7.5 % on 8 rows
    when the bound was set, 11.6 % before each layer had its fixed kernel time and decode read at the measured
    read-only bandwidth), within the issue's 15 %. FP4 rows, compared since the model
    takes FP4, are a regime of their own, scored apart (tests/test_fp4_serving.py)."""
    data = _earlier(serving.compare(), "kind")
    data = data[data["dtype"] != "fp4"]
    held = data[(data["split"] == "holdout") & (data["metric"] == "throughput")]["rel_error"].abs()
    assert len(held) >= 8 and held.median() <= 0.10


def test_held_out_serving_latencies():
    """TPOT and TTFT on held-out vendor rows, fixed-concurrency rows through the closed-loop model: TPOT 11.2 %
    over 3 rows (NIM at 25 users, 2.9 %; at 200 and 250 users, 11.3 % and 11.2 % too slow: more users than fit
    memory, compared since the simulation under load queues the others, 2026-12-06; before that, 1 row at
    6.2 %, and 3.3 % before each layer had its fixed kernel time and decode read at the measured read-only
    bandwidth). TTFT 10.2 % at the median over 6 rows (TensorRT-LLM 0.5's LLaMA 7B, Llama 2 70B and
    Falcon 180B, NIM at 25 users; 7.4 % while the compute line was fitted on Korthikanti et al.'s Table 5, 13.2 %
    before the layers' fixed time), within the issue's 15 %. The worst, Llama 2 70B's 128-token prompt in FP8 on
    H100, is 25 % too fast. The bounds hold both."""
    data = _earlier(serving.compare(), "kind")
    held = data[data["split"] == "holdout"]
    tpot = held[held["metric"] == "tpot"]["rel_error"].abs()
    ttft = held[held["metric"] == "ttft"]["rel_error"].abs()
    assert len(tpot) >= 3 and tpot.median() <= 0.12
    assert len(ttft) >= 6 and ttft.median() <= 0.11


def test_sealed_rows_opened_once_stay_where_they_were_found():
    """The sealed third, compared once (2026-12-03), after the last change to the training and serving model, and
    reported apart in the validation appendix. Found then: training 18 runs, median 7.7 %, worst 68.8 %
    (DeepSeek-V3 in BF16 on 512 GB200 under NeMo 25.05; the same model and precision on 256 GB200 under
    Megatron-Bridge 25.11 processes 3.3x its tokens per GPU-second, and the model is 13 % off there); serving
    throughput 6.2 % at the median (16 rows), TTFT 10.5 % (4), TPOT 5.0 % (2); decode benchmarks 3.9 % (6).
    Since the compute line moved to the A100's matmul ceiling and Table 4's layer timings, and each training
    stack's kernels were fitted on its fit split (2026-12-05): training 4.0 %, serving throughput 9.9 %, TTFT
    14.3 %, TPOT 2.8 %; these rows are no longer a blind test. With FSDP's runs on a stack of their own and
    Megatron-LM's kernels fitted on its 2021 runs alone (2026-12-07), training 5.1 %: llm-foundry's MPT 3B in BF16
    went from -14.9 to +13.3 %, Megatron-LM's 1T run from +9.0 to +11.1 %. With the cycle's prefills packed into
    passes of the engine's max_num_tokens (2026-12-07), serving throughput 11.0 %. With Nemotron-4 340B in the
    catalogue (2026-12-07), its sealed GB200 run is compared too: training 19 runs, 5.9 %. The bounds keep a later
    change from losing that quietly; the sealed collective sweeps stay sealed. FP4 rows, compared since the model
    takes FP4 (2026-12-05), are not among those found then: tests/test_fp4_serving.py scores FP4 apart."""
    trained = runs.compare(splits=("sealed",))  # the later runs' sealed third stays sealed (runs.unopened)
    errors = trained["rel_error"].abs()
    assert len(trained) >= 19 and errors.median() <= 0.06
    assert (errors > 0.30).sum() <= 1  # the NeMo 25.05 DeepSeek-V3 run only
    served = serving.compare(splits=("sealed",))
    served = served[served["dtype"] != "fp4"]
    for metric, rows, bound in (("throughput", 16, 0.115), ("ttft", 4, 0.15), ("tpot", 2, 0.07)):
        part = served[served["metric"] == metric]["rel_error"].abs()
        assert len(part) >= rows and part.median() <= bound, metric
    decode = decodefit.compare(("sealed",))["rel_error"].abs()
    assert len(decode) >= 6 and decode.median() <= 0.05


def test_the_pcie_side_s_runs_held_out(all_training):
    """The runs of the PCIe side (issue 43), held out, with bounds at what they found; the issue's goal, 12 % on
    each side, is not met for serving. Training: 11 BERT fine-tuning runs (Lambda, PyTorch DDP, A100/H100 PCIe and
    SXM, RTX 4090). Predicted with Megatron-LM's kernels they were median 36 %, worst 51 %, every one too fast
    (2026-12-05); with the ``pytorch-ddp`` stack fitted on the 12 fit-split runs of the same source (2026-12-06),
    median 7.7 %, worst 47 % (BERT-Base on 8 H100 SXM at micro-batch 320, predicted too slow). Serving: 115
    TensorRT-LLM release rows (v0.8 to v0.17), median 26 %; the 40 rows on L40S at TP 2 to 8, median 22 %. The
    sealed third of these runs is not opened here."""
    later = all_training[all_training["id"].str.startswith("T-lambda") & (all_training["split"] == "holdout")]
    error = later["rel_error"].abs()
    assert len(later) >= 10 and error.median() <= 0.09 and error.max() <= 0.50
    assert abs(later["rel_error"].median()) <= 0.07
    data = serving.compare()
    held = data[(data["kind"] == "trtllm-perf") & (data["split"] == "holdout") & (data["metric"] == "throughput")]
    assert len(held) >= 100 and held["rel_error"].abs().median() <= 0.28
    l40s = held[(held["system_id"] == "pcie-l40s-8") & (held["tp"] >= 2)]
    assert len(l40s) >= 35 and l40s["rel_error"].abs().median() <= 0.24


def test_fsdp_runs_held_out_on_a_stack_of_their_own(training):
    """llm-foundry's and torchtitan's first six held-out runs under the ``pytorch-fsdp`` stack: median 9.4 %, the
    H100 and H200 runs 9-11 % too fast, the A100 ones within 3 %. Fitted on 31 runs of llm-foundry's whole tables
    and torchtitan (2026-12-07), the stack prices Hopper against Ampere as those tables do not: llm-foundry's
    2023 H100 runs reach 40 % of the peak where its A100 runs reach 55-60 %. Fitted on three runs before, the
    median was 3.8 %; under Megatron-LM's kernels (2026-12-06), llm-foundry's five were 13.2 %."""
    fsdp = training[(training["stack"] == "pytorch-fsdp") & (training["split"] == "holdout")]
    assert set(fsdp["framework"]) == {"MosaicML Composer / llm-foundry", "torchtitan"} and len(fsdp) >= 6
    assert fsdp["rel_error"].abs().median() <= 0.10


def test_llm_foundry_whole_tables_held_out(all_training):
    """llm-foundry's benchmark tables, every MPT 3B to 70B row up to 8,192 tokens (``T-foundry``): 28 held out,
    median 7.4 %, 90th percentile 21 %, worst 27 % (MPT 30B at 8,192 tokens on A100s, predicted too slow);
    signed +3.5 %. The A100 runs are predicted 7 % too slow at the median and the H100 runs 6 % too fast: one
    stack share cannot serve both generations of these 2023 runs."""
    held = all_training[all_training["id"].str.startswith("T-foundry") & (all_training["split"] == "holdout")]
    assert len(held) >= 25 and {"A100", "H100"} <= set(held["gpu_family"])
    error = held["rel_error"].abs()
    assert error.median() <= 0.08 and error.quantile(0.9) <= 0.23 and error.max() <= 0.30
    by_family = held.groupby("gpu_family")["rel_error"].median()
    assert abs(by_family["A100"]) <= 0.10 and abs(by_family["H100"]) <= 0.10


def test_lambda_tf32_runs_held_out(all_training):
    """Lambda's FP32 runs of its BERT fine-tuning (``-tf32-``; TF32 matmuls, FP32 scores, activations and
    gradients): 17 held out, median 8.8 %, signed -7.3 % (too fast), worst 49 % (the 8-GPU BERT-Large run on
    A100 SXM 80 GB of 2022-23, which is barely faster than the same release's 4-GPU run). Before the materialised
    scores were priced at 32 bits, the fit gave 15.3 % and -15 %."""
    held = all_training[all_training["id"].str.contains("-tf32-") & (all_training["split"] == "holdout")]
    assert len(held) >= 15 and {"A100", "H100"} <= set(held["gpu_family"])
    error = held["rel_error"]
    assert error.abs().median() <= 0.10 and abs(error.median()) <= 0.10 and error.abs().quantile(0.9) <= 0.35


def test_lambda_fp32_runs_on_cuda_cores_held_out(all_training):
    """Lambda's true-FP32 runs on V100 PCIe (no TF32: GEMMs on the CUDA cores, 14 TFLOP/s): the three held out are
    5 %, 9 % and 12 % off. Priced with the stack's share of the GEMM ceiling, fitted on tensor-core runs, they
    were 53-87 % too slow (``training.CUDA_CORE_DTYPES``)."""
    held = all_training[all_training["id"].str.contains("-fp32-") & (all_training["split"] == "holdout")]
    assert len(held) >= 3 and set(held["gpu_family"]) == {"V100"}
    assert held["rel_error"].abs().max() <= 0.15
