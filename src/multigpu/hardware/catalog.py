"""The hardware catalogue: GPUs, interconnect generations and systems, typed and validated.

The facts live in ``data/gpus.csv``, ``data/links.csv`` and ``data/systems.csv``;
every row carries a ``source`` (one or more URLs). Units are in the column
names and never in the cells:

- bandwidth in GB/s with GB = 1e9 bytes, and always either ``_per_dir`` (one
  direction) or ``_bidir`` (both directions added, as vendors quote NVLink
  and PCIe);
- memory in GB (1e9 bytes), HBM bandwidth ``mem_bw_GBps`` in GB/s;
- compute in TFLOPS, dense (no 2:4 sparsity); empty where the GPU has none
  (one exception, named so: ``fp4_peak_TFLOPS``, the vendor's sparse or
  compressed FP4 headline);
- power in W.

Empty cells are missing values (``None``); words go in ``notes``.

Loading checks each file (see :func:`load_links`, :func:`load_gpus`,
:func:`load_systems`) and reports the first problem as an
:class:`~multigpu.common.errors.InputError` with file, line (header = line 1) and
column.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pydantic
from pydantic import AfterValidator

from multigpu.common import datafiles
from multigpu.common.datafiles import DATA_DIR
from multigpu.common.errors import InputError

LINKS_CSV = DATA_DIR / "links.csv"
GPUS_CSV = DATA_DIR / "gpus.csv"
SYSTEMS_CSV = DATA_DIR / "systems.csv"

LINK_CATEGORIES = ("nvlink", "nvlink-capped", "nvswitch", "nvlink-bridge", "pcie",
                   "infiniband", "ethernet", "infinity-fabric", "c2c")
GPU_FABRICS = ("nvlink", "nvlink-capped", "nvlink-bridge", "infinity-fabric")
VENDORS = ("nvidia", "amd")
FORM_FACTORS = ("sxm", "pcie", "oam", "superchip")
ARCHS = ("pascal", "volta", "ampere", "hopper", "ada", "blackwell", "rubin", "cdna2", "cdna3", "cdna4")
TOPOLOGIES = ("nvswitch", "mesh", "hybrid-cube-mesh", "pcie-tree", "pcie-bridged")
#: Scale-out fabrics: InfiniBand without and with in-network reduction (SHARP), RoCE, AWS EFA, plain TCP
#: (NCCL's socket transport, through host memory), and Google's GPUDirect-TCPXO (TCP with GPU memory straight
#: to the NIC, A3 Mega).
FABRICS = ("ib", "ib-sharp", "roce", "efa", "tcp", "tcpx", "tcpxo")
#: Fabrics whose switches reduce data in the network (SHARP): only they let a collective across nodes send
#: each byte once.
IN_NETWORK_REDUCTION = ("ib-sharp",)

#: Allowed values of enumerated columns, by column name (in any file).
ENUMS: dict[str, tuple[str, ...]] = {
    "category": LINK_CATEGORIES, "vendor": VENDORS, "form_factor": FORM_FACTORS,
    "arch": ARCHS, "topology": TOPOLOGIES, "fabric": FABRICS, "net_protocols": ("simple",),
}
TOLERANCE = 0.01  # relative tolerance of "total = links x per-link rate"
#: A per-link data rate may sit this far below lanes x lane rate (line code, FLIT overhead).
LINE_CODE_FLOOR = 0.85


class _Record:
    """Shared helpers of the catalogue's record types."""

    _derived: tuple[str, ...] = ()  # properties included in :meth:`to_dict`

    def to_dict(self) -> dict[str, Any]:
        """Every field, then the derived (bidirectional) properties, as a flat dict."""
        row = dataclasses.asdict(self)  # type: ignore[call-overload]
        row.update((name, getattr(self, name)) for name in self._derived)
        return row


