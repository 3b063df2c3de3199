"""Published collective sweeps (time or busbw against message size) against the model.

``data/sweeps_index.csv`` lists each sweep (system, GPUs, nodes, collective,
forced algorithm, fabric, harness, source) and the ``split`` it was put in
before any comparison, by a hash of its id: ``fit`` (constants may be fitted
on it), ``holdout`` (never fitted; the out-of-sample figures) or ``sealed``
(never fitted, and looked at once, at the end; the sweeps collected first were
opened on 2026-12-04, and those sealed after that look were opened in a second
look the same day, after the model's next changes). A sweep added since whose
hash says ``sealed`` goes to ``sealed2``, the next sealed set, which nothing
reads until it is opened in its turn. ``data/sweeps.csv`` holds the
points: nccl-tests size in bytes, time in us, algbw and busbw in GB/s.

:func:`compare` gives the model's busbw for every point it can model; a sweep
it cannot model keeps a ``reason``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.comm.ncclenv import Settings
from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError
from multigpu.hardware import catalog

INDEX_CSV = DATA_DIR / "sweeps_index.csv"
POINTS_CSV = DATA_DIR / "sweeps.csv"
#: ``sealed2``: sweeps whose hash says ``sealed``, added after the sealed sets were opened (twice, 2026-12-04)
SPLITS = ("fit", "holdout", "sealed", "sealed2")
#: The splits :func:`compare` reads unless told otherwise.
OPEN_SPLITS = ("fit", "holdout")
#: The splits the validation appendix compares, in the order it shows them (held out first).
SHOWN_SPLITS = ("holdout", "sealed", "fit")
LARGE_BYTES = 64 * 2**20  #: points at or above this size are "large" (bandwidth-bound)
#: a published algorithm label -> the model's algorithm ("" is NCCL's own choice)
ALGORITHMS = {"": "auto", "ring": "ring", "tree": "tree", "nvls": "nvls", "collnet": "tree",
              "custom-oneshot": "direct", "custom-twoshot": "two-shot", "custom-vllm": "custom",
              "custom-trtllm": "custom"}
#: harness -> how its timing relates to the collective kernel's (see :meth:`Calibration.harness_overhead_us`)
HARNESS = {"nccl-tests": "nccl-tests", "rccl-tests": "nccl-tests", "torch.distributed": "torch", "custom": ""}


class SweepRow(datafiles.Row):
    """Schema of ``data/sweeps_index.csv``."""

    sweep: datafiles.LowerId
    system_id: str | None = None
    gpus: datafiles.PositiveCount
    nodes: datafiles.PositiveCount
    op: datafiles.one_of(collectives.OPS)  # type: ignore[valid-type]
    algorithm: str | None = None
    protocol: datafiles.one_of(collectives.PROTOCOLS[1:]) | None = None  # type: ignore[valid-type]
    dtype: str | None = None
    fabric: str | None = None
    nccl_version: str | None = None
    harness: datafiles.Text
    conditions: str | None = None
    split: datafiles.one_of(SPLITS)  # type: ignore[valid-type]
    source: datafiles.Text

    NOUN = "sweep"


class PointRow(datafiles.Row):
    """Schema of ``data/sweeps.csv``."""

    sweep: datafiles.LowerId
    bytes: datafiles.PositiveCount
    time_us: datafiles.Positive | None = None
    algbw_GBps: datafiles.NonNegative | None = None
    busbw_GBps: datafiles.NonNegative | None = None

    NOUN = "point"


@dataclass(frozen=True)
class Sweep:
    """One published sweep and how the model reproduces it (``system`` None when it cannot)."""

    sweep: str
    split: str
    op: str
    gpus: int
    nodes: int
    algorithm: str  #: the model's algorithm, or "custom" (the faster of one-shot and two-shot)
    harness: str
    system: str | None
    reason: str  #: why the model cannot reproduce it ("" if it can)
    source: str
    fabric: str = ""  #: the scale-out fabric named by the source ("" on one node or where none is named)
    #: False where the NCCL settings in the run's recorded ``conditions`` leave NVLS out (``NCCL_NVLS_ENABLE=0``,
    #: or an ``NCCL_ALGO`` without it: :class:`~multigpu.comm.ncclenv.Settings`)
    nvls: bool = True
    protocol: str = "auto"  #: the protocol the run forced (``NCCL_PROTO``), else NCCL's choice
    #: GPUs one host thread of the harness drives (nccl-tests ``-g N``; 1 where the command line does not say)
    gpus_per_thread: int = 1
    #: the NCCL (or RCCL) version the source states ("" where it does not); the model does not read it
    library_version: str = ""


@functools.cache
def sweeps() -> tuple[Sweep, ...]:
    """Every sweep of ``data/sweeps_index.csv`` with its model mapping (and why not, where there is none)."""
    out = []
    for _, row in datafiles.read(INDEX_CSV, SweepRow, unique=("sweep",)):
        system, reason = _system(row)
        algorithm = ALGORITHMS.get(row.algorithm or "", "")
        if not algorithm:
            reason = reason or f"algorithm '{row.algorithm}' is not modelled"
        nvls = Settings.from_environment(row.conditions or "").nvls
        sweep = Sweep(row.sweep, row.split, row.op, row.gpus, row.nodes, algorithm, HARNESS.get(row.harness, ""),
                      system, reason, row.source, row.fabric or "", nvls, row.protocol or "auto",
                      gpus_per_thread(row.conditions or ""), row.nccl_version or "")
        if not reason:
            try:
                predict(sweep, np.array([1024.0]))
            except InputError as exc:  # the model cannot run it on this system (e.g. no peer-to-peer)
                sweep = dataclasses.replace(sweep, reason=exc.message)
        out.append(sweep)
    return tuple(out)


def gpus_per_thread(conditions: str) -> int:
    """GPUs each thread of an nccl-tests (or rccl-tests) run drives, from its recorded command line: ``-g N`` /
    ``--ngpus N``, or the header's ``nGpus N``; 1 (one process or thread per GPU) where it does not say."""
    found = re.search(r"(?:(?<![\w-])-g\s*|--ngpus[=\s]|nGpus\s+)(\d+)", conditions)
    return int(found.group(1)) if found else 1


