"""Topology: wiring from the catalogue, routes, max-min flow rates, ring packing, NIC shares."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from multigpu.comm import calibration, collectives
from multigpu.common.errors import InputError
from multigpu.hardware import catalog, wiring

LINKS = {
    "nvl": SimpleNamespace(id="nvl", category="nvlink", per_link_GBps_per_dir=25.0, links_per_gpu=18,
                           per_gpu_GBps_per_dir=450.0),
    "sw": SimpleNamespace(id="sw", category="nvswitch", per_link_GBps_per_dir=25.0, links_per_gpu=18,
                          per_gpu_GBps_per_dir=450.0),
    "mesh": SimpleNamespace(id="mesh", category="nvlink", per_link_GBps_per_dir=64.0, links_per_gpu=7,
                            per_gpu_GBps_per_dir=448.0),
    "pcie": SimpleNamespace(id="pcie", category="pcie", per_link_GBps_per_dir=32.0, links_per_gpu=1,
                            per_gpu_GBps_per_dir=32.0),
    "ib": SimpleNamespace(id="ib", category="infiniband", per_link_GBps_per_dir=50.0, links_per_gpu=1,
                          per_gpu_GBps_per_dir=50.0),
}
GPU = SimpleNamespace(id="g", arch="hopper")


def stand_in(**fields) -> wiring.Topology:
    """A hand-made system with the catalogue's field names (8 GPUs on a switch unless overridden)."""
    system = dict(id="test", gpu="g", gpus_per_node=8, topology="nvswitch", nvlink="nvl", nvlink_links_per_gpu=18,
                  nvswitch="sw", in_switch_reduction=True, bridge_group=None, pcie="pcie", pcie_p2p=True,
                  gpus_per_pcie_switch=2, cpu_sockets=2, inter_socket_GBps_per_dir=64.0, nics_per_node=8, nic="ib")
    system.update(fields)
    return wiring.build(SimpleNamespace(**system), link=LINKS.__getitem__, gpu=lambda _: GPU)


def test_switch_gives_every_gpu_its_port_rate_for_pairs_rings_and_all_to_all():
    topo = stand_in()
    assert wiring.pattern_bandwidth(topo, [0, 5], "pair").min_flow_GBps == 450
    assert wiring.ring_bandwidth(topo, list(range(8))).bw_GBps_per_dir == 450
    a2a = wiring.pattern_bandwidth(topo, list(range(8)), "alltoall")
    assert a2a.per_gpu_send_GBps == pytest.approx(450)  # 7 flows share the port ...
    assert a2a.min_flow_GBps == pytest.approx(450 / 7)  # ... at 1/7 each


def test_full_mesh_pair_gets_one_link_and_rings_use_every_link():
    # NVIDIA's hypothetical 8x H200 point-to-point server: 7 links of 128 GB/s bidir (64 per direction)
    topo = wiring.for_system("h200-p2p-8")
    assert wiring.pattern_bandwidth(topo, [0, 1], "pair").min_flow_GBps == pytest.approx(64)
    for k in (2, 3, 4, 5, 7, 8):  # directed rings cover all k-1 links of each GPU
        assert wiring.ring_bandwidth(topo, list(range(k))).bw_GBps_per_dir == pytest.approx(64 * (k - 1)), k
    assert wiring.ring_bandwidth(topo, list(range(6))).bw_GBps_per_dir >= 0.9 * 64 * 5  # greedy packing


def test_switch_keeps_pair_bandwidth_while_mesh_splits_it():
    # the article's C10/C11: 2 GPUs: 900 vs 128 GB/s bidir; 8 GPUs all-to-all: both ~ the per-GPU total
    switch, mesh = wiring.for_system("hgx-h200"), wiring.for_system("h200-p2p-8")
    assert wiring.pattern_bandwidth(switch, [0, 1], "pair").min_flow_GBps / \
        wiring.pattern_bandwidth(mesh, [0, 1], "pair").min_flow_GBps == pytest.approx(450 / 64)
    eight = list(range(8))
    assert wiring.pattern_bandwidth(mesh, eight, "alltoall").per_gpu_send_GBps == pytest.approx(448)
    assert wiring.pattern_bandwidth(switch, eight, "alltoall").per_gpu_send_GBps == pytest.approx(450)


def test_one_gpu_talking_to_71_peers_shares_its_port():
    # the article's C08 ("any GPU communication runs at full peak"): not when one GPU talks to many at once
    topo = wiring.for_system("gb200-nvl72")
    flows = [topo.route(0, b) for b in range(1, 72)]
    rates = wiring.flow_rates(topo, flows).rates_GBps
    assert rates == pytest.approx(np.full(71, 900 / 71))
    assert wiring.ring_bandwidth(topo, list(range(72))).bw_GBps_per_dir == pytest.approx(900)


def test_max_min_shares_a_link_and_counts_a_link_crossed_twice():
    topo = stand_in()
    shared = [topo.route(0, 1), topo.route(0, 2)]  # both leave through gpu0's port
    assert wiring.flow_rates(topo, shared).rates_GBps == pytest.approx([225, 225])
    caps = np.array([10.0, 30.0])
    rates = wiring._max_min(caps, [[0, 1], [1], [1, 1]]).rates_GBps
    # flows 0, 1, 2 load edge 1 once, once and twice: 30 / 4 = 7.5 each (edge 0's 10 is not reached)
    assert rates == pytest.approx([7.5, 7.5, 7.5])


