"""Collective communication time: alpha-beta per algorithm and protocol, bandwidth from the topology.

``time_us = latency_us + bytes_on_the_bottleneck / achievable_bandwidth`` where

- the latency follows NCCL's tuner (NCCL 2.30 ``src/graph/tuning.cc``):
  a base per (algorithm, protocol) plus one hop latency per step, by link
  class (NVLink, PCIe, network);
- the bandwidth is the topology's (:mod:`multigpu.hardware.wiring`): ring packing,
  max-min rates of concurrent flows, NIC share, switch port, each edge at its
  calibrated achievable fraction of line rate (:mod:`multigpu.comm.calibration`),
  then the protocol's factor (LL 1/2 capped, LL128 0.92, Simple 1).

Sizes follow nccl-tests: ``bytes`` is the per-rank buffer for all-reduce,
broadcast and send/recv, and the total (all ranks) for all-gather,
reduce-scatter and all-to-all. ``algbw = bytes / time``; ``busbw = algbw x``
:func:`busbw_factor` (2(n-1)/n, (n-1)/n or 1). GB = 1e9 bytes.

Algorithms: ``ring``, ``tree``, ``nvls`` (NVLink SHARP; NVLSTree across
nodes), ``direct`` (one-shot / point-to-point), ``two-shot`` (reduce-scatter +
all-gather by direct reads; "MultiShot" where the switch multicasts),
``hierarchical`` (inside the node, across nodes, inside again). ``auto``
picks the fastest of NCCL's own (ring, tree, NVLS; direct for all-to-all and
send/recv) for each size, as NCCL's tuner does; the custom kernels (direct and
two-shot all-reduce) and ``hierarchical`` are chosen explicitly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from multigpu.comm import calibration
from multigpu.comm.calibration import ARCH_FAMILY, Calibration
from multigpu.common.errors import InputError
from multigpu.hardware import wiring
from multigpu.hardware.wiring import Topology

OPS = ("allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "sendrecv")
ALGORITHMS = ("auto", "ring", "tree", "direct", "two-shot", "nvls", "hierarchical")
PROTOCOLS = ("auto", "ll", "ll128", "simple")
#: what each op can run (before the system's own limits), and what ``auto`` picks from
VALID: dict[str, tuple[str, ...]] = {
    "allreduce": ("ring", "tree", "direct", "two-shot", "nvls", "hierarchical"),
    "reducescatter": ("ring", "direct", "hierarchical"),
    "allgather": ("ring", "direct", "hierarchical"),
    "alltoall": ("direct",),
    "broadcast": ("ring", "direct"),
    "sendrecv": ("direct",),
}
AUTO: dict[str, tuple[str, ...]] = {
    "allreduce": ("ring", "tree", "nvls"), "reducescatter": ("ring",), "allgather": ("ring",),
    "alltoall": ("direct",), "broadcast": ("ring",), "sendrecv": ("direct",),
}
TimeFn = Callable[[np.ndarray], np.ndarray]
#: an NVLink domain of more GPUs than this spans several switch trays (NVL72): NVLS has its own efficiency there
RACK_SCALE_GPUS = 8


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests bus-bandwidth factor: busbw = algbw x factor (src/all_reduce.cu etc.)."""
    _check_op(op)
    if n < 2:
        return 0.0
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in ("reducescatter", "allgather", "alltoall"):
        return (n - 1) / n
    return 1.0


@dataclass(frozen=True)
class CollectivePlan:
    """One way to run the collective: its time as a function of bytes (nccl-tests convention)."""

    algorithm: str
    protocol: str
    time_us: TimeFn
    bottleneck: str
    note: str = ""


@dataclass(frozen=True)
class Placement:
    """A collective's placement: ``n`` ranks, ``nodes`` nodes of ``per_node`` GPUs each, and the
    calibration its times are computed with."""

    op: str
    topo: Topology
    n: int
    nodes: int
    per_node: int
    cal: Calibration

    @property
    def gpus(self) -> list[int]:
        """The GPUs used in each node: the first ``per_node`` (as ``CUDA_VISIBLE_DEVICES`` order)."""
        return list(range(self.per_node))

    def efficiency(self, engine: str = "sm") -> wiring.Efficiency:
        """Per-edge achievable fraction of line rate for this GPU architecture."""
        return self.cal.link_efficiency(self.topo.arch, engine, self.topo.fabric)

    def with_op(self, op: str, n: int, nodes: int, per_node: int) -> Placement:
        """The same topology and calibration, another collective and placement."""
        return Placement(op, self.topo, n, nodes, per_node, self.cal)


# ------------------------------------------------------------- public API


