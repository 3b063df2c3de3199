"""``python -m multigpu gpus|links|systems``: the hardware catalogue, one row per entry.

JSON and CSV show every field (plus the derived ``_bidir`` figures); the table
shows the main columns. Every row has its ``id`` and ``source``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from multigpu.hardware import catalog

_UNITS = ("Units: GB = 1e9 bytes; bandwidth in GB/s, '_per_dir' = one direction, "
          "'_bidir' = both directions added; compute in dense TFLOPS (no sparsity); "
          "power in W; empty = not known / not applicable.")

#: name -> (help, all records, one record by id, columns shown by the table format)
_TABLES: dict[str, tuple[str, Callable[[], dict], Callable[[str], object], tuple[str, ...]]] = {
    "gpus": ("list GPUs: dense BF16/FP8 TFLOPS, memory GB, HBM GB/s, NVLink GB/s per direction",
             catalog.gpus, catalog.gpu,
             ("id", "name", "bf16_dense_TFLOPS", "fp8_dense_TFLOPS", "memory_GB", "mem_bw_GBps",
              "nvlink", "nvlink_GBps_per_dir", "pcie", "parent", "source")),
    "links": ("list interconnect generations (NVLink, NVSwitch, bridges, PCIe, IB, RoCE, "
              "Infinity Fabric, C2C) in GB/s per direction and bidirectional",
              catalog.links, catalog.link,
              ("id", "category", "per_link_GBps_per_dir", "links_per_gpu", "per_gpu_GBps_per_dir",
               "per_gpu_GBps_bidir", "in_network_reduction", "source")),
    "systems": ("list systems (DGX/HGX, NVL72 racks, AMD MI300X and MI355X, PCIe boxes) and their wiring; "
                "NVLink and NIC GB/s per direction",
                catalog.systems, catalog.system,
                ("id", "gpu", "gpus_per_node", "topology", "nvlink", "nvlink_GBps_per_dir",
                 "nvswitch", "pcie", "pcie_p2p", "nics_per_node", "nic", "source")),
}


def register(subparsers: argparse._SubParsersAction, add_command) -> None:
    for name, (help_text, *_) in _TABLES.items():
        parser = add_command(subparsers, name, help_text)
        parser.epilog = _UNITS
        parser.add_argument("ids", nargs="*", metavar="ID", help=f"only these ids (default: all {name})")
        parser.set_defaults(handler=_handler(name))


def _handler(name: str) -> Callable[[argparse.Namespace], list[dict]]:
    _, every, one, table_columns = _TABLES[name]

    def handle(args: argparse.Namespace) -> list[dict]:
        chosen = [one(key) for key in args.ids] if args.ids else list(every().values())
        rows = [record.to_dict() for record in chosen]
        if args.format == "table":
            rows = [{c: row[c] for c in table_columns} for row in rows]
        return rows

    return handle