def test_dgx1_hybrid_cube_mesh_wiring_and_two_hop_routes():
    topo = wiring.for_system("dgx-1-v100")
    links = {b: e.bw_GBps_per_dir for (a, b), i in topo.index.items() if a == "gpu0"
             for e in [topo.edges[i]] if e.link_class == "nvlink"}
    assert links == {"gpu1": 25, "gpu2": 25, "gpu3": 50, "gpu4": 50}  # 6 NVLink 2 links to 4 neighbours
    route = topo.route(0, 5)  # no direct link: NVLink through an intermediate GPU (NCCL's NVB path)
    assert route.link_class == "nvlink" and len(route.edges) == 2
    assert wiring.ring_bandwidth(topo, list(range(8))).bw_GBps_per_dir == pytest.approx(150)


def test_pcie_p2p_off_bounces_through_host_memory_at_half_rate():
    topo = wiring.for_system("pcie-rtx4090-8")
    route = topo.route(0, 1)
    assert route.bounce and route.link_class == "pci"
    assert {topo.edges[i].dst for i in route.edges} >= {"cpu0", "host memory"}
    pair = wiring.flow_rates(topo, [route], calibration.default().line_rate()).rates_GBps[0]
    assert pair == pytest.approx(catalog.link("pcie4-x16").per_gpu_GBps_per_dir / 2)
    # NCCL pipelines the staging: 4x RTX 4090 with P2P off measure ~19-22 us for 1 KiB (fit sweep
    # rtx4090-4-ar-nccltests-kalavai), not a 10.7 us synchronous copy (measurement 63) on each of 6 ring steps
    assert 12 < collectives.time_us("allreduce", topo, 4, 1024.0) < 30
    p2p_on = stand_in(topology="pcie-tree", nvlink=None, nvswitch=None, in_switch_reduction=False)
    direct = p2p_on.route(0, 1)
    assert not direct.bounce and [p2p_on.edges[i].dst for i in direct.edges] == ["pcisw0", "gpu1"]


def test_pcie_tree_shares_the_switch_uplink_and_the_socket_link():
    topo = stand_in(topology="pcie-tree", nvlink=None, nvswitch=None, in_switch_reduction=False,
                    gpus_per_pcie_switch=4, inter_socket_GBps_per_dir=20.0)
    # GPUs 0-3 under one switch, 4-7 under the other socket: crossing flows share uplink and socket link
    cross = [topo.route(0, 4), topo.route(1, 5)]
    assert all(r.bounce for r in cross)  # P2P does not cross CPU sockets here
    rates = wiring.flow_rates(topo, cross).rates_GBps
    assert rates.sum() == pytest.approx(20.0)  # the 20 GB/s socket link is the bottleneck
    assert wiring.pattern_bandwidth(topo, [0, 1, 2, 3], "ring").min_flow_GBps == pytest.approx(32)


def test_bridged_pairs_use_nvlink_inside_the_pair_and_pcie_across():
    topo = wiring.for_system("pcie-h100-nvl-pairs")
    assert topo.route(0, 1).link_class == "nvlink"
    assert topo.route(1, 2).link_class == "pci"
    # 6 NVLink 4 links per GPU as measured (NV6, nccl-tests #194); NVIDIA's 600 GB/s as 12 links is a variant
    assert wiring.ring_bandwidth(topo, [0, 1]).bw_GBps_per_dir == pytest.approx(150)
    nv12 = wiring.for_system("pcie-h100-nvl-pairs-nv12")
    assert wiring.ring_bandwidth(nv12, [0, 1]).bw_GBps_per_dir == pytest.approx(300)
    assert wiring.ring_bandwidth(topo, list(range(8))).bw_GBps_per_dir < 70  # PCIe between pairs


def test_four_way_bridge_is_a_full_mesh_of_four():
    topo = wiring.for_system("h200-nvl-4")
    assert wiring.pattern_bandwidth(topo, [0, 3], "pair").min_flow_GBps == pytest.approx(150)
    assert wiring.ring_bandwidth(topo, [0, 1, 2, 3]).bw_GBps_per_dir == pytest.approx(450)


def test_nic_share_per_gpu():
    dgx1 = wiring.for_system("dgx-1-v100")  # 4 EDR NICs for 8 GPUs
    per_gpu, node, _ = wiring.nic_bandwidth(dgx1, list(range(8)))
    assert per_gpu == pytest.approx(12.5 / 2) and node == pytest.approx(50)
    h100 = wiring.for_system("hgx-h100")  # one NDR NIC per GPU
    assert wiring.nic_bandwidth(h100, [0])[0] == pytest.approx(50)
    assert wiring.nic_bandwidth(h100, list(range(8)))[1] == pytest.approx(400)


def test_every_catalogue_system_builds_with_a_route_for_every_pair():
    for system_id, system in catalog.systems().items():
        topo = wiring.for_system(system_id)
        n = system.gpus_per_node
        assert len([k for k in topo.routes if k[0].startswith("gpu") and k[1].startswith("gpu")]) == n * (n - 1)
        ring = wiring.ring_bandwidth(topo, list(range(min(n, 8))))
        assert 0 < ring.bw_GBps_per_dir <= min(topo.out_GBps_per_dir(g) for g in range(n)) + 1e-9, system_id


def test_bad_gpu_sets_and_ids_are_input_errors():
    topo = wiring.for_system("hgx-h200")
    with pytest.raises(InputError):
        wiring.ring_bandwidth(topo, [0, 8])
    with pytest.raises(InputError):
        wiring.pattern_bandwidth(topo, [0, 0], "pair")
    with pytest.raises(InputError):
        wiring.pattern_bandwidth(topo, [0, 1], "broadcast-storm")
    with pytest.raises(InputError):
        wiring.for_system("dgx-9000")
    with pytest.raises(InputError):
        stand_in(topology="mesh", nvswitch=None, nvlink="mesh", nvlink_links_per_gpu=7, gpus_per_node=5)