@dataclass(frozen=True)
class Link(_Record):
    """One interconnect generation: NVLink, NVSwitch, bridge, PCIe, NIC fabric, C2C.

    Bandwidths are GB/s (1e9 bytes/s) in one direction unless named ``_bidir``.
    For a switch the per-link rate is per GPU port; for a NIC fabric a "link" is
    one port (``links_per_gpu`` = 1) and ``per_gpu_GBps_per_dir`` is one port.
    """

    id: str
    name: str
    category: str  #: one of :data:`LINK_CATEGORIES`
    year: int
    per_link_GBps_per_dir: float | None  #: one link, one direction, GB/s
    links_per_gpu: int | None  #: links a GPU has of this kind
    per_gpu_GBps_per_dir: float  #: all links of one GPU, one direction, GB/s
    in_network_reduction: bool  #: switch reduces in-network (NVLink SHARP / NVLS)
    source: str  #: URL(s), separated by " ; "
    notes: str = ""
    lanes_per_link: int | None = field(default=None, metadata={"optional": True})
    """Lanes (differential pairs) of one link in each direction; None if unknown or n/a."""
    lane_Gbps: float | None = field(default=None, metadata={"optional": True})
    """Signalling rate of one lane in one direction, Gb/s (GT/s for PCIe), before line code."""
    net_protocols: str | None = field(default=None, metadata={"optional": True})
    """For a NIC: the NCCL protocols a collective across nodes may use over it, space-separated (``simple``
    where the transport does not deliver bytes in order and the network plugin forces ``NCCL_PROTO=simple``);
    None: all of LL, LL128 and Simple."""

    _derived = ("per_link_GBps_bidir", "per_gpu_GBps_bidir", "signalling_GBps_per_dir")

    @property
    def signalling_GBps_per_dir(self) -> float | None:
        """One link, one direction, at the raw lane rate: lanes x Gb/s / 8 (before line code)."""
        if self.lanes_per_link is None or self.lane_Gbps is None:
            return None
        return self.lanes_per_link * self.lane_Gbps / 8

    @property
    def per_link_GBps_bidir(self) -> float | None:
        """One link, both directions added, GB/s (the figure vendors print)."""
        return None if self.per_link_GBps_per_dir is None else 2 * self.per_link_GBps_per_dir

    @property
    def per_gpu_GBps_bidir(self) -> float:
        """All links of one GPU, both directions added, GB/s (e.g. 900 for H100 NVLink)."""
        return 2 * self.per_gpu_GBps_per_dir


GIB = 2**30
#: Share of the stated (binary) memory a CUDA program sees: CUDA's deviceQuery on an "NVIDIA H100 80GB HBM3" reports
#: 85,045,477,376 bytes of global memory, 0.990 of 80 GiB (thamada/nvidia-smi, nvsim/H100SXMx8_deviceQuery.py, a
#: captured deviceQuery of an 8x H100 SXM node); taken for every GPU.
USABLE_MEMORY_FRACTION = 85_045_477_376 / (80 * GIB)


@dataclass(frozen=True)
class Gpu(_Record):
    """One GPU model. Compute in dense TFLOPS, memory in GB, bandwidth in GB/s (1e9 B/s)."""

    id: str
    name: str
    vendor: str  #: one of :data:`VENDORS`
    form_factor: str  #: one of :data:`FORM_FACTORS`
    year: int
    arch: str  #: one of :data:`ARCHS`
    bf16_dense_TFLOPS: float | None  #: dense BF16 tensor rate; None if no BF16
    fp16_dense_TFLOPS: float | None  #: dense FP16 tensor rate (FP32 accumulate on GeForce)
    fp8_dense_TFLOPS: float | None  #: dense FP8 tensor rate; None if no FP8
    memory_GB: float  #: HBM / VRAM capacity as the vendor states it ("80 GB"): a binary size, GiB (see usable_memory_GB)
    memory_type: str
    mem_bw_GBps: float  #: memory bandwidth, GB/s
    nvlink: str | None  #: link id of the GPU-to-GPU fabric (NVLink, bridge, Infinity Fabric)
    nvlink_links: int | None  #: number of such links
    nvlink_GBps_per_dir: float  #: GPU-to-GPU fabric per GPU, one direction, GB/s; 0 if none
    pcie: str  #: link id of the GPU's PCIe interface
    cpu_link: str | None  #: link id of a CPU-GPU NVLink-C2C (superchips), else None
    tdp_W: float | None  #: board / module power, W
    parent: str | None  #: id of the GPU an export variant was cut from
    source: str
    notes: str = ""
    fp4_dense_TFLOPS: float | None = field(default=None, metadata={"optional": True})
    """Dense FP4 (NVFP4) tensor rate; None if no FP4 or not published."""
    fp4_peak_TFLOPS: float | None = field(default=None, metadata={"optional": True})
    """The vendor's headline FP4 rate (2:4 sparsity on Blackwell, adaptive compression on
    Rubin); the one column that is not dense. None if no FP4 or not published."""
    tf32_dense_TFLOPS: float | None = field(default=None, metadata={"optional": True})
    """Dense TF32 tensor rate (FP32 storage, 10-bit mantissa products); None before Ampere or not published."""
    fp32_TFLOPS: float | None = field(default=None, metadata={"optional": True})
    """What an FP32 GEMM gets without TF32: the CUDA-core rate on NVIDIA, the FP32 matrix rate on AMD; None if
    not published."""

    _derived = ("nvlink_GBps_bidir",)

    @property
    def nvlink_GBps_bidir(self) -> float:
        """GPU-to-GPU fabric per GPU, both directions added, GB/s."""
        return 2 * self.nvlink_GBps_per_dir

    @property
    def usable_memory_GB(self) -> float:
        """Memory a program can allocate, GB (1e9 bytes): the stated capacity read as GiB (memory chips come in
        binary sizes: an "80 GB" H100 holds 80 GiB), less what the driver keeps (:data:`USABLE_MEMORY_FRACTION`).
        What fits in a GPU is decided against this figure."""
        return self.memory_GB * GIB / 1e9 * USABLE_MEMORY_FRACTION


