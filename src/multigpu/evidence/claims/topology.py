"""Checks of the article's topology and collective claims (C05-C11, C14, C15, C19, C25); chapter 2.

The hardware facts come from the catalogue, and every bandwidth a group of
GPUs gets comes from the topology model (:mod:`multigpu.hardware.wiring`), never from
a per-system number. Wiring claims are checked at line rate, in the
article's own convention (bidirectional) and per direction; claims about
collectives use the calibrated collective model (:mod:`multigpu.comm.collectives`).
The helper functions return the numbers each check quotes, so that chapter 2
can print the same numbers.
"""

from __future__ import annotations

import numpy as np

from multigpu.comm import collectives
from multigpu.comm.calibration import Calibration
from multigpu.common.findings import Finding, Items, Number, Numbers, Word, and_list, msg, say
from multigpu.common.units import GiB
from multigpu.evidence import generations, measurements, topology
from multigpu.evidence.claims.rules import (
    TOLERANCE,
    Inputs,
    Verdict,
    caveat,
    claim,
    conclusion,
    fact,
    judge,
    margin,
    sourced,
)
from multigpu.hardware import catalog, wiring

CHAPTER = "book/chapters/02-nvswitch-topology"


def first_nvswitch() -> dict[str, object]:
    """The first NVSwitch generation and system, and the first 8-GPU NVSwitch system (C05).

    Keys: ``switch`` (link name), ``year``, ``system`` (name), ``system_year``,
    ``gpus``, ``pair_GBps_per_dir`` / ``pair_GBps_bidir`` (one pair, line rate,
    from the topology), ``alltoall_pair_GBps_per_dir`` (each pair while all GPUs
    exchange data), ``first8_system``, ``first8_year``, ``first8_pair_GBps_bidir``.
    """
    switch_id = generations.FAMILIES["nvswitch"][0]
    switch = catalog.link(switch_id)
    first = generations.first_system(switch_id)
    topo = wiring.for_system(first.id)
    pair = wiring.pattern_bandwidth(topo, [0, 1], "pair").min_flow_GBps
    a2a = wiring.pattern_bandwidth(topo, list(range(first.gpus_per_node)), "alltoall").min_flow_GBps
    eights = [s for s in catalog.systems().values() if s.topology == "nvswitch" and s.gpus_per_node == 8]
    first8 = min(eights, key=lambda s: s.year)
    pair8 = wiring.pattern_bandwidth(wiring.for_system(first8.id), [0, 1], "pair").min_flow_GBps
    return {"switch": switch.name, "year": switch.year, "system": first.name, "system_year": first.year,
            "gpus": first.gpus_per_node, "pair_GBps_per_dir": pair, "pair_GBps_bidir": 2 * pair,
            "alltoall_pair_GBps_per_dir": a2a, "first8_system": first8.name, "first8_year": first8.year,
            "first8_pair_GBps_bidir": 2 * pair8}


def first_in_switch_reduction(cal: Calibration | None = None) -> dict[str, object]:
    """The first NVSwitch generation that reduces in the switch, and what NVLS does to all-reduce (C06).

    Keys: ``switch``, ``year``, ``earlier`` (names of the generations without);
    ``ring_bytes_factor`` = 2(n-1)/n and ``nvls_bytes_factor`` = (n+1)/n (bytes
    each GPU sends per byte of the message, per direction, 8 GPUs);
    ``model_gain_x`` (NVLS / ring busbw, 8x H200, 16 GiB), ``measured_gain_x``
    (the same from measurements 20 and 21), ``ring_busbw_GBps``, ``nvls_busbw_GBps``,
    ``pays_from_gpus`` (the fewest GPUs at which NVLS gains at least 5 % over ring, 8 GiB).
    """
    family = [catalog.link(i) for i in generations.FAMILIES["nvswitch"]]
    first = next(link for link in family if link.in_network_reduction)
    n, size = 8, 16 * GiB
    ring = collectives.collective("allreduce", topology.SWITCH, n, size, algorithm="ring", cal=cal).busbw_GBps
    nvls = collectives.collective("allreduce", topology.SWITCH, n, size, algorithm="nvls", cal=cal).busbw_GBps
    measured = measurements.measurements().set_index("id")["model_value"]
    gains = topology.nvls_gain(topology.SWITCH, cal=cal)
    return {"switch": first.name, "year": first.year,
            "earlier": [link.name for link in family if link.year < first.year],
            "ring_bytes_factor": 2 * (n - 1) / n, "nvls_bytes_factor": (n + 1) / n,
            "model_gain_x": nvls / ring, "measured_gain_x": float(measured[20]) / float(measured[21]),
            "ring_busbw_GBps": ring, "nvls_busbw_GBps": nvls,
            "pays_from_gpus": _first_count(gains[gains["gain_x"] >= 1.05]["gpus"])}


def _first_count(counts) -> int | None:
    """The smallest GPU count of ``counts``, None when there is none."""
    return int(counts.min()) if len(counts) else None


