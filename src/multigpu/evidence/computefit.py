"""Fitting the compute-efficiency line (``data/compute_efficiency.csv``) and the training stacks' shares of it
(``data/stack_efficiency.csv``), with Korthikanti et al. 2022's Table 5 out of every fit.

:func:`multigpu.compute.efficiency.achievable_fraction` prices a transformer layer's compute as::

    1 / f = 1 / eta_max + B * (1 / tokens + k / (h / t))

- ``eta_max`` is measured, not fitted: the A100's best matrix multiply over its dense peak
  (:func:`multigpu.compute.gemm.ceiling`, ``data/gemm_throughput.csv``), what a layer's GEMMs reach as they grow.
- ``k`` is fitted on a layer microbenchmark: Korthikanti et al.'s Table 4 times one layer of their 22B model,
  forward and backward, in five settings of recomputation and sequence parallelism (``data/layer_timings.csv``).
  Each is priced by :func:`multigpu.compute.training.layer_time_s`, the layer time the step model charges
  (compute, materialised attention scores, the fixed time of each pass's kernels, exposed tensor-parallel
  collectives), and ``k`` minimises the squared log errors (:func:`fit_traffic`), together with the share of
  ``k`` that sequence parallelism splits over the tensor-parallel ranks (``sp_traffic_share``: Table 4's two
  settings with sequence parallelism are 0.6 ms shorter than those without).

That line is the reference: the kernels of Megatron-LM as Korthikanti et al. ran it on A100s. A training stack
has two constants of its own (:func:`fit_stack`, :class:`~multigpu.compute.efficiency.StackKernels`): its
share of the GEMM ceiling, and its ``k`` (kernel fusion, as Transformer Engine's, moves less non-GEMM traffic).
Both are fitted on the stack's fit-split runs of ``data/training_runs.csv`` through the whole step model, with a
soft-L1 loss in log space (errors beyond :data:`LOSS_SCALE` count linearly, so one run that the model cannot
explain does not set them). A stack gets constants of its own only with
:data:`~multigpu.compute.efficiency.MIN_FIT_RUNS` fit-split and
:data:`~multigpu.compute.efficiency.MIN_HOLDOUT_RUNS` held-out runs (the holdout split, and the sealed rows
already opened, which no fit has seen); otherwise it takes the default stack's. Each run is fitted on by its own
stack only (:func:`multigpu.evidence.runs.stack`): the encoder fine-tuning runs (BERT under PyTorch DDP, the PCIe
side's training runs) fit ``pytorch-ddp``, and the FSDP runs (llm-foundry, torchtitan) ``pytorch-fsdp``; neither
moves the other stacks.

Table 5's iteration times (175B, 530B and 1T, each with two recomputation settings, and 22B) are then out of
sample: their layers run at the reference share (Table 4 timed the same software), and what the step model adds
(the pipeline, the output layer on the last stage, the optimizer step, the exposed communication) is what they
test. ``tests/test_computefit.py`` checks the shipped files against :func:`fit_result` and :func:`stack_fits`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, Positive
from multigpu.compute import efficiency, gemm, models, training
from multigpu.compute.layout import TRAINING_STACKS, Layout
from multigpu.evidence import fitquality, runs
from multigpu.hardware import catalog

#: Korthikanti et al. 2022's Table 4: one layer's forward and backward time in five settings.
LAYER_TIMINGS_CSV = DATA_DIR / "layer_timings.csv"
#: The soft-L1 loss's scale in log space: a run's error counts quadratically up to about 10 %, linearly beyond.
LOSS_SCALE = 0.1
#: The bounds of ``k`` (dimensionless) and of a stack's share of the GEMM ceiling.
TRAFFIC_BOUNDS = (0.0, 20.0)
SHARE_BOUNDS = (0.3, 1.0)
#: The bounds of the share of ``k`` that sequence parallelism splits over the tensor-parallel ranks.
SP_SHARE_BOUNDS = (0.0, 1.0)


class LayerTiming(datafiles.Row):
    """Schema of ``data/layer_timings.csv``: one transformer layer's measured forward and backward time."""

    id: datafiles.Text
    model: datafiles.Text
    system: datafiles.Text
    tp: int
    micro_batch: int
    seq: int
    recompute: str
    sequence_parallel: datafiles.Flag
    attention: str
    forward_ms: Positive
    backward_ms: Positive
    source: datafiles.Text
    notes: str | None = None

    NOUN = "layer timing"


@dataclass(frozen=True)
class StackFit:
    """One stack's constants (:data:`~multigpu.compute.efficiency.STACK_PARAMETERS`), with the runs they rest on."""

    stack: str
    constants: dict[str, fitquality.Estimate]
    fit_runs: tuple[str, ...]
    holdout_runs: tuple[str, ...]

    @property
    def kernels(self) -> efficiency.StackKernels:
        """The fitted values."""
        return efficiency.StackKernels(**{name: e.value for name, e in self.constants.items()})


@functools.cache
def layer_timings() -> tuple[LayerTiming, ...]:
    """The rows of ``data/layer_timings.csv``."""
    return tuple(row for _, row in datafiles.read(LAYER_TIMINGS_CSV, LayerTiming, unique=("id",)))