@dataclass(frozen=True)
class System(_Record):
    """A node (or NVLink domain such as an NVL72 rack) and how its GPUs are wired.

    Bandwidths GB/s (1e9 B/s), one direction. The ``*_GBps_per_dir`` fields
    after ``notes`` are derived from the link rows when the file is loaded.
    """

    id: str
    name: str
    year: int
    gpu: str  #: gpu id
    gpus_per_node: int  #: GPUs in the node / NVLink domain (72 for NVL72, 8 for HGX)
    topology: str  #: one of :data:`TOPOLOGIES`
    nvlink: str | None  #: link id of the GPU-side NVLink / Infinity Fabric generation
    nvlink_links_per_gpu: int | None
    nvswitch: str | None  #: link id of the switch generation, if switched
    in_switch_reduction: bool  #: NVLink SHARP / NVLS available
    bridge_group: int | None  #: GPUs per NVLink-bridge group (2 pairs, 4 four-way)
    pcie: str  #: link id of the GPU-to-host PCIe generation
    pcie_p2p: bool  #: GPU peer-to-peer over PCIe allowed by the driver
    gpus_per_pcie_switch: int | None  #: GPUs under one PCIe switch; None: on root ports / n.a.
    cpu_sockets: int
    inter_socket_GBps_per_dir: float | None  #: UPI / xGMI between sockets, one direction
    nics_per_node: int
    nic: str | None  #: link id of the scale-out NIC
    source: str
    notes: str = ""
    fabric: str | None = field(default=None, metadata={"optional": True})
    """Scale-out fabric (:data:`FABRICS`); default from the NIC: InfiniBand ``ib`` (no SHARP, as rented),
    RoCE NICs ``roce``, plain Ethernet ``tcp``. A variant ``<id>@<fabric>`` names another one."""
    variant_of: str | None = field(default=None, metadata={"optional": True})
    """The system this row is a wiring variant of (same GPU): used only where a price file's ``system``
    column or a caller names it, never chosen from an offer's GPU and interconnect alone."""
    name_zh: str | None = field(default=None, metadata={"optional": True})
    """The name in the Chinese edition, where ``name`` has words to translate (None: ``name`` as it is)."""
    nvlink_GBps_per_dir: float = field(default=0.0, metadata={"derived": True})
    """GPU-to-GPU fabric per GPU = links x per-link rate, one direction; 0 if none."""
    pcie_GBps_per_dir: float = field(default=0.0, metadata={"derived": True})
    """One GPU's PCIe link, one direction."""
    nic_GBps_per_dir: float = field(default=0.0, metadata={"derived": True})
    """One scale-out NIC port, one direction; 0 if none."""

    _derived = ("nvlink_GBps_bidir",)

    @property
    def nvlink_GBps_bidir(self) -> float:
        """GPU-to-GPU fabric per GPU, both directions added, GB/s."""
        return 2 * self.nvlink_GBps_per_dir


R = TypeVar("R", Link, Gpu, System)
_Row = tuple[int, Any]  # (line number, record)

# ---------------------------------------------------------------- public API


@functools.cache
def _links() -> dict[str, Link]:
    return load_links(LINKS_CSV)


@functools.cache
def _gpus() -> dict[str, Gpu]:
    return load_gpus(GPUS_CSV, _links())


@functools.cache
def _systems() -> dict[str, System]:
    return load_systems(SYSTEMS_CSV, _gpus(), _links())