def mesh_link() -> dict[str, float]:
    """The 8-GPU full mesh: 900 GB/s split over 7 peers, and the catalogue's link (C09).

    Keys: ``gpu_GBps_bidir`` (H100/H200 NVLink per GPU), ``peers``,
    ``split_GBps_bidir`` (900 / 7), ``split_GBps_per_dir``, ``link_GBps_bidir``
    and ``link_GBps_per_dir`` (the mesh's pair bandwidth from the topology),
    ``links_GBps_bidir`` (7 links together).
    """
    gpu = catalog.gpu(catalog.system(topology.SWITCH).gpu)
    mesh = wiring.for_system(topology.MESH)
    peers = mesh.gpus_per_node - 1
    link = wiring.pattern_bandwidth(mesh, [0, 1], "pair").min_flow_GBps
    return {"gpu_GBps_bidir": gpu.nvlink_GBps_bidir, "peers": peers,
            "split_GBps_bidir": gpu.nvlink_GBps_bidir / peers, "split_GBps_per_dir": gpu.nvlink_GBps_per_dir / peers,
            "link_GBps_bidir": 2 * link, "link_GBps_per_dir": link, "links_GBps_bidir": 2 * link * peers}


def switch_vs_mesh(counts: tuple[int, ...] = tuple(range(2, 9)), nbytes: float = GiB,
                   cal: Calibration | None = None) -> dict[str, object]:
    """Switch against mesh for 2..8 GPUs: wiring and collectives (C10, C11).

    Keys (lists over ``counts``): ``gpus``; ``pair_ratio_x`` (one pair alone,
    switch / mesh); ``alltoall_gpu_ratio_x`` (what each GPU sends in an
    all-to-all, line rate); ``alltoall_busbw_ratio_x`` and
    ``allreduce_busbw_ratio_x`` (collective model at ``nbytes``); plus
    ``switch_pair_in_alltoall_GBps_bidir`` and ``mesh_pair_in_alltoall_GBps_bidir``.
    """
    lines = topology.group_bandwidth((topology.SWITCH, topology.MESH), counts)
    coll = topology.collective_table((topology.SWITCH, topology.MESH), counts, nbytes, cal=cal)
    s_label, m_label = topology.label(topology.SWITCH), topology.label(topology.MESH)

    def ratio(frame, column):
        s = frame[frame["system"] == s_label][column].to_numpy()
        m = frame[frame["system"] == m_label][column].to_numpy()
        return list(s / m)

    pair_in = {name: list(2 * lines[lines["system"] == name]["pair_in_alltoall_GBps_per_dir"])
               for name in (s_label, m_label)}
    return {"gpus": list(counts), "pair_ratio_x": ratio(lines, "pair_alone_GBps_per_dir"),
            "alltoall_gpu_ratio_x": ratio(lines, "gpu_alltoall_GBps_per_dir"),
            "alltoall_busbw_ratio_x": ratio(coll, "alltoall_busbw_GBps"),
            "allreduce_busbw_ratio_x": ratio(coll, "allreduce_busbw_GBps"),
            "switch_pair_in_alltoall_GBps_bidir": pair_in[s_label],
            "mesh_pair_in_alltoall_GBps_bidir": pair_in[m_label]}


def multishot(gpus: int = 8, cal: Calibration | None = None) -> dict[str, float]:
    """Two-shot (MultiShot) against ring and against NCCL's best all-reduce on the HGX H200 (C19).

    Keys: ``steps_two_shot`` (2), ``steps_ring`` (2(n-1)), ``latency_spread_us``
    (largest minus smallest two-shot latency over 2..8 GPUs: 0 if it does not
    depend on n), ``max_vs_ring_x`` and ``max_vs_ring_bytes`` (the largest
    speed-up over ring and the size where it occurs), ``small_vs_ring_x`` (at
    the smallest size), ``large_vs_ring_x`` (16 GiB), ``max_vs_nccl_x`` and
    ``large_vs_nccl_x`` (against the fastest of ring, tree and NVLS).
    """
    latencies = [float(collectives.plans("allreduce", topology.SWITCH, k, algorithm="two-shot", cal=cal)[0]
                       .time_us(np.array([0.0]))[0]) for k in range(2, 9)]
    ring = topology.speedup_vs_size(gpus=gpus, against=("ring",), cal=cal)
    nccl = topology.speedup_vs_size(gpus=gpus, against=topology.NCCL_ALGORITHMS, cal=cal)
    best = ring.speedup_x.idxmax()
    return {"steps_two_shot": 2, "steps_ring": 2 * (gpus - 1), "latency_spread_us": max(latencies) - min(latencies),
            "latency_us": latencies[-1], "max_vs_ring_x": float(ring.speedup_x.max()),
            "max_vs_ring_bytes": float(ring.loc[best, "bytes"]), "small_vs_ring_x": float(ring.speedup_x.iloc[0]),
            "large_vs_ring_x": float(ring.speedup_x.iloc[-1]), "max_vs_nccl_x": float(nccl["speedup_x"].max()),
            "large_vs_nccl_x": float(nccl["speedup_x"].iloc[-1])}


#: The article's scale-out pairing (section 4.1): H100 and A100 nodes with InfiniBand HDR.
HDR_VARIANT = {"HGX H100 with HDR NICs": {"system_id": "hgx-h100", "nic": "infiniband-hdr"}}


