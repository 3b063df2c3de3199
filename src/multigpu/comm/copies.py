"""Point-to-point copies, not collectives: the rate of one GPU-to-GPU copy (one way or both) and of a host-GPU
copy over PCIe, in GB/s (1 GB = 1e9 bytes), from the max-min fair flow rates of the system's topology and the
calibration's link efficiency for the engine that copies (copy engines or kernels).
"""

from __future__ import annotations

from multigpu.comm import calibration
from multigpu.comm.calibration import Calibration
from multigpu.hardware import wiring
from multigpu.hardware.wiring import Topology


def copy_GBps(system: str | Topology, src: int = 0, dst: int = 1, *, bidirectional: bool = False,
              engine: str = "ce", cal: Calibration | None = None) -> float:
    """GPU-to-GPU copy rate, GB/s: one direction, or both added if ``bidirectional``.

    ``engine`` "ce" (copy engines: cudaMemcpy, p2pBandwidthLatencyTest,
    nvbandwidth) or "sm" (kernels).
    """
    topo = wiring.resolve(system)
    topo.check_gpus([src, dst])
    routes = [topo.route(src, dst)] + ([topo.route(dst, src)] if bidirectional else [])
    eff = calibration.resolve(cal).link_efficiency(topo.arch, engine)
    return float(wiring.flow_rates(topo, routes, eff).rates_GBps.sum())


def host_copy_GBps(system: str | Topology, gpu: int = 0, *, to_gpu: bool = True, engine: str = "ce",
                   cal: Calibration | None = None) -> float:
    """Host-memory <-> GPU copy rate over PCIe, GB/s (host to device if ``to_gpu``)."""
    topo = wiring.resolve(system)
    cpu = next(b for (a, b) in topo.routes if a == f"gpu{gpu}" and b.startswith("cpu"))
    route = topo.route(cpu, gpu) if to_gpu else topo.route(gpu, cpu)
    eff = calibration.resolve(cal).link_efficiency(topo.arch, engine)
    return float(wiring.flow_rates(topo, [route], eff).rates_GBps[0])