def links() -> dict[str, Link]:
    """Every interconnect generation of ``data/links.csv``, keyed by id (loaded once)."""
    return dict(_links())


def gpus() -> dict[str, Gpu]:
    """Every GPU of ``data/gpus.csv``, keyed by id (loaded once)."""
    return dict(_gpus())


def systems() -> dict[str, System]:
    """Every system of ``data/systems.csv``, keyed by id (loaded once)."""
    return dict(_systems())


def link(link_id: str) -> Link:
    """The link with this id; :class:`InputError` naming the known ids if there is none."""
    return _lookup(_links(), link_id, "link")


def gpu(gpu_id: str) -> Gpu:
    """The GPU with this id; :class:`InputError` naming the known ids if there is none."""
    return _lookup(_gpus(), gpu_id, "gpu")


def system(system_id: str) -> System:
    """The system with this id; :class:`InputError` naming the known ids if there is none.

    ``<id>@<fabric>`` is the system with its nodes joined by another fabric (:data:`FABRICS`), e.g.
    ``dgx-b200@ib-sharp`` (InfiniBand with in-network reduction) or ``hgx-h100@efa``.
    """
    base, _, fabric = system_id.partition("@")
    found = _lookup(_systems(), base, "system")
    if not fabric:
        return found
    if fabric not in FABRICS:
        raise InputError(f"unknown fabric '{fabric}' in system '{system_id}'; expected one of {', '.join(FABRICS)}")
    if not found.nics_per_node:
        raise InputError(f"{base} has no scale-out NIC, so it has no fabric to choose ('{system_id}')")
    return dataclasses.replace(found, id=system_id, fabric=fabric)


def default_fabric(nic: Link | None) -> str | None:
    """The fabric a NIC gives when the catalogue names none: InfiniBand ``ib`` (no SHARP), a RoCE or
    SuperNIC Ethernet port ``roce``, a GPUDirect-TCPXO port ``tcpxo``, a GPUDirect-TCPX port ``tcpx``, an AWS
    EFA interface ``efa``, other Ethernet ``tcp``; None without a NIC."""
    if nic is None:
        return None
    if nic.category == "infiniband":
        return "ib"
    if nic.id.startswith("tcpxo"):
        return "tcpxo"
    if nic.id.startswith("tcpx-"):
        return "tcpx"
    if nic.id.startswith("efa"):
        return "efa"
    return "roce" if nic.id.startswith(("roce", "connectx")) else "tcp"


def _lookup(table: Mapping[str, R], key: str, kind: str) -> R:
    if key not in table:
        raise InputError(f"unknown {kind} '{key}'; known: {', '.join(sorted(table))}")
    return table[key]


# ------------------------------------------------------------------- loaders


def load_links(path: str | Path) -> dict[str, Link]:
    """Load and check a links file; per-GPU total must equal links x per-link rate (1%)."""
    rows = _read(path, Link)
    for line, rec in rows:
        if rec.per_link_GBps_per_dir is not None and rec.links_per_gpu is not None:
            _check_total(path, line, "per_gpu_GBps_per_dir", rec.per_gpu_GBps_per_dir,
                         rec.links_per_gpu, rec.per_link_GBps_per_dir)
        raw = rec.signalling_GBps_per_dir
        if (rec.lanes_per_link is None) != (rec.lane_Gbps is None):
            raise InputError("lanes_per_link and lane_Gbps must be given together", str(path), line, "lane_Gbps")
        if raw is not None and rec.per_link_GBps_per_dir is not None and not (
                LINE_CODE_FLOOR * raw <= rec.per_link_GBps_per_dir <= (1 + TOLERANCE) * raw):
            raise InputError(f"{rec.lanes_per_link} lanes x {rec.lane_Gbps:g} Gb/s / 8 = {raw:g} GB/s does not "
                             f"carry per_link_GBps_per_dir {rec.per_link_GBps_per_dir:g}", str(path), line, "lane_Gbps")
    return {rec.id: rec for _, rec in rows}