def _system(row: SweepRow) -> tuple[str | None, str]:
    """The catalogue system (with the sweep's fabric) that models the sweep, or why there is none."""
    if not row.system_id:
        return None, "no catalogue system for this machine"
    system = catalog.system(row.system_id)
    if row.nodes > 1 and row.fabric and row.fabric != system.fabric:
        return f"{row.system_id}@{row.fabric}", ""
    return row.system_id, ""


@functools.cache
def points() -> pd.DataFrame:
    """Every point of ``data/sweeps.csv``: sweep, bytes, time_us, algbw_GBps, busbw_GBps (NaN if not given)."""
    known = {s.sweep for s in sweeps()}
    rows = []
    for line, row in datafiles.read(POINTS_CSV, PointRow):
        if row.sweep not in known:
            raise InputError(f"unknown sweep '{row.sweep}'; expected one of data/sweeps_index.csv", str(POINTS_CSV),
                             line, "sweep")
        rows.append({"sweep": row.sweep, "bytes": row.bytes, "time_us": row.time_us, "algbw_GBps": row.algbw_GBps,
                     "busbw_GBps": row.busbw_GBps})
    return pd.DataFrame(rows).astype({"time_us": float, "algbw_GBps": float, "busbw_GBps": float})


def measured_times_us(sweep: Sweep, part: pd.DataFrame) -> np.ndarray:
    """Measured time (us) of each point of ``part`` (rows of :func:`points` for ``sweep``): as printed, else from
    its busbw and the nccl-tests factor (NaN where neither gives a positive time)."""
    factor = collectives.busbw_factor(sweep.op, sweep.gpus)
    with np.errstate(divide="ignore"):
        from_bw = part["bytes"].to_numpy(dtype=float) / part["busbw_GBps"].to_numpy() / 1e3 * factor
    time = np.where(part["time_us"].notna(), part["time_us"].to_numpy(), from_bw).astype(float)
    return np.where(np.isfinite(time) & (time > 0), time, np.nan)