def place(op: str, system: str | Topology, gpus: int, nodes: int = 1, cal: Calibration | None = None) -> Placement:
    """Check and place a collective: ``gpus`` ranks in total, spread evenly over ``nodes`` nodes.

    ``cal``: the calibration (default: the shipped one, :func:`multigpu.comm.calibration.default`).
    """
    _check_op(op)
    topo = wiring.resolve(system)
    if gpus < 1 or nodes < 1:
        raise InputError(f"--gpus and --nodes must be positive; got {gpus} GPUs on {nodes} nodes")
    if gpus % nodes:
        raise InputError(f"{gpus} GPUs do not divide evenly over {nodes} nodes")
    per_node = gpus // nodes
    if per_node > topo.gpus_per_node:
        raise InputError(f"{topo.system_id} holds {topo.gpus_per_node} GPUs per node; asked for {per_node}"
                         + ("" if nodes > 1 else " (use --nodes to spread them over several nodes)"))
    if nodes > 1 and not topo.nics_per_node:
        raise InputError(f"{topo.system_id} has no scale-out NIC, so it cannot span nodes")
    if op == "sendrecv" and gpus < 2:
        raise InputError("send/recv needs at least 2 GPUs")
    return Placement(op, topo, gpus, nodes, per_node, calibration.resolve(cal))


def plans(op: str, system: str | Topology, gpus: int, *, nodes: int = 1, algorithm: str = "auto",
          protocol: str = "auto", cal: Calibration | None = None, nvls: bool = True) -> list[CollectivePlan]:
    """Every (algorithm, protocol) that ``auto`` would weigh, or those of one ``algorithm``. ``nvls=False``
    is NCCL with ``NCCL_NVLS_ENABLE=0``: ``auto`` never weighs NVLS (or NVLSTree), and asking for it is an
    error.

    Cached per topology, placement, algorithm, protocol, NVLS setting and calibration (a what-if calibration
    is another value, so it never reads another's results).
    """
    return _cached_plans(op, wiring.resolve(system), gpus, nodes, algorithm, protocol, calibration.resolve(cal), nvls)


@functools.lru_cache(maxsize=4096)
def _cached_plans(op: str, topo: Topology, gpus: int, nodes: int, algorithm: str, protocol: str,
                  cal: Calibration, nvls: bool) -> list[CollectivePlan]:
    return _plans(place(op, topo, gpus, nodes, cal), algorithm, protocol, nvls)


def _plans(where: Placement, algorithm: str, protocol: str, nvls: bool) -> list[CollectivePlan]:
    op = where.op
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm '{algorithm}'; expected one of {', '.join(ALGORITHMS)}")
    if protocol not in PROTOCOLS:
        raise InputError(f"unknown protocol '{protocol}'; expected one of {', '.join(PROTOCOLS)}")
    if algorithm != "auto" and algorithm not in VALID[op]:
        raise InputError(f"{op} cannot use algorithm '{algorithm}'; it can use {', '.join(VALID[op])}")
    if algorithm == "nvls" and not nvls:
        raise InputError("NVLS is switched off (NCCL_NVLS_ENABLE=0), so algorithm 'nvls' cannot run")
    names = tuple(a for a in AUTO[op] if nvls or a != "nvls") if algorithm == "auto" else (algorithm,)
    found: list[CollectivePlan] = []
    for name in names:
        try:
            found += _BUILDERS[name](where)
        except InputError:
            if algorithm != "auto":
                raise
    found = [p for p in found if protocol in ("auto", p.protocol)]
    if not found:
        raise InputError(f"no {protocol} protocol for {algorithm} {op} on {where.topo.system_id}")
    return found


def evaluate(op: str, system: str | Topology, gpus: int, nbytes: float | Sequence[float] | np.ndarray, *,
             nodes: int = 1, algorithm: str = "auto", protocol: str = "auto",
             cal: Calibration | None = None, nvls: bool = True) -> dict[str, np.ndarray]:
    """Vectorised over message sizes: arrays of ``time_us``, ``algbw_GBps``, ``busbw_GBps`` and the
    chosen ``algorithm``, ``protocol`` and ``bottleneck`` for each size in ``nbytes`` (bytes); ``nvls`` as
    :func:`plans`."""
    sizes = np.atleast_1d(np.asarray(nbytes, dtype=float))
    if np.any(sizes <= 0):
        raise InputError("message sizes must be positive bytes")
    if gpus == 1:  # nothing to communicate
        _check_op(op)
        nan = np.full(sizes.shape, np.nan)
        none = np.full(sizes.shape, "none", dtype=object)
        return {"bytes": sizes, "time_us": np.zeros(sizes.shape), "algbw_GBps": nan, "busbw_GBps": nan,
                "algorithm": none, "protocol": none, "bottleneck": none, "note": none}
    options = plans(op, system, gpus, nodes=nodes, algorithm=algorithm, protocol=protocol, cal=cal, nvls=nvls)
    times = np.vstack([p.time_us(sizes) for p in options])
    best = np.argmin(times, axis=0)
    time = times[best, np.arange(sizes.size)]
    algbw = sizes / time / 1e3
    pick = lambda attr: np.array([getattr(options[i], attr) for i in best], dtype=object)  # noqa: E731
    return {"bytes": sizes, "time_us": time, "algbw_GBps": algbw, "busbw_GBps": algbw * busbw_factor(op, gpus),
            "algorithm": pick("algorithm"), "protocol": pick("protocol"), "bottleneck": pick("bottleneck"),
            "note": pick("note")}