def load_gpus(path: str | Path, links: Mapping[str, Link] | None = None) -> dict[str, Gpu]:
    """Load and check a GPUs file against ``links`` (default: the packaged catalogue).

    Checks, besides cell types: link references and their categories, ``parent``
    names a GPU of the same file, and ``nvlink_GBps_per_dir`` = ``nvlink_links``
    x the link's per-link rate (0 when the GPU has no GPU-to-GPU fabric).
    """
    links = _links() if links is None else links
    rows = _read(path, Gpu)
    gpu_ids = {rec.id for _, rec in rows}
    for line, rec in rows:
        _check_ref(path, line, "nvlink", rec.nvlink, links, "link", GPU_FABRICS)
        _check_ref(path, line, "pcie", rec.pcie, links, "link", ("pcie",))
        _check_ref(path, line, "cpu_link", rec.cpu_link, links, "link", ("c2c",))
        _check_ref(path, line, "parent", rec.parent, gpu_ids, "gpu")
        if rec.fp4_dense_TFLOPS is not None and rec.fp4_peak_TFLOPS is not None \
                and rec.fp4_peak_TFLOPS < rec.fp4_dense_TFLOPS:
            raise InputError("is below fp4_dense_TFLOPS", str(path), line, "fp4_peak_TFLOPS")
        if rec.nvlink is None:
            if rec.nvlink_GBps_per_dir != 0 or rec.nvlink_links is not None:
                raise InputError("must be 0 (and nvlink_links empty) when nvlink is empty",
                                 str(path), line, "nvlink_GBps_per_dir")
        elif rec.nvlink_links is not None and links[rec.nvlink].per_link_GBps_per_dir is not None:
            _check_total(path, line, "nvlink_GBps_per_dir", rec.nvlink_GBps_per_dir,
                         rec.nvlink_links, links[rec.nvlink].per_link_GBps_per_dir)
    return {rec.id: rec for _, rec in rows}


def load_systems(path: str | Path, gpus: Mapping[str, Gpu] | None = None,
                 links: Mapping[str, Link] | None = None) -> dict[str, System]:
    """Load and check a systems file against ``gpus`` and ``links`` (default: packaged).

    Checks references (and that each names a link of the right category), the
    rules of :data:`_SYSTEM_RULES`, and fills the derived ``*_GBps_per_dir`` fields.
    """
    links = _links() if links is None else links
    gpus = _gpus() if gpus is None else gpus
    result: dict[str, System] = {}
    for line, rec in _read(path, System):
        _check_ref(path, line, "gpu", rec.gpu, gpus, "gpu")
        _check_ref(path, line, "nvlink", rec.nvlink, links, "link", GPU_FABRICS)
        _check_ref(path, line, "nvswitch", rec.nvswitch, links, "link", ("nvswitch",))
        _check_ref(path, line, "pcie", rec.pcie, links, "link", ("pcie",))
        _check_ref(path, line, "nic", rec.nic, links, "link", ("infiniband", "ethernet"))
        if rec.variant_of is not None and (rec.variant_of not in result or result[rec.variant_of].gpu != rec.gpu):
            raise InputError(f"variant_of '{rec.variant_of}' must name a system of an earlier line with the same "
                             f"GPU '{rec.gpu}'", str(path), line, "variant_of")
        for column, broken, message in _SYSTEM_RULES:
            if broken(rec, links):
                raise InputError(message, str(path), line, column)
        result[rec.id] = _with_derived(rec, links)
    return result


def _with_derived(rec: System, links: Mapping[str, Link]) -> System:
    nvlink = 0.0
    if rec.nvlink is not None:
        fabric = links[rec.nvlink]
        if rec.nvlink_links_per_gpu is not None and fabric.per_link_GBps_per_dir is not None:
            nvlink = rec.nvlink_links_per_gpu * fabric.per_link_GBps_per_dir
        else:
            nvlink = fabric.per_gpu_GBps_per_dir
    nic = 0.0 if rec.nic is None else links[rec.nic].per_gpu_GBps_per_dir
    fabric = rec.fabric or default_fabric(None if rec.nic is None else links[rec.nic])
    return dataclasses.replace(rec, nvlink_GBps_per_dir=nvlink, nic_GBps_per_dir=nic, fabric=fabric,
                               pcie_GBps_per_dir=links[rec.pcie].per_gpu_GBps_per_dir)


