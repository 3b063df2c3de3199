"""Physical bounds of the collective model, as properties over generated systems, placements and sizes.

- Across K >= 2 nodes with no in-network reduction, each node must send at least 2(K-1)/K of an all-reduce
  (and (K-1)/K of an all-gather or reduce-scatter) through its NICs, which caps busbw at
  [2(n-1)/n / (2(K-1)/K)] x the node's NIC line rate per direction (and [(n-1)/n / ((K-1)/K)] x it).
- On one node, without in-switch reduction, busbw never exceeds what each GPU's links carry per direction; with
  NVLS it never exceeds 2(n-1)/n x that (each GPU then sends and receives the data once: 482 GB/s busbw on
  450 GB/s links is possible, 1000 is not).
- Time never falls as the message grows, is never below one hop's hardware latency, never below 1 us.
- Ring equals its closed form on uniform links.
- Switching NVLS off (NCCL_NVLS_ENABLE=0) never makes an all-reduce faster.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multigpu.comm import calibration, collectives
from multigpu.common.errors import InputError
from multigpu.hardware import catalog, wiring

SYSTEMS = sorted(catalog.systems())
WITH_NICS = [s for s in SYSTEMS if catalog.system(s).nics_per_node]
FABRICS = [f for f in catalog.FABRICS if f not in catalog.IN_NETWORK_REDUCTION]
PROFILE = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIZES = st.one_of(st.integers(3, 34).map(lambda e: float(2**e)), st.floats(8.0, 2.0**34))


def node_nic_line_rate(system_id: str) -> float:
    """Every NIC of one node, line rate per direction, GB/s."""
    system = catalog.system(system_id)
    return system.nics_per_node * system.nic_GBps_per_dir


@st.composite
def multi_node(draw):
    """A system without in-network reduction, its fabric, GPUs per node, nodes and a message size."""
    base = draw(st.sampled_from(WITH_NICS))
    system_id = f"{base}@{draw(st.sampled_from(FABRICS))}"
    per_node = draw(st.integers(1, catalog.system(base).gpus_per_node))
    nodes = draw(st.integers(2, 64))
    return system_id, per_node, nodes, draw(SIZES)


@st.composite
def one_node(draw):
    system_id = draw(st.sampled_from(SYSTEMS))
    gpus = draw(st.integers(2, catalog.system(system_id).gpus_per_node))
    return system_id, gpus, draw(SIZES)


def results(op: str, system_id: str, gpus: int, nbytes: float, nodes: int = 1):
    """The collective with every algorithm the placement can run, and NCCL's own choice."""
    out = {}
    for algorithm in ["auto", *collectives.available(op, system_id, gpus, nodes)]:
        out[algorithm] = collectives.collective(op, system_id, gpus, nbytes, nodes=nodes, algorithm=algorithm)
    return out


@PROFILE
@given(multi_node())
def test_no_fabric_without_in_network_reduction_beats_the_nic_bound(case):
    system_id, per_node, nodes, nbytes = case
    n, k = per_node * nodes, nodes
    nic = node_nic_line_rate(system_id)
    for op, node_share in (("allreduce", 2 * (k - 1) / k), ("allgather", (k - 1) / k),
                           ("reducescatter", (k - 1) / k)):
        bound = collectives.busbw_factor(op, n) / node_share * nic
        for algorithm, r in results(op, system_id, n, nbytes, nodes).items():
            assert r.busbw_GBps <= bound * (1 + 1e-9), (op, algorithm, system_id, n, k, nbytes)


def test_in_network_reduction_is_what_lets_nvls_across_nodes_pass_the_bound():
    # the case: 4 x 8 B200 over 8 x 50 GB/s NICs per node; the bound is 2(31/32) / 2(3/4) x 400 = 517
    plain = collectives.collective("allreduce", "dgx-b200", 32, 16 * 2**30, nodes=4)
    sharp = collectives.collective("allreduce", "dgx-b200@ib-sharp", 32, 16 * 2**30, nodes=4)
    bound = (2 * 31 / 32) / (2 * 3 / 4) * node_nic_line_rate("dgx-b200")
    assert bound == pytest.approx(516.7, abs=0.1)
    assert plain.busbw_GBps <= bound and plain.fabric == "ib"
    assert sharp.busbw_GBps > bound and sharp.fabric == "ib-sharp"  # SHARP reduces in the switches


@PROFILE
@given(one_node())
def test_one_node_never_beats_its_links(case):
    system_id, gpus, nbytes = case
    topo = wiring.for_system(system_id)
    out = min(topo.out_GBps_per_dir(g) for g in range(gpus))
    nvls_bound = 2 * (gpus - 1) / gpus * out
    for op in ("allreduce", "allgather", "reducescatter", "alltoall"):
        for algorithm, r in results(op, system_id, gpus, nbytes).items():
            nvls = r.algorithm == "nvls"
            assert r.busbw_GBps <= (nvls_bound if nvls else out) * (1 + 1e-9), (op, algorithm, system_id, gpus)