def time_us(op: str, system: str | Topology, gpus: int, nbytes: float | Sequence[float] | np.ndarray, *,
            nodes: int = 1, algorithm: str = "auto", cal: Calibration | None = None,
            nvls: bool = True) -> float | np.ndarray:
    """Time of the collective in microseconds, the fastest plan's (as :func:`evaluate`): a float for one size,
    an array for several."""
    sizes = np.atleast_1d(np.asarray(nbytes, dtype=float))
    if gpus == 1:
        _check_op(op)
        result = np.zeros(sizes.shape)
    else:
        result = _cached_time_us(op, wiring.resolve(system), gpus, nodes, algorithm, calibration.resolve(cal),
                                 sizes.shape, sizes.tobytes(), nvls).copy()
    return float(result[0]) if np.ndim(nbytes) == 0 else result


@functools.lru_cache(maxsize=1 << 16)
def _cached_time_us(op: str, topo: Topology, gpus: int, nodes: int, algorithm: str, cal: Calibration,
                    shape: tuple[int, ...], sizes: bytes, nvls: bool) -> np.ndarray:
    """:func:`time_us` on more than one rank, cached on its exact arguments: a layout search asks for the same
    collective of the same sizes many times (ten times on average when the book's claims are checked)."""
    nbytes = np.frombuffer(sizes, dtype=float).reshape(shape)
    if np.any(nbytes <= 0):
        raise InputError("message sizes must be positive bytes")
    options = plans(op, topo, gpus, nodes=nodes, algorithm=algorithm, cal=cal, nvls=nvls)
    result = options[0].time_us(nbytes)
    for plan in options[1:]:
        result = np.minimum(result, plan.time_us(nbytes))
    return result


@dataclass(frozen=True)
class CollectiveResult:
    """One collective (the ``collective`` command's object), with the nccl-tests conventions: ``bytes`` the
    nccl-tests size, ``time_us`` microseconds, ``algbw_GBps`` and ``busbw_GBps`` in GB/s (1e9 bytes; None with
    one rank), the ``bottleneck`` link, a ``note`` and, across nodes, the ``fabric``."""

    op: str
    system: str
    gpus: int
    nodes: int
    bytes: int
    algorithm: str
    protocol: str
    time_us: float
    algbw_GBps: float | None
    busbw_GBps: float | None
    bottleneck: str
    note: str
    fabric: str | None = None  #: the scale-out fabric the nodes are joined by (None on one node)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def collective(op: str, system: str | Topology, gpus: int, nbytes: float, *, nodes: int = 1,
               algorithm: str = "auto", protocol: str = "auto", cal: Calibration | None = None,
               nvls: bool = True) -> CollectiveResult:
    """One collective of ``nbytes`` bytes on ``gpus`` ranks over ``nodes`` nodes: a :class:`CollectiveResult`
    (``nvls`` as :func:`plans`)."""
    result = evaluate(op, system, gpus, nbytes, nodes=nodes, algorithm=algorithm, protocol=protocol, cal=cal,
                      nvls=nvls)
    topo = wiring.resolve(system)
    row: dict[str, Any] = {"op": op, "system": topo.system_id, "gpus": gpus, "nodes": nodes, "bytes": int(nbytes)}
    for key in ("algorithm", "protocol", "time_us", "algbw_GBps", "busbw_GBps", "bottleneck", "note"):
        value = result[key][0]
        row[key] = None if isinstance(value, float) and math.isnan(value) else (
            float(value) if isinstance(value, (float, np.floating)) else value)
    return CollectiveResult(**row, fabric=topo.fabric if nodes > 1 else None)


def sweep(op: str, system: str | Topology, gpus: int, sizes: Sequence[float] | np.ndarray, *,
          nodes: int = 1, algorithm: str = "auto", cal: Calibration | None = None) -> pd.DataFrame:
    """One row per message size (bytes): time_us, algbw_GBps, busbw_GBps, algorithm, protocol, bottleneck."""
    result = evaluate(op, system, gpus, sizes, nodes=nodes, algorithm=algorithm, cal=cal)
    frame = pd.DataFrame(result)
    frame.insert(0, "op", op)
    frame.insert(1, "gpus", gpus)
    frame.insert(2, "nodes", nodes)
    return frame


