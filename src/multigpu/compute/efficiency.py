"""How much of a GPU's peak FLOP/s a transformer's GEMMs achieve: :func:`achievable_fraction`, a function of the
work per GPU. Its reference line is the A100's measured matmul ceiling and a memory-traffic constant fitted on
one layer's timings (``data/compute_efficiency.csv``: :func:`constants`, :func:`rows`; the fit is
:mod:`multigpu.evidence.computefit`); a training stack's kernels reach their own share of it, with their own
traffic (``data/stack_efficiency.csv``: :func:`stack_kernels`). Also the fixed time per decode layer, and how
much longer a serving stack's release takes over a decode step's kernels (``data/release_efficiency.csv``:
:func:`decode_time_factor`; the fit is :mod:`multigpu.evidence.releasefit`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
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
    decode_layer_overhead_s: float  #: fixed time of one layer's kernels in a forward pass, seconds
    #: the share of the non-GEMM traffic (``traffic_per_hidden``) that sequence parallelism splits over the
    #: tensor-parallel ranks: the norms, dropouts and residual additions between the tensor-parallel regions,
    #: which every rank otherwise repeats on the whole sequence
    sp_traffic_share: float


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


@dataclass(frozen=True)
class StackKernels:
    """How a training stack's kernels run against the reference line (:func:`stack_kernels`)."""

    share: float  #: its GEMMs' efficiency as a share of ``gemm_efficiency_max``
    traffic_per_hidden: float  #: its ``k``: non-GEMM memory traffic per FLOP, as k / (h/t) bytes (fusion lowers it)


#: The parameters of :class:`StackKernels`, one row each per stack in ``data/stack_efficiency.csv``.
STACK_PARAMETERS = tuple(f.name for f in fields(StackKernels))


class FittedRow(datafiles.Row):
    """The provenance columns of a constant fitted on published runs: its standard error and fit status, the
    fit-split runs it was fitted on (their count and ids), the held-out runs the fit never saw, its source."""

    std_error: NonNegative | None = None
    fit_status: one_of(FIT_STATUSES) | None = None  # type: ignore[valid-type]
    fit_runs: int  #: fit-split runs it was fitted on
    holdout_runs: int  #: held-out runs, which the fit never saw
    fitted_on: str | None = None
    source: str | None = None
    notes: str | None = None


class StackEfficiencyRow(FittedRow):
    """Schema of ``data/stack_efficiency.csv``: one constant of one training stack's :class:`StackKernels`."""

    stack: datafiles.Text
    parameter: one_of(STACK_PARAMETERS)  # type: ignore[valid-type]
    value: NonNegative

    NOUN = "stack constant"


#: Each training stack's kernels against the reference line (:func:`stack_kernels`).
STACK_EFFICIENCY_CSV = DATA_DIR / "stack_efficiency.csv"
#: Fit-split and held-out runs a stack needs for constants of its own (fewer: it takes the default stack's).
MIN_FIT_RUNS, MIN_HOLDOUT_RUNS = 3, 2


@functools.cache
def stack_rows(path: Path = STACK_EFFICIENCY_CSV) -> dict[tuple[str, str], StackEfficiencyRow]:
    """Every row of the stack-efficiency file by (stack, parameter)."""
    return {(row.stack, row.parameter): row
            for _, row in datafiles.read(path, StackEfficiencyRow, unique=("stack", "parameter"))}


@functools.cache
def _stacks(path: Path = STACK_EFFICIENCY_CSV) -> dict[str, StackKernels]:
    table = stack_rows(path)
    names = sorted({stack for stack, _ in table})
    for name in names:
        missing = [p for p in STACK_PARAMETERS if (name, p) not in table]
        if missing:
            raise InputError(f"stack '{name}' has no row for {', '.join(missing)}", file=str(path))
    return {name: StackKernels(**{p: table[(name, p)].value for p in STACK_PARAMETERS}) for name in names}