def predict(sweep: Sweep, sizes: np.ndarray, cal: Calibration | None = None) -> np.ndarray:
    """The model's time (us) of ``sweep`` at ``sizes`` (bytes), the harness's own cost included, with NVLS off
    where the run switched it off and the protocol it forced."""
    cal = calibration.resolve(cal)
    if sweep.algorithm == "custom":  # vLLM / TensorRT-LLM kernels pick one-shot or two-shot by size
        times = [collectives.time_us(sweep.op, sweep.system, sweep.gpus, sizes, nodes=sweep.nodes, algorithm=a,
                                     cal=cal) for a in ("direct", "two-shot")]
        time = np.minimum(*times)
    elif sweep.protocol != "auto":
        time = collectives.evaluate(sweep.op, sweep.system, sweep.gpus, sizes, nodes=sweep.nodes,
                                    algorithm=sweep.algorithm, protocol=sweep.protocol, cal=cal,
                                    nvls=sweep.nvls)["time_us"]
    else:
        time = collectives.time_us(sweep.op, sweep.system, sweep.gpus, sizes, nodes=sweep.nodes,
                                   algorithm=sweep.algorithm, cal=cal, nvls=sweep.nvls)
    return harness_time_us(sweep, time, cal)


def harness_time_us(sweep: Sweep, kernel_time_us: np.ndarray, cal: Calibration) -> np.ndarray:
    """What the sweep's harness reports for a collective whose kernels take ``kernel_time_us`` (us): at least
    the time its thread takes to launch them on the GPUs it drives one after another
    (:meth:`Calibration.harness_launch_floor_us`), plus its own cost per timed call."""
    floor = cal.harness_launch_floor_us(sweep.harness, sweep.gpus_per_thread)
    return np.maximum(np.asarray(kernel_time_us, dtype=float), floor) + cal.harness_overhead_us(sweep.harness)


def compare(splits: tuple[str, ...] = OPEN_SPLITS, cal: Calibration | None = None) -> pd.DataFrame:
    """Model against measurement for every point of the sweeps in ``splits`` that the model can reproduce; the
    ``sealed`` sweeps only when a caller names that split (they are looked at once, at the end).

    Columns: ``sweep, split, system, op, gpus, nodes, algorithm, bytes, size_class`` ("large" from 64 MiB),
    ``measured`` and ``predicted`` busbw (GB/s), ``rel_error`` = predicted / measured - 1, ``source``.
    A point's measured busbw comes from its time where the source gives one (bytes / time x the nccl-tests
    factor: the printed busbw is rounded to 0.01 GB/s, which zeroes the smallest sizes), else from its busbw.
    """
    data = points()
    rows = []
    for sweep in sweeps():
        if sweep.split not in splits or sweep.reason:
            continue
        part = data[data["sweep"] == sweep.sweep]
        factor = collectives.busbw_factor(sweep.op, sweep.gpus)
        from_time = part["bytes"].to_numpy() / part["time_us"].to_numpy() / 1e3 * factor
        measured = np.where(np.isnan(from_time), part["busbw_GBps"].to_numpy(), from_time)
        time = predict(sweep, part["bytes"].to_numpy(dtype=float), cal)
        predicted = part["bytes"].to_numpy() / time / 1e3 * factor
        for nbytes, m, p in zip(part["bytes"], measured, predicted):
            if not (m > 0 and math.isfinite(m)):
                continue  # a point too small for nccl-tests to print a non-zero busbw
            rows.append({"sweep": sweep.sweep, "split": sweep.split, "system": sweep.system, "op": sweep.op,
                         "gpus": sweep.gpus, "nodes": sweep.nodes, "algorithm": sweep.algorithm, "bytes": int(nbytes),
                         "size_class": "large" if nbytes >= LARGE_BYTES else "small", "measured": float(m),
                         "predicted": float(p), "rel_error": float(p / m - 1), "source": sweep.source})
    return pd.DataFrame(rows)


