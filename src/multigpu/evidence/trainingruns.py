"""Published training runs against the model, for chapter 3 and the validation appendix: Korthikanti et al.'s A100
runs (:data:`K22_RUNS`, Table 5, and the 530B run with data parallelism: in no fit, their layers' efficiency
measured by the same paper's Table 4, :mod:`multigpu.evidence.computefit`), GPT-3 175B's measured throughput and time to train (``data/measurements.csv``), and each beside the
training model's step time.
"""

from __future__ import annotations


import pandas as pd

from multigpu.comm.calibration import Calibration
from multigpu.compute import models, training
from multigpu.evidence import measurements


#: The attention kernel of the 2021-2022 Megatron-LM runs (Narayanan et al., Korthikanti et al.): the score
#: matrix materialised (fused softmax), before FlashAttention.
K22_ATTENTION = "materialised"
#: The sequence length (tokens) of these runs and of GPT-3 175B's (Brown et al. 2020; Narayanan et al. 2021).
RUN_SEQ = 2048
#: Korthikanti et al. 2022 (arXiv:2205.05198), Table 3 layouts and Table 5 iteration times on A100 80GB
#: (Selene, DGX A100 nodes, sequence 2048): "present work" = sequence parallelism + selective recomputation,
#: "full recompute" = tensor parallelism with full activation recomputation. Section 6.3 adds the 530B
#: model with 8-way data parallelism on 2240 GPUs (39.15 s). No fit sees these step times.
K22_RUNS = (
    # model, gpus, tp, pp, global batch, micro-batch, interleave, selective s, full s
    ("megatron-22b", 8, 8, 1, 4, 4, 1, 1.10, 1.42),
    ("gpt3-175b", 64, 8, 8, 64, 1, 3, 13.75, 18.13),
    ("turing-530b", 280, 8, 35, 280, 1, 3, 37.83, 49.05),
    ("megatron-1t", 512, 8, 64, 512, 1, 1, 71.49, 94.42),
)


K22_530B_DP8 = ("turing-530b", 2240, 8, 35, 2240, 1, 3, 39.15)


K22_SOURCE = "Korthikanti et al. 2022"
#: How the Megatron-LM of these runs (2021-2022, its own DDP) ran, as keyword arguments of
#: :func:`multigpu.compute.training.step`: each stage-to-stage transfer to completion before going on, the gradients
#: reduced after the backward pass, the optimizer not sharded (ZeRO 0). Megatron-LM added the overlap of the
#: interleaved schedule's transfers (``overlap_p2p_comm``) on 2023-05-31, of the gradient reduction
#: (``overlap_grad_reduce``) on 2023-08-16; its distributed optimizer came in 2022, opt-in.
MEGATRON_BEFORE_2023 = {"overlap_p2p": False, "overlap_grad_reduce": False, "zero_stage": 0}
# These runs' layers run at the reference line itself (``reference_kernels``): it is fitted on their own layers
# (Table 4, ``data/layer_timings.csv``), timed in the same software on the same GPUs.


#: Metrics of data/measurements.csv rows that come from training runs.
TRAINING_METRICS = ("TFLOP/s per GPU", "time-to-train")


def _row75(cal: Calibration | None = None) -> dict:
    """Measurement 75 (Megatron-LM README): GPT-3 175B on 1024 A100, TP 8, PP 16, global batch 1536,
    138 TFLOP/s per GPU counted with full recomputation (Narayanan et al. SC21 eq. 3)."""
    flops = models.megatron_flops_per_iteration("gpt3-175b", 1536, RUN_SEQ, full_recompute=True)
    r = training.step("gpt3-175b", "dgx-a100", 1024, 8, 16, 1536, 1, recompute="full", seq=RUN_SEQ, cal=cal,
                      attention=K22_ATTENTION, **MEGATRON_BEFORE_2023)
    return {"measured_s": flops / (138e12 * 1024), "model_s": r.step_time_s,
            "model_tflops_per_gpu": flops / r.step_time_s / 1024 / 1e12}


def training_measurements() -> pd.DataFrame:
    """Every training-run row of ``data/measurements.csv``, with whether the model can be set beside it.

    Columns: ``id``, ``benchmark``, ``gpus``, ``value``, ``unit``,
    ``comparable`` and ``why`` (what the comparison rests on, or what is missing).
    """
    frame = measurements.measurements()
    frame = frame[frame["collective_or_metric"].isin(TRAINING_METRICS)]
    rows = []
    for _, row in frame.iterrows():
        if row["collective_or_metric"] == "TFLOP/s per GPU":
            why = ("layout, batch and sequence given; 138 TFLOP/s counts hardware FLOPs with full recomputation "
                   "(SC21 eq. 3), so the model runs with full recomputation and is compared in iteration time")
            comparable = True
        else:
            why = ("time-to-train to a quality target: the tokens processed (set by convergence), the numeric "
                   "precision and the layout are not in the file")
            comparable = False
        rows.append({"id": int(row["id"]), "benchmark": row["benchmark"], "gpus": row["gpus"],
                     "value": row["value"], "unit": row["unit"], "comparable": comparable, "why": why})
    return pd.DataFrame(rows)


