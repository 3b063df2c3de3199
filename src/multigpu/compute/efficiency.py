"""How much of a GPU's peak FLOP/s a transformer's GEMMs achieve: :func:`achievable_fraction`, a function of the
work per GPU fitted on published runs (its constants, with their sources and fit status, are
``data/compute_efficiency.csv``: :func:`constants`, :func:`rows`), and the fixed time per decode layer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from multigpu.comm.calibration import FIT_STATUSES
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR, NonNegative, Positive, one_of
from multigpu.common.errors import InputError
from multigpu.compute.models import Number, as_number

#: The fitted constants of the compute-efficiency line, with their sources and fit status.
EFFICIENCY_CSV = DATA_DIR / "compute_efficiency.csv"


@dataclass(frozen=True)
class EfficiencyConstants:
    """Constants of :func:`achievable_fraction` (``data/compute_efficiency.csv``)."""

    gemm_efficiency_max: float
    traffic_per_hidden: float
    reference_flops_peak: float
    reference_mem_bw_Bps: float
    decode_layer_overhead_s: float  #: fixed time of one layer's kernels in a forward pass (inference), seconds


class EfficiencyRow(datafiles.Row):
    """Schema of ``data/compute_efficiency.csv``: one constant of :class:`EfficiencyConstants` per row."""

    parameter: one_of(f.name for f in fields(EfficiencyConstants))  # type: ignore[valid-type]
    value: Positive
    unit: str | None = None
    fitted_on: str | None = None
    std_error: NonNegative | None = None  #: the fit's standard error, in ``unit`` (multigpu.evidence.fitquality)
    fit_status: one_of(FIT_STATUSES) | None = None  # type: ignore[valid-type]
    source: str | None = None
    notes: str | None = None

    NOUN = "constant"
    EXPECTED = {"value": "a number > 0", "std_error": "a number >= 0 (empty: not fitted, or none is finite)"}


@functools.cache
def rows(path: Path = EFFICIENCY_CSV) -> dict[str, EfficiencyRow]:
    """Every row of the compute-efficiency file by parameter, with its provenance and what its fit's data say."""
    return {row.parameter: row for _, row in datafiles.read(path, EfficiencyRow, unique=("parameter",))}


@functools.cache
def constants(path: Path = EFFICIENCY_CSV) -> EfficiencyConstants:
    """Read the constants of :func:`achievable_fraction` (``parameter,value,unit,...`` rows)."""
    values = {name: row.value for name, row in rows(path).items()}
    missing = [f.name for f in fields(EfficiencyConstants) if f.name not in values]
    if missing:
        raise InputError(f"missing parameters: {', '.join(missing)}; expected one row for each", file=str(path))
    return EfficiencyConstants(**values)


def achievable_fraction(gpu_flops_peak: ArrayLike, hidden_per_gpu: ArrayLike, tokens_per_microbatch: ArrayLike,
                        mem_bw_Bps: ArrayLike | None = None, ceiling_scale: ArrayLike = 1.0,
                        weight_bw_Bps: ArrayLike | None = None) -> Number:
    """Fraction of dense peak FLOP/s a transformer layer's compute reaches on one GPU (communication excluded).

    An additive roofline: time per FLOP is the GEMM time at its best efficiency
    plus the memory traffic that does not shrink as GEMMs grow::

        1 / fraction = 1 / eta_max + B * (1 / tokens + k / hidden_per_gpu)

    - ``B = gpu_flops_peak / mem_bw_Bps`` (FLOP per byte, the machine
      balance; the reference A100's when ``mem_bw_Bps`` is not given);
    - ``1 / tokens``: each micro-batch reads every weight once (2 bytes per
      2 x tokens FLOPs);
    - ``k / hidden_per_gpu``: activation traffic of GEMM operands and of the
      element-wise work (norms, activation functions, residuals, softmax)
      per GEMM FLOP falls as 1 / (h / t).

    ``gpu_flops_peak`` is dense FLOP/s of the precision used; ``hidden_per_gpu``
    the hidden size over the tensor-parallel degree; ``tokens_per_microbatch``
    micro-batch x sequence length. ``eta_max`` and ``k`` are fitted (see
    ``data/compute_efficiency.csv``) on A100 runs; ``ceiling_scale`` carries
    ``eta_max`` to another GPU and precision, as its measured matmul ceiling
    over the A100's (:func:`multigpu.compute.gemm.relative_ceiling`).
    ``weight_bw_Bps`` (default ``mem_bw_Bps``) prices the weight reads apart:
    weights held in 8 bits (FP8 serving) stream twice the elements per byte,
    while activations, norms and residuals stay 16-bit (``mem_bw_Bps``).
    Communication, the pipeline bubble and the optimizer step are not in this
    fraction.
    """
    c = constants()
    peak = np.asarray(gpu_flops_peak, dtype=float)
    bw = c.reference_mem_bw_Bps * peak / c.reference_flops_peak if mem_bw_Bps is None else mem_bw_Bps
    balance = peak / np.asarray(bw, dtype=float)
    hidden = np.asarray(hidden_per_gpu, dtype=float)
    tokens = np.asarray(tokens_per_microbatch, dtype=float)
    if np.any(hidden <= 0) or np.any(tokens <= 0) or np.any(peak <= 0):
        raise InputError("gpu_flops_peak, hidden_per_gpu and tokens_per_microbatch must be positive")
    eta = c.gemm_efficiency_max * np.asarray(ceiling_scale, dtype=float)
    weight_balance = balance if weight_bw_Bps is None else peak / np.asarray(weight_bw_Bps, dtype=float)
    inverse = 1.0 / eta + weight_balance / tokens + balance * c.traffic_per_hidden / hidden
    return as_number(1.0 / inverse)
