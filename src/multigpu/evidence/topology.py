"""Tables, series and figures of chapter 2 (NVSwitch topology), computed by the model.

Every function calls :mod:`multigpu.hardware.wiring`, :mod:`multigpu.comm.collectives` or
:mod:`multigpu.comm.calibration` and returns a pandas DataFrame whose column names
carry their units. Bandwidths are GB/s (1e9 bytes/s): ``_GBps_per_dir`` one
direction, ``_GBps_bidir`` both directions added. Two kinds of bandwidth
appear, and the names keep them apart:

- the *wiring* (line rate, no efficiency): what the links of a topology give a
  traffic pattern, as in the vendors' tables (:func:`group_bandwidth`,
  :func:`fanout`, :func:`rack_patterns`);
- the *collectives* (achievable, calibrated with ``cal``, default the shipped calibration): time,
  algbw and busbw with the nccl-tests conventions (:func:`collective_table`, :func:`allreduce_vs_size`,
  :func:`nvls_gain`, :func:`scaling`).

The three 8-GPU wirings compared throughout are :data:`SWITCH` (HGX H200,
NVSwitch gen3), :data:`MESH` (NVIDIA's hypothetical 8x H200 full mesh of
128 GB/s bidirectional links) and :data:`PCIE` (an 8x L40S PCIe Gen4 server).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.common.units import GiB, KiB, MiB
from multigpu.evidence import intervals, measurements
from multigpu.hardware import catalog, wiring

SWITCH, MESH, PCIE = "hgx-h200", "h200-p2p-8", "pcie-l40s-8"
#: The three 8-GPU wirings of the chapter, switch first.
COMPARED = (SWITCH, MESH, PCIE)
#: Short names for tables and legends.
LABELS = {
    SWITCH: "NVSwitch (HGX H200)",
    MESH: "full mesh (8x H200, hypothetical)",
    PCIE: "PCIe Gen4 (8x L40S)",
    "mi300x-8": "full mesh (8x MI300X)",
    "dgx-a100": "DGX A100 (NVLink 3, HDR)",
    "hgx-h100": "HGX H100 (NVLink 4, NDR)",
    "dgx-b200": "DGX B200 (NVLink 5, NDR)",
    "dgx-b300": "DGX B300 (NVLink 5, XDR)",
    "gb200-nvl72": "GB200 NVL72 (NVLink 5, NDR)",
    "vr-nvl72": "Vera Rubin NVL72 (NVLink 6)",
}
#: NVIDIA's Table 1 ("GPU-to-GPU bandwidth") in the NVSwitch inference blog, bidirectional GB/s:
#: point-to-point ``links x 128`` and NVSwitch 900 for 2, 4 and 8 GPUs (the article's claim C11).
BLOG_LINK_GBps_bidir = 128.0
BLOG_SWITCH_GBps_bidir = 900.0
BLOG_GPU_COUNTS = (2, 4, 8)
#: The all-reduce algorithms of :func:`allreduce_vs_size`, with the names the chapter prints.
ALLREDUCE_ALGORITHMS = {"ring": "ring", "tree": "tree", "nvls": "NVLS", "direct": "one-shot",
                        "two-shot": "two-shot (MultiShot)"}
#: NCCL's own choice set for all-reduce (what ``auto`` weighs); the custom kernels come on top.
NCCL_ALGORITHMS = tuple(collectives.AUTO["allreduce"])
#: Message sizes of the size sweeps: 1 KiB to 16 GiB in quarter octaves.
SIZES = 2.0 ** np.arange(10, 34.001, 0.25)
#: Line rate, as the vendors' tables count it: every link at full rate, a transfer staged through host
#: memory at the calibrated bounce factor (the wiring tables use the shipped calibration's).
LINE_RATE = calibration.default().line_rate()


def label(system_id: str) -> str:
    """The chapter's short name of a system (its catalogue name if it has none)."""
    return LABELS.get(system_id) or catalog.system(system_id).name


def _line_rate(topo: wiring.Topology, gpus: Sequence[int], pattern: str) -> wiring.PatternBandwidth:
    return wiring.pattern_bandwidth(topo, list(gpus), pattern, LINE_RATE)


# ------------------------------------------------------------------ the wiring