def available(op: str, system: str | Topology, gpus: int, nodes: int = 1, cal: Calibration | None = None) -> list[str]:
    """The algorithms this system can run for ``op`` on ``gpus`` ranks over ``nodes`` nodes."""
    names = []
    for name in VALID[op]:
        try:
            plans(op, system, gpus, nodes=nodes, algorithm=name, cal=cal)
            names.append(name)
        except InputError:
            pass
    return names


def lower_bound_us(op: str, system: str | Topology, gpus: int, nbytes: float | np.ndarray, *,
                   nodes: int = 1, algorithm: str = "auto") -> float | np.ndarray:
    """A time no algorithm can beat: the bytes each GPU must send (or receive) over the raw line rate
    of all links leaving it (NVLink + PCIe), in microseconds.

    Bytes per GPU: all-reduce 2(n-1)/n x S (point-to-point algorithms); with
    NVLS the switch reduces, so only S (each GPU's contribution goes up once,
    the result comes down once); all-gather, reduce-scatter, all-to-all
    (n-1)/n x S; broadcast and send/recv S.
    """
    where = place(op, system, gpus, nodes)
    n = gpus
    if n < 2:
        return 0.0 * np.asarray(nbytes, dtype=float)
    if op == "allreduce":
        factor = 1.0 if algorithm == "nvls" else 2 * (n - 1) / n
    elif op in ("allgather", "reducescatter", "alltoall"):
        factor = (n - 1) / n
    else:
        factor = 1.0
    out = min(where.topo.out_GBps_per_dir(g) for g in where.gpus)
    return factor * np.asarray(nbytes, dtype=float) / out / 1e3


# ------------------------------------------------------------ latency, bandwidth


def _lat(where: Placement, algorithm: str, protocol: str, link_class: str, bounce: bool = False) -> float:
    """Per-step latency, us: NCCL's hardware latency for the class (plus the fabric's and the library's own
    on a network hop); at least a host bounce if any."""
    hop = where.cal.value("hop_latency_us", f"{link_class}.{algorithm}.{protocol}") * _latency_scale(
        where, network=link_class == "net")
    if link_class == "net":
        hop += where.cal.fabric_latency_us(where.topo.fabric) + where.cal.library_net_latency_us(where.topo.arch)
    return max(hop, where.cal.value("bounce", "hop_latency_us")) if bounce else hop


def _base(where: Placement, algorithm: str, protocol: str) -> float:
    return where.cal.value("base_latency_us", f"{algorithm}.{protocol}") * _latency_scale(where)


def _latency_scale(where: Placement, network: bool = False) -> float:
    """Measured latencies over NCCL's tuner figures (which rank plans rather than predict times), for the
    library the GPUs use: NCCL on NVIDIA GPUs, RCCL (its own tuning tables) on AMD CDNA; ``network``: of a
    hop between nodes (fitted apart from the hops inside a node)."""
    return where.cal.latency_scale(where.topo.arch, network)


def _proto_bw(algorithm: str, protocol: str, bw: float, where: Placement) -> float:
    """Bandwidth a protocol gets out of ``bw`` GB/s (NCCL tuning.cc refinements)."""
    key = f"{algorithm}.{protocol}"
    if algorithm == "tree" and protocol == "ll128" and where.nodes > 1:
        key = "tree.ll128-multinode"
    factor = where.cal.value("protocol_bw_factor", key)
    if protocol == "ll":
        return min(bw * factor, where.cal.ll_max_bw_GBps(where.topo.arch, where.nodes))
    return bw * factor


def _affine(latency: float, bytes_factor: float, bw_GBps: float) -> TimeFn:
    """time_us(S) = latency + bytes_factor x S / bw (S in bytes, bw in GB/s): custom kernels, and NCCL's
    point-to-point all-to-all and send/recv (the bandwidth ramp is fitted on reductions only)."""
    return lambda s: latency + bytes_factor * s / (bw_GBps * 1e3)