def small_message_latency(fabric: str, splits: tuple[str, ...] = OPEN_SPLITS, max_bytes: int = 256,
                          cal: Calibration | None = None) -> pd.DataFrame:
    """Per sweep over ``fabric`` in ``splits`` with printed times: the median measured time (us) of its points
    up to ``max_bytes`` (where a collective's time is its latency) and the model's at the same sizes.
    Columns ``sweep, split, system, measured_us, predicted_us``; empty if no such sweep."""
    data = points()
    rows = []
    for sweep in sweeps():
        if sweep.fabric != fabric or sweep.split not in splits or sweep.reason:
            continue
        part = data[(data["sweep"] == sweep.sweep) & (data["bytes"] <= max_bytes) & data["time_us"].notna()]
        if part.empty:
            continue
        predicted = predict(sweep, part["bytes"].to_numpy(dtype=float), cal)
        rows.append({"sweep": sweep.sweep, "split": sweep.split, "system": sweep.system,
                     "measured_us": float(part["time_us"].median()), "predicted_us": float(np.median(predicted))})
    return pd.DataFrame(rows, columns=["sweep", "split", "system", "measured_us", "predicted_us"])


def model_inputs(sweep: Sweep) -> tuple:
    """What the model reads of a run: system (and fabric), GPUs, nodes, collective, algorithm, harness, the
    recorded NVLS and protocol settings and the GPUs one harness thread drives. Two runs with the same inputs
    get one time at every size."""
    return (sweep.system, sweep.gpus, sweep.nodes, sweep.op, sweep.algorithm, sweep.harness, sweep.nvls,
            sweep.protocol, sweep.gpus_per_thread)


#: A large message's error (|predicted / measured - 1|) beyond which a point is a wide miss: the worst-case
#: goal of the collective model (issue 12). Two runs that the model cannot tell apart can both be within it only
#: when their times are within :func:`reachable_ratio` (2.08x) of each other.
WIDE_MISS = 0.35
#: A small message's median error beyond which a held-out sweep counts as too fast (or too slow) in the model.
SMALL_SIDE = 0.25


def reachable_ratio(limit: float) -> float:
    """The widest ratio of two measured times that one predicted time can be within ``limit`` (a fraction) of:
    |t / p - 1| <= limit for both runs needs t_slow / t_fast <= (1 + limit) / (1 - limit) (2.08 at 35 %)."""
    return (1 + limit) / (1 - limit)


