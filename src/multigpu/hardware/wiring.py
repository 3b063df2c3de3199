"""System topology: a graph of links, the route between two GPUs, and the bandwidth each flow gets.

A :class:`Topology` is built from a catalogue system (:func:`for_system`) or any
object with the same fields (:func:`build`); no bandwidth is typed per system.

Vertices
    ``gpu{i}``; ``nvswitch`` (one non-blocking switch standing for all switch
    chips of the node or NVL72 rack); ``pcisw{j}`` PCIe switches (or root
    ports); ``cpu{s}`` CPU sockets (root complexes, host memory); ``sys`` the
    socket-to-socket fabric; ``nic{m}`` scale-out NICs; ``net`` the
    non-blocking, rail-optimised fabric that joins identical nodes.
Edges
    directed. ``bw_GBps_per_dir`` is the raw line rate in that direction, GB/s
    (1e9 B/s), from the catalogue. Achievable fractions of line rate are
    applied by the caller through an ``efficiency`` function of the edge (see
    :meth:`multigpu.comm.calibration.Calibration.link_efficiency`); latencies
    belong to the communication model, not to the wiring.
Routes
    one fixed path per ordered pair: NVLink if the pair has any NVLink path
    (direct, through the switch, or through an intermediate GPU as NCCL's
    ``NVB`` paths), else the PCIe tree. Without PCIe peer-to-peer, or across
    CPU sockets, a PCIe transfer is staged through host memory ("bounce"): its
    rate is capped by a virtual staging edge, whose capacity is the
    ``efficiency`` of that edge times the GPU's PCIe link.

The key functions: :func:`flow_rates` (max-min fair rates of concurrent flows,
links shared), :func:`pattern_bandwidth` (ring neighbours, all-to-all, one
pair, ...), :func:`ring_bandwidth` (NCCL-style packing of several rings) and
:func:`nic_bandwidth` (what each GPU gets towards the fabric).
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from multigpu.common.errors import InputError
from multigpu.hardware import catalog

Efficiency = Callable[["Edge"], float]
CLASS_ORDER = {"nvlink": 0, "pci": 1, "net": 2}
#: link kind (catalogue category, or topology-internal kind) -> latency and efficiency class
LINK_CLASS: dict[str, str] = {
    "nvlink": "nvlink", "nvlink-capped": "nvlink", "nvswitch": "nvlink", "nvlink-bridge": "nvlink",
    "infinity-fabric": "nvlink", "c2c": "nvlink",
    "pcie": "pci", "inter-socket": "pci", "bounce": "pci",
    "infiniband": "net", "ethernet": "net",
}
PATTERNS = ("pair", "ring", "alltoall", "chain", "to-net")

#: DGX-1 V100 hybrid cube mesh: NVLink 2 links between each pair (NVIDIA DGX-1 V100
#: system architecture white paper; ``nvidia-smi topo -m`` on DGX-1V). Two quads
#: (0-3, 4-7) plus the "cube" edges i <-> i+4; some pairs doubled, 6 links per GPU.
HYBRID_CUBE_MESH_6 = (
    (0, 1, 1, 2, 2, 0, 0, 0),
    (1, 0, 2, 1, 0, 2, 0, 0),
    (1, 2, 0, 2, 0, 0, 1, 0),
    (2, 1, 2, 0, 0, 0, 0, 1),
    (2, 0, 0, 0, 0, 1, 1, 2),
    (0, 2, 0, 0, 1, 0, 2, 1),
    (0, 0, 1, 0, 1, 2, 0, 2),
    (0, 0, 0, 1, 2, 1, 2, 0),
)


@dataclass(frozen=True)
class Edge:
    """One direction of a link: ``src`` -> ``dst`` at ``bw_GBps_per_dir`` (raw line rate, GB/s)."""

    src: str
    dst: str
    bw_GBps_per_dir: float
    kind: str  #: catalogue link category ("nvswitch", "pcie", ...), "inter-socket" or "bounce"
    link_id: str | None

    @property
    def name(self) -> str:
        """``src->dst (link id)``, as reported in ``bottleneck`` fields."""
        return f"{self.src}->{self.dst}" + (f" ({self.link_id})" if self.link_id else "")

    @property
    def link_class(self) -> str:
        """``nvlink``, ``pci`` or ``net`` (NCCL's latency classes)."""
        return LINK_CLASS[self.kind]


@dataclass(frozen=True)
class Route:
    """The path of one flow: edge indices into :attr:`Topology.edges`."""

    src: str
    dst: str
    edges: tuple[int, ...]  #: physical edges crossed, in order; the GPU's virtual staging edge last if bounced
    bounce: bool  #: staged through host memory (PCIe P2P off, or across CPU sockets)
    link_class: str  #: slowest class crossed: nvlink < pci < net


@dataclass(eq=False)
class Topology:
    """One node (or NVL72 rack) as a graph; identical nodes join through ``net``.

    Compared and hashed by identity (built once per system by :func:`for_system`), so that the
    communication model can key its caches by topology. ``cache`` memoises ring packings by the
    edge capacities they were packed on.
    """

    system_id: str
    arch: str
    kind: str  #: catalogue topology: nvswitch, mesh, hybrid-cube-mesh, pcie-tree, pcie-bridged
    gpus_per_node: int
    in_switch_reduction: bool
    pcie_p2p: bool
    nics_per_node: int
    fabric: str | None = None  #: scale-out fabric of the nodes (catalog.FABRICS), None without NIC
    net_protocols: tuple[str, ...] = ()  #: NCCL protocols allowed over the NIC (empty: all; catalog.Link)
    edges: list[Edge] = field(default_factory=list)
    index: dict[tuple[str, str], int] = field(default_factory=dict)
    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    staging: dict[int, int] = field(default_factory=dict)  #: bounce edge -> the GPU PCIe edge it halves
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def in_network_reduction(self) -> bool:
        """Whether the fabric between nodes reduces data in its switches (SHARP)."""
        return self.fabric in catalog.IN_NETWORK_REDUCTION

    @property
    def has_switch(self) -> bool:
        """Whether the GPUs hang off an NVLink switch."""
        return "nvswitch" in {e.dst for e in self.edges}

    def route(self, a: int | str, b: int | str) -> Route:
        """The route from ``a`` to ``b``: GPU indices, or ``"net"`` for the fabric."""
        key = (_vertex(a), _vertex(b))
        if key not in self.routes:
            raise InputError(f"{self.system_id}: no route {key[0]} -> {key[1]} "
                             f"(GPUs 0..{self.gpus_per_node - 1}; 'net' needs a NIC)")
        return self.routes[key]

    def capacities(self, efficiency: Efficiency | None = None) -> np.ndarray:
        """Achievable capacity of every edge, GB/s per direction: raw x ``efficiency(edge)``.

        A GPU's virtual staging edge (transfers bounced through host memory)
        gets ``efficiency(staging edge)`` x the capacity of the GPU's PCIe link
        (the raw line rate of that link if ``efficiency`` is None).
        """
        caps = np.array([e.bw_GBps_per_dir * (efficiency(e) if efficiency else 1.0) for e in self.edges])
        for virtual, physical in self.staging.items():
            caps[virtual] = (efficiency(self.edges[virtual]) if efficiency else 1.0) * caps[physical]
        return caps

    def out_GBps_per_dir(self, gpu: int) -> float:
        """Raw line rate of every link leaving GPU ``gpu`` (NVLink + PCIe), GB/s."""
        return sum(e.bw_GBps_per_dir for e in self.edges if e.src == f"gpu{gpu}")

    def port_GBps_per_dir(self, gpu: int) -> float:
        """Raw line rate of GPU ``gpu``'s port into the NVLink switch, GB/s (0 if switchless)."""
        i = self.index.get((f"gpu{gpu}", "nvswitch"))
        return 0.0 if i is None else self.edges[i].bw_GBps_per_dir

    def check_gpus(self, gpus: Sequence[int]) -> None:
        """InputError unless ``gpus`` are distinct GPU indices of this node."""
        if len(set(gpus)) != len(gpus) or any(not 0 <= g < self.gpus_per_node for g in gpus):
            raise InputError(f"{self.system_id}: GPUs must be distinct, 0..{self.gpus_per_node - 1}; got {list(gpus)}")


# ------------------------------------------------------------------ building


def resolve(system: str | Topology) -> Topology:
    """``system`` as a topology: a catalogue system id's (:func:`for_system`), or the topology given."""
    return for_system(system) if isinstance(system, str) else system


@functools.cache
def for_system(system_id: str) -> Topology:
    """The topology of catalogue system ``system_id`` (built once)."""
    return build(catalog.system(system_id))


def build(system: Any, *, link: Callable[[str], Any] | None = None,
          gpu: Callable[[str], Any] | None = None) -> Topology:
    """Build the topology of ``system`` (a :class:`multigpu.hardware.catalog.System` or a stand-in).

    ``link`` and ``gpu`` look up link and GPU ids (default: the catalogue), so
    tests can pass hand-made objects with the catalogue's field names.
    """
    if link is None or gpu is None:
        link = link or catalog.link
        gpu = gpu or catalog.gpu
    topo = Topology(system.id, gpu(system.gpu).arch, system.topology, system.gpus_per_node,
                    bool(system.in_switch_reduction), bool(system.pcie_p2p), system.nics_per_node,
                    getattr(system, "fabric", None))
    if system.nics_per_node and system.nic:
        topo.net_protocols = tuple((getattr(link(system.nic), "net_protocols", None) or "").split())
    parent = _add_pcie_tree(topo, system, link)
    wiring = {"nvswitch": _add_switch, "mesh": _add_mesh, "hybrid-cube-mesh": _add_hybrid_cube_mesh,
              "pcie-bridged": _add_bridges, "pcie-tree": None}
    if system.topology not in wiring:
        raise InputError(f"{system.id}: unknown topology '{system.topology}'")
    if wiring[system.topology]:
        wiring[system.topology](topo, system, link)
    _add_routes(topo, parent)
    return topo


def _add(topo: Topology, a: str, b: str, bw: float, kind: str, link_id: str | None) -> None:
    """Add the link a <-> b: one edge per direction, each at ``bw`` GB/s."""
    for src, dst in ((a, b), (b, a)):
        topo.index[(src, dst)] = len(topo.edges)
        topo.edges.append(Edge(src, dst, float(bw), kind, link_id))


def _add_pcie_tree(topo: Topology, system: Any, link: Callable[[str], Any]) -> dict[str, str]:
    """GPUs and NICs under PCIe switches (x16 uplinks), switches under CPU sockets; returns parents."""
    n_gpus, per_switch = system.gpus_per_node, system.gpus_per_pcie_switch or 1
    pcie = link(system.pcie).per_gpu_GBps_per_dir
    n_switches, sockets = math.ceil(n_gpus / per_switch), max(1, system.cpu_sockets)
    parent: dict[str, str] = {}
    for j in range(n_switches):
        parent[f"pcisw{j}"] = f"cpu{j * sockets // n_switches}"
        _add(topo, f"pcisw{j}", parent[f"pcisw{j}"], pcie, "pcie", system.pcie)
    for i in range(n_gpus):
        parent[f"gpu{i}"] = f"pcisw{i // per_switch}"
        _add(topo, f"gpu{i}", parent[f"gpu{i}"], pcie, "pcie", system.pcie)
    if sockets > 1:
        inter = system.inter_socket_GBps_per_dir or pcie  # unknown: assume one x16 equivalent
        for s in range(sockets):
            parent[f"cpu{s}"] = "sys"
            _add(topo, f"cpu{s}", "sys", inter, "inter-socket", None)
    if system.nics_per_node > 0 and system.nic:
        nic = link(system.nic)
        n_nics = min(system.nics_per_node, n_gpus)  # NICs beyond one per GPU are merged
        share = system.nics_per_node / n_nics
        for m in range(n_nics):
            first_gpu = math.ceil(m * n_gpus / n_nics)
            parent[f"nic{m}"] = parent[f"gpu{first_gpu}"]
            _add(topo, f"nic{m}", parent[f"nic{m}"], pcie * share, "pcie", system.pcie)
            _add(topo, f"nic{m}", "net", nic.per_gpu_GBps_per_dir * share, nic.category, system.nic)
    return parent


def _nvlink_per_gpu(system: Any, link: Callable[[str], Any]) -> tuple[float, float, str]:
    """(GB/s per direction per GPU, per link, link category) of the GPU-to-GPU fabric."""
    fabric = link(system.nvlink)
    links = system.nvlink_links_per_gpu or fabric.links_per_gpu
    per_link = fabric.per_link_GBps_per_dir or fabric.per_gpu_GBps_per_dir / links
    return links * per_link, per_link, fabric.category


def _add_switch(topo: Topology, system: Any, link: Callable[[str], Any]) -> None:
    per_gpu, _, _ = _nvlink_per_gpu(system, link)
    for i in range(system.gpus_per_node):
        _add(topo, f"gpu{i}", "nvswitch", per_gpu, link(system.nvswitch).category, system.nvswitch)


def _add_mesh(topo: Topology, system: Any, link: Callable[[str], Any]) -> None:
    per_gpu, per_link, category = _nvlink_per_gpu(system, link)
    n = system.gpus_per_node
    links = round(per_gpu / per_link)
    if links % (n - 1):
        raise InputError(f"{system.id}: {links} links per GPU do not split evenly over {n - 1} peers")
    for a in range(n):
        for b in range(a + 1, n):
            _add(topo, f"gpu{a}", f"gpu{b}", per_link * links // (n - 1), category, system.nvlink)


def _add_hybrid_cube_mesh(topo: Topology, system: Any, link: Callable[[str], Any]) -> None:
    per_gpu, per_link, category = _nvlink_per_gpu(system, link)
    links = round(per_gpu / per_link)
    if system.gpus_per_node != 8 or links not in (4, 6):
        raise InputError(f"{system.id}: the hybrid cube mesh is wired for 8 GPUs with 4 or 6 NVLinks")
    for a in range(8):
        for b in range(a + 1, 8):
            count = HYBRID_CUBE_MESH_6[a][b] if links == 6 else min(1, HYBRID_CUBE_MESH_6[a][b])
            if count:
                _add(topo, f"gpu{a}", f"gpu{b}", count * per_link, category, system.nvlink)


def _add_bridges(topo: Topology, system: Any, link: Callable[[str], Any]) -> None:
    per_gpu, _, category = _nvlink_per_gpu(system, link)
    group = system.bridge_group
    if group < 2 or system.gpus_per_node % group:
        raise InputError(f"{system.id}: bridge groups of {group} do not divide {system.gpus_per_node} GPUs")
    for a in range(system.gpus_per_node):
        for b in range(a + 1, (a // group + 1) * group):
            _add(topo, f"gpu{a}", f"gpu{b}", per_gpu / (group - 1), category, system.nvlink)


# -------------------------------------------------------------------- routes


def _vertex(x: int | str) -> str:
    return f"gpu{x}" if isinstance(x, (int, np.integer)) else str(x)


def _add_routes(topo: Topology, parent: dict[str, str]) -> None:
    """Fix the route of every GPU pair, and GPU <-> net where the node has NICs."""
    n = topo.gpus_per_node
    nvlink = _nvlink_adjacency(topo)
    for a in range(n):
        for b in range(n):
            if a != b:
                _set_route(topo, f"gpu{a}", f"gpu{b}", _nvlink_path(topo, nvlink, a, b), parent)
    if topo.nics_per_node and "nic0" in parent:
        n_nics = sum(1 for v in parent if v.startswith("nic"))
        for a in range(n):
            nic = f"nic{a * n_nics // n}"
            up = _tree_path(topo, parent, f"gpu{a}", nic, via_host=not topo.pcie_p2p)
            _set_route(topo, f"gpu{a}", "net", up + [topo.index[(nic, "net")]], parent,
                       bounce=not topo.pcie_p2p)
            down = _tree_path(topo, parent, nic, f"gpu{a}", via_host=not topo.pcie_p2p)
            _set_route(topo, "net", f"gpu{a}", [topo.index[("net", nic)]] + down, parent,
                       bounce=not topo.pcie_p2p)
    for a in range(n):  # host memory <-> GPU (copies)
        cpu = _root_cpu(parent, f"gpu{a}")
        _set_route(topo, cpu, f"gpu{a}", _tree_path(topo, parent, cpu, f"gpu{a}"), parent)
        _set_route(topo, f"gpu{a}", cpu, _tree_path(topo, parent, f"gpu{a}", cpu), parent)


def _set_route(topo: Topology, src: str, dst: str, path: list[int] | None, parent: dict[str, str],
               bounce: bool | None = None) -> None:
    """Record the route src -> dst: the NVLink ``path`` if given, else the PCIe tree."""
    if path is None:
        crosses_sockets = _root_cpu(parent, src) != _root_cpu(parent, dst)
        bounce = (not topo.pcie_p2p) or crosses_sockets
        path = _tree_path(topo, parent, src, dst, via_host=bounce)
    if bounce:
        path = path + [_staging_edge(topo, src if src.startswith("gpu") else dst, parent, sending=src.startswith("gpu"))]
    edges = [topo.edges[i] for i in path]
    link_class = max((e.link_class for e in edges), key=CLASS_ORDER.__getitem__)
    topo.routes[(src, dst)] = Route(src, dst, tuple(path), bool(bounce), link_class)


def _staging_edge(topo: Topology, gpu: str, parent: dict[str, str], sending: bool) -> int:
    """The virtual edge that caps what ``gpu`` sends (or receives) through host memory."""
    key = ("staging-out" if sending else "staging-in", gpu)
    if key not in topo.index:
        pcie = topo.index[(gpu, parent[gpu])] if sending else topo.index[(parent[gpu], gpu)]
        topo.index[key] = len(topo.edges)
        topo.staging[len(topo.edges)] = pcie
        label = f"{gpu} staging {'out' if sending else 'in'}"
        topo.edges.append(Edge(label, "host memory", math.inf, "bounce", None))
    return topo.index[key]


def _root_cpu(parent: dict[str, str], vertex: str) -> str:
    while not vertex.startswith("cpu"):
        vertex = parent[vertex]
    return vertex


def _ancestors(parent: dict[str, str], vertex: str) -> list[str]:
    chain = [vertex]
    while chain[-1] in parent:
        chain.append(parent[chain[-1]])
    return chain


def _tree_path(topo: Topology, parent: dict[str, str], src: str, dst: str, via_host: bool = False) -> list[int]:
    """Edges from ``src`` up to the lowest common ancestor (at least a CPU if ``via_host``) and down."""
    up, down = _ancestors(parent, src), _ancestors(parent, dst)
    common = next(v for v in up if v in down)
    if via_host and common.startswith("pcisw"):
        common = parent[common]
    up_part = up[: up.index(common) + 1]
    down_part = down[: down.index(common) + 1][::-1]
    vertices = up_part + down_part[1:]
    return [topo.index[(a, b)] for a, b in zip(vertices, vertices[1:])]


def _nvlink_adjacency(topo: Topology) -> dict[str, list[int]]:
    adjacency: dict[str, list[int]] = {}
    for i, e in enumerate(topo.edges):
        if e.link_class == "nvlink":
            adjacency.setdefault(e.src, []).append(i)
    return adjacency


def _nvlink_path(topo: Topology, adjacency: dict[str, list[int]], a: int, b: int) -> list[int] | None:
    """Shortest NVLink path gpu a -> gpu b, the widest among equally short ones (as NCCL's path
    search); intermediate GPUs forward, as NCCL's NVB paths. None if there is no NVLink path."""
    src, dst = f"gpu{a}", f"gpu{b}"
    if (src, dst) in topo.index and topo.edges[topo.index[(src, dst)]].link_class == "nvlink":
        return [topo.index[(src, dst)]]
    if (src, "nvswitch") in topo.index:
        return [topo.index[(src, "nvswitch")], topo.index[("nvswitch", dst)]]
    best: dict[str, tuple[int, float]] = {src: (0, -math.inf)}  # vertex -> (hops, -width)
    previous: dict[str, int] = {}
    heap = [(0, -math.inf, src)]
    while heap:
        hops, neg_width, vertex = heapq.heappop(heap)
        if vertex == dst or (hops, neg_width) > best[vertex]:
            continue
        for i in adjacency.get(vertex, []):
            edge = topo.edges[i]
            key = (hops + 1, -min(-neg_width, edge.bw_GBps_per_dir))
            if edge.dst not in best or key < best[edge.dst]:
                best[edge.dst], previous[edge.dst] = key, i
                heapq.heappush(heap, (*key, edge.dst))
    if dst not in previous:
        return None
    path, vertex = [], dst
    while vertex != src:
        path.append(previous[vertex])
        vertex = topo.edges[previous[vertex]].src
    return path[::-1]


# ------------------------------------------------------------ flows and rates


@dataclass(frozen=True)
class FlowRates:
    """Max-min fair rates of concurrent flows, GB/s per direction, and what limits each."""

    rates_GBps: np.ndarray
    bottleneck: list[str]  #: name of the saturated edge that froze each flow


def flow_rates(topo: Topology, routes: Sequence[Route], efficiency: Efficiency | None = None) -> FlowRates:
    """Max-min fair rates of ``routes`` sharing the topology's links (progressive filling).

    Every flow grows at the same speed until a link it crosses is full; then
    it freezes. A flow crossing an edge twice loads it twice. Capacities are
    raw x ``efficiency(edge)`` (raw line rate if ``efficiency`` is None).
    """
    caps = topo.capacities(efficiency)
    return _max_min(caps, [r.edges for r in routes], topo)


def _max_min(caps: np.ndarray, flows: Sequence[Sequence[int]], topo: Topology | None = None) -> FlowRates:
    n_flows = len(flows)
    flow_of = np.concatenate([np.full(len(f), i) for i, f in enumerate(flows)]) if n_flows else np.zeros(0, int)
    edge_of = np.concatenate([np.asarray(f, int) for f in flows]) if n_flows else np.zeros(0, int)
    rates, resid = np.zeros(n_flows), caps.astype(float).copy()
    active = np.ones(n_flows, bool)
    frozen_by = [""] * n_flows
    scale = max(float(np.max(caps[np.isfinite(caps)], initial=1.0)), 1.0)
    while active.any():
        load = np.bincount(edge_of[active[flow_of]], minlength=len(caps)).astype(float)
        used = load > 0
        if not used.any():
            rates[active] = math.inf
            break
        step = np.min(resid[used] / load[used])
        rates[active] += step
        resid[used] -= step * load[used]
        full = used & (resid <= 1e-9 * scale)
        hit = np.bincount(flow_of, weights=full[edge_of].astype(float), minlength=n_flows) > 0
        for f in np.flatnonzero(hit & active):
            edge = next(e for e in flows[f] if full[e])
            frozen_by[f] = topo.edges[edge].name if topo else str(edge)
        active &= ~hit
    return FlowRates(rates, frozen_by)


def pattern_routes(topo: Topology, gpus: Sequence[int], pattern: str) -> list[Route]:
    """The flows of a traffic ``pattern`` among ``gpus`` (in order).

    ``pair``: gpus[0] -> gpus[1]; ``ring``: each GPU to the next, last to first;
    ``alltoall``: every ordered pair; ``chain``: both directions between
    neighbours (a tree inside a node); ``to-net``: every GPU to the fabric.
    """
    topo.check_gpus(gpus)
    k = len(gpus)
    if pattern == "pair":
        pairs = [(gpus[0], gpus[1])] if k >= 2 else []
    elif pattern == "ring":
        pairs = [(gpus[i], gpus[(i + 1) % k]) for i in range(k)] if k >= 2 else []
    elif pattern == "alltoall":
        pairs = [(a, b) for a in gpus for b in gpus if a != b]
    elif pattern == "chain":
        pairs = [p for i in range(k - 1) for p in ((gpus[i], gpus[i + 1]), (gpus[i + 1], gpus[i]))]
    elif pattern == "to-net":
        return [topo.route(g, "net") for g in gpus]
    else:
        raise InputError(f"unknown traffic pattern '{pattern}'; expected one of {', '.join(PATTERNS)}")
    return [topo.route(a, b) for a, b in pairs]


@dataclass(frozen=True)
class PatternBandwidth:
    """What a traffic pattern gets: per flow, and per GPU (sum of its outgoing flows)."""

    pattern: str
    flow_GBps: np.ndarray  #: each flow's rate, GB/s per direction
    per_gpu_send_GBps: float  #: the least any GPU sends in total, GB/s
    min_flow_GBps: float  #: the slowest flow, GB/s
    bottleneck: str  #: edge that limits the slowest flow


def pattern_bandwidth(topo: Topology, gpus: Sequence[int], pattern: str,
                      efficiency: Efficiency | None = None) -> PatternBandwidth:
    """Rates of all flows of ``pattern`` among ``gpus`` running at once (see :func:`pattern_routes`)."""
    routes = pattern_routes(topo, gpus, pattern)
    if not routes:
        return PatternBandwidth(pattern, np.zeros(0), math.inf, math.inf, "")
    rates = flow_rates(topo, routes, efficiency)
    sent: dict[str, float] = {}
    for route, rate in zip(routes, rates.rates_GBps):
        sent[route.src] = sent.get(route.src, 0.0) + rate
    slowest = int(np.argmin(rates.rates_GBps))
    return PatternBandwidth(pattern, rates.rates_GBps, float(min(sent.values())), float(rates.rates_GBps[slowest]),
                            rates.bottleneck[slowest])


def nic_bandwidth(topo: Topology, gpus: Sequence[int], efficiency: Efficiency | None = None) -> tuple[float, float, str]:
    """(per-GPU, whole-node) GB/s towards the fabric when ``gpus`` all send at once, and the bottleneck."""
    if not topo.nics_per_node or not topo.routes.get(("gpu0", "net")):
        raise InputError(f"{topo.system_id}: no scale-out NIC, so it cannot join other nodes")
    result = pattern_bandwidth(topo, gpus, "to-net", efficiency)
    return result.min_flow_GBps, float(result.flow_GBps.sum()), result.bottleneck


# --------------------------------------------------------------------- rings


@dataclass(frozen=True)
class RingBandwidth:
    """Several rings over the same GPUs (NCCL channels) and their total rate."""

    bw_GBps_per_dir: float  #: sum of ring rates: what each GPU sends (and receives), GB/s
    rings: list[tuple[tuple[int, ...], float]]  #: (GPU order, rate GB/s) per ring
    bottleneck: str  #: edge that limits the first ring
    link_class: str  #: slowest link class any ring hop crosses
    bounce: bool  #: whether any hop is staged through host memory


def ring_bandwidth(topo: Topology, gpus: Sequence[int], efficiency: Efficiency | None = None,
                   max_rings: int = 16) -> RingBandwidth:
    """Pack rings over ``gpus`` as NCCL's search does: repeatedly take the ring with the widest bottleneck.

    Each ring sends its rate on every hop at once; links shared by hops of one
    or more rings split their capacity. A full mesh of ``k`` GPUs thus uses all
    ``k - 1`` links of each GPU; a switch gives one ring at the port rate.
    """
    topo.check_gpus(gpus)
    k = len(gpus)
    if k < 2:
        return RingBandwidth(math.inf, [], "", "nvlink", False)
    caps = topo.capacities(efficiency)
    key = ("ring", tuple(gpus), caps.tobytes(), max_rings)
    if key not in topo.cache:
        hops = [[topo.route(a, b).edges if a != b else () for b in gpus] for a in gpus]
        topo.cache[key] = _pack_rings(caps, hops, max_rings)
    rings, first_edge = topo.cache[key]
    routes = [topo.route(gpus[order[i]], gpus[order[(i + 1) % k]]) for order, _ in rings for i in range(k)] \
        or [topo.route(a, b) for a in gpus for b in gpus if a != b]
    link_class = max((r.link_class for r in routes), key=CLASS_ORDER.__getitem__)
    named = [(tuple(gpus[i] for i in order), float(rate)) for order, rate in rings]
    return RingBandwidth(float(sum(rate for _, rate in rings)), named,
                         topo.edges[first_edge].name if first_edge is not None else "",
                         link_class, any(r.bounce for r in routes))


def _pack_rings(caps: np.ndarray, hops: list[list[tuple[int, ...]]],
                max_rings: int) -> tuple[list[tuple[tuple[int, ...], float]], int | None]:
    """Greedy packing, trying ring rates of 1, 1/2, 1/3 and 1/4 of the widest ring; keep the best total.

    Smaller rates let later rings use the links that earlier ones left free
    (a full mesh of 4 needs all 6 directed rings at half rate).
    """
    k = len(hops)
    # no ring set can send more from a GPU than the distinct links its hops start on
    bound = min(sum(caps[e] for e in {hops[a][b][0] for b in range(k) if b != a}) for a in range(k))
    best: tuple[list[tuple[tuple[int, ...], float]], int | None] = ([], None)
    for divisor in (1, 2, 3, 4):
        rings, first_edge = _greedy_rings(caps, hops, max_rings, divisor)
        if sum(r for _, r in rings) > sum(r for _, r in best[0]) * (1 + 1e-9):
            best = (rings, first_edge)
        if sum(r for _, r in best[0]) >= bound * (1 - 1e-9):
            break
    return best


def _greedy_rings(caps: np.ndarray, hops: list[list[tuple[int, ...]]], max_rings: int,
                  divisor: int) -> tuple[list[tuple[tuple[int, ...], float]], int | None]:
    """Take the widest ring in the residual capacities at ``1/divisor`` of the first ring's rate, repeat."""
    resid = caps.astype(float).copy()
    rings: list[tuple[tuple[int, ...], float]] = []
    first_edge, quantum, total = None, math.inf, 0.0
    for _ in range(max_rings * divisor):
        width, order = _widest_ring(resid, hops)
        if order is None or width <= 1e-9 * max(total, 1.0) or (rings and width < 0.01 * total):
            break
        quantum = min(quantum, width / divisor) if not rings else quantum
        rate = min(width, quantum)
        usage: dict[int, int] = {}
        for i in range(len(order)):
            for e in hops[order[i]][order[(i + 1) % len(order)]]:
                usage[e] = usage.get(e, 0) + 1
        if first_edge is None:
            first_edge = min(usage, key=lambda e: resid[e] / usage[e])
        for e, count in usage.items():
            resid[e] -= rate * count
        rings.append((order, rate))
        total += rate
    return rings, first_edge


def _widest_ring(resid: np.ndarray, hops: list[list[tuple[int, ...]]],
                 budget: int = 20000) -> tuple[float, tuple[int, ...] | None]:
    """The cycle through all ``k`` GPUs whose tightest edge (residual / times used) is widest.

    Depth-first search from GPU 0, widest next hop first, pruning branches that
    cannot beat the best ring found; stops at an upper bound or after ``budget`` steps.
    """
    k = len(hops)
    hop_cap = [[min((resid[e] for e in hops[a][b]), default=math.inf) if a != b else -math.inf
                for b in range(k)] for a in range(k)]
    bound = min(min(max(row) for row in hop_cap), min(max(hop_cap[a][b] for a in range(k)) for b in range(k)))
    best = [0.0, None]
    usage: dict[int, int] = {}
    order, visited, steps = [0], [False] * k, [0]
    visited[0] = True

    def add(a: int, b: int) -> float:
        width = math.inf
        for e in hops[a][b]:
            usage[e] = usage.get(e, 0) + 1
            width = min(width, resid[e] / usage[e])
        return width

    def remove(a: int, b: int) -> None:
        for e in hops[a][b]:
            usage[e] -= 1

    def search(width: float) -> bool:
        last = order[-1]
        if len(order) == k:
            closed = min(width, add(last, 0))
            remove(last, 0)
            if closed > best[0]:
                best[0], best[1] = closed, tuple(order)
            return best[0] >= bound * (1 - 1e-9)
        for nxt in sorted((c for c in range(k) if not visited[c]), key=lambda c: -hop_cap[last][c]):
            if hop_cap[last][nxt] <= best[0]:
                break
            steps[0] += 1
            narrower = min(width, add(last, nxt))
            stop = False
            if narrower > best[0]:
                visited[nxt] = True
                order.append(nxt)
                stop = search(narrower)
                order.pop()
                visited[nxt] = False
            remove(last, nxt)
            if stop or steps[0] > budget:
                return True
        return False

    search(math.inf)
    return best[0], best[1]