def _ramped(where: Placement, latency: float, us_per_byte: float) -> TimeFn:
    """time_us(S) = latency + S x us_per_byte / ramp(S): an NCCL kernel's time.

    An NCCL collective reaches only ``ramp(S)`` of its bandwidth on a
    smaller message: it runs fewer channels and a shallower chunk pipeline.
    Inside a node ``ramp(S) = (S / S_full) ** q`` below ``S_full`` =
    ``bandwidth_ramp/bytes_per_rank`` x the GPUs per node (1 above), q =
    ``bandwidth_ramp/exponent``. Across nodes NCCL's network proxy keeps a few
    chunks in flight per channel, so the pipeline fills once the bytes in
    flight cover the network's delay, and it fills gradually:
    ``ramp(S) = (S / (S + S_fill)) ** q``, where ``S_fill`` is the size whose
    all-reduce takes the fabric's fill time
    (:meth:`Calibration.net_fill_time_us`) at full bandwidth (a slow network
    fills with fewer bytes, a high-latency one needs more) and q =
    ``bandwidth_ramp/net.exponent``: at ``S = S_fill`` the collective runs
    at ``2 ** -q`` of its bandwidth, and the shortfall fades as about
    ``q S_fill / S`` on larger messages, with no knee. All four are fitted on the ``fit`` sweeps.
    All-gather and reduce-scatter fill at the same size as all-reduce
    (:func:`_fill_share`). Time grows with S in both (q is below 1) and never
    beats ``latency + S x us_per_byte``.
    """
    if where.nodes > 1:
        fill_us = where.cal.net_fill_time_us(where.topo.fabric, where.topo.arch) * _fill_share(where.op, where.n)
        fill = fill_us / us_per_byte
        q = where.cal.value("bandwidth_ramp", "net.exponent")
        return lambda s: latency + us_per_byte * s * ((s + fill) / s) ** q
    full = where.cal.value("bandwidth_ramp", "bytes_per_rank") * where.per_node
    q = where.cal.value("bandwidth_ramp", "exponent")
    if q <= 0:
        return lambda s: latency + us_per_byte * s
    return lambda s: latency + us_per_byte * np.where(s < full, s ** (1 - q) * full ** q, s)


def _fill_share(op: str, n: int) -> float:
    """The share of all-reduce's fill time an ``op`` on ``n`` ranks takes to fill the network pipeline. Each
    ring step of all-reduce, all-gather and reduce-scatter carries S/n bytes per rank, so the chunks in flight
    cover the network's delay at the same message size S for the three; all-gather and reduce-scatter move
    (n-1)/n of S per rank where all-reduce moves 2(n-1)/n, so at that size they have run half as long. Other
    collectives keep the whole fill time."""
    if op in ("allgather", "reducescatter"):
        return busbw_factor(op, n) / busbw_factor("allreduce", n)
    return 1.0


def _protocols(link_class: str, bounce: bool, where: Placement) -> tuple[str, ...]:
    """LL128 only where NCCL enables it: NVLink paths (and networks on Hopper or newer). Across nodes, only
    the protocols the NIC allows (``net_protocols`` in data/links.csv): AWS's EFA plugin forces Simple where
    EFA does not deliver bytes in order (p4d), since LL and LL128 read flags written with the data."""
    family = ARCH_FAMILY.get(where.topo.arch, "")
    ll128 = link_class == "nvlink" and not bounce or (
        link_class == "net" and family in ("hopper", "blackwell") and not bounce)
    found = ("ll", "ll128", "simple") if ll128 else ("ll", "simple")
    if link_class == "net" and where.topo.net_protocols:
        return tuple(p for p in found if p in where.topo.net_protocols)
    return found


def _intra_ring(where: Placement) -> wiring.RingBandwidth:
    return wiring.ring_bandwidth(where.topo, where.gpus, where.efficiency())


def _nic(where: Placement) -> tuple[float, float, str]:
    """(per-GPU, per-node) achievable GB/s towards the fabric, and what limits it."""
    return wiring.nic_bandwidth(where.topo, where.gpus, where.efficiency())


def _tree_inter_node_bytes(where: Placement, in_network: bool | None = None) -> float:
    """Bytes the busiest node sends (and receives) through its NICs per byte of a tree all-reduce across
    ``k`` nodes: 1 where the fabric reduces in the network (SHARP; ``in_network``, default: the fabric's); 1 on
    two nodes (each sends its half and receives the other's); 2 from three nodes. NCCL's double binary tree
    gives each tree half the data and makes every node an inner node (two children, one parent) of one tree and
    a leaf of the other: 3/2 S up and down the inner tree plus S/2 as a leaf. A ring needs 2(k-1)/k, so on 3 or
    more nodes it, not the tree, is the bandwidth plan."""
    if (where.topo.in_network_reduction if in_network is None else in_network) or where.nodes == 2:
        return 1.0
    return 2.0


def _steps(op: str, n: int) -> int:
    """NCCL's step count (tuning.cc): 2(n-1) all-reduce, n-1 all-gather / reduce-scatter, n otherwise."""
    return 2 * (n - 1) if op == "allreduce" else (n - 1 if op in ("allgather", "reducescatter") else n)


def _ring_bytes(op: str, n: int) -> float:
    """Bytes each rank sends on a ring, per byte of the nccl-tests size."""
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in ("allgather", "reducescatter"):
        return (n - 1) / n
    return 1.0  # broadcast: a pipelined chain, each rank forwards everything


# ----------------------------------------------------------------- algorithms