def scale_out(cal: Calibration | None = None) -> dict[str, float]:
    """NVLink per GPU against one InfiniBand port per GPU, and the cost of the second node (C25).

    Keys: ``a100_hdr_x``, ``h100_hdr_x``, ``h100_ndr_x`` (NVLink / NIC per GPU,
    per direction); for an H100 node with HDR and with NDR:
    ``{hdr,ndr}_allreduce_1`` / ``_2`` and ``{hdr,ndr}_alltoall_1`` / ``_2``
    (busbw GB/s at 1 GiB, one node and two nodes) and ``{hdr,ndr}_node_nic``
    (all eight NICs of a node, achievable GB/s per direction).
    """
    table = topology.scale_out_table(("dgx-a100", "hgx-h100"), variants=HDR_VARIANT, cal=cal).set_index("system")
    a100, ndr = table.loc[topology.label("dgx-a100")], table.loc[topology.label("hgx-h100")]
    hdr = table.loc[next(iter(HDR_VARIANT))]
    out = {"a100_hdr_x": float(a100["ratio_x"]), "h100_hdr_x": float(hdr["ratio_x"]),
           "h100_ndr_x": float(ndr["ratio_x"])}
    for key, row in (("hdr", hdr), ("ndr", ndr)):
        out[f"{key}_node_nic"] = float(row["node_nic_GBps_per_dir"])
        for op in ("allreduce", "alltoall"):
            for nodes in (1, 2):
                out[f"{key}_{op}_{nodes}"] = float(row[f"{op}_busbw_{nodes}_GBps"])
    return out


# ------------------------------------------------------------------ the checks

#: latency that "grows" with N: at least this many us per added GPU
GROWS_US_PER_GPU = 0.1


def port_of(system_id: str) -> float:
    """One GPU's NVLink port into the switch of ``system_id``, GB/s per direction (line rate)."""
    return catalog.system(system_id).nvlink_GBps_per_dir


def _full_port_tests(fact_message: str, pair_GBps: float, port_GBps: float, conclusion_message: str,
                     crowded_GBps: float) -> tuple:
    """The tests of C08 and C10, one misconception stated twice: a lone pair gets the full port (a fact: a
    message with ``{pair}`` and ``{port}``), and so every pair keeps it when many talk at once (the conclusion:
    a message with ``{each}``). Bandwidths GB/s per direction."""
    return (fact(Finding.of(fact_message, pair=Number(pair_GBps, ".0f"), port=Number(port_GBps, ".0f")),
                 abs(pair_GBps / port_GBps - 1) <= TOLERANCE),
            conclusion(Finding.of(conclusion_message, each=Number(crowded_GBps, ".1f")),
                       abs(crowded_GBps / port_GBps - 1) <= TOLERANCE))


def ring_allreduce_rounds(n: int) -> int:
    """Rounds of a ring all-reduce of ``n`` ranks, counted by simulating it: each rank starts with its own
    contribution to each of ``n`` chunks and, every round, passes one chunk to the next rank (which adds it
    to its own during the reduce-scatter, replaces its own during the all-gather) until every rank holds
    every chunk summed over all ranks."""
    if n < 2:
        return 0
    held = [[{r} for _ in range(n)] for r in range(n)]  # held[rank][chunk]: ranks whose contribution it sums
    rounds = 0
    while not all(len(c) == n for rank in held for c in rank):
        sent = [(r, (r - rounds) % n, set(held[r][(r - rounds) % n])) for r in range(n)]
        for r, chunk, contribution in sent:
            target = held[(r + 1) % n][chunk]
            target |= contribution
        rounds += 1
    return rounds


@claim("C05")
def c05(inputs: Inputs) -> Verdict:
    f = first_nvswitch()
    verdict, rule = judge(
        fact(Finding.of(msg("NVSwitch came in 2018 (catalogue: {year})"), year=f["year"]), f["year"] == 2018),
        fact(Finding.of(msg("its first system joined 8 GPUs (catalogue: {gpus})"), gpus=f["gpus"]), f["gpus"] == 8),
        fact(Finding.of(msg("every pair got 300 GB/s (catalogue: {bidir} both ways)"),
                        bidir=Number(f["pair_GBps_bidir"])), abs(f["pair_GBps_bidir"] / 300 - 1) <= TOLERANCE),
        caveat(Finding.of(msg("300 GB/s adds both directions")), abs(f["pair_GBps_per_dir"] / 300 - 1) > TOLERANCE))
    first = catalog.link(generations.FAMILIES["nvswitch"][0])
    return Verdict(
        id="C05", verdict=verdict, seed_value="2018; 8 GPUs; 300 GB/s between every pair",
        model_value=say(msg("{n_year}; {n_gpus} GPUs; {n_bw} GB/s bidirectional per pair"), n_year=f["year"], n_gpus=f["gpus"],
            n_bw=Number(f["pair_GBps_bidir"])),
        unit="year; GPUs; GB/s per pair (bidirectional, line rate)",
        explanation=say(msg("{f_switch} came in {f_year} in the {f_system}, which joined {f_gpus} GPUs{word_not_8}: any pair "
                "gets {gbps_per_dir} GB/s per direction ({pair_gbps_bidir} GB/s bidirectional, the article's "
                "figure), and it still gets {gbps_per_dir_2} GB/s per direction when all {f_gpus} GPUs exchange data "
                "at once, because each GPU's port is shared among its peers. The first 8-GPU NVSwitch system of the "
                "catalogue is the {f_first8_system} ({f_first8_year}), at {pair_gbps_bidir_2} GB/s bidirectional per "
                "pair."),
            f_switch=f['switch'], f_year=f['year'], f_system=f['system'], f_gpus=f['gpus'],
            word_not_8="" if f['gpus'] == 8 else Word(msg(", not 8")),
            gbps_per_dir=Number(f['pair_GBps_per_dir'], "g"), pair_gbps_bidir=Number(f['pair_GBps_bidir'], "g"),
            gbps_per_dir_2=Number(f['alltoall_pair_GBps_per_dir'], ".1f"), f_first8_system=f['first8_system'],
            f_first8_year=f['first8_year'], pair_gbps_bidir_2=Number(f['first8_pair_GBps_bidir'], "g")),
        chapter=CHAPTER, rule=rule, confidence=sourced(first.source))


