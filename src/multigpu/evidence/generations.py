"""Interconnect generations from the catalogue: the tables and series of chapter 1.

Every function reads :mod:`multigpu.hardware.catalog` and returns a pandas DataFrame
whose column names carry their units (``_GBps_per_dir``, ``_GBps_bidir``,
``_TFLOPS``, ...). Bandwidths are GB/s (1e9 bytes/s). A ratio of two
bandwidths is only formed between figures of the same direction convention
(per direction against per direction); :func:`nvlink_pcie_ratio` also shows
the mixed ratio that vendors' headline figures invite, to make the trap visible.

The functions:

- :func:`generation_table`: one interconnect family (NVLink, NVSwitch, PCIe,
  InfiniBand), one row per generation, with signalling and first user;
- :func:`bandwidth_timeline`: per-GPU bandwidth of the three families by year,
  and :func:`family_growth`: how fast each grew;
- :func:`nvlink_pcie_ratio`: NVLink against PCIe for each NVLink GPU generation;
- :func:`bytes_per_flop`: interconnect bytes per FLOP of dense compute;
- :func:`export_variants`: China-market variants beside their parents;
- :func:`rack_compute`: an NVL72 rack's compute by precision, dense and sparse.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from multigpu.hardware import catalog
from multigpu.hardware.catalog import Gpu, System

#: Link ids of each family, oldest first (the hypothetical mesh and export caps are left out).
FAMILIES: dict[str, tuple[str, ...]] = {
    "nvlink": ("nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5", "nvlink6"),
    "nvswitch": ("nvswitch1", "nvswitch2", "nvswitch3", "nvlink-switch4", "nvlink6-switch"),
    "pcie": ("pcie3-x16", "pcie4-x16", "pcie5-x16", "pcie6-x16"),
    "infiniband": ("infiniband-edr", "infiniband-hdr", "infiniband-ndr", "infiniband-xdr"),
}
#: Family names as the book prints them.
FAMILY_NAMES = {"nvlink": "NVLink", "nvswitch": "NVSwitch", "pcie": "PCIe x16", "infiniband": "InfiniBand 4x port"}

#: The flagship NVIDIA GPU of each step in (NVLink, PCIe) generation, oldest first.
FLAGSHIPS = ("p100-sxm2", "v100-sxm2", "a100-sxm4-80gb", "h100-sxm", "b200", "b300", "rubin")

#: The NVL72 racks compared by :func:`rack_compute`.
NVL72_SYSTEMS = ("gb200-nvl72", "gb300-nvl72", "vr-nvl72")

#: Precisions of :func:`rack_compute`: (label, Gpu attribute, dense?).
PRECISIONS = (
    ("BF16 dense", "bf16_dense_TFLOPS", True),
    ("FP8 dense", "fp8_dense_TFLOPS", True),
    ("FP4 dense", "fp4_dense_TFLOPS", True),
    ("FP4 vendor peak (sparse / compressed)", "fp4_peak_TFLOPS", False),
)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def first_gpu(link_id: str) -> Gpu | None:
    """The earliest GPU of the catalogue whose GPU-to-GPU fabric or PCIe port is ``link_id``.

    Ties in year go to the GPU listed first in ``gpus.csv``. None if no GPU uses the link.
    """
    users = [g for g in catalog.gpus().values() if link_id in (g.nvlink, g.pcie)]
    return min(users, key=lambda g: g.year, default=None)


def first_system(link_id: str) -> System | None:
    """The earliest system of the catalogue that uses ``link_id`` (fabric, switch, PCIe or NIC)."""
    users = [s for s in catalog.systems().values() if link_id in (s.nvlink, s.nvswitch, s.pcie, s.nic)]
    return min(users, key=lambda s: s.year, default=None)


def largest_domain(link_id: str) -> int | None:
    """The most GPUs (count) any system of the catalogue joins with the switch ``link_id``; None if no system
    uses it."""
    sizes = [s.gpus_per_node for s in catalog.systems().values() if s.nvswitch == link_id]
    return max(sizes, default=None)


def generation_table(family: str = "nvlink") -> pd.DataFrame:
    """One row per generation of ``family`` ("nvlink", "nvswitch", "pcie" or "infiniband").

    Columns: ``generation``, ``year`` (introduction: first product for NVLink and
    NVSwitch, specification for PCIe and InfiniBand), ``first_in_catalogue`` (the
    earliest GPU of the catalogue that has it, or system for switches and NICs;
    older products are not catalogued), ``links_per_gpu``, ``lanes_per_link``,
    ``lane_Gbps`` (signalling per lane and direction), ``per_link_GBps_per_dir``,
    ``per_link_GBps_bidir``, ``per_gpu_GBps_per_dir``, ``per_gpu_GBps_bidir``; for
    switches also ``max_gpus_per_domain`` and ``in_network_reduction``. For a NIC
    family a "link" is one 4x port and "per GPU" is one port.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown family '{family}'; known: {', '.join(FAMILIES)}")
    rows = []
    for link_id in FAMILIES[family]:
        link = catalog.link(link_id)
        if family in ("nvswitch", "infiniband"):
            user = first_system(link_id)
        else:
            user = first_gpu(link_id)
        row = {
            "generation": link.name,
            "year": link.year,
            "first_in_catalogue": user.name if user is not None else "",
            "links_per_gpu": link.links_per_gpu,
            "lanes_per_link": link.lanes_per_link,
            "lane_Gbps": link.lane_Gbps,
            "per_link_GBps_per_dir": link.per_link_GBps_per_dir,
            "per_link_GBps_bidir": link.per_link_GBps_bidir,
            "per_gpu_GBps_per_dir": link.per_gpu_GBps_per_dir,
            "per_gpu_GBps_bidir": link.per_gpu_GBps_bidir,
        }
        if family == "nvswitch":
            row["max_gpus_per_domain"] = largest_domain(link_id)
            row["in_network_reduction"] = link.in_network_reduction
        rows.append(row)
    table = pd.DataFrame(rows)
    for column in ("links_per_gpu", "lanes_per_link", "max_gpus_per_domain"):
        if column in table:
            table[column] = table[column].astype("Int64")
    return table.round(2)