def _ring_plans(where: Placement) -> list[CollectivePlan]:
    if where.op not in ("allreduce", "allgather", "reducescatter", "broadcast"):
        raise InputError(f"ring does not apply to {where.op}")
    ring = _intra_ring(where)
    bw, bottleneck = ring.bw_GBps_per_dir, ring.bottleneck
    if where.nodes > 1:  # each ring enters and leaves every node once, through one NIC
        _, node_nic, nic_bottleneck = _nic(where)
        if node_nic < bw:
            bw, bottleneck = node_nic, nic_bottleneck
    return _ring_list(where, where.op, where.n, bw, bottleneck, ring.link_class, ring.bounce)


def _ring_list(where: Placement, op: str, n: int, bw: float, bottleneck: str, intra_class: str,
               bounce: bool) -> list[CollectivePlan]:
    """Ring plans for LL / LL128 / Simple: ``n`` ranks over ``where.nodes`` nodes at ``bw`` GB/s."""
    k = where.nodes
    inter_steps = (2 if op == "allreduce" else 1) * (k - 1)
    steps = _steps(op, n)
    found = []
    for proto in _protocols("net" if k > 1 else intra_class, bounce, where):
        if k > 1 and proto == "ll128" and intra_class != "nvlink" and n > k:
            continue
        latency = _base(where, "ring", proto) + inter_steps * _lat(where, "ring", proto, "net") + \
            (steps - inter_steps) * _lat(where, "ring", proto, intra_class, bounce)
        per_byte = _ring_bytes(op, n) / (_proto_bw("ring", proto, bw, where) * 1e3)
        found.append(CollectivePlan("ring", proto, _ramped(where, latency, per_byte), bottleneck))
    return found


def _tree_plans(where: Placement) -> list[CollectivePlan]:
    if where.op != "allreduce":
        raise InputError("tree (NCCL) is for all-reduce only")
    k, p = where.nodes, where.per_node
    chain = wiring.pattern_bandwidth(where.topo, where.gpus, "chain", where.efficiency())
    bw, bottleneck = chain.min_flow_GBps, chain.bottleneck
    routes = wiring.pattern_routes(where.topo, where.gpus, "chain")
    intra_class = max((r.link_class for r in routes), key=wiring.CLASS_ORDER.__getitem__, default="nvlink")
    bounce = any(r.bounce for r in routes)
    found = []
    if k > 1:  # each node sends (and receives) 2 S through its NICs from 3 nodes on (S on 2), S with SHARP
        _, node_nic, nic_bottleneck = _nic(where)
        if where.topo.in_network_reduction:  # NCCL keeps its plain tree beside CollNet, and picks the faster
            sharp_bw = min(bw, node_nic / _tree_inter_node_bytes(where, True))
            found.append(_collnet_chain(where, sharp_bw, bottleneck if sharp_bw == bw else nic_bottleneck,
                                        intra_class, bounce))
        if node_nic / _tree_inter_node_bytes(where, False) < bw:
            bw, bottleneck = node_nic / _tree_inter_node_bytes(where, False), nic_bottleneck
    for proto in _protocols("net" if k > 1 else intra_class, bounce, where):
        latency = _base(where, "tree", proto) + 2 * ((p - 1) * _lat(where, "tree", proto, intra_class, bounce)
                                              + math.log2(k) * _lat(where, "tree", proto, "net"))
        per_byte = 1.0 / (_proto_bw("tree", proto, bw, where) * 1e3)
        found.append(CollectivePlan("tree", proto, _ramped(where, latency, per_byte), bottleneck))
    return found


def _collnet_chain(where: Placement, bw: float, bottleneck: str, intra_class: str, bounce: bool) -> CollectivePlan:
    """A tree whose reduction the fabric does across nodes (SHARP): NCCL's CollNetChain (tuning.cc), Simple only.
    Latency ``base + 2 (ppn - 1) intraLat + interLat`` (a chain inside the node, one trip through the switch);
    bandwidth ``bw`` with none of the Tree refinements (``protocol_bw_factor/collnet.simple``)."""
    latency = _base(where, "collnet", "simple") + 2 * (where.per_node - 1) * _lat(
        where, "collnet", "simple", intra_class, bounce) + _lat(where, "collnet", "simple", "net")
    per_byte = 1.0 / (bw * where.cal.value("protocol_bw_factor", "collnet.simple") * 1e3)
    return CollectivePlan("tree", "simple", _ramped(where, latency, per_byte), bottleneck,
                          "CollNetChain (in-network reduction)")


