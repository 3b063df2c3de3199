"""Expert-parallel dispatch and combine: the kernel constants fitted on DeepEP's published tables, and the check.

``data/ep_kernels.csv`` holds DeepEP's own published tables, row by row: the V1 normal kernels (intranode and
internode on H800) and low-latency kernels (EP 8 to 256 on H800), from ``docs/legacy.md``, and the V2 table
from ``README.md`` (Hopper and Blackwell). They were split before any comparison by ``int(sha256(id)) % 3``
(0 ``fit``, 1 ``holdout``, 2 ``sealed``); sealed rows are looked at once, when the expert-parallel issue is done.

A bandwidth row (``logical_GBps_nvlink`` or ``logical_GBps_rdma``) is DeepEP's "bottleneck bandwidth": the
bytes its benchmark counts (every (token, destination GPU) pair inside a node, every (token, destination node)
pair across nodes, the local share included) over the time. Its time is those bytes, as
:func:`multigpu.comm.expert.traffic` expects them for the row's routing, over the published rate. A
``latency_us`` row is a time as published.

The four constants of :mod:`multigpu.comm.expert` (``ep_efficiency`` nvlink and net, ``ep_latency_us`` deepep
and deepep-ll) are fitted by least squares of log(predicted / measured time) on the ``fit`` rows;
``tests/test_ep_kernels.py`` holds the shipped ones to the refit by :mod:`multigpu.evidence.fitquality`'s rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from multigpu.comm import calibration, expert
from multigpu.comm.calibration import Calibration
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.evidence import fitquality

EP_KERNELS_CSV = DATA_DIR / "ep_kernels.csv"
SPLITS = ("fit", "holdout", "sealed")
OPEN_SPLITS = ("fit", "holdout")
METRICS = ("logical_GBps_nvlink", "logical_GBps_rdma", "latency_us")
#: The MoE issue's goals for held-out rows: the median absolute error of each kernel kind (large messages for
#: the normal kernels, decode sizes for the low-latency ones), on at least :data:`GOAL_ROWS` rows each.
GOAL_MEDIAN = {"deepep": 0.15, "deepep-ll": 0.25}
GOAL_ROWS = 15
#: The fitted constants (calibration name, key) and their bounds, in their units.
CONSTANTS = {("ep_efficiency", "nvlink"): (0.2, 1.0), ("ep_efficiency", "net"): (0.2, 1.0),
             ("ep_latency_us", "deepep"): (0.0, 500.0), ("ep_latency_us", "deepep-ll"): (0.0, 500.0)}


class EpKernelRow(datafiles.Row):
    """Schema of ``data/ep_kernels.csv``: one published dispatch or combine of an expert-parallel kernel."""

    id: datafiles.Text
    kernel: datafiles.one_of(("deepep", "deepep-ll"))  # type: ignore[valid-type]
    release: datafiles.Text
    system_id: datafiles.LowerId
    gpus: datafiles.PositiveCount
    nodes: datafiles.PositiveCount
    tokens_per_gpu: datafiles.PositiveCount
    hidden: datafiles.PositiveCount
    topk: datafiles.PositiveCount
    experts: datafiles.PositiveCount
    node_limit: datafiles.PositiveCount | None = None
    phase: datafiles.one_of(expert.PHASES)  # type: ignore[valid-type]
    dtype: datafiles.one_of(tuple(expert.ELEMENT_BYTES))  # type: ignore[valid-type]
    sms: datafiles.PositiveCount | None = None
    metric: datafiles.one_of(METRICS)  # type: ignore[valid-type]
    measured: datafiles.Positive
    source: datafiles.Text
    split: datafiles.one_of(SPLITS)  # type: ignore[valid-type]
    notes: str | None = None

    NOUN = "expert-parallel kernel measurement"

    @property
    def routing(self) -> expert.Routing:
        return expert.Routing(self.tokens_per_gpu, self.hidden, self.topk, self.experts, self.node_limit)


def load(splits: Iterable[str] = OPEN_SPLITS, path: str | Path = EP_KERNELS_CSV) -> list[EpKernelRow]:
    """The rows whose split is in ``splits``, in file order (ids unique; each row a routing the model takes)."""
    wanted = datafiles.wanted_splits(splits, SPLITS)
    rows = []
    for line, row in datafiles.read(path, EpKernelRow, unique=("id",)):
        try:
            expert.phase(row.routing, row.system_id, row.gpus, row.nodes, kernel=row.kernel, phase_name=row.phase,
                         dtype=row.dtype)
        except InputError as exc:
            raise InputError(str(exc), str(path), line) from None
        if row.split in wanted:
            rows.append(row)
    return rows


def predicted(row: EpKernelRow, cal: Calibration | None = None) -> expert.EpPhase:
    """The model's dispatch or combine for the row."""
    return expert.phase(row.routing, row.system_id, row.gpus, row.nodes, kernel=row.kernel, phase_name=row.phase,
                        dtype=row.dtype, cal=cal)


def measured_time_us(row: EpKernelRow) -> float:
    """The row's time, microseconds: as published, or the benchmark's counted bytes over its published rate."""
    if row.metric == "latency_us":
        return row.measured
    return predicted(row).logical_bytes / (row.measured * 1e3)


def _with(values: Iterable[float]) -> Calibration:
    return calibration.default().replace(dict(zip(CONSTANTS, values)), note="DeepEP fit")


def fit_result(path: str | Path = EP_KERNELS_CSV) -> dict[tuple[str, str], fitquality.Estimate]:
    """The four constants by least squares of log(predicted / measured) over the ``fit`` rows, each with its
    standard error and the bound it stopped at (:mod:`multigpu.evidence.fitquality`)."""
    rows = load(("fit",), path)
    measured = np.array([measured_time_us(r) for r in rows])

    def residuals(x: np.ndarray) -> np.ndarray:
        cal = _with(x)
        return np.log(np.array([predicted(r, cal).time_us for r in rows]) / measured)

    start = [calibration.default().value(*key) for key in CONSTANTS]
    low, high = zip(*CONSTANTS.values())
    r = fitquality.least_squares(residuals, start, bounds=(low, high), **fitquality.SOLVER_TOL)
    variances = fitquality.covariance_diagonal(r.jac, float(r.cost))
    return {key: fitquality.Estimate(float(x), float(np.sqrt(v)) if np.isfinite(v) else None,
                                     fitquality.bound_side(float(x), lo, hi, grad=float(g)))
            for key, x, v, (lo, hi), g in zip(CONSTANTS, r.x, variances, CONSTANTS.values(), r.grad)}


def compare(splits: Iterable[str] = OPEN_SPLITS, path: str | Path = EP_KERNELS_CSV,
            cal: Calibration | None = None) -> pd.DataFrame:
    """Each row against the model: id, split, kernel, release, system_id, gpus, nodes, sms, phase, measured_us,
    predicted_us, bottleneck (the model's) and rel_error (predicted / measured time - 1)."""
    out = []
    for r in load(splits, path):
        p, m = predicted(r, cal), measured_time_us(r)
        out.append({"id": r.id, "split": r.split, "kernel": r.kernel, "release": r.release,
                    "system_id": r.system_id, "gpus": r.gpus, "nodes": r.nodes, "sms": r.sms, "phase": r.phase,
                    "measured_us": m, "predicted_us": p.time_us, "bottleneck": p.bottleneck,
                    "rel_error": p.time_us / m - 1})
    return pd.DataFrame(out)