#: (column, test that is True when the row is wrong, message): cross-column rules of a system.
_SYSTEM_RULES: list[tuple[str, Callable[[System, Mapping[str, Link]], bool], str]] = [
    ("nvswitch", lambda s, _: (s.topology == "nvswitch") != (s.nvswitch is not None),
     "must be given exactly when topology is 'nvswitch'"),
    ("nvlink", lambda s, _: (s.topology in ("pcie-tree",)) != (s.nvlink is None),
     "must be empty exactly when topology is 'pcie-tree'"),
    ("in_switch_reduction",
     lambda s, links: s.in_switch_reduction and (s.nvswitch is None or not links[s.nvswitch].in_network_reduction),
     "is true but the switch has no in-network reduction"),
    ("bridge_group", lambda s, _: (s.topology == "pcie-bridged") != (s.bridge_group is not None),
     "must be given exactly when topology is 'pcie-bridged'"),
    ("nic", lambda s, _: (s.nics_per_node > 0) != (s.nic is not None),
     "must be given exactly when nics_per_node > 0"),
    ("fabric", lambda s, _: s.fabric is not None and not s.nics_per_node,
     "must be empty when the system has no NIC (nics_per_node = 0)"),
]

# ------------------------------------------------------------ file schemas


def _names_a_url(value: str) -> str:
    if "http" not in value:
        raise ValueError(f"'{value}' names no URL; expected one or more URLs (http...), separated by ' ; '")
    return value


#: CSV type of a record field and what the column holds, by the field's Python type.
_CELL_TYPES: dict[type, tuple[Any, str]] = {
    str: (datafiles.Text, "text"),
    int: (datafiles.Count, "a non-negative whole number"),
    float: (datafiles.NonNegative, "a non-negative number"),
    bool: (datafiles.TrueFalse, "true or false"),
}
#: Columns with a CSV type of their own, in every file (the enums of :data:`ENUMS` too).
_COLUMN_TYPES: dict[str, tuple[Any, str]] = {
    "id": (datafiles.LowerId, "a lower-case id"),
    "source": (Annotated[str, AfterValidator(_names_a_url)], "one or more URLs, separated by ' ; '"),
    "notes": (datafiles.BlankText, "text"),
    **{column: (datafiles.one_of(values), f"one of {', '.join(values)}") for column, values in ENUMS.items()},
}


def _schema(cls: type[R], noun: str) -> type[datafiles.ClosedRow]:
    """The CSV schema of a record type: a column per field not marked derived, typed by its name
    (:data:`_COLUMN_TYPES`) or Python type (:data:`_CELL_TYPES`). An ``X | None`` field may be empty,
    a field marked optional may be left out of the header; no other column is allowed."""
    hints = typing.get_type_hints(cls)
    columns: dict[str, Any] = {}
    expected: dict[str, str] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("derived"):
            continue
        args = typing.get_args(hints[f.name])  # (X, NoneType) for X | None
        base = next((a for a in args if a is not type(None)), hints[f.name])
        cell, expected[f.name] = _COLUMN_TYPES.get(f.name, _CELL_TYPES[base])
        columns[f.name] = (cell | None if args else cell, None if f.metadata.get("optional") else ...)
    schema = pydantic.create_model(f"{cls.__name__}Row", __base__=datafiles.ClosedRow, **columns)
    schema.NOUN, schema.EXPECTED = noun, expected
    return schema


_SCHEMAS = {Link: _schema(Link, "link"), Gpu: _schema(Gpu, "GPU"), System: _schema(System, "system")}


def _read(path: str | Path, cls: type[R]) -> list[_Row]:
    """Read ``path`` into records of ``cls`` with their lines: header, cell types, enums, ids, sources."""
    return [(line, cls(**dict(row))) for line, row in datafiles.read(path, _SCHEMAS[cls], unique=("id",))]


def _check_ref(path: str | Path, line: int, column: str, value: str | None,
               known: Mapping[str, Any] | set[str], kind: str, categories: tuple[str, ...] = ()) -> None:
    """An id in ``column`` must name a known record (of one of ``categories``, for links)."""
    if value is None:
        return
    if value not in known:
        raise InputError(f"unknown {kind} '{value}'; known: {', '.join(sorted(known))}", str(path), line, column)
    if categories and known[value].category not in categories:  # type: ignore[index]
        raise InputError(f"link '{value}' is a {known[value].category} link; expected {' or '.join(categories)}",  # type: ignore[index]
                         str(path), line, column)


def _check_total(path: str | Path, line: int, column: str, total: float, count: int, each: float) -> None:
    """``total`` must be ``count`` x ``each`` within :data:`TOLERANCE`."""
    expected = count * each
    if not math.isclose(total, expected, rel_tol=TOLERANCE, abs_tol=1e-9):
        raise InputError(f"{total:g} disagrees with {count} links x {each:g} = {expected:g} GB/s",
                         str(path), line, column)
