"""Your cluster against the model: read the output of nccl-tests and compare it, size by size.

``python -m multigpu validate --system ID --nccl-tests LOG`` reads what
``all_reduce_perf``, ``all_gather_perf``, ``reduce_scatter_perf``,
``alltoall_perf`` or ``sendrecv_perf`` printed (any nccl-tests version: with or
without the ``redop`` and ``root`` columns) and prints, for each message size,
the measured and the predicted time and busbw (out-of-place) and the error.

The collective is read from the log (``Collective test starting: ...``, or the
command line it echoes), the ranks from its ``Rank`` lines and the nodes from
their host names; each can be given instead. A log written with
``NCCL_DEBUG=INFO`` also says which of NCCL's settings the run changed
(``NCCL INFO NCCL_ALGO set by environment to Ring``); the model follows
``NCCL_ALGO``, ``NCCL_PROTO`` and ``NCCL_NVLS_ENABLE`` (:class:`~multigpu.comm.ncclenv.Settings`).
A run whose thread drives several GPUs (the header's ``nGpus N``, from ``-g N``)
takes at least N kernel launches per collective, and the prediction does too
(:meth:`~multigpu.comm.calibration.Calibration.harness_launch_floor_us`).
A log that cannot be read is an :class:`~multigpu.common.errors.InputError`
at its file and line.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.comm.ncclenv import Settings
from multigpu.common.datafiles import read_bytes
from multigpu.common.errors import InputError
from multigpu.evidence import deployment

#: nccl-tests binary -> the model's collective
BINARIES = {"all_reduce_perf": "allreduce", "all_gather_perf": "allgather", "reduce_scatter_perf": "reducescatter",
            "alltoall_perf": "alltoall", "sendrecv_perf": "sendrecv", "broadcast_perf": "broadcast"}
_RANK = re.compile(r"^#\s*Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[+-]?\d+)?$", re.I)
_NCCL_LINE = re.compile(r"\bNCCL (?:INFO|WARN)\b")
_THREAD_GPUS = re.compile(r"\bnThread\s+\d+\s+nGpus\s+(\d+)")
_SETTING = re.compile(r"\bNCCL INFO (NCCL_ALGO|NCCL_PROTO|NCCL_NVLS_ENABLE) set by environment to ([^\s.]+)")


@dataclass(frozen=True)
class Point:
    """One size of a log: the nccl-tests size (bytes) and the out-of-place time (us) and busbw (GB/s)."""

    line: int
    bytes: int
    time_us: float
    busbw_GBps: float


@dataclass(frozen=True)
class Log:
    """What a log says: the collective, ranks, nodes, its points and the NCCL settings it printed."""

    op: str | None
    ranks: int | None
    nodes: int | None
    points: tuple[Point, ...]
    settings: Settings = Settings()
    gpus_per_thread: int = 1  #: GPUs each thread of the run drove (the header's ``nGpus``)


def parse(path: str | Path) -> Log:
    """Read an nccl-tests log; an :class:`InputError` at file:line for a size row that cannot be read, or
    for a log without any."""
    name = str(path)
    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
    except InputError:
        raise
    op, hosts, ranks, points, changed, per_thread = None, [], 0, [], {}, 1
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if _NCCL_LINE.search(line):  # NCCL_DEBUG output, whose host names may start with a digit
            setting = _SETTING.search(line)
            if setting:
                changed[setting.group(1)] = setting.group(2)
            continue
        for binary, collective in BINARIES.items():
            if binary in line and op is None:
                op = collective
        thread_gpus = _THREAD_GPUS.search(line)
        if thread_gpus:
            per_thread = int(thread_gpus.group(1))
        rank = _RANK.match(line)
        if rank:
            ranks += 1
            hosts.append(rank.group(1))
            continue
        if line.startswith("#") or not line[0].isdigit():
            continue
        points.append(_point(line.split(), name, number))
    points = [p for p in points if p.bytes > 0]
    if not points:
        raise InputError("has no size rows; expected the table nccl-tests prints (size, count, type, ..., time, "
                         "algbw, busbw)", name, 1)
    return Log(op, ranks or None, len(set(hosts)) or None, tuple(points), Settings(tuple(sorted(changed.items()))),
               per_thread)


def _point(tokens: list[str], name: str, number: int) -> Point:
    """One size row: size first; out-of-place time, algbw, busbw and #wrong are the 8th to 5th tokens from
    the end (the in-place ones follow)."""
    if len(tokens) < 10 or not tokens[0].isdigit():
        raise InputError(f"'{' '.join(tokens)[:60]}' is not a size row; expected size, count, type, ..., then "
                         f"time, algbw, busbw, #wrong out-of-place and in-place", name, number)
    time, _, busbw = tokens[-8:-5]
    if not (_NUMBER.match(time) and _NUMBER.match(busbw)):
        raise InputError(f"time '{time}' or busbw '{busbw}' is not a number", name, number)
    return Point(number, int(tokens[0]), float(time), float(busbw))


@dataclass(frozen=True)
class Comparison:
    """One size: measured against predicted time (us) and busbw (GB/s); ``error_pct`` = predicted time /
    measured time - 1, in % (positive: the model is slower)."""

    line: int
    bytes: int
    measured_time_us: float
    predicted_time_us: float
    measured_busbw_GBps: float
    predicted_busbw_GBps: float
    algorithm: str
    protocol: str
    error_pct: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(path: str | Path, system: str, *, op: str | None = None, gpus: int | None = None,
            nodes: int | None = None, cal: Calibration | None = None,
            nvls: bool = True) -> tuple[Log, list[Comparison]]:
    """The log of ``path`` against the model of ``system``, size by size, with the NCCL settings the log
    printed (:class:`~multigpu.comm.ncclenv.Settings`). ``op``, ``gpus`` and ``nodes`` override what the log
    says; without them the log must say it. ``nvls=False``: the run had ``NCCL_NVLS_ENABLE=0`` (whatever the
    log says)."""
    log = parse(path)
    op = op or log.op
    gpus = gpus or log.ranks
    nodes = nodes or log.nodes or 1
    missing = [what for what, value in (("--op", op), ("--gpus", gpus)) if value is None]
    if missing:
        raise InputError(f"does not say {' or '.join(w.removeprefix('--') for w in missing)}; give "
                         f"{' and '.join(missing)}", str(path), 1)
    sizes = np.array([p.bytes for p in log.points], dtype=float)
    log = Log(op, gpus, nodes, log.points, log.settings, log.gpus_per_thread)
    result = _evaluate(log, system, sizes, cal, nvls)
    rows = []
    for i, p in enumerate(log.points):
        predicted = float(result["time_us"][i])
        rows.append(Comparison(p.line, p.bytes, p.time_us, predicted, p.busbw_GBps, float(result["busbw_GBps"][i]),
                               str(result["algorithm"][i]), str(result["protocol"][i]),
                               100 * (predicted / p.time_us - 1) if p.time_us > 0 else math.nan))
    return log, rows


def _evaluate(log: Log, system: str, sizes: np.ndarray, cal: Calibration | None, nvls: bool) -> dict[str, np.ndarray]:
    """The model of ``log``'s collective (op, ranks and nodes known) at ``sizes``, as its run set NCCL (an
    algorithm forced for all-reduce only, e.g. Tree, leaves NCCL's choice to the other collectives)."""
    settings = log.settings
    algorithm = settings.algorithm if settings.algorithm in collectives.VALID[log.op] else "auto"
    result = collectives.evaluate(log.op, system, log.ranks, sizes, nodes=log.nodes or 1, algorithm=algorithm,
                                  protocol=settings.protocol, cal=cal, nvls=nvls and settings.nvls)
    floor = calibration.resolve(cal).harness_launch_floor_us("nccl-tests", log.gpus_per_thread)
    time = np.maximum(result["time_us"], floor)
    slower = result["time_us"] / time
    return {**result, "time_us": time, "algbw_GBps": result["algbw_GBps"] * slower,
            "busbw_GBps": result["busbw_GBps"] * slower}


def latency_factor(log: Log, system: str, cal: Calibration | None = None, used: np.ndarray | None = None,
                   nvls: bool = True) -> float:
    """The factor on every latency of the model (:func:`multigpu.evidence.deployment.fit_factor`) that fits
    ``log`` (as :func:`compare` returns it: collective, ranks and nodes known) best on ``system``; fitted on the
    log's points where ``used`` (a mask, e.g. :func:`multigpu.evidence.deployment.anchors`; default: every
    point, so in sample); ``nvls`` as :func:`compare`."""
    sizes = np.array([p.bytes for p in log.points], dtype=float)
    times = np.array([p.time_us for p in log.points], dtype=float)
    keep = (times > 0) & (True if used is None else used)
    return deployment.fit_factor(lambda c: _evaluate(log, system, sizes[keep], c, nvls)["time_us"], times[keep], cal)