def bandwidth_timeline() -> pd.DataFrame:
    """Per-GPU bandwidth of NVLink, PCIe x16 and one InfiniBand port by introduction year.

    Columns: ``family`` (printed name), ``generation``, ``year``,
    ``per_gpu_GBps_per_dir``, ``per_gpu_GBps_bidir``. Years as in
    :func:`generation_table` (PCIe and InfiniBand: the specification).
    """
    rows = []
    for family in ("nvlink", "pcie", "infiniband"):
        for link_id in FAMILIES[family]:
            link = catalog.link(link_id)
            rows.append({"family": FAMILY_NAMES[family], "generation": link.name, "year": link.year,
                         "per_gpu_GBps_per_dir": link.per_gpu_GBps_per_dir,
                         "per_gpu_GBps_bidir": link.per_gpu_GBps_bidir})
    return pd.DataFrame(rows)


def family_growth() -> pd.DataFrame:
    """How fast each family's per-GPU bandwidth grew, first generation to last.

    Columns: ``family``, ``first``, ``last`` (generation names), ``first_year``,
    ``last_year``, ``first_GBps_per_dir``, ``last_GBps_per_dir``, ``growth_x``
    (last / first) and ``doubling_years`` (years per doubling at a steady rate).
    """
    rows = []
    for family, data in bandwidth_timeline().groupby("family", sort=False):
        first, last = data.iloc[0], data.iloc[-1]
        growth = last["per_gpu_GBps_per_dir"] / first["per_gpu_GBps_per_dir"]
        rows.append({"family": family, "first": first["generation"], "last": last["generation"],
                     "first_year": first["year"], "last_year": last["year"],
                     "first_GBps_per_dir": first["per_gpu_GBps_per_dir"],
                     "last_GBps_per_dir": last["per_gpu_GBps_per_dir"], "growth_x": growth,
                     "doubling_years": (last["year"] - first["year"]) / math.log2(growth)})
    return pd.DataFrame(rows).round(2)