def wiring_table(system_ids: Sequence[str] = COMPARED) -> pd.DataFrame:
    """How each system joins its GPUs, at line rate (GB/s).

    Columns: ``system``, ``wiring`` (catalogue topology), ``gpus``,
    ``gpu_GBps_per_dir`` / ``gpu_GBps_bidir`` (every GPU-to-GPU link of one GPU,
    NVLink or PCIe), ``pair_GBps_per_dir`` / ``pair_GBps_bidir`` (what one pair
    gets when it is the only traffic), ``pair_share_pct`` (the pair's share of
    the GPU's total).
    """
    rows = []
    for system_id in system_ids:
        topo = wiring.for_system(system_id)
        system = catalog.system(system_id)
        own = system.nvlink_GBps_per_dir or system.pcie_GBps_per_dir
        pair = _line_rate(topo, [0, 1], "pair").min_flow_GBps
        rows.append({"system": label(system_id), "wiring": system.topology, "gpus": system.gpus_per_node,
                     "gpu_GBps_per_dir": own, "gpu_GBps_bidir": 2 * own,
                     "pair_GBps_per_dir": pair, "pair_GBps_bidir": 2 * pair, "pair_share_pct": 100 * pair / own})
    return pd.DataFrame(rows).round(1)


def blog_table1(counts: Sequence[int] = BLOG_GPU_COUNTS) -> pd.DataFrame:
    """NVIDIA's Table 1 beside the model's wiring, bidirectional GB/s as the blog prints it.

    Columns: ``gpus``; ``blog_p2p_GBps_bidir`` (the blog: links x 128) and
    ``model_mesh_gpu_GBps_bidir`` (what one GPU of the mesh sends to all its
    peers at once); ``blog_switch_GBps_bidir`` (900) and
    ``model_switch_gpu_GBps_bidir``; then what *each pair* gets while all
    ``gpus`` exchange data at once: ``model_mesh_pair_GBps_bidir`` and
    ``model_switch_pair_GBps_bidir``.
    """
    switch, mesh = wiring.for_system(SWITCH), wiring.for_system(MESH)
    rows = []
    for k in counts:
        gpus = list(range(k))
        m, s = _line_rate(mesh, gpus, "alltoall"), _line_rate(switch, gpus, "alltoall")
        rows.append({"gpus": k, "blog_p2p_GBps_bidir": (k - 1) * BLOG_LINK_GBps_bidir,
                     "model_mesh_gpu_GBps_bidir": 2 * m.per_gpu_send_GBps,
                     "blog_switch_GBps_bidir": BLOG_SWITCH_GBps_bidir,
                     "model_switch_gpu_GBps_bidir": 2 * s.per_gpu_send_GBps,
                     "model_mesh_pair_GBps_bidir": 2 * m.min_flow_GBps,
                     "model_switch_pair_GBps_bidir": 2 * s.min_flow_GBps})
    return pd.DataFrame(rows).round(1)


def group_bandwidth(system_ids: Sequence[str] = COMPARED, counts: Sequence[int] = range(2, 9)) -> pd.DataFrame:
    """Line-rate bandwidth of groups of ``counts`` GPUs (the first k of the node), one row per system and k.

    Columns: ``system``, ``gpus``; ``pair_alone_GBps_per_dir`` (GPU 0 to GPU 1,
    nothing else running); ``pair_in_alltoall_GBps_per_dir`` (the slowest pair
    while every GPU sends to every other at once); ``gpu_alltoall_GBps_per_dir``
    (what the least-served GPU sends in total during that all-to-all);
    ``gpu_ring_GBps_per_dir`` (what each GPU sends with the best packing of
    rings, as NCCL's channels do).
    """
    rows = []
    for system_id in system_ids:
        topo = wiring.for_system(system_id)
        pair = _line_rate(topo, [0, 1], "pair").min_flow_GBps
        for k in counts:
            gpus = list(range(k))
            a2a = _line_rate(topo, gpus, "alltoall")
            rows.append({"system": label(system_id), "gpus": k, "pair_alone_GBps_per_dir": pair,
                         "pair_in_alltoall_GBps_per_dir": a2a.min_flow_GBps,
                         "gpu_alltoall_GBps_per_dir": a2a.per_gpu_send_GBps,
                         "gpu_ring_GBps_per_dir": wiring.ring_bandwidth(topo, gpus, LINE_RATE).bw_GBps_per_dir})
    return pd.DataFrame(rows).round(1)


def fanout(system_id: str = SWITCH, peers: Sequence[int] | None = None) -> pd.DataFrame:
    """One GPU (GPU 0) sending to ``peers`` other GPUs at once, at line rate.

    Columns: ``peers``, ``per_peer_GBps_per_dir`` (each flow), ``total_GBps_per_dir``
    (what GPU 0 sends in all) and ``bottleneck`` (the link that caps the flows).
    Default: every count from 1 to all other GPUs of the node.
    """
    topo = wiring.for_system(system_id)
    peers = range(1, topo.gpus_per_node) if peers is None else peers
    rows = []
    for m in peers:
        rates = wiring.flow_rates(topo, [topo.route(0, b) for b in range(1, m + 1)], LINE_RATE)
        rows.append({"peers": m, "per_peer_GBps_per_dir": float(rates.rates_GBps.min()),
                     "total_GBps_per_dir": float(rates.rates_GBps.sum()), "bottleneck": rates.bottleneck[0]})
    return pd.DataFrame(rows).round(1)


