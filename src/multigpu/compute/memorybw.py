"""Achievable HBM bandwidth: what memory-bound kernels reach of a GPU's nominal memory bandwidth.

Published STREAM-style measurements (``data/hbm_bandwidth.csv``, kernels as in BabelStream) give, per GPU and
access pattern, the bandwidth a streaming kernel reaches (TB/s, 1e12 B/s). A decode step's weight and KV-cache
reads (:mod:`multigpu.compute.inference`) and the optimizer step of training (:mod:`multigpu.compute.training`)
are priced at these fractions of the catalogue's nominal bandwidth, not at the datasheet figure.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.hardware import catalog

#: Published memory-bandwidth kernels by GPU (``data/hbm_bandwidth.csv``).
HBM_CSV = DATA_DIR / "hbm_bandwidth.csv"
#: STREAM-style kernels (as in BabelStream): copy and mul read one array and write one, add and triad read two
#: and write one, dot reads two and writes none.
HBM_KERNELS = ("copy", "mul", "add", "triad", "dot")


class HbmRow(datafiles.Row):
    """Schema of ``data/hbm_bandwidth.csv``: one measured memory-bandwidth kernel on one GPU (TB/s, 1e12 B/s)."""

    id: datafiles.Text
    gpu: datafiles.Text
    kernel: datafiles.one_of(HBM_KERNELS)  # type: ignore[valid-type]
    measured_TBps: datafiles.Positive
    source: datafiles.Text
    notes: str | None = None

    NOUN = "memory-bandwidth measurement"


def measured_hbm_fractions(path: Path = HBM_CSV) -> list[dict[str, Any]]:
    """Each row of ``data/hbm_bandwidth.csv`` with the GPU's nominal bandwidth (catalogue, TB/s) and the measured
    fraction of it: dicts of id, gpu, kernel, measured_TBps, nominal_TBps, fraction, source."""
    gpus = catalog.gpus()
    out = []
    for line, row in datafiles.read(path, HbmRow, unique=("id",)):
        if row.gpu not in gpus:
            raise InputError(f"unknown gpu '{row.gpu}'", str(path), line, "gpu")
        nominal = gpus[row.gpu].mem_bw_GBps / 1e3
        out.append({"id": row.id, "gpu": row.gpu, "kernel": row.kernel, "measured_TBps": row.measured_TBps,
                    "nominal_TBps": nominal, "fraction": row.measured_TBps / nominal, "source": row.source})
    return out


@lru_cache(maxsize=None)
def hbm_efficiency(gpu_id: str, kernel: str) -> float:
    """Achievable fraction of ``gpu_id``'s nominal HBM bandwidth for the access pattern of ``kernel``
    (:data:`HBM_KERNELS`): that kernel's measurement on that GPU (the median of several), else the median of the
    kernel over the GPUs measured."""
    rows = [r for r in measured_hbm_fractions() if r["kernel"] == kernel]
    own = [r["fraction"] for r in rows if r["gpu"] == gpu_id]
    return float(np.median(own or [r["fraction"] for r in rows]))