def _nvls_plans(where: Placement) -> list[CollectivePlan]:
    topo = where.topo
    if where.op != "allreduce":
        raise InputError("NVLS (in-switch reduction) accelerates all-reduce only "
                         "(measured all-gather and reduce-scatter stay on ring)")
    if not topo.in_switch_reduction:
        raise InputError(f"{topo.system_id} has no in-switch reduction (NVLink SHARP), so NVLS is impossible")
    p, k = where.per_node, where.nodes
    if p < 2:
        raise InputError("NVLS needs at least 2 GPUs per node on the switch")
    port = min(topo.port_GBps_per_dir(g) for g in where.gpus)
    edge = topo.edges[topo.index[("gpu0", "nvswitch")]]
    rack = topo.gpus_per_node > RACK_SCALE_GPUS
    bw = port * where.cal.efficiency(edge.link_class, topo.arch) * where.cal.nvls_efficiency(topo.arch, rack)
    # per GPU port, each way, S (p+1)/p: up, the switch reads all of the GPU's buffer to reduce
    # (S) and the GPU multicasts its reduced 1/p slice (S/p); down, the GPU receives the reduced
    # slice it owns (S/p) and the multicast result (S). Ring: 2(p-1)/p S.
    intra = (p + 1) / p / bw
    if k == 1:
        latency = _lat(where, "nvls", "simple", "nvlink")
        return [CollectivePlan("nvls", "simple", _ramped(where, latency, intra / 1e3), f"{edge.name} (in-switch reduction)")]
    _, node_nic, nic_bottleneck = _nic(where)
    latency = _base(where, "nvlstree", "simple") + _lat(where, "nvlstree", "simple", "nvlink") + \
        2 * math.log2(k) * _lat(where, "nvlstree", "simple", "net")
    inter = _tree_inter_node_bytes(where) / node_nic
    per_byte = max(intra, inter)
    bottleneck = nic_bottleneck if inter > intra else f"{edge.name} (in-switch reduction)"
    note = "NVLSTree across nodes" + (" (in-network reduction)" if where.topo.in_network_reduction else "")
    return [CollectivePlan("nvls", "simple", _ramped(where, latency, per_byte / 1e3), bottleneck, note)]


def _direct_connectivity(where: Placement) -> None:
    """Custom one-shot / two-shot kernels read peers' memory directly: every pair needs P2P."""
    if where.nodes > 1:
        raise InputError(f"{where.op} direct / two-shot kernels work inside one node only")
    routes = wiring.pattern_routes(where.topo, where.gpus, "alltoall")
    if any(r.bounce for r in routes):
        raise InputError(f"{where.topo.system_id}: some GPU pairs have no peer-to-peer path, "
                         "so one-shot / two-shot kernels cannot read their memory")
    if where.per_node > 2 and any(r.link_class != "nvlink" for r in routes):
        raise InputError(f"{where.topo.system_id}: custom all-reduce needs every pair on NVLink beyond 2 GPUs "
                         "(as vLLM and TensorRT-LLM require)")


def _direct_plans(where: Placement) -> list[CollectivePlan]:
    op, n, topo = where.op, where.n, where.topo
    launch, sync = where.cal.value("custom_latency_us", "launch"), where.cal.value("custom_latency_us", "sync")
    if op in ("alltoall", "sendrecv"):
        return _p2p_plans(where)
    _direct_connectivity(where)
    if op == "broadcast":
        if topo.in_switch_reduction:  # the switch multicasts: the root sends once
            port = topo.edges[topo.index[("gpu0", "nvswitch")]]
            bw = port.bw_GBps_per_dir * where.cal.efficiency(port.link_class, topo.arch)
            return [CollectivePlan("direct", "simple", _affine(launch + sync, 1.0, bw), port.name, "switch multicast")]
        flows = [topo.route(where.gpus[0], g) for g in where.gpus[1:]]
        rates = wiring.flow_rates(topo, flows, where.efficiency())
        slow = int(np.argmin(rates.rates_GBps))
        return [CollectivePlan("direct", "simple", _affine(launch + sync, 1.0, rates.rates_GBps[slow]), rates.bottleneck[slow])]
    a2a = wiring.pattern_bandwidth(topo, where.gpus, "alltoall", where.efficiency())
    # one-shot all-reduce: every rank reads all of every peer's buffer; all-gather /
    # reduce-scatter: every rank reads one 1/n slice from each peer
    per_flow = 1.0 if op == "allreduce" else 1.0 / n
    return [CollectivePlan("direct", "simple", _affine(launch + sync, per_flow, a2a.min_flow_GBps), a2a.bottleneck,
                 "one-shot" if op == "allreduce" else "")]


def _two_shot_plans(where: Placement) -> list[CollectivePlan]:
    if where.op != "allreduce":
        raise InputError("two-shot is an all-reduce algorithm")
    _direct_connectivity(where)
    topo, n = where.topo, where.n
    launch, sync = where.cal.value("custom_latency_us", "launch"), where.cal.value("custom_latency_us", "sync")
    a2a = wiring.pattern_bandwidth(topo, where.gpus, "alltoall", where.efficiency())
    note = "MultiShot: all-gather by switch multicast" if topo.in_switch_reduction else "reduce-scatter + all-gather"
    # reduce-scatter then all-gather, each moving one 1/n slice per peer; multicast saves
    # the sender's uplink, not the receivers' downlinks, so the time is the same
    return [CollectivePlan("two-shot", "simple", _affine(launch + 2 * sync, 2.0 / n, a2a.min_flow_GBps), a2a.bottleneck, note)]