def published_runs(cal: Calibration | None = None) -> list[dict]:
    """The runs of :func:`training_validation`: measurement 75 and Korthikanti et al.'s runs, as keyword
    arguments of :func:`multigpu.compute.training.step` plus ``run``, ``source``, ``fitted`` and ``measured_s``."""
    runs = [dict(run="GPT-3 175B, full recompute (row 75)", source="measurements.csv row 75",
                 fitted=False, measured_s=_row75(cal=cal)["measured_s"], model_id="gpt3-175b", gpus=1024, tp=8, pp=16,
                 global_batch=1536, micro_batch=1, recompute="full", interleave=1, sequence_parallel=False)]
    for model_id, gpus, tp, pp, batch, mb, v, selective, full in K22_RUNS:
        name = models.model(model_id).name
        runs.append(dict(run=f"{name}, SP + selective", source=f"{K22_SOURCE}, Table 5", fitted=False,
                         measured_s=selective, model_id=model_id, gpus=gpus, tp=tp, pp=pp, global_batch=batch,
                         micro_batch=mb, recompute="selective", interleave=v, sequence_parallel=True,
                         reference_kernels=True))
        runs.append(dict(run=f"{name}, full recompute", source=f"{K22_SOURCE}, Table 5", fitted=False,
                         measured_s=full, model_id=model_id, gpus=gpus, tp=tp, pp=pp, global_batch=batch,
                         micro_batch=mb, recompute="full", interleave=v, sequence_parallel=False,
                         reference_kernels=True))
    model_id, gpus, tp, pp, batch, mb, v, seconds = K22_530B_DP8
    runs.append(dict(run=f"{models.model(model_id).name}, SP + selective, DP 8", source=f"{K22_SOURCE}, sec. 6.3",
                     fitted=False, measured_s=seconds, model_id=model_id, gpus=gpus, tp=tp, pp=pp,
                     global_batch=batch, micro_batch=mb, recompute="selective", interleave=v,
                     sequence_parallel=True, reference_kernels=True))
    return runs


#: Calculon's error on Table 5 (Isaev et al. 2023, https://doi.org/10.1145/3581784.3607102; the tool's
#: ``llm-validation`` command, calculon-ai/calculon ``calculon/llm/validation.py``), in sample: its A100
#: efficiency tables were set with these runs in view. Mean and worst absolute error, %.
CALCULON_TABLE5_PCT = {"mean": 3.7, "worst": 8.9}


def table5_errors(cal: Calibration | None = None) -> pd.DataFrame:
    """The rows of :func:`training_validation` from Korthikanti et al.'s Table 5 (eight runs: four models, two
    recomputation settings), all out of sample."""
    frame = training_validation(cal)
    return frame[frame["source"] == f"{K22_SOURCE}, Table 5"].reset_index(drop=True)


def training_validation(cal: Calibration | None = None) -> pd.DataFrame:
    """The training model against every comparable measured run (DGX A100 nodes, HDR InfiniBand).

    Columns: ``run``, ``source``, ``gpus``, ``layout`` (TP x PP x DP), ``measured_s`` and ``model_s``
    (seconds per iteration), ``error_pct`` (model / measured - 1), ``fitted`` (the compute-efficiency
    constants were fitted on the run: in-sample).
    """
    rows = []
    for run in published_runs(cal=cal):
        r = training.step(run["model_id"], "dgx-a100", run["gpus"], run["tp"], run["pp"], run["global_batch"],
                          run["micro_batch"], recompute=run["recompute"], interleave=run["interleave"],
                          sequence_parallel=run["sequence_parallel"], seq=RUN_SEQ, cal=cal, attention=K22_ATTENTION,
                          reference_kernels=run.get("reference_kernels", False), **MEGATRON_BEFORE_2023)
        rows.append({"run": run["run"], "source": run["source"], "gpus": run["gpus"],
                     "layout": f"{r.tp} x {r.pp} x {r.dp}", "measured_s": run["measured_s"],
                     "model_s": r.step_time_s, "error_pct": 100 * (r.step_time_s / run["measured_s"] - 1),
                     "fitted": run["fitted"]})
    return pd.DataFrame(rows)
