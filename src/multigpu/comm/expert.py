"""Expert-parallel dispatch and combine: what each GPU moves over NVLink and over its NIC, and how long it takes.

A mixture-of-experts layer sends every token to the GPUs that hold its top-k experts (dispatch) and brings the
experts' outputs back to the token's GPU, weighted and summed (combine). The combine moves the dispatch's tokens
back the other way, so both phases have the same pattern; they differ in their element type (FP8 out, BF16 back
as deployed) and in their fixed time.

**Routing.** Experts are spread evenly over the EP ranks; a token picks ``topk`` distinct experts uniformly, as
the kernels' benchmarks route (random scores). With node-limited routing (DeepSeek-V3's "device-limited
routing", ``node_limit`` M) a token first picks M nodes and then its experts among theirs. The expected number of
distinct ranks and nodes a token reaches follows from drawing without replacement (:func:`reach`).

**Kernels** (:data:`KERNELS`):

- ``deepep``: DeepEP's normal kernels (training, prefill). Inside one NVLink domain a token goes straight over
  NVLink once to each GPU that holds one of its experts. Across nodes it crosses the network once per node it
  goes to, to the GPU with the same local index (one rail), which forwards it over NVLink to the GPUs of its
  experts there (DeepSeek-V3 report, section 3.2.2).
- ``deepep-ll``: DeepEP's low-latency kernels (decode). One copy per (token, expert), straight to the expert's
  GPU: over NVLink inside the node, over the sender's own NIC to other nodes.
- ``nccl``: an NCCL all-to-all of one copy per (token, expert), as Megatron's all-to-all token dispatcher sends
  them, timed by the collective model (:func:`multigpu.comm.collectives.collective`).

**Time** of a DeepEP phase: the kernel's fixed time plus the slower of its two sides,
``max(intra_node_bytes / (e_nvl x NVLink per GPU), network_bytes / (e_net x NIC per GPU))``, each side's bytes
those of the busiest GPU (``imbalance`` times the mean). The two efficiencies and the two fixed times are
calibration constants (``ep_efficiency``, ``ep_latency_us``), fitted on DeepEP's published tables
(:mod:`multigpu.evidence.epfit`). Bytes are per GPU, one direction, GB = 1e9 bytes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import comb

from multigpu.comm import collectives
from multigpu.comm.calibration import Calibration, resolve
from multigpu.common.errors import InputError
from multigpu.hardware import catalog

KERNELS = ("deepep", "deepep-ll", "nccl")
PHASES = ("dispatch", "combine")
#: Bytes per element on the wire. DeepEP's FP8 carries one FP32 scale per 128 channels (1 + 4/128 bytes).
ELEMENT_BYTES = {"fp8": 1 + 4 / 128, "bf16": 2.0}
#: The element type each phase uses as deployed (DeepSeek-V3: FP8 dispatch, BF16 combine).
DEFAULT_DTYPE = {"dispatch": "fp8", "combine": "bf16"}


@dataclass(frozen=True)
class Routing:
    """One MoE layer's routing on an EP group: ``tokens`` per GPU, each ``hidden`` wide, to ``topk`` of
    ``experts`` experts; ``node_limit``: at most this many nodes per token (None: no limit)."""

    tokens: int
    hidden: int
    topk: int
    experts: int
    node_limit: int | None = None


@dataclass(frozen=True)
class Reach:
    """How far a token goes: the expected distinct EP ranks and nodes it is sent to (its own included)."""

    ranks: float
    nodes: float


@dataclass(frozen=True)
class EpPhase:
    """One dispatch or combine on every GPU of the EP group.

    ``intra_node_bytes`` go over NVLink (the node's own links for the nccl kernel), ``network_bytes`` over the
    GPU's NIC. Bytes are one GPU's, one direction (the busiest GPU's: ``imbalance`` times the mean);
    ``logical_bytes`` is what DeepEP's benchmarks divide by the time to report a bandwidth (the local node's or
    GPU's share included); times in microseconds, rates GB/s (1e9 B/s)."""

    kernel: str
    phase: str
    dtype: str
    system: str
    gpus: int
    nodes: int
    tokens_per_gpu: int
    ranks_per_token: float
    nodes_per_token: float
    intra_node_bytes: float
    network_bytes: float
    logical_bytes: float
    time_us: float
    logical_GBps: float
    bottleneck: str  #: "nvlink", "network" or "latency" (the fixed time is the larger part)

    def to_dict(self) -> dict:
        return asdict(self)


def reach(routing: Routing, ranks: int, nodes: int) -> Reach:
    """Expected distinct ranks and nodes a token reaches on ``ranks`` EP ranks over ``nodes`` nodes."""
    per_rank, per_node = routing.experts // ranks, routing.experts // nodes
    limit = nodes if routing.node_limit is None else min(routing.node_limit, nodes)
    pool = limit * per_node  # the experts a token may pick from
    k = routing.topk
    miss_rank, miss_node = comb(pool - per_rank, k) / comb(pool, k), comb(pool - per_node, k) / comb(pool, k)
    return Reach(ranks=limit * (ranks // nodes) * (1 - miss_rank), nodes=limit * (1 - miss_node))


def _check(routing: Routing, system: catalog.System, gpus: int, nodes: int, kernel: str) -> None:
    if kernel not in KERNELS:
        raise InputError(f"unknown kernel '{kernel}'; expected one of {', '.join(KERNELS)}")
    if gpus < 2 or nodes < 1 or gpus % nodes:
        raise InputError(f"{gpus} GPUs do not split evenly over {nodes} nodes (at least 2 GPUs)")
    if gpus // nodes > system.gpus_per_node:
        raise InputError(f"{gpus // nodes} GPUs per node is more than the {system.gpus_per_node} of a {system.id}")
    if routing.experts % gpus:
        raise InputError(f"{routing.experts} experts do not split evenly over {gpus} GPUs")
    if not 1 <= routing.topk <= routing.experts // nodes * min(routing.node_limit or nodes, nodes):
        raise InputError(f"top-{routing.topk} is more experts than a token may pick from")
    if routing.node_limit is not None and routing.node_limit < 1:
        raise InputError(f"the node limit must be at least 1; got {routing.node_limit}")
    if kernel != "nccl" and not system.nvlink_GBps_per_dir:
        raise InputError(f"DeepEP needs NVLink inside a node and a {system.id} has none; use the nccl kernel")
    if nodes > 1 and not system.nic_GBps_per_dir:
        raise InputError(f"a {system.id} has no network to join {nodes} nodes")


def traffic(routing: Routing, kernel: str, phase_bytes: float, gpus: int, nodes: int) -> tuple[float, float, float]:
    """(intra-node, network, logical) bytes per GPU of one phase, the mean GPU, ``phase_bytes`` bytes per element."""
    g = gpus // nodes
    token = routing.hidden * phase_bytes * routing.tokens
    if kernel == "deepep":
        r = reach(routing, gpus, nodes)
        if nodes == 1:
            return token * r.ranks * (gpus - 1) / gpus, 0.0, token * r.ranks
        return token * r.ranks * (g - 1) / g, token * r.nodes * (nodes - 1) / nodes, token * r.nodes
    copies = token * routing.topk  # one per (token, expert): deepep-ll and nccl
    return copies * (g - 1) / gpus, copies * (gpus - g) / gpus, copies


def nic_GBps_per_gpu(system: catalog.System) -> float:
    """One GPU's share of its node's NICs, GB/s one direction."""
    return system.nics_per_node * system.nic_GBps_per_dir / system.gpus_per_node


def phase(routing: Routing, system_id: str, gpus: int, nodes: int = 1, *, kernel: str = "deepep",
          phase_name: str = "dispatch", dtype: str | None = None, imbalance: float = 1.0,
          cal: Calibration | None = None) -> EpPhase:
    """One dispatch or combine of ``routing`` over ``gpus`` EP ranks on ``nodes`` nodes of ``system_id``."""
    system = catalog.system(system_id)
    _check(routing, system, gpus, nodes, kernel)
    if phase_name not in PHASES:
        raise InputError(f"unknown phase '{phase_name}'; expected one of {', '.join(PHASES)}")
    if imbalance < 1:
        raise InputError(f"the imbalance is the busiest GPU's traffic over the mean, at least 1; got {imbalance}")
    dtype = dtype or DEFAULT_DTYPE[phase_name]
    if dtype not in ELEMENT_BYTES:
        raise InputError(f"unknown element type '{dtype}'; expected one of {', '.join(ELEMENT_BYTES)}")
    cal = resolve(cal)
    nvl, rdma, logical = (b * imbalance for b in traffic(routing, kernel, ELEMENT_BYTES[dtype], gpus, nodes))
    if kernel == "nccl":
        time_us, bottleneck = _nccl_time_us(routing, system.id, gpus, nodes, ELEMENT_BYTES[dtype], imbalance, cal)
    else:
        time_us, bottleneck = _deepep_time_us(system, kernel, nvl, rdma, cal)
    r = reach(routing, gpus, nodes)
    return EpPhase(kernel, phase_name, dtype, system.id, gpus, nodes, routing.tokens, r.ranks, r.nodes, nvl, rdma,
                   logical, time_us, logical / time_us / 1e3, bottleneck)


def _deepep_time_us(system: catalog.System, kernel: str, nvl: float, rdma: float,
                    cal: Calibration) -> tuple[float, str]:
    fixed = cal.value("ep_latency_us", kernel)
    sides = {"nvlink": nvl / (cal.value("ep_efficiency", "nvlink") * system.nvlink_GBps_per_dir * 1e3),
             "network": rdma / (cal.value("ep_efficiency", "net") * nic_GBps_per_gpu(system) * 1e3) if rdma else 0.0}
    side = max(sides, key=sides.__getitem__)
    return fixed + sides[side], side if sides[side] >= fixed else "latency"


def _nccl_time_us(routing: Routing, system_id: str, gpus: int, nodes: int, element: float, imbalance: float,
                  cal: Calibration) -> tuple[float, str]:
    per_rank = routing.tokens * routing.topk * routing.hidden * element * imbalance  # one rank's send buffer
    r = collectives.collective("alltoall", system_id, gpus, per_rank, nodes=nodes, cal=cal)
    return r.time_us, r.bottleneck


def layer(routing: Routing, system_id: str, gpus: int, nodes: int = 1, *, kernel: str = "deepep",
          imbalance: float = 1.0, cal: Calibration | None = None) -> tuple[EpPhase, EpPhase]:
    """The dispatch and the combine of one MoE layer, each with its deployed element type."""
    return tuple(phase(routing, system_id, gpus, nodes, kernel=kernel, phase_name=p, imbalance=imbalance, cal=cal)
                 for p in PHASES)  # type: ignore[return-value]