class ReleaseEfficiencyRow(FittedRow):
    """Schema of ``data/release_efficiency.csv``: how many times the model's time one release of a serving stack
    takes over a decode step's kernels (:func:`decode_time_factor`)."""

    stack: datafiles.Text  #: the serving stack (``infer --stack``)
    release: datafiles.Text  #: its release, as the rows' ``release`` column names it
    decode_time_factor: Positive  #: the release's decode kernel time over the model's (1: as the model prices them)

    NOUN = "release constant"


#: Each serving stack's releases against the model's decode kernels (:func:`decode_time_factor`).
RELEASE_EFFICIENCY_CSV = DATA_DIR / "release_efficiency.csv"


@functools.cache
def release_rows(path: Path = RELEASE_EFFICIENCY_CSV) -> dict[tuple[str, str], ReleaseEfficiencyRow]:
    """Every row of the release-efficiency file by (stack, release)."""
    return {(row.stack, row.release): row
            for _, row in datafiles.read(path, ReleaseEfficiencyRow, unique=("stack", "release"))}


class PipelineHostRow(FittedRow):
    """Schema of ``data/pipeline_host.csv``: the host time one engine iteration of a serving stack release's
    pipeline loop takes on each stage, not overlapped with the GPUs' work (:func:`pipeline_iteration_host_s`)."""

    stack: datafiles.Text  #: the serving stack (``infer --stack``)
    release: datafiles.Text  #: its release, as the rows' ``release`` column names it
    iteration_host_s: NonNegative  #: seconds of host work on a stage's path, once per engine iteration

    NOUN = "pipeline host constant"


#: Each serving stack release's host time per pipeline iteration (:func:`pipeline_iteration_host_s`).
PIPELINE_HOST_CSV = DATA_DIR / "pipeline_host.csv"


@functools.cache
def pipeline_host_rows(path: Path = PIPELINE_HOST_CSV) -> dict[tuple[str, str], PipelineHostRow]:
    """Every row of the pipeline-host file by (stack, release)."""
    return {(row.stack, row.release): row
            for _, row in datafiles.read(path, PipelineHostRow, unique=("stack", "release"), allow_empty=True)}


@dataclass(frozen=True)
class _Trial:
    """What a fit is trying in place of the files (:func:`trying`)."""

    constants: EfficiencyConstants
    stacks: dict[str, StackKernels]
    releases: dict[tuple[str, str], float]
    hosts: dict[tuple[str, str], float]


#: Constants, stack kernels and release factors that replace the files' while a fit tries them (:func:`trying`).
_TRIAL: contextvars.ContextVar[_Trial | None] = contextvars.ContextVar("efficiency_trial", default=None)


@contextlib.contextmanager
def trying(stacks: dict[str, StackKernels] | None = None, releases: dict[tuple[str, str], float] | None = None,
           hosts: dict[tuple[str, str], float] | None = None, **values: float) -> Iterator[EfficiencyConstants]:
    """Within the block, :func:`constants` returns the constants in force (the file's, or an enclosing block's)
    with ``values`` in place of theirs, :func:`stack_kernels` the ``stacks`` given, :func:`decode_time_factor`
    the ``releases`` given and :func:`pipeline_iteration_host_s` the ``hosts`` given, both by (stack, release)
    (a fit tries its candidates through the whole model this way, :mod:`multigpu.evidence.computefit`,
    :mod:`multigpu.evidence.releasefit`)."""
    outer = _TRIAL.get()
    trial = _Trial(replace(constants(), **values), {**(outer.stacks if outer else {}), **(stacks or {})},
                   {**(outer.releases if outer else {}), **(releases or {})},
                   {**(outer.hosts if outer else {}), **(hosts or {})})
    token = _TRIAL.set(trial)
    try:
        yield trial.constants
    finally:
        _TRIAL.reset(token)


def releases(stack: str) -> list[str]:
    """The releases of ``stack`` with a decode-time factor of their own (``data/release_efficiency.csv``), oldest
    first (compared as version numbers)."""
    return sorted((r for s, r in release_rows() if s == stack), key=lambda r: tuple(int(p) for p in r.split(".")))