def transfer_time_ms(size_GB: float, GBps_per_dir: float) -> float:
    """The least time to move ``size_GB`` (1e9 bytes) one way over a link of ``GBps_per_dir``, in ms.

    A lower bound: no latency, no protocol overhead, the whole per-direction rate.
    """
    if GBps_per_dir <= 0:
        raise ValueError("bandwidth must be positive")
    return 1e3 * size_GB / GBps_per_dir


def nvlink_pcie_ratio(gpu_ids: tuple[str, ...] = FLAGSHIPS) -> pd.DataFrame:
    """NVLink against PCIe for each GPU: like with like, and the mixed-convention trap.

    Columns: ``gpu``, ``year``, ``nvlink``, ``pcie`` (link names),
    ``nvlink_GBps_per_dir``, ``pcie_GBps_per_dir``, ``ratio_same_convention``
    (per direction / per direction, equal to bidirectional / bidirectional) and
    ``ratio_mixed_convention`` (NVLink bidirectional / PCIe per direction: twice too high).
    """
    rows = []
    for gpu_id in gpu_ids:
        gpu = catalog.gpu(gpu_id)
        pcie = catalog.link(gpu.pcie)
        same = gpu.nvlink_GBps_per_dir / pcie.per_gpu_GBps_per_dir
        rows.append({"gpu": gpu.name, "year": gpu.year,
                     "nvlink": catalog.link(gpu.nvlink).name if gpu.nvlink else "",
                     "pcie": pcie.name,
                     "nvlink_GBps_per_dir": gpu.nvlink_GBps_per_dir,
                     "pcie_GBps_per_dir": pcie.per_gpu_GBps_per_dir,
                     "ratio_same_convention": same,
                     "ratio_mixed_convention": gpu.nvlink_GBps_bidir / pcie.per_gpu_GBps_per_dir})
    return pd.DataFrame(rows).round(2)


def dense_tflops(gpu: Gpu) -> tuple[float | None, str]:
    """The GPU's dense 16-bit tensor rate and its precision: BF16, else FP16 (V100, P100)."""
    if gpu.bf16_dense_TFLOPS is not None:
        return gpu.bf16_dense_TFLOPS, "BF16"
    if gpu.fp16_dense_TFLOPS is not None:
        return gpu.fp16_dense_TFLOPS, "FP16"
    return None, ""


def gpu_to_gpu_GBps_per_dir(gpu: Gpu) -> float:
    """What one GPU can send to its peers, one direction: its NVLink (or bridge), else its PCIe port."""
    return gpu.nvlink_GBps_per_dir if gpu.nvlink_GBps_per_dir > 0 else catalog.link(gpu.pcie).per_gpu_GBps_per_dir


def bytes_per_flop(gpu_ids: tuple[str, ...] = FLAGSHIPS) -> pd.DataFrame:
    """Interconnect bytes per 1,000 FLOP of dense 16-bit compute, per GPU.

    Columns: ``gpu``, ``year``, ``precision`` (BF16, or FP16 where there is no
    BF16), ``dense_TFLOPS``, ``nvlink_GBps_per_dir``, ``pcie_GBps_per_dir``,
    ``nvlink_bytes_per_kFLOP``, ``pcie_bytes_per_kFLOP`` (one direction, bytes
    the link moves while the GPU does 1,000 FLOP). GPUs without a published
    16-bit rate (Rubin) are left out.
    """
    rows = []
    for gpu_id in gpu_ids:
        gpu = catalog.gpu(gpu_id)
        tflops, precision = dense_tflops(gpu)
        if tflops is None:
            continue
        pcie = catalog.link(gpu.pcie).per_gpu_GBps_per_dir
        rows.append({"gpu": gpu.name, "year": gpu.year, "precision": precision, "dense_TFLOPS": tflops,
                     "nvlink_GBps_per_dir": gpu.nvlink_GBps_per_dir, "pcie_GBps_per_dir": pcie,
                     # GB/s / TFLOP/s = 1e9 / 1e12 bytes per FLOP = bytes per 1,000 FLOP
                     "nvlink_bytes_per_kFLOP": gpu.nvlink_GBps_per_dir / tflops,
                     "pcie_bytes_per_kFLOP": pcie / tflops})
    return pd.DataFrame(rows).round(3)