#: The traffic patterns of :func:`rack_patterns`, by the name its ``pattern`` column prints.
PAIR = "one pair alone"
PERMUTATION = "permutation across the bisection (i to i + n/2)"
FAN_OUT = "one GPU to all others (fan-out)"
INCAST = "all others to one GPU (incast)"
ALL_TO_ALL = "all-to-all"


def rack_patterns(system_id: str = "vr-nvl72") -> pd.DataFrame:
    """Traffic patterns on a whole NVLink domain (an NVL72 rack), at line rate, TB/s and GB/s.

    Rows: one pair alone; a permutation in which GPU i sends to GPU i + n/2
    (every flow crosses the bisection); one GPU sending to all others
    (fan-out); all others sending to one GPU (incast); all-to-all. Columns:
    ``pattern``, ``flows``, ``per_flow_GBps_per_dir`` (the slowest flow),
    ``most_sent_by_one_gpu_GBps_per_dir``, ``delivered_TBps`` (sum of all flow
    rates: bytes arriving per second in the whole rack).
    """
    topo = wiring.for_system(system_id)
    n = topo.gpus_per_node
    patterns = {
        PAIR: [(0, 1)],
        PERMUTATION: [(i, (i + n // 2) % n) for i in range(n)],
        FAN_OUT: [(0, b) for b in range(1, n)],
        INCAST: [(b, 0) for b in range(1, n)],
        ALL_TO_ALL: [(a, b) for a in range(n) for b in range(n) if a != b],
    }
    rows = []
    for name, pairs in patterns.items():
        rates = wiring.flow_rates(topo, [topo.route(a, b) for a, b in pairs], LINE_RATE).rates_GBps
        sent: dict[int, float] = {}
        for (a, _), rate in zip(pairs, rates):
            sent[a] = sent.get(a, 0.0) + float(rate)
        rows.append({"pattern": name, "flows": len(pairs), "per_flow_GBps_per_dir": float(rates.min()),
                     "most_sent_by_one_gpu_GBps_per_dir": max(sent.values()),
                     "delivered_TBps": float(rates.sum()) / 1000})
    return pd.DataFrame(rows).round(2)


def rack_aggregate(system_id: str = "vr-nvl72") -> dict[str, float]:
    """An NVLink domain's headline aggregate against what it can move (TB/s).

    Keys: ``gpus``; ``gpu_TBps_bidir`` / ``gpu_TBps_per_dir`` (one GPU's NVLink);
    ``sum_bidir_TBps`` (GPUs x per-GPU bidirectional: the vendor's aggregate);
    ``delivered_TBps`` (the most bytes per second the whole rack can deliver,
    every GPU sending at its port rate); ``bisection_TBps_per_dir`` (half the
    GPUs to the other half, one direction).
    """
    topo = wiring.for_system(system_id)
    system = catalog.system(system_id)
    n = topo.gpus_per_node
    half = [topo.route(i, i + n // 2) for i in range(n // 2)]
    permutation = [topo.route(i, (i + n // 2) % n) for i in range(n)]
    return {"gpus": n, "gpu_TBps_bidir": system.nvlink_GBps_bidir / 1000,
            "gpu_TBps_per_dir": system.nvlink_GBps_per_dir / 1000,
            "sum_bidir_TBps": n * system.nvlink_GBps_bidir / 1000,
            "delivered_TBps": float(wiring.flow_rates(topo, permutation, LINE_RATE).rates_GBps.sum()) / 1000,
            "bisection_TBps_per_dir": float(wiring.flow_rates(topo, half, LINE_RATE).rates_GBps.sum()) / 1000}


# ------------------------------------------------------------------ collectives


def collective_table(system_ids: Sequence[str] = COMPARED, counts: Sequence[int] = range(2, 9),
                     nbytes: float = GiB, cal: Calibration | None = None) -> pd.DataFrame:
    """All-reduce and all-to-all of ``nbytes`` (nccl-tests sizes) for groups of ``counts`` GPUs.

    One row per system and GPU count: ``system``, ``gpus``,
    ``allreduce_algorithm`` (the fastest of NCCL's own), ``allreduce_busbw_GBps``,
    ``allreduce_time_us``, ``alltoall_busbw_GBps``, ``alltoall_time_us``.
    """
    rows = []
    for system_id in system_ids:
        for k in counts:
            ar = collectives.collective("allreduce", system_id, k, nbytes, cal=cal)
            a2a = collectives.collective("alltoall", system_id, k, nbytes, cal=cal)
            rows.append({"system": label(system_id), "gpus": k, "allreduce_algorithm": ar.algorithm,
                         "allreduce_busbw_GBps": ar.busbw_GBps, "allreduce_time_us": ar.time_us,
                         "alltoall_busbw_GBps": a2a.busbw_GBps, "alltoall_time_us": a2a.time_us})
    return pd.DataFrame(rows).round(1)


def wide(frame: pd.DataFrame, column: str, index: str = "gpus") -> pd.DataFrame:
    """One ``column`` of a long table, one column per system (in the order they appear)."""
    order = list(dict.fromkeys(frame["system"]))
    return frame.pivot(index=index, columns="system", values=column)[order].rename_axis(columns=None)


def allreduce_vs_size(system_id: str = SWITCH, gpus: int = 8, sizes: Sequence[float] | np.ndarray = SIZES,
                      algorithms: Sequence[str] = tuple(ALLREDUCE_ALGORITHMS),
                      cal: Calibration | None = None) -> pd.DataFrame:
    """All-reduce time against message size for each algorithm the system can run (long format).

    Columns: ``algorithm`` (the chapter's name), ``bytes``, ``time_us``,
    ``busbw_GBps``, ``protocol`` (the fastest protocol of that algorithm).
    Algorithms the system cannot run are left out.
    """
    possible = collectives.available("allreduce", system_id, gpus, cal=cal)
    frames = []
    for name in algorithms:
        if name not in possible:
            continue
        result = collectives.evaluate("allreduce", system_id, gpus, sizes, algorithm=name, cal=cal)
        frames.append(pd.DataFrame({"algorithm": ALLREDUCE_ALGORITHMS.get(name, name), "bytes": result["bytes"],
                                    "time_us": result["time_us"], "busbw_GBps": result["busbw_GBps"],
                                    "protocol": result["protocol"]}))
    return pd.concat(frames, ignore_index=True)


def allreduce_choice(system_id: str = MESH, gpus: int = 8, sizes: Sequence[float] | np.ndarray = SIZES,
                     cal: Calibration | None = None) -> pd.DataFrame:
    """The all-reduce NCCL would run at each size (the model's choice of algorithm and protocol): ``bytes``,
    ``time_us``, ``busbw_GBps``, ``algorithm``, ``protocol``, with the time's 90 % prediction interval
    (``time_us_lo``, ``time_us_hi``, :func:`multigpu.evidence.intervals.time_bounds`)."""
    frame = pd.DataFrame(collectives.evaluate("allreduce", system_id, gpus, sizes, cal=cal))
    return intervals.time_bounds(frame, "time_us")


#: the size grid the all-reduce plans are compared on: 1/64 octave from 1 byte to 1 TiB (about 1 % apart)
GRID = 2.0 ** np.arange(0, 40.001, 1 / 64)


@dataclass(frozen=True)
class PlanTimes:
    """Every plan of some all-reduce algorithms on one node, timed on :data:`GRID`."""

    names: list[tuple[str, str]]  #: (algorithm, protocol) of each plan
    latency_us: np.ndarray  #: each plan's time at zero bytes
    limit_us_per_byte: np.ndarray  #: each plan's slope for very large messages
    times_us: np.ndarray  #: plans x GRID

    def fastest(self) -> np.ndarray:
        """The index of the fastest plan at each size of :data:`GRID`."""
        return np.argmin(self.times_us, axis=0)


def _plan_times(system_id: str, gpus: int, algorithms: Sequence[str], cal: Calibration | None = None) -> PlanTimes:
    """Every plan of ``algorithms`` that the system can run, timed on :data:`GRID` (plans are not affine:
    below their full size NCCL plans ramp up to their bandwidth)."""
    names, latency, slope, times = [], [], [], []
    possible = collectives.available("allreduce", system_id, gpus, cal=cal)
    for name in algorithms:
        if name not in possible:
            continue
        for plan in collectives.plans("allreduce", system_id, gpus, algorithm=name, cal=cal):
            t0, t1, t2 = plan.time_us(np.array([0.0, 2.0**50, 2.0**51]))
            names.append((name, plan.protocol))
            latency.append(float(t0))
            slope.append(float(t2 - t1) / 2.0**50)
            times.append(plan.time_us(GRID))
    return PlanTimes(names, np.array(latency), np.array(slope), np.vstack(times))


def fastest_ranges(system_id: str = SWITCH, gpus: int = 8, algorithms: Sequence[str] = NCCL_ALGORITHMS,
                   lo: float = KiB, hi: float = 16 * GiB, cal: Calibration | None = None) -> pd.DataFrame:
    """Which (algorithm, protocol) is fastest for which all-reduce sizes, and where they cross.

    The plans are timed on a grid of 1/64 octave (:data:`GRID`); a crossover is
    the first grid size where another plan is fastest. Columns: ``algorithm``,
    ``protocol``, ``from_KiB``, ``to_KiB`` (the size range, within ``lo``..``hi``
    bytes), ``latency_us`` and ``busbw_GBps_limit`` (the plan's busbw for very
    large messages).
    """
    plans = _plan_times(system_id, gpus, algorithms, cal=cal)
    factor = collectives.busbw_factor("allreduce", gpus)
    inside = (GRID >= lo) & (GRID <= hi)
    sizes, best = GRID[inside], plans.fastest()[inside]
    change = np.flatnonzero(np.diff(best)) + 1
    edges = [lo, *sizes[change], hi]
    rows = []
    for i, index in enumerate([best[0], *best[change]]):
        name, protocol = plans.names[index]
        rows.append({"algorithm": ALLREDUCE_ALGORITHMS.get(name, name), "protocol": protocol,
                     "from_KiB": edges[i] / KiB, "to_KiB": edges[i + 1] / KiB,
                     "latency_us": float(plans.latency_us[index]),
                     "busbw_GBps_limit": factor / plans.limit_us_per_byte[index] / 1e3})
    return pd.DataFrame(rows).round(1)


def speedup_vs_size(system_id: str = SWITCH, gpus: int = 8, algorithm: str = "two-shot",
                    against: Sequence[str] = ("ring",), sizes: Sequence[float] | np.ndarray = SIZES,
                    cal: Calibration | None = None) -> pd.DataFrame:
    """How many times faster ``algorithm`` is than the best of ``against`` at each size.

    Columns: ``bytes``, ``time_us`` (``algorithm``), ``against_time_us`` (the
    fastest of ``against``), ``speedup_x`` (against / algorithm).
    """
    mine = collectives.evaluate("allreduce", system_id, gpus, sizes, algorithm=algorithm, cal=cal)["time_us"]
    theirs = np.min(np.vstack([collectives.evaluate("allreduce", system_id, gpus, sizes, algorithm=a,
                                                    cal=cal)["time_us"] for a in against]), axis=0)
    return pd.DataFrame({"bytes": np.asarray(sizes, dtype=float), "time_us": mine, "against_time_us": theirs,
                         "speedup_x": theirs / mine})


def regimes(system_id: str = SWITCH, gpus: int = 8, algorithms: Sequence[str] = NCCL_ALGORITHMS,
            latency_bound: float = 0.5, bandwidth_bound: float = 0.1,
            cal: Calibration | None = None) -> dict[str, float]:
    """Where an all-reduce is latency-bound and where it is bandwidth-bound, for the fastest of ``algorithms``.

    The latency share of a plan is ``latency / time``. Keys:
    ``latency_bound_to_bytes`` (the largest size at which it is at least
    ``latency_bound``), ``bandwidth_bound_from_bytes`` (the smallest size from
    which it stays at most ``bandwidth_bound``); sizes on :data:`GRID`.
    """
    plans = _plan_times(system_id, gpus, algorithms, cal=cal)
    sizes, best = GRID, plans.fastest()
    share = plans.latency_us[best] / plans.times_us[best, np.arange(sizes.size)]
    above = sizes[share >= latency_bound]
    below = share <= bandwidth_bound
    start = int(np.argmax(below & np.flip(np.cumprod(np.flip(below)).astype(bool))))
    return {"latency_bound_to_bytes": float(above.max()), "bandwidth_bound_from_bytes": float(sizes[start])}


def ring_terms(system_id: str = "gb200-nvl72", counts: Sequence[int] = (2, 4, 8, 16, 32, 48, 64, 72),
               small: float = 8 * KiB, large: float = GiB, cal: Calibration | None = None) -> pd.DataFrame:
    """Ring all-reduce on one switch, split into its latency and bandwidth terms, against the GPU count.

    The latency term is the time of a zero-byte message; ``steps`` is it less
    NCCL's base latency, divided by the per-hop latency (LL protocol over
    NVLink; both times the measured-over-tuner latency scale). Columns: ``gpus``, ``steps``, ``latency_ll_us``,
    ``latency_simple_us``, ``bytes_factor`` (bytes each GPU sends per byte of
    the message, from the Simple plan's slope), ``ring_small_us`` and
    ``ring_large_us`` (the fastest ring protocol at ``small`` and ``large``
    bytes), ``nvls_small_us`` (NVLS at ``small``, where the system has it).
    """
    topo = wiring.for_system(system_id)
    scale = calibration.resolve(cal).latency_scale(topo.arch)
    base = calibration.resolve(cal).value("base_latency_us", "ring.ll") * scale
    hop = calibration.resolve(cal).value("hop_latency_us", "nvlink.ring.ll") * scale
    rows = []
    for k in counts:
        plans = {p.protocol: p for p in collectives.plans("allreduce", system_id, k, algorithm="ring", cal=cal)}
        lat = {proto: float(p.time_us(np.array([0.0]))[0]) for proto, p in plans.items()}
        simple = plans["simple"]
        far = simple.time_us(np.array([2.0**50, 2.0**50 + 1e9]))
        slope = float(far[1] - far[0])  # us per GB, beyond the ramp
        setup = collectives.place("allreduce", topo, k, cal=cal)
        bw = wiring.ring_bandwidth(topo, setup.gpus, setup.efficiency()).bw_GBps_per_dir
        ring = collectives.evaluate("allreduce", system_id, k, [small, large], algorithm="ring", cal=cal)["time_us"]
        nvls = (collectives.time_us("allreduce", system_id, k, small, algorithm="nvls", cal=cal)
                if "nvls" in collectives.available("allreduce", system_id, k, cal=cal) else math.nan)
        rows.append({"gpus": k, "steps": round((lat["ll"] - base) / hop) if hop else 0, "latency_ll_us": lat["ll"],
                     "latency_simple_us": lat["simple"], "bytes_factor": slope * bw / 1e6,
                     "ring_small_us": float(ring[0]), "ring_large_us": float(ring[1]), "nvls_small_us": nvls})
    return pd.DataFrame(rows).round({"latency_ll_us": 1, "latency_simple_us": 1, "bytes_factor": 3,
                                     "ring_small_us": 1, "ring_large_us": 1, "nvls_small_us": 1})


def nvls_gain(system_id: str = SWITCH, counts: Sequence[int] = range(2, 9), nbytes: float = 8 * GiB,
              cal: Calibration | None = None) -> pd.DataFrame:
    """NVLS (in-switch reduction) against ring all-reduce, busbw at ``nbytes``, with measurements where published.

    Columns: ``gpus``, ``ring_busbw_GBps``, ``nvls_busbw_GBps``, ``gain_x``
    (NVLS / ring), ``auto_algorithm`` (what the model picks),
    ``measured_busbw_GBps`` and ``measured_algorithm`` (a measured row of
    ``data/measurements.csv`` for this system, GPU count, one node and size;
    NaN / empty where there is none), and each busbw's 90 % prediction interval
    (``<column>_lo``, ``<column>_hi``, :func:`multigpu.evidence.intervals.busbw_bounds`).
    """
    data = measurements.measurements()
    data = data[(data["kind"] == "measured") & (data["system_id"] == system_id) & (data["op"] == "allreduce")
                & (data["metric"] == "busbw") & (data["model_nodes"] == "1")]
    data = data[data["bytes"].astype(float) == float(nbytes)]
    rows = []
    for k in counts:
        ring = collectives.collective("allreduce", system_id, k, nbytes, algorithm="ring", cal=cal).busbw_GBps
        nvls = collectives.collective("allreduce", system_id, k, nbytes, algorithm="nvls", cal=cal).busbw_GBps
        auto = collectives.collective("allreduce", system_id, k, nbytes, cal=cal).algorithm
        measured = data[data["model_gpus"].astype(int) == k]
        rows.append({"gpus": k, "ring_busbw_GBps": ring, "nvls_busbw_GBps": nvls, "gain_x": nvls / ring,
                     "auto_algorithm": auto,
                     "measured_busbw_GBps": float(measured["model_value"].iloc[0]) if len(measured) else math.nan,
                     "measured_algorithm": measured["algorithm"].iloc[0] if len(measured) else ""})
    busbw = ["ring_busbw_GBps", "nvls_busbw_GBps"]
    frame = intervals.busbw_bounds(pd.DataFrame(rows), busbw, nbytes)
    return frame.round({"gain_x": 2, "measured_busbw_GBps": 1} | {c: 1 for c in frame if c.startswith(tuple(busbw))})


# ------------------------------------------------------------------ beyond the node


def scale_out_table(system_ids: Sequence[str] = ("dgx-a100", "hgx-h100", "dgx-b200", "dgx-b300", "gb200-nvl72",
                                                 "vr-nvl72"),
                    variants: dict[str, dict[str, object]] | None = None, nbytes: float = GiB,
                    cal: Calibration | None = None) -> pd.DataFrame:
    """Inside the NVLink domain against across it, per GPU, and what one more node does to collectives.

    ``variants`` adds rows for changed systems: ``{"name": {"system_id": ..., field: value}}``
    (e.g. an H100 node with HDR NICs). Columns: ``system``, ``gpus_per_domain``,
    ``nvlink_GBps_per_dir`` and ``nic_GBps_per_dir`` (line rate per GPU),
    ``ratio_x`` (NVLink / NIC), ``node_nic_GBps_per_dir`` (every NIC of the
    domain, achievable, all GPUs sending), ``allreduce_busbw_1_GBps`` /
    ``allreduce_busbw_2_GBps`` (one domain, two domains; fastest of NCCL's
    algorithms) and ``alltoall_busbw_1_GBps`` / ``alltoall_busbw_2_GBps``.
    """
    cases: list[tuple[str, str, dict[str, object]]] = [(label(s), s, {}) for s in system_ids]
    for name, change in (variants or {}).items():
        change = dict(change)
        cases.append((name, str(change.pop("system_id")), change))
    rows = []
    for name, system_id, change in cases:
        topo = measurements.variant_topology(system_id, change or None)
        system = catalog.system(system_id)
        nic = catalog.link(str(change.get("nic", system.nic)))
        p = topo.gpus_per_node
        setup = collectives.place("allreduce", topo, p, cal=cal)
        node_nic = wiring.nic_bandwidth(topo, setup.gpus, setup.efficiency())[1]
        row = {"system": name, "gpus_per_domain": p, "nvlink_GBps_per_dir": system.nvlink_GBps_per_dir,
               "nic_GBps_per_dir": nic.per_gpu_GBps_per_dir,
               "ratio_x": system.nvlink_GBps_per_dir / nic.per_gpu_GBps_per_dir, "node_nic_GBps_per_dir": node_nic}
        for op in ("allreduce", "alltoall"):
            for nodes in (1, 2):
                row[f"{op}_busbw_{nodes}_GBps"] = collectives.collective(op, topo, p * nodes, nbytes,
                                                                          nodes=nodes, cal=cal).busbw_GBps
        rows.append(row)
    return pd.DataFrame(rows).round(1)


#: Legends of :func:`scaling`: the system and its scale-out NIC.
SCALING_LABELS = {"hgx-h200": "HGX H200 nodes (8 GPUs, NDR)", "dgx-a100": "DGX A100 nodes (8 GPUs, HDR)",
                  "gb200-nvl72": "GB200 NVL72 racks (72 GPUs, NDR)"}


def scaling(cases: Sequence[tuple[str, int]] = (("hgx-h200", 8), ("dgx-a100", 8), ("gb200-nvl72", 72)),
            gpu_counts: Sequence[int] = (8, 16, 32, 72, 144, 288), nbytes: float = GiB,
            cal: Calibration | None = None) -> pd.DataFrame:
    """All-reduce and all-to-all busbw as a job grows from 8 GPUs to many domains.

    ``cases`` are (system id, GPUs per NVLink domain); a count that fits one
    domain stays in it, a larger one spans ``count / per_domain`` domains
    (counts that do not divide are skipped). Columns: ``system``, ``gpus``,
    ``domains``, ``allreduce_algorithm``, ``allreduce_busbw_GBps``,
    ``alltoall_busbw_GBps``, and each busbw's 90 % prediction interval
    (``<column>_lo``, ``<column>_hi``; the band across nodes once the job
    spans domains).
    """
    rows = []
    for system_id, per in cases:
        for n in gpu_counts:
            domains = 1 if n <= per else n // per
            if n > per and n % per:
                continue
            ar = collectives.collective("allreduce", system_id, n, nbytes, nodes=domains, cal=cal)
            a2a = collectives.collective("alltoall", system_id, n, nbytes, nodes=domains, cal=cal)
            rows.append({"system": SCALING_LABELS.get(system_id, label(system_id)), "gpus": n, "domains": domains,
                         "allreduce_algorithm": ar.algorithm, "allreduce_busbw_GBps": ar.busbw_GBps,
                         "alltoall_busbw_GBps": a2a.busbw_GBps})
    return intervals.busbw_bounds(pd.DataFrame(rows), ["allreduce_busbw_GBps", "alltoall_busbw_GBps"], nbytes,
                                  nodes="domains").round(1)


def multinode_allreduce(system_id: str = SWITCH, nodes: Sequence[int] = (2, 4, 8, 16), nbytes: float = GiB,
                        algorithms: Sequence[str] = ("ring", "tree", "nvls", "hierarchical"),
                        cal: Calibration | None = None) -> pd.DataFrame:
    """All-reduce busbw across ``nodes`` full nodes, one column per algorithm (NaN where it cannot run).

    Columns: ``nodes``, ``gpus``, one ``<algorithm>_busbw_GBps`` per algorithm
    (``nvls`` is NVLSTree across nodes), ``auto_algorithm`` (the fastest of NCCL's own).
    """
    topo = wiring.for_system(system_id)
    rows = []
    for k in nodes:
        n = k * topo.gpus_per_node
        row: dict[str, object] = {"nodes": k, "gpus": n}
        possible = collectives.available("allreduce", system_id, n, nodes=k, cal=cal)
        for name in algorithms:
            row[f"{name.replace('-', '_')}_busbw_GBps"] = (
                collectives.collective("allreduce", system_id, n, nbytes, nodes=k, algorithm=name,
                                       cal=cal).busbw_GBps if name in possible else math.nan)
        row["auto_algorithm"] = collectives.collective("allreduce", system_id, n, nbytes, nodes=k, cal=cal).algorithm
        rows.append(row)
    return pd.DataFrame(rows).round(1)


# ------------------------------------------------------------------ model against measurement

_WHAT = {"p2p_uni": "GPU-GPU copy, one way", "p2p_bidir": "GPU-GPU copy, both ways",
         "h2d": "host-to-GPU copy", "nic_rate": "all-to-all, per-GPU NIC rate"}


def _what(row: pd.Series) -> str:
    if row["metric"] == "busbw":
        return f"{row['op']} busbw ({row['algorithm'] or 'auto'})"
    return _WHAT.get(row["metric"], row["metric"])


def model_vs_measurement(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """Every measured row of ``data/measurements.csv`` with the model's prediction
    (:func:`multigpu.evidence.measurements.compare`, with ``cal`` when no ``comparison`` is given).

    Columns: ``id``, ``system``, ``what``, ``gpus``, ``nodes``, ``size_MiB``
    (NaN for steady-state rates), ``measured_GBps``, ``predicted_GBps``,
    ``error_pct`` (predicted / measured - 1), ``fitted`` (a constant was fitted
    on the row).
    """
    data = measurements.compare(cal=cal) if comparison is None else comparison
    frame = pd.DataFrame({"id": data["id"], "system": data["system_id"], "what": data.apply(_what, axis=1),
                          "gpus": data["gpus"], "nodes": data["nodes"], "size_MiB": data["bytes"] / MiB,
                          "measured_GBps": data["measured"], "predicted_GBps": data["predicted"],
                          "error_pct": 100 * data["rel_error"], "fitted": data["fitted"]})
    return frame.round({"size_MiB": 3, "measured_GBps": 1, "predicted_GBps": 1, "error_pct": 1}).reset_index(drop=True)


def time_gap_us(row_id: int, cal: Calibration | None = None) -> dict[str, float]:
    """A measured busbw row as times, µs: ``measured_us`` and ``predicted_us`` (harness overhead included, as
    :func:`measurements.predict` does) and ``gap_us`` (measured - predicted), from busbw = bytes / time x factor."""
    row = measurements.compare([row_id], cal=cal).iloc[0]
    if row["metric"] != "busbw":
        raise ValueError(f"measurement {row_id} is not a busbw row")
    factor = collectives.busbw_factor(row["op"], int(row["gpus"]))
    measured, predicted = (row["bytes"] * factor / (bw * 1e3) for bw in (row["measured"], row["predicted"]))
    return {"measured_us": float(measured), "predicted_us": float(predicted), "gap_us": float(measured - predicted)}


#: The row groups of :func:`error_summary`, by the label of its ``rows`` column.
ERRORS_LARGE, ERRORS_SMALL = "large messages and rates", "small messages (< 64 MiB)"
ERRORS_FITTED, ERRORS_UNFITTED, ERRORS_ALL = "fitted on", "not fitted on", "all"


def error_summary(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> pd.DataFrame:
    """Median and worst absolute error (%) of :func:`model_vs_measurement`, by size class and by fitted or not
    (a ``comparison`` of :func:`multigpu.evidence.measurements.compare`, else one made with ``cal``).

    Columns: ``rows`` (label: :data:`ERRORS_LARGE` ... :data:`ERRORS_ALL`), ``count``, ``median_abs_error_pct``,
    ``worst_abs_error_pct``, ``worst_id``.
    """
    data = measurements.compare(cal=cal) if comparison is None else comparison
    groups = {ERRORS_LARGE: data["size_class"] == "large", ERRORS_SMALL: data["size_class"] == "small",
              ERRORS_FITTED: data["fitted"], ERRORS_UNFITTED: ~data["fitted"], ERRORS_ALL: data["id"] == data["id"]}
    rows = []
    for name, mask in groups.items():
        part = data[mask]
        errors = 100 * part["rel_error"].abs()
        rows.append({"rows": name, "count": len(part), "median_abs_error_pct": float(errors.median()),
                     "worst_abs_error_pct": float(errors.max()), "worst_id": int(part.loc[errors.idxmax(), "id"])})
    return pd.DataFrame(rows).round(1)


def out_of_sample_table(cal: Calibration | None = None) -> pd.DataFrame:
    """:func:`multigpu.evidence.measurements.out_of_sample` (with ``cal``) for print: ``check``,
    ``measured_GBps``, ``predicted_GBps`` (busbw, GB/s), ``error_pct``, ``within_tolerance``, ``known_miss``
    (the documented reason, if any)."""
    data = measurements.out_of_sample(cal=cal)
    return pd.DataFrame({"check": data["check"], "measured_GBps": data["measured"],
                         "predicted_GBps": data["predicted"], "error_pct": 100 * data["rel_error"],
                         "within_tolerance": data["rel_error"].abs() <= data["tolerance"],
                         "known_miss": data["known_miss"]}).round(1)


# ------------------------------------------------------------------ figures
# Each helper draws on axes made by multigpu.book.plotting.figure.