@PROFILE
@given(one_node(), st.floats(1.0, 1000.0))
def test_time_never_falls_as_the_message_grows(case, factor):
    system_id, gpus, nbytes = case
    for op in ("allreduce", "allgather", "alltoall", "broadcast"):
        for algorithm in ["auto", *collectives.available(op, system_id, gpus)]:
            small, large = collectives.time_us(op, system_id, gpus, np.array([nbytes, nbytes * factor]),
                                               algorithm=algorithm)
            assert large >= small, (op, algorithm, system_id, gpus, nbytes, factor)


@PROFILE
@given(st.one_of(one_node().map(lambda c: (c[0], c[1], 1, c[2])),
                 multi_node().map(lambda c: (c[0], c[1] * c[2], c[2], c[3]))))
def test_time_is_never_below_a_hop_or_a_microsecond(case):
    system_id, gpus, nodes, nbytes = case
    cal = calibration.default()
    hop = min(c.value for c in cal.constants if c.name == "hop_latency_us" and c.value > 0)
    for op in ("allreduce", "allgather", "sendrecv"):
        try:
            times = [r.time_us for r in results(op, system_id, gpus, nbytes, nodes).values()]
        except InputError:
            continue  # e.g. send/recv needs 2 ranks
        assert min(times) >= max(1.0, hop), (op, system_id, gpus, nodes, nbytes)


@PROFILE
@given(st.one_of(one_node().map(lambda c: (c[0], c[1], 1, c[2])),
                 multi_node().map(lambda c: (c[0], c[1] * c[2], c[2], c[3]))))
def test_switching_nvls_off_never_makes_an_all_reduce_faster(case):
    """NCCL_NVLS_ENABLE=0 takes a plan away from auto and adds none."""
    system_id, gpus, nodes, nbytes = case
    on = collectives.time_us("allreduce", system_id, gpus, nbytes, nodes=nodes)
    off = collectives.evaluate("allreduce", system_id, gpus, [nbytes], nodes=nodes, nvls=False)
    assert off["time_us"][0] >= on * (1 - 1e-12) and off["algorithm"][0] != "nvls", (system_id, gpus, nodes, nbytes)


LATENT_FABRICS = [f for f in FABRICS if calibration.default().fabric_latency_us(f) > 0]


@PROFILE
@given(multi_node(), st.sampled_from(LATENT_FABRICS), st.floats(1.0, 200.0))
def test_a_fabric_that_waits_longer_per_message_is_never_faster(case, fabric, extra_us):
    """More latency per network message costs latency and, as the pipeline needs more bytes in flight to fill,
    bandwidth below the fill size; never time."""
    system_id, per_node, nodes, nbytes = case
    system_id = f"{system_id.split('@')[0]}@{fabric}"
    cal = calibration.default()
    slower = cal.replace({("fabric_latency_us", fabric): cal.fabric_latency_us(fabric) + extra_us})
    for op in ("allreduce", "allgather"):
        before = collectives.time_us(op, system_id, per_node * nodes, nbytes, nodes=nodes, cal=cal)
        after = collectives.time_us(op, system_id, per_node * nodes, nbytes, nodes=nodes, cal=slower)
        assert after >= before * (1 - 1e-12), (op, system_id, per_node, nodes, nbytes)


@pytest.mark.parametrize("system_id", ["hgx-h100", "dgx-b200", "dgx-a100", "gb200-nvl72"])
@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_ring_equals_its_closed_form_on_a_switch(system_id, gpus):
    cal = calibration.default()
    topo = wiring.for_system(system_id)
    arch = topo.arch
    port = topo.port_GBps_per_dir(0) * cal.efficiency("nvlink", arch)
    n = gpus
    steps = 2 * (n - 1)
    latency = cal.value("latency_scale", "nccl") * (
        cal.value("base_latency_us", "ring.simple") + steps * cal.value("hop_latency_us", "nvlink.ring.simple"))
    full = cal.value("bandwidth_ramp", "bytes_per_rank") * n  # below it, (S / full) ** exponent of the bandwidth
    for nbytes in (2.0**20, 2.0**30, 2.0**34):
        ramp = min(1.0, (nbytes / full) ** cal.value("bandwidth_ramp", "exponent"))
        closed = latency + 2 * (n - 1) / n * nbytes / (port * 1e3 * ramp)
        plan = next(p for p in collectives.plans("allreduce", system_id, n, algorithm="ring") if p.protocol == "simple")
        assert plan.time_us(np.array([nbytes]))[0] == pytest.approx(closed, rel=1e-9)
        assert math.isfinite(closed)