def export_variants() -> pd.DataFrame:
    """Every GPU with a ``parent`` (the China-market variants) beside that parent.

    Columns: ``variant``, ``parent``, the variant's ``gpu_to_gpu_GBps_per_dir``
    (NVLink, or PCIe where it has none), ``dense_TFLOPS`` (BF16), ``mem_bw_GBps``,
    ``memory_GB``, each also as ``..._pct_of_parent``, and
    ``bytes_per_kFLOP`` / ``parent_bytes_per_kFLOP`` (GPU-to-GPU bytes per 1,000
    dense FLOP).
    """
    rows = []
    for gpu in catalog.gpus().values():
        if gpu.parent is None:
            continue
        parent = catalog.gpu(gpu.parent)
        link, parent_link = gpu_to_gpu_GBps_per_dir(gpu), gpu_to_gpu_GBps_per_dir(parent)
        flops, parent_flops = dense_tflops(gpu)[0], dense_tflops(parent)[0]
        rows.append({
            "variant": gpu.name, "parent": parent.name,
            "gpu_to_gpu_GBps_per_dir": link, "gpu_to_gpu_pct_of_parent": 100 * link / parent_link,
            "dense_TFLOPS": flops, "dense_TFLOPS_pct_of_parent": 100 * flops / parent_flops,
            "mem_bw_GBps": gpu.mem_bw_GBps, "mem_bw_pct_of_parent": 100 * gpu.mem_bw_GBps / parent.mem_bw_GBps,
            "memory_GB": gpu.memory_GB, "memory_pct_of_parent": 100 * gpu.memory_GB / parent.memory_GB,
            "bytes_per_kFLOP": link / flops, "parent_bytes_per_kFLOP": parent_link / parent_flops,
        })
    table = pd.DataFrame(rows)
    digits = {c: 1 for c in table if c.endswith("_pct_of_parent")}
    digits.update(bytes_per_kFLOP=3, parent_bytes_per_kFLOP=3)
    return table.round(digits)


def rack_EFLOPS(system_id: str, attribute: str) -> float:
    """A whole NVLink domain's compute in exaFLOPS (1e18 FLOP/s): GPUs x the GPU's ``attribute``.

    ``attribute`` is a TFLOPS field of :class:`~multigpu.hardware.catalog.Gpu` (e.g.
    ``"bf16_dense_TFLOPS"``, ``"fp4_peak_TFLOPS"``); NaN where the catalogue has no figure.
    """
    system = catalog.system(system_id)
    return system.gpus_per_node * _nan(getattr(catalog.gpu(system.gpu), attribute)) / 1e6


def rack_compute(system_ids: tuple[str, ...] = NVL72_SYSTEMS) -> pd.DataFrame:
    """Compute of whole NVLink domains by precision, in exaFLOPS (1e18 FLOP/s).

    One row per system: ``system``, ``gpus``, then one ``..._EFLOPS`` column per
    precision of :data:`PRECISIONS` (``bf16_dense_EFLOPS``, ``fp8_dense_EFLOPS``,
    ``fp4_dense_EFLOPS`` and ``fp4_peak_EFLOPS``, the vendor's headline with 2:4
    sparsity or adaptive compression); NaN where the catalogue has no figure
    (Rubin publishes no BF16 or FP8 rate).
    """
    rows = []
    for system_id in system_ids:
        system = catalog.system(system_id)
        row: dict[str, object] = {"system": system.name, "gpus": system.gpus_per_node}
        for _, attribute, _ in PRECISIONS:
            row[attribute.replace("_TFLOPS", "_EFLOPS")] = rack_EFLOPS(system_id, attribute)
        rows.append(row)
    return pd.DataFrame(rows).round(3)


# ------------------------------------------------------------------ figures
# Each helper draws one of chapter 1's figures on axes made by multigpu.book.plotting.figure.


def short_name(gpu_name: str) -> str:
    """A GPU's name without vendor prefix, form factor or notes: "Tesla V100 SXM2 32GB" -> "V100"."""
    name = gpu_name.split(" (")[0].replace("Tesla ", "").replace("GeForce ", "")
    return re.sub(r" \d+GB$", "", name.split(" SXM")[0])


