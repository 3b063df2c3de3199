"""Fitting the compute-efficiency constants (``data/compute_efficiency.csv``) on Korthikanti et al. 2022.

:func:`multigpu.compute.efficiency.achievable_fraction` prices a transformer layer's compute as::

    1 / f = 1 / eta_max + B * (1 / tokens + k / (h / t))

Its two constants, ``eta_max`` and ``k``, are fitted on the four A100 runs of Korthikanti et al. 2022
(arXiv:2205.05198) with sequence parallelism and selective recomputation: the 22B layer of Table 4 and the
175B, 530B and 1T iterations of Table 5 (:data:`multigpu.evidence.trainingruns.K22_RUNS`). For each run the
compute-only time is the measured time without

- the analytic pipeline bubble ``(p - 1) / (v m)``, with the output layer's work spread evenly over the
  stages (the step model now runs it on the last stage, :func:`multigpu.compute.training.evaluate`; fitted
  with that structure, these runs give ``eta_max`` 0.77, which makes every A100 run outside the fit faster,
  where the model is already too fast: the fit is to move off these step times),
- the forward tensor-parallel all-gathers and reduce-scatters (4 per layer and micro-batch, ``2 s b h`` bytes
  each at :data:`BUSBW_A100_Bps`; the backward ones overlap, as the paper says),
- the materialised attention scores' memory traffic
  (:func:`multigpu.compute.models.score_traffic_bytes`, at the A100's memory bandwidth),

and ``f`` is the run's hardware FLOPs over peak x that time. A straight line through
``(B / (h / t), 1 / f - B / tokens)`` gives ``1 / eta_max`` (intercept) and ``k`` (slope).
:func:`fit` recomputes them; ``tests/test_computefit.py`` checks the shipped file against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from multigpu.compute import efficiency, models
from multigpu.evidence import fitquality
from multigpu.evidence.trainingruns import K22_RUNS, RUN_SEQ

#: Ring all-gather / reduce-scatter bus bandwidth on a DGX A100 node (nccl-tests issue 149), bytes/s.
BUSBW_A100_Bps = 230e9
#: Korthikanti et al. Table 4: one 22B layer, selective recompute + sequence parallelism, TP 8, micro-batch 4.
LAYER_22B = ("megatron-22b", 8, 4, 20.3e-3)


@dataclass(frozen=True)
class FitPoint:
    """One run, reduced to the compute-only fraction of peak ``f`` at ``hidden_per_gpu`` and ``tokens``."""

    run: str
    hidden_per_gpu: float
    tokens: float  #: tokens per micro-batch
    fraction: float  #: hardware FLOP/s over peak, compute only


def _tp_forward_s(m: models.Model, tp: int, micro_batch: int) -> float:
    """The four forward tensor-parallel collectives of one layer and micro-batch, seconds."""
    return 4 * (tp - 1) / tp * 2 * RUN_SEQ * micro_batch * m.hidden / BUSBW_A100_Bps


def _scores_s(m: models.Model, tp: int, micro_batch: int, bandwidth: float) -> float:
    """Materialised attention scores of one layer and micro-batch under selective recompute, seconds."""
    return float(models.score_traffic_bytes(m, micro_batch, RUN_SEQ, tp, "selective", "materialised")) / bandwidth


def points() -> list[FitPoint]:
    """The four runs the constants are fitted on, as compute-only fractions of the reference peak."""
    c = efficiency.constants()
    peak, bandwidth = c.reference_flops_peak, c.reference_mem_bw_Bps
    model_id, tp, b, seconds = LAYER_22B
    m, h, s = models.model(model_id), models.model(model_id).hidden, RUN_SEQ
    flops = (3 * (24 * b * s * h**2 + 4 * b * s**2 * h) + 4 * b * s**2 * h) / tp
    gemm_s = seconds - _tp_forward_s(m, tp, b) - _scores_s(m, tp, b, bandwidth)
    out = [FitPoint(f"{model_id} layer", h / tp, b * s, flops / peak / gemm_s)]
    for model_id, gpus, tp, pp, batch, mb, v, selective, _full in K22_RUNS[1:]:
        m = models.model(model_id)
        _, hardware = models.training_flops_per_step(m, batch, RUN_SEQ, recompute="selective")
        microbatches = batch / mb
        per_microbatch = m.layers / pp * (_tp_forward_s(m, tp, mb) + _scores_s(m, tp, mb, bandwidth))
        gemm_s = selective / (1 + (pp - 1) / (v * microbatches)) - microbatches * per_microbatch
        out.append(FitPoint(model_id, m.hidden / tp, mb * RUN_SEQ, float(hardware) / gpus / peak / gemm_s))
    return out


def fit() -> dict[str, float]:
    """``gemm_efficiency_max`` and ``traffic_per_hidden`` fitted on :func:`points` by least squares."""
    return {name: e.value for name, e in fit_result().items()}


def fit_result() -> dict[str, fitquality.Estimate]:
    """:func:`fit` with each constant's standard error (:mod:`multigpu.evidence.fitquality`: the straight line's
    Gauss-Newton covariance, two constants on four runs; ``eta_max`` = 1 / intercept carries its error as
    se(intercept) / intercept^2)."""
    c = efficiency.constants()
    balance = c.reference_flops_peak / c.reference_mem_bw_Bps
    fitted = points()
    x = np.array([balance / p.hidden_per_gpu for p in fitted])
    y = np.array([1 / p.fraction - balance / p.tokens for p in fitted])
    design = np.column_stack([np.ones_like(x), x])
    (intercept, slope), *_ = np.linalg.lstsq(design, y, rcond=None)
    rss = float(np.sum((design @ [intercept, slope] - y) ** 2))
    var_intercept, var_slope = fitquality.covariance_diagonal(design, rss / 2)
    return {"gemm_efficiency_max": fitquality.Estimate(float(1 / intercept),
                                                       float(np.sqrt(var_intercept) / intercept**2)),
            "traffic_per_hidden": fitquality.Estimate(float(slope), float(np.sqrt(var_slope)))}