def decode_time_factor(stack: str, release: str | None) -> float:
    """How many times the model's time ``release`` of the serving ``stack`` takes over a decode step's kernels (its
    weights and KV cache read, or its FLOPs): its row of ``data/release_efficiency.csv``, or 1 (the kernels as the
    model prices them) where the release is not stated or has too few runs for a factor of its own."""
    if not release:
        return 1.0
    trial = _TRIAL.get()
    if trial is not None and (stack, release) in trial.releases:
        return trial.releases[(stack, release)]
    row = release_rows().get((stack, release))
    return row.decode_time_factor if row else 1.0


def pipeline_iteration_host_s(stack: str, release: str | None) -> float:
    """Seconds of host work that one engine iteration of ``release``'s pipeline loop puts on each stage's path:
    its row of ``data/pipeline_host.csv``, or 0 where the release is not stated or has too few pipelined runs for
    a value of its own (the model's pipeline, whose stages never wait on their host)."""
    if not release:
        return 0.0
    trial = _TRIAL.get()
    if trial is not None and (stack, release) in trial.hosts:
        return trial.hosts[(stack, release)]
    row = pipeline_host_rows().get((stack, release))
    return row.iteration_host_s if row else 0.0


def reference_kernels() -> StackKernels:
    """The reference line itself: Megatron-LM's kernels as Korthikanti et al. 2022 timed its layers."""
    return StackKernels(1.0, constants().traffic_per_hidden)


def stack_kernels(stack: str, default: str) -> StackKernels:
    """How ``stack``'s runs use the GPU against the reference line: its rows of ``data/stack_efficiency.csv``, or
    the ``default`` stack's where it has none (too few runs to fit its own)."""
    trial = _TRIAL.get()
    if trial is not None and stack in trial.stacks:
        return trial.stacks[stack]
    table = _stacks()
    kernels = table.get(stack) or table.get(default)
    if kernels is None:
        raise InputError(f"no rows for the training stack '{default}'", file=str(STACK_EFFICIENCY_CSV))
    return kernels


def constants(path: Path = EFFICIENCY_CSV) -> EfficiencyConstants:
    """The constants of :func:`achievable_fraction`: the file's, or those a fit is trying (:func:`trying`)."""
    trial = _TRIAL.get()
    return trial.constants if trial is not None and path == EFFICIENCY_CSV else _read(path)


@functools.cache
def _read(path: Path = EFFICIENCY_CSV) -> EfficiencyConstants:
    """Read the constants of :func:`achievable_fraction` (``parameter,value,unit,...`` rows)."""
    values = {name: row.value for name, row in rows(path).items()}
    missing = [f.name for f in fields(EfficiencyConstants) if f.name not in values]
    if missing:
        raise InputError(f"missing parameters: {', '.join(missing)}; expected one row for each", file=str(path))
    return EfficiencyConstants(**values)


def achievable_fraction(gpu_flops_peak: ArrayLike, hidden_per_gpu: ArrayLike, tokens_per_microbatch: ArrayLike,
                        mem_bw_Bps: ArrayLike | None = None, ceiling_scale: ArrayLike = 1.0,
                        weight_bw_Bps: ArrayLike | None = None, traffic_per_hidden: float | None = None) -> Number:
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
    micro-batch x sequence length. ``eta_max`` is the A100's measured matmul
    ceiling and ``k`` is fitted on one layer's timings on A100s (see
    ``data/compute_efficiency.csv``); ``ceiling_scale`` carries ``eta_max`` to
    another GPU and precision, as its measured matmul ceiling over the A100's
    (:func:`multigpu.compute.gemm.relative_ceiling`), and to a training stack
    (its share).
    ``weight_bw_Bps`` (default ``mem_bw_Bps``) prices the weight reads apart:
    weights held in 8 bits (FP8 serving) stream twice the elements per byte,
    while activations, norms and residuals stay 16-bit (``mem_bw_Bps``).
    ``traffic_per_hidden`` replaces the file's ``k`` (a training stack's own,
    :func:`stack_kernels`). Communication, the pipeline bubble and the
    optimizer step are not in this fraction.
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
    k = c.traffic_per_hidden if traffic_per_hidden is None else traffic_per_hidden
    inverse = 1.0 / eta + weight_balance / tokens + balance * k / hidden
    return as_number(1.0 / inverse)