def wide_misses(comparison: pd.DataFrame, limit: float = WIDE_MISS) -> pd.DataFrame:
    """Each point of ``comparison`` (:func:`compare`) off by more than ``limit`` (|rel_error|, a fraction),
    beside the other runs in ``comparison`` that the model cannot tell apart from its own (:func:`model_inputs`)
    measured at the same size. Columns ``sweep, split, bytes, rel_error``; ``twins``: how many such runs;
    ``nearest``, ``nearest_error``: the one the model is closest to, and its rel_error there; ``widest``,
    ``widest_split``, ``widest_ratio``: the one whose measured time is furthest from this run's, and the ratio
    of the slower time to the faster (>= 1; NaN without twins). Where ``widest_ratio`` exceeds
    :func:`reachable_ratio`, no one time is within ``limit`` of both runs: a miss no model of these inputs
    avoids."""
    inputs = {s.sweep: model_inputs(s) for s in sweeps()}
    wide = comparison[comparison["rel_error"].abs() > limit]
    rows = []
    for _, miss in wide.iterrows():
        same = comparison[(comparison["bytes"] == miss["bytes"]) & (comparison["sweep"] != miss["sweep"])
                          & (comparison["sweep"].map(inputs) == inputs[miss["sweep"]])]
        row = {"sweep": miss["sweep"], "split": miss["split"], "bytes": int(miss["bytes"]),
               "rel_error": miss["rel_error"], "twins": len(same), "nearest": "", "nearest_error": np.nan,
               "widest": "", "widest_split": "", "widest_ratio": np.nan}
        if len(same):
            nearest = same.loc[same["rel_error"].abs().idxmin()]
            ratio = np.maximum(same["measured"], miss["measured"]) / np.minimum(same["measured"], miss["measured"])
            widest = same.loc[ratio.idxmax()]
            row.update(nearest=nearest["sweep"], nearest_error=nearest["rel_error"], widest=widest["sweep"],
                       widest_split=widest["split"], widest_ratio=float(ratio.max()))
        rows.append(row)
    return pd.DataFrame(rows, columns=["sweep", "split", "bytes", "rel_error", "twins", "nearest", "nearest_error",
                                       "widest", "widest_split", "widest_ratio"])


def deployment_spread(splits: tuple[str, ...] = OPEN_SPLITS) -> pd.DataFrame:
    """How far apart two published runs are that the model cannot tell apart (:func:`model_inputs`). Per such
    pair and size class, on the sizes both measured: the ``points`` and ``spread_pct``, the median over those
    sizes of the slower run's time over the faster's, - 1 (%). A model of the hardware gives both runs one time,
    so it cannot be closer than ``floor_pct`` = s / (2 + s) to each at once (s the spread). Columns ``sweep,
    other_sweep, splits, system, op, gpus, nodes, size_class, points, spread_pct, floor_pct``; sealed sweeps
    only when ``splits`` names them."""
    data, groups = points(), {}
    for sweep in sweeps():
        if sweep.split in splits and not sweep.reason:
            part = data[data["sweep"] == sweep.sweep]
            times = pd.Series(measured_times_us(sweep, part), index=part["bytes"].to_numpy()).dropna()
            groups.setdefault(model_inputs(sweep), []).append((sweep, times))
    rows = []
    for (system, gpus, nodes, op, *_), runs in groups.items():
        for (a, ta), (b, tb) in itertools.combinations(runs, 2):
            common = ta.index.intersection(tb.index)
            ratio = np.maximum(ta[common], tb[common]) / np.minimum(ta[common], tb[common])
            for size_class, part in ratio.groupby(np.where(ratio.index >= LARGE_BYTES, "large", "small")):
                spread = float(part.median() - 1)
                rows.append({"sweep": a.sweep, "other_sweep": b.sweep, "splits": f"{a.split}/{b.split}",
                             "system": system, "op": op, "gpus": gpus, "nodes": nodes, "size_class": size_class,
                             "points": len(part), "spread_pct": 100 * spread, "floor_pct": 100 * spread / (2 + spread)})
    return pd.DataFrame(rows, columns=["sweep", "other_sweep", "splits", "system", "op", "gpus", "nodes",
                                       "size_class", "points", "spread_pct", "floor_pct"])


def not_modelled() -> pd.DataFrame:
    """The sweeps the model cannot reproduce, with the reason."""
    return pd.DataFrame([{"sweep": s.sweep, "split": s.split, "reason": s.reason} for s in sweeps() if s.reason])


def summary(comparison: pd.DataFrame) -> pd.DataFrame:
    """Median and worst |rel_error| and points, by split and size class."""
    data = comparison.assign(abs_error=comparison["rel_error"].abs())
    return (data.groupby(["split", "size_class"])["abs_error"]
            .agg(points="size", median_abs_error="median", worst_abs_error="max").reset_index())