def _layer_layout(row: LayerTiming) -> tuple[models.Model, catalog.System, Layout]:
    m = models.model(row.model)
    lay = training.make_layout(m, row.tp, row.tp, 1, 1, row.micro_batch, row.micro_batch, seq=row.seq,
                               recompute=row.recompute, sequence_parallel=row.sequence_parallel,
                               attention=row.attention, reference_kernels=True)
    return m, catalog.system(row.system), lay.batched()


def layer_errors() -> pd.DataFrame:
    """Each layer timing beside the model's: ``id``, ``measured_ms`` (forward + backward), ``model_ms`` and
    ``error_pct`` (model / measured - 1, in per cent)."""
    out = []
    for row in layer_timings():
        m, system, lay = _layer_layout(row)
        model_ms = 1e3 * np.asarray(training.layer_time_s(m, system, lay)).item()
        measured = row.forward_ms + row.backward_ms
        out.append({"id": row.id, "measured_ms": measured, "model_ms": model_ms,
                    "error_pct": 100 * (model_ms / measured - 1)})
    return pd.DataFrame(out)


def reference_ceiling() -> float:
    """``eta_max``: the reference GPU's best measured matrix multiply over its dense peak."""
    return gemm.ceiling(*gemm.REFERENCE)


def fit_traffic() -> list[fitquality.Estimate]:
    """``k`` and the share of it that sequence parallelism splits (``sp_traffic_share``), fitted together on the
    layer timings at ``eta_max`` = :func:`reference_ceiling` (squared log errors): the settings without sequence
    parallelism set ``k``, the two with it their difference."""
    eta = reference_ceiling()

    def residuals(x: np.ndarray) -> np.ndarray:
        with efficiency.trying(gemm_efficiency_max=eta, traffic_per_hidden=float(x[0]), sp_traffic_share=float(x[1])):
            return np.log1p(layer_errors()["error_pct"].to_numpy() / 100)

    return solve(residuals, [1.0, 0.3], [TRAFFIC_BOUNDS, SP_SHARE_BOUNDS], "linear")


def fit_result() -> dict[str, fitquality.Estimate]:
    """The line's constants: ``gemm_efficiency_max`` (measured: no standard error), ``traffic_per_hidden`` and
    ``sp_traffic_share`` (:func:`fit_traffic`)."""
    traffic, sp_share = fit_traffic()
    return {"gemm_efficiency_max": fitquality.Estimate(reference_ceiling(), None),
            "traffic_per_hidden": traffic, "sp_traffic_share": sp_share}


def fit() -> dict[str, float]:
    """:func:`fit_result`'s values."""
    return {name: e.value for name, e in fit_result().items()}


def compared(split: str) -> pd.DataFrame:
    """The model beside the published training runs of ``split`` (:func:`multigpu.evidence.runs.compare`)."""
    return runs.compare((split,))


def stack_runs(stack: str, split: str) -> tuple[str, ...]:
    """The ids of ``stack``'s runs in ``split`` of ``data/training_runs.csv``."""
    frame = compared(split)
    return tuple(frame.loc[frame["stack"] == stack, "id"])


def fit_stack(stack: str, keep: Callable[[str], bool] | None = None) -> StackFit | None:
    """``stack``'s share of the GEMM ceiling and its ``k``, fitted on its fit-split runs (those ``keep`` takes,
    by id: a cross-validation fold's complement) at the file's line constants; None where it has too few runs
    for constants of its own (its held-out runs: the holdout split and the opened sealed rows)."""
    fit_ids = stack_runs(stack, "fit")
    holdout_ids = stack_runs(stack, "holdout") + stack_runs(stack, "sealed")
    fit_ids = tuple(i for i in fit_ids if keep is None or keep(i))
    if len(fit_ids) < efficiency.MIN_FIT_RUNS or len(holdout_ids) < efficiency.MIN_HOLDOUT_RUNS:
        return None

    def residuals(x: np.ndarray) -> np.ndarray:
        with efficiency.trying(stacks={stack: efficiency.StackKernels(*map(float, x))}):
            frame = compared("fit")
            return np.log1p(frame.loc[frame["id"].isin(fit_ids), "rel_error"].to_numpy())

    estimates = solve(residuals, [0.9, 1.0], [SHARE_BOUNDS, TRAFFIC_BOUNDS], "soft_l1")
    return StackFit(stack, dict(zip(efficiency.STACK_PARAMETERS, estimates)), fit_ids, holdout_ids)


def stack_fits() -> dict[str, StackFit]:
    """:func:`fit_stack` for every training stack with runs enough."""
    fits = {name: fit_stack(name) for name in TRAINING_STACKS}
    return {name: f for name, f in fits.items() if f is not None}


def solve(residuals: Callable[[np.ndarray], np.ndarray], start: list[float], bounds: list[tuple[float, float]],
           loss: str) -> list[fitquality.Estimate]:
    """Constants by least squares (``loss``: linear or soft_l1 at :data:`LOSS_SCALE`), each with its standard
    error and the bound it stopped at (:mod:`multigpu.evidence.fitquality`)."""
    low, high = zip(*bounds)
    r = fitquality.least_squares(residuals, start, bounds=(low, high), loss=loss, f_scale=LOSS_SCALE,
                                 **fitquality.SOLVER_TOL)
    variances = fitquality.covariance_diagonal(r.jac, float(r.cost))
    return [fitquality.Estimate(float(x), float(np.sqrt(v)) if np.isfinite(v) else None,
                                fitquality.bound_side(float(x), lo, hi, grad=float(g)))
            for x, v, (lo, hi), g in zip(r.x, variances, bounds, r.grad)]
