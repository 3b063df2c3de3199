"""Measured matrix-multiply ceilings: how close each GPU's best GEMM gets to its dense peak.

``data/gemm_throughput.csv`` holds published matmul throughput (TFLOP/s) by GPU,
precision and shape, with sources: the best shape of a brute-force search
(maximum achievable matmul FLOP/s) and size sweeps. :func:`ceiling` is the
best measured fraction of the dense peak for a GPU and precision;
:func:`relative_ceiling` divides it by the reference GPU's (the A100 SXM4 80GB
in BF16, the GPU the compute-efficiency constants were fitted on), so that
:func:`multigpu.compute.efficiency.achievable_fraction` carries the A100 fit to
other GPUs through a measurement of theirs, not through a training run.

A GPU without rows in a precision uses, in order: its architecture's other
GPUs in that precision (mean), its own BF16 ceiling, the reference's (ratio 1).
"""

from __future__ import annotations

import functools
from pathlib import Path

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.hardware import catalog

GEMM_CSV = DATA_DIR / "gemm_throughput.csv"
#: the GPU and precision the compute-efficiency constants were fitted on (Korthikanti et al. 2022, A100 80GB)
REFERENCE = ("a100-sxm4-80gb", "bf16")
_PEAK_FIELD = {"bf16": "bf16_dense_TFLOPS", "fp16": "fp16_dense_TFLOPS", "fp8": "fp8_dense_TFLOPS",
               "fp4": "fp4_dense_TFLOPS"}


class GemmRow(datafiles.Row):
    """Schema of ``data/gemm_throughput.csv``: one measured matmul."""

    id: datafiles.Text
    gpu: datafiles.Text
    dtype: datafiles.one_of(tuple(_PEAK_FIELD))  # type: ignore[valid-type]
    m: int | None = None
    n: int | None = None
    k: int | None = None
    tflops: datafiles.Positive
    peak_tflops: datafiles.Positive | None = None
    source: datafiles.Text
    notes: str | None = None

    NOUN = "matmul measurement"


@functools.cache
def _ceilings(path: Path = GEMM_CSV) -> dict[tuple[str, str], float]:
    """Best measured fraction of dense peak by (gpu, dtype); the peak is the row's, else the catalogue's."""
    gpus = catalog.gpus()
    best: dict[tuple[str, str], float] = {}
    for line, row in datafiles.read(path, GemmRow, unique=("id",)):
        if row.gpu not in gpus:
            raise InputError(f"unknown gpu '{row.gpu}'", str(path), line, "gpu")
        peak = row.peak_tflops or getattr(gpus[row.gpu], _PEAK_FIELD[row.dtype])
        if peak:
            key = (row.gpu, row.dtype)
            best[key] = max(best.get(key, 0.0), row.tflops / peak)
    return best


def ceiling(gpu_id: str, dtype: str) -> float:
    """Best measured matmul throughput over dense peak for ``gpu_id`` in ``dtype`` (fp16 reads as bf16, mxfp4 as
    fp4), with the fall-backs of the module docstring."""
    dtype = {"fp16": "bf16", "mxfp4": "fp4"}.get(dtype, dtype)
    table = _ceilings()
    if (gpu_id, dtype) in table:
        return table[(gpu_id, dtype)]
    gpus = catalog.gpus()
    arch = gpus[gpu_id].arch if gpu_id in gpus else None
    kin = [v for (g, d), v in table.items() if d == dtype and g in gpus and gpus[g].arch == arch]
    if kin:
        return sum(kin) / len(kin)
    if dtype != "bf16":
        return ceiling(gpu_id, "bf16")
    return table[REFERENCE]


def relative_ceiling(gpu_id: str, dtype: str) -> float:
    """:func:`ceiling` over the reference GPU's (A100 SXM4 80GB, BF16): 1 on the GPU of the fit."""
    return ceiling(gpu_id, dtype) / ceiling(*REFERENCE)