@claim("C06")
def c06(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    r = first_in_switch_reduction(cal=cal)
    verdict, rule = judge(
        fact(Finding.of(msg("NVSwitch has in-switch reduction and multicast (from {switch}, {year})"),
                        switch=str(r["switch"]), year=str(r["year"])), bool(r["switch"])),
        conclusion(Finding.of(msg("it speeds up an 8-GPU all-reduce (NVLS over ring: x{gain})"),
                              gain=Number(r["model_gain_x"], ".2f")), r["model_gain_x"] > 1),
        caveat(Finding.of(msg("earlier NVSwitch generations have none")), bool(r["earlier"])),
        caveat(Finding.of(msg("it speeds up all-reduce only")), not any("nvls" in collectives.VALID[op]
                                                     for op in collectives.OPS if op != "allreduce")))
    return Verdict(
        id="C06", verdict=verdict,
        seed_value="NVSwitch has a built-in SHARP engine for in-network reduction and multicast",
        model_value=say(msg("{switch} ({year}); all-reduce busbw x{gain} on {gpus} GPUs"), switch=r["switch"], year=r["year"],
            gain=Number(r["model_gain_x"], ".2f"), gpus=8),
        unit="first switch generation with SHARP; NVLS / ring busbw",
        explanation=say(msg("Only from {switch} ({year}, Hopper) on; {earlier} have no in-switch reduction, so the NVSwitch "
                "of the article's 2018 sentence had none. With it (NCCL's NVLS), each GPU sends about {nvls_bytes} "
                "bytes per byte of an 8-GPU all-reduce instead of the ring's {ring_bytes}: the switch adds the "
                "buffers and multicasts the sum. The model gives {nvls_busbw} against {ring_busbw} GB/s busbw at 16 "
                "GiB (x{model_gain}; measured x{measured_gain}). NVLS speeds up all-reduce only; {pays}"),
            switch=r["switch"], year=r["year"], earlier=and_list(tuple(r["earlier"])),
            nvls_bytes=Number(r["nvls_bytes_factor"], ".3f"), ring_bytes=Number(r["ring_bytes_factor"], ".2f"),
            nvls_busbw=Number(r["nvls_busbw_GBps"], ".0f"), ring_busbw=Number(r["ring_busbw_GBps"], ".0f"),
            model_gain=Number(r["model_gain_x"], ".2f"), measured_gain=Number(r["measured_gain_x"], ".2f"),
            pays=Finding.of(msg("all-gather and reduce-scatter stay on the ring, and it gains at least 5 % only from "
                                "{gpus} GPUs on."), gpus=r["pays_from_gpus"]) if r["pays_from_gpus"] else
            Finding.of(msg("all-gather and reduce-scatter stay on the ring, and it never gains 5 % on one switch."))),
        chapter=CHAPTER, rule=rule, confidence=margin(msg("the NVLS gain"), r["model_gain_x"], 1.0, "collective"))


@claim("C07")
def c07(inputs: Inputs) -> Verdict:
    r = topology.rack_aggregate("vr-nvl72")
    verdict, rule = judge(
        fact(Finding.of(msg("72 GPUs of 3.6 TB/s (catalogue: {gpus} of {bw})"), gpus=r["gpus"],
                        bw=Number(r["gpu_TBps_bidir"])),
             r["gpus"] == 72 and abs(r["gpu_TBps_bidir"] / 3.6 - 1) <= TOLERANCE),
        fact(Finding.of(msg("260 TB/s in all (catalogue: {total})"), total=Number(r["sum_bidir_TBps"], ".1f")),
             abs(r["sum_bidir_TBps"] / 260 - 1) <= TOLERANCE),
        caveat(Finding.of(msg("the sum counts each byte twice (sending and receiving); the rack delivers half")),
               r["delivered_TBps"] < r["sum_bidir_TBps"]))
    system = catalog.system("vr-nvl72")
    return Verdict(
        id="C07", verdict=verdict, seed_value="72 GPUs x 3.6 TB/s; 260 TB/s aggregate",
        model_value=round(r["sum_bidir_TBps"], 1),
        unit="TB/s (72 x per-GPU bidirectional: a sum, not a bisection)",
        explanation=say(msg("The arithmetic holds: {r_gpus} x {gpu_tbps_bidir} TB/s = {sum_bidir_tbps} TB/s. It adds every GPU's "
                "sending and receiving, so each byte is counted twice. When every GPU sends at its full "
                "{tbps_per_dir} TB/s at once, the rack delivers {r_delivered_tbps} TB/s; across the bisection (36 "
                "GPUs to the other 36) it carries {tbps_per_dir_2} TB/s each way. A pair gets {tbps_per_dir} TB/s "
                "per direction, {gpu_tbps_bidir} TB/s only counting both directions. The switch is non-blocking, so "
                "these are the GPUs' own limits, not the switch's."),
            r_gpus=r['gpus'], gpu_tbps_bidir=Number(r['gpu_TBps_bidir'], "g"),
            sum_bidir_tbps=Number(r['sum_bidir_TBps'], ".1f"), tbps_per_dir=Number(r['gpu_TBps_per_dir'], "g"),
            r_delivered_tbps=Number(r['delivered_TBps'], ".1f"),
            tbps_per_dir_2=Number(r['bisection_TBps_per_dir'], ".1f")),
        chapter=CHAPTER, rule=rule, confidence=sourced(system.source))


@claim("C08")
def c08(inputs: Inputs) -> Verdict:
    patterns = topology.rack_patterns("vr-nvl72").set_index("pattern")
    perm, fan, incast = (patterns.loc[p] for p in (topology.PERMUTATION, topology.FAN_OUT, topology.INCAST))
    port = float(perm["per_flow_GBps_per_dir"])
    verdict, rule = judge(*_full_port_tests(
        msg("the switch has no internal bottleneck: a permutation runs every pair at a GPU's full port ({pair} of "
            "{port} GB/s per direction)"), port, port_of("vr-nvl72"),
        msg("one GPU talking to all its peers gives each the full port (each gets {each} GB/s per direction)"),
        float(fan["per_flow_GBps_per_dir"])))
    return Verdict(
        id="C08", verdict=verdict,
        seed_value="any GPU communication runs at full peak bandwidth, no structural bottleneck",
        model_value=float(fan["per_flow_GBps_per_dir"]),
        unit="GB/s per direction per peer (one GPU sending to 71 peers at once)",
        explanation=say(msg("The switch has no internal bottleneck: in a permutation every GPU sends to another at the full "
                "{gbps_per_dir} GB/s per direction. But a GPU's own port caps the sum of its flows. One GPU sending "
                "to all {fan_flows} peers gives each {gbps_per_dir_2} GB/s; {incast_flows} GPUs sending to one get "
                "{gbps_per_dir_3} GB/s each, and the rack then delivers only {incast_delivered_tbps} TB/s. 'Full "
                "peak' is per GPU, not per pair: an all-to-all gives each pair 1/71 of a port."),
            gbps_per_dir=Number(perm['per_flow_GBps_per_dir'], "g"), fan_flows=int(fan['flows']),
            gbps_per_dir_2=Number(fan['per_flow_GBps_per_dir'], ".1f"), incast_flows=int(incast['flows']),
            gbps_per_dir_3=Number(incast['per_flow_GBps_per_dir'], ".1f"),
            incast_delivered_tbps=Number(incast['delivered_TBps'], "g")),
        chapter=CHAPTER, rule=rule, confidence=sourced(catalog.system("vr-nvl72").source))


@claim("C09")
def c09(inputs: Inputs) -> Verdict:
    m = mesh_link()
    verdict, rule = judge(
        fact(Finding.of(msg("900 GB/s over 7 peers is about 128 GB/s each ({bw} / {peers} = {split})"),
                        bw=Number(m["gpu_GBps_bidir"]), peers=m["peers"], split=Number(m["split_GBps_bidir"], ".1f")),
             abs(m["split_GBps_bidir"] / 128 - 1) <= TOLERANCE),
        caveat(Finding.of(msg("the figures add both directions")), abs(m["split_GBps_per_dir"] / 128 - 1) > TOLERANCE))
    return Verdict(
        id="C09", verdict=verdict, seed_value="900 GB/s split into 7 links of about 128 GB/s",
        model_value=round(m["split_GBps_bidir"], 2),
        unit="GB/s per link (bidirectional): 900 / 7",
        explanation=say(msg("{gpu_gbps_bidir} / {m_peers} = {split_gbps_bidir} GB/s, bidirectional, as the article's 900: one "
                "direction gets {gbps_per_dir} GB/s. NVIDIA's hypothetical server uses links of {link_gbps_bidir} "
                "GB/s bidirectional ({gbps_per_dir_2} per direction), {links_gbps_bidir} GB/s for all {m_peers}; the "
                "same wiring as AMD's 8x MI300X platform. A pair of GPUs gets one link, however little else is "
                "running."),
            gpu_gbps_bidir=Number(m['gpu_GBps_bidir'], "g"), m_peers=m['peers'],
            split_gbps_bidir=Number(m['split_GBps_bidir'], ".1f"),
            gbps_per_dir=Number(m['split_GBps_per_dir'], ".1f"),
            link_gbps_bidir=Number(m['link_GBps_bidir'], "g"),
            gbps_per_dir_2=Number(m['link_GBps_per_dir'], "g"),
            links_gbps_bidir=Number(m['links_GBps_bidir'], "g")),
        chapter=CHAPTER, rule=rule, confidence=sourced(catalog.link("nvlink4").source))


@claim("C10")
def c10(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    r = switch_vs_mesh((2, 8), cal=cal)
    port = port_of(topology.SWITCH)
    verdict, rule = judge(*_full_port_tests(
        msg("one pair through the switch gets a GPU's full port ({pair} of {port} GB/s per direction)"),
        r["switch_pair_in_alltoall_GBps_bidir"][0] / 2, port,
        msg("every pair keeps the full port while all 8 GPUs exchange data (each gets {each} GB/s per direction)"),
        r["switch_pair_in_alltoall_GBps_bidir"][-1] / 2))
    return Verdict(
        id="C10", verdict=verdict, seed_value="any two GPUs keep the full 900 GB/s however many GPUs there are",
        model_value=round(r["switch_pair_in_alltoall_GBps_bidir"][-1], 1),
        unit="GB/s per pair (bidirectional) while all 8 GPUs exchange data",
        explanation=say(msg("True for one pair, or for pairs that do not share a GPU: the switch gives each pair a GPU's whole "
                "port. When a GPU talks to several peers at once, as in every collective, its port is shared: in an "
                "8-GPU all-to-all each pair gets {gbps_bidir_1} GB/s bidirectional on the switch, against "
                "{gbps_bidir_1_2} GB/s on the point-to-point mesh: the same. What the switch keeps is the GPU's "
                "total, not the pair's."),
            gbps_bidir_1=Number(r['switch_pair_in_alltoall_GBps_bidir'][-1], ".1f"),
            gbps_bidir_1_2=Number(r['mesh_pair_in_alltoall_GBps_bidir'][-1], "g")),
        chapter=CHAPTER, rule=rule, confidence=sourced(catalog.system(topology.SWITCH).source))


@claim("C11")
def c11(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    r = switch_vs_mesh(cal=cal)
    verdict, rule = judge(
        fact(Finding.of(msg("two GPUs: the switch gives about 900 / 128 = 7x a mesh link (x{ratio})"),
                        ratio=Number(r["pair_ratio_x"][0], ".2f")),
             abs(r["pair_ratio_x"][0] / (900 / 128) - 1) <= TOLERANCE),
        fact(Finding.of(msg("at 8 GPUs the mesh falls further behind (all-to-all busbw switch / mesh: x{at2} at 2, "
                            "x{at8} at 8)"), at2=Number(r["alltoall_busbw_ratio_x"][0], ".2f"),
                        at8=Number(r["alltoall_busbw_ratio_x"][-1], ".2f")),
             r["alltoall_busbw_ratio_x"][-1] >= r["alltoall_busbw_ratio_x"][0]))
    return Verdict(
        id="C11", verdict=verdict, seed_value="2 GPUs: 900 vs 128 GB/s; at 8 GPUs point-to-point is limited further",
        model_value=say(msg("{n_two}x at {n_g2} GPUs; {n_all}x at {n_gall} (all-to-all, per GPU)"),
            n_two=Number(r["pair_ratio_x"][0], ".2f"), n_g2=2, n_all=Number(r["alltoall_gpu_ratio_x"][-1], ".2f"),
            n_gall=8),
        unit="switch / mesh bandwidth (line rate)",
        explanation=say(msg("The 2-GPU half holds: {ratio_x_0}x, one port against one link. The 8-GPU half is backwards: the "
                "mesh uses all its links at once, so the gap closes as the group grows. Each GPU's all-to-all "
                "bandwidth, switch over mesh, falls from {ratio_x_0_2}x at 2 GPUs to {ratio_x_1}x at 8 (NVIDIA's own "
                "Table 1 says 7 x 128 = 896 against 900 GB/s). Through the collective model: all-to-all busbw "
                "{ratio_x_0_3}x then {ratio_x_1_2}x; all-reduce {ratio_x_0_4}x then {ratio_x_1_3}x, the rest due to "
                "in-switch reduction (NVLS). The switch's advantage is for small groups, one pair at a time, and "
                "uneven traffic, not for 8-GPU collectives."),
            ratio_x_0=Number(r['pair_ratio_x'][0], ".2f"),
            ratio_x_0_2=Number(r['alltoall_gpu_ratio_x'][0], ".2f"),
            ratio_x_1=Number(r['alltoall_gpu_ratio_x'][-1], ".3f"),
            ratio_x_0_3=Number(r['alltoall_busbw_ratio_x'][0], ".2f"),
            ratio_x_1_2=Number(r['alltoall_busbw_ratio_x'][-1], ".2f"),
            ratio_x_0_4=Number(r['allreduce_busbw_ratio_x'][0], ".2f"),
            ratio_x_1_3=Number(r['allreduce_busbw_ratio_x'][-1], ".2f")),
        chapter=CHAPTER, rule=rule,
        confidence=sourced(catalog.system(topology.SWITCH).source, catalog.system(topology.MESH).source))


@claim("C14")
def c14(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    counts = (2, 4, 8, 16, 72)
    steps = {n: ring_allreduce_rounds(n) for n in counts}
    modelled = dict(zip(counts, topology.ring_terms(counts=counts, cal=cal)["steps"]))
    verdict, rule = judge(
        fact(Finding.of(msg("a ring all-reduce takes 2N-2 steps (counted by passing chunks around a ring of N ranks "
                            "until every rank holds the whole sum)")), all(s == 2 * (n - 1) for n, s in steps.items())),
        conclusion(Finding.of(msg("the model charges one hop latency per step")), modelled == steps))
    return Verdict(
        id="C14", verdict=verdict, seed_value="ring all-reduce needs 2N-2 steps", model_value=int(steps[8]),
        unit="steps for N = 8 (chunks passed around a ring until every rank holds the sum)",
        explanation=say(msg("Passing chunks around a ring: N-1 rounds until every chunk is reduced on one rank "
                "(reduce-scatter), N-1 more until every rank holds every reduced chunk (all-gather): {rounds}. The "
                "model's ring latency charges one hop per round ({counts}). NVIDIA's blog speaks of a 'second pass "
                "over the ring'; both passes are inside the 2N-2."),
            rounds=Items(tuple(Finding.of(msg("{steps} rounds for N = {n}"), steps=s, n=n) for n, s in steps.items())),
            counts=Finding.of(msg("the same counts")) if modelled == steps else Finding.of(
                msg("other counts: {counts}"), counts=Numbers(tuple(modelled.values())))),
        chapter=CHAPTER, rule=rule, confidence=say(msg("counted, not modelled")))


@claim("C15")
def c15(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    terms = topology.ring_terms(cal=cal)
    fit = np.polyfit(terms["gpus"], terms["latency_ll_us"], 1)
    slope = float(fit[0])
    residual = terms["latency_ll_us"] - np.polyval(fit, terms["gpus"])
    linear = slope >= GROWS_US_PER_GPU and float(np.abs(residual).max()) <= 0.05 * float(terms["latency_ll_us"].max())
    at = terms.set_index("gpus")
    verdict, rule = judge(
        fact(Finding.of(msg("the ring's latency grows about linearly with N ({slope} us per GPU, at least {least}, "
                            "straight within 5 %)"), slope=Number(slope, ".2f"), least=Number(GROWS_US_PER_GPU)),
             linear),
        caveat(Finding.of(msg("its bandwidth term hardly grows with N (bytes each GPU sends: x{growth} from 8 to 72 "
                              "GPUs)"), growth=Number(at.loc[72, "bytes_factor"] / at.loc[8, "bytes_factor"], ".2f")),
               at.loc[72, "bytes_factor"] / at.loc[8, "bytes_factor"] < 1.5))
    return Verdict(
        id="C15", verdict=verdict, seed_value="ring all-reduce latency grows roughly linearly with N",
        model_value=round(slope, 2),
        unit="us per added GPU (ring latency term, LL protocol, NVLink)",
        explanation=say(msg("The latency term is linear: {latency_ll_us} us at 2 GPUs, {latency_ll_us_2} at 8, {latency_ll_us_3} "
                "at 72 on one NVLink switch, {slope} us per GPU. The bandwidth term is not: each GPU sends 2(N-1)/N "
                "of the buffer, {v_8_bytes_factor} at 8 GPUs and {v_72_bytes_factor} at 72. So an 8 KiB all-reduce "
                "takes {ring_small_us}x longer on 72 GPUs than on 8, and a 1 GiB one {ring_large_us}x. Latency-bound "
                "traffic (decode-time tensor parallelism) grows with N; bandwidth-bound traffic (gradients) hardly "
                "does, and NCCL leaves the ring for small messages on large groups (NVLS: {nvls_small_us} us at any "
                "N)."),
            latency_ll_us=Number(at.loc[2, 'latency_ll_us'], ".1f"),
            latency_ll_us_2=Number(at.loc[8, 'latency_ll_us'], ".1f"),
            latency_ll_us_3=Number(at.loc[72, 'latency_ll_us'], ".1f"), slope=Number(slope, ".1f"),
            v_8_bytes_factor=Number(at.loc[8, 'bytes_factor'], ".2f"),
            v_72_bytes_factor=Number(at.loc[72, 'bytes_factor'], ".2f"),
            ring_small_us=Number(at.loc[72, 'ring_small_us'] / at.loc[8, 'ring_small_us'], ".1f"),
            ring_large_us=Number(at.loc[72, 'ring_large_us'] / at.loc[8, 'ring_large_us'], ".2f"),
            nvls_small_us=Number(at.loc[72, 'nvls_small_us'], ".0f")),
        chapter=CHAPTER, rule=rule, confidence=margin(msg("the latency slope (us per GPU)"), slope, 0.0, "collective"))


@claim("C19")
def c19(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    r = multishot(cal=cal)
    verdict, rule = judge(
        fact(Finding.of(msg("two synchronisations whatever N (two-shot latency spread over 2-8 GPUs: {spread} us)"),
                        spread=Number(r["latency_spread_us"])), r["latency_spread_us"] < 1e-6),
        conclusion(Finding.of(msg("so it beats the ring on small messages (x{gain})"),
                              gain=Number(r["small_vs_ring_x"], ".2f")), r["small_vs_ring_x"] > 1),
        caveat(Finding.of(msg("large messages gain nothing (x{gain} at 16 GiB)"),
                          gain=Number(r["large_vs_ring_x"], ".2f")), r["large_vs_ring_x"] < 1.05))
    return Verdict(
        id="C19", verdict=verdict, seed_value="MultiShot: 2 communication steps whatever the GPU count",
        model_value=round(r["max_vs_ring_x"], 2), unit="x faster than ring all-reduce at best (8x H200)",
        explanation=say(msg("Two synchronisations, whatever N: the model's two-shot latency is {r_latency_us} us for 2 to 8 GPUs "
                "(spread {latency_spread_us} us), against the ring's {r_steps_ring} steps at 8 GPUs. On 8 H200s it "
                "beats the ring by {vs_ring_x}x on the smallest messages and by up to {vs_ring_x_2}x around "
                "{bytes_2_20} MiB, where the ring pays its latency and a slower protocol; NVIDIA's 'up to 3x' is "
                "{not_reached_reached}. Against NCCL's best choice the gain is at most {vs_nccl_x}x, and large "
                "messages gain nothing: x{vs_ring_x_3} against the ring, x{vs_nccl_x_2} against NVLS at 16 GiB. "
                "Multicast saves the sender's link, but each GPU still receives (N-1)/N of the result."),
            r_latency_us=Number(r['latency_us'], ".1f"), latency_spread_us=Number(r['latency_spread_us'], "g"),
            r_steps_ring=r['steps_ring'], vs_ring_x=Number(r['small_vs_ring_x'], ".1f"),
            vs_ring_x_2=Number(r['max_vs_ring_x'], ".1f"),
            bytes_2_20=Number(r['max_vs_ring_bytes'] / 2**20, ".1f"),
            not_reached_reached=Word(msg("not reached")) if r['max_vs_ring_x'] < 3 else Word(msg("reached")),
            vs_nccl_x=Number(r['max_vs_nccl_x'], ".1f"), vs_ring_x_3=Number(r['large_vs_ring_x'], ".2f"),
            vs_nccl_x_2=Number(r['large_vs_nccl_x'], ".2f")),
        chapter=CHAPTER, rule=rule,
        confidence=margin(msg("the small-message speed-up over the ring"), r["small_vs_ring_x"], 1.0, "collective"))


@claim("C25")
def c25(inputs: Inputs) -> Verdict:
    cal = inputs.calibration
    r = scale_out(cal=cal)
    switched = [s for s in catalog.systems().values() if s.topology == "nvswitch" and s.nic]
    hdr = [s for s in switched if s.nic == "infiniband-hdr"]
    newest = max(switched, key=lambda s: s.year)
    verdict, rule = judge(
        fact(Finding.of(msg("NVSwitch platforms pair NVLink inside a node with InfiniBand HDR between nodes "
                            "(catalogue: {systems})"), systems=", ".join(s.name for s in hdr) or "none"), bool(hdr)),
        caveat(Finding.of(msg("newer platforms ship faster NICs (the newest, {system}: {nic})"), system=newest.name,
                          nic=catalog.link(newest.nic).name),
               newest.nic != "infiniband-hdr"))
    return Verdict(
        id="C25", verdict=verdict, seed_value="NVLink/NVSwitch inside a node, InfiniBand HDR between nodes",
        model_value=round(r["h100_hdr_x"], 1), unit="x NVLink / HDR port, per GPU, one direction (H100)",
        explanation=say(msg("A two-level design, yes; but HDR belongs to the A100 generation ({a100_hdr_x}x less than NVLink 3 "
                "per GPU). An H100 node with one HDR port per GPU has {h100_hdr_x}x less bandwidth across nodes than "
                "inside; H100 nodes ship with NDR ({h100_ndr_x}x). With NDR, an all-reduce over two nodes keeps its "
                "busbw ({ndr_allreduce_1} GB/s in one node, {ndr_allreduce_2} in two), because a node's eight NICs "
                "together ({ndr_node_nic} GB/s per direction) carry about what one GPU's NVLink does; with HDR "
                "({hdr_node_nic} GB/s) it falls to {hdr_allreduce_2}. All-to-all crosses the NICs with most of its "
                "bytes: {ndr_alltoall_1} GB/s busbw in one node, {ndr_alltoall_2} over two with NDR, "
                "{hdr_alltoall_2} with HDR."),
            a100_hdr_x=Number(r['a100_hdr_x'], ".0f"), h100_hdr_x=Number(r['h100_hdr_x'], ".0f"),
            h100_ndr_x=Number(r['h100_ndr_x'], ".0f"), ndr_allreduce_1=Number(r['ndr_allreduce_1'], ".0f"),
            ndr_allreduce_2=Number(r['ndr_allreduce_2'], ".0f"), ndr_node_nic=Number(r['ndr_node_nic'], ".0f"),
            hdr_node_nic=Number(r['hdr_node_nic'], ".0f"), hdr_allreduce_2=Number(r['hdr_allreduce_2'], ".0f"),
            ndr_alltoall_1=Number(r['ndr_alltoall_1'], ".0f"), ndr_alltoall_2=Number(r['ndr_alltoall_2'], ".0f"),
            hdr_alltoall_2=Number(r['hdr_alltoall_2'], ".0f")),
        chapter=CHAPTER, rule=rule,
        confidence=sourced(*(s.source for s in hdr)) if hdr else say(msg("no catalogue system with HDR")))


#: This chapter's checks.
CHECKS = (c05, c06, c07, c08, c09, c10, c11, c14, c15, c19, c25)