def _p2p_plans(where: Placement) -> list[CollectivePlan]:
    """All-to-all and send/recv: point-to-point transfers, all at once."""
    topo, n, k, p = where.topo, where.n, where.nodes, where.per_node
    pattern = "alltoall" if where.op == "alltoall" else "ring"
    if where.op == "sendrecv" and p < 2:
        local_bw, bottleneck, routes = math.inf, "", []
    else:
        result = wiring.pattern_bandwidth(topo, where.gpus, pattern, where.efficiency())
        local_bw, bottleneck = result.min_flow_GBps, result.bottleneck
        routes = wiring.pattern_routes(topo, where.gpus, pattern)
    link_class = max((r.link_class for r in routes), key=wiring.CLASS_ORDER.__getitem__, default="nvlink")
    bounce = any(r.bounce for r in routes)
    if where.op == "alltoall":  # a 1/n slice to each peer at once; (n - p)/n of S leaves the node
        per_byte, remote_share = (1.0 / n) / local_bw, (n - p) / n
    else:  # send/recv: each rank sends S to the next rank and receives S from the previous one
        per_byte, remote_share = 1.0 / local_bw, 1.0
    if k > 1:
        nic_gpu, _, nic_bottleneck = _nic(where)
        if remote_share / nic_gpu > per_byte:
            per_byte, bottleneck = remote_share / nic_gpu, nic_bottleneck
    moved = (n - 1) / n if where.op == "alltoall" else 1.0  # bytes a rank sends per byte of S
    cls = "net" if k > 1 else link_class
    steps = n if where.op == "alltoall" else 1
    found = []
    for proto in ("ll", "simple"):
        factor = where.cal.value("protocol_bw_factor", f"ring.{proto}")
        latency = _base(where, "ring", proto) + steps * _lat(where, "ring", proto, cls, bounce)
        slope = per_byte / factor
        if proto == "ll":  # and NCCL's per-architecture cap on what one rank moves with LL
            slope = max(slope, moved / where.cal.ll_max_bw_GBps(topo.arch, k))
        found.append(CollectivePlan("direct", proto, _affine(latency, slope, 1.0), bottleneck))
    return found


def _hierarchical_plans(where: Placement) -> list[CollectivePlan]:
    op, k, p = where.op, where.nodes, where.per_node
    if op not in ("allreduce", "allgather", "reducescatter"):
        raise InputError(f"hierarchical does not apply to {op}")
    if k < 2:
        raise InputError("hierarchical needs GPUs on at least 2 nodes (use --nodes)")
    nic_gpu, _, nic_bottleneck = _nic(where)  # each GPU's share of the NICs while all p send
    # across nodes: p concurrent rings, one per rail, each of k ranks at one GPU's NIC share
    inter_plans = _ring_list(where, op, k, nic_gpu, nic_bottleneck, "net", False)
    if p == 1:
        return [CollectivePlan("hierarchical", plan.protocol, plan.time_us, plan.bottleneck, "one GPU per node: a ring across nodes")
                for plan in inter_plans]
    intra_rs = _ring_plans(where.with_op("reducescatter", p, 1, p))
    intra_ag = _ring_plans(where.with_op("allgather", p, 1, p))
    fastest = lambda options, s: np.min(np.vstack([o.time_us(s) for o in options]), axis=0)  # noqa: E731
    if op == "allreduce":  # RS in the node, AR of S/p across nodes, AG in the node
        time = lambda s: fastest(intra_rs, s) + fastest(inter_plans, s / p) + fastest(intra_ag, s)  # noqa: E731
    elif op == "allgather":  # AG of S/p-sized node blocks across nodes, then AG inside
        time = lambda s: fastest(inter_plans, s / p) + fastest(intra_ag, s)  # noqa: E731
    else:
        time = lambda s: fastest(intra_rs, s) + fastest(inter_plans, s / p)  # noqa: E731
    ring = _intra_ring(where)
    bottleneck = nic_bottleneck if nic_gpu * p < ring.bw_GBps_per_dir else ring.bottleneck
    return [CollectivePlan("hierarchical", "auto", time, bottleneck, "intra-node ring, inter-node ring per rail")]


_BUILDERS: dict[str, Callable[[Placement], list[CollectivePlan]]] = {
    "ring": _ring_plans, "tree": _tree_plans, "nvls": _nvls_plans, "direct": _direct_plans,
    "two-shot": _two_shot_plans, "hierarchical": _hierarchical_plans,
}


def _check_op(op: str) -> None:
    if op not in OPS:
        raise InputError(f"unknown collective '{op}'; expected one of {', '.join(OPS)}")
