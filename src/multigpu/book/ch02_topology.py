"""Chapter 2 (NVSwitch topology): its tables, its claims table and the numbers its prose cites, computed by
:mod:`multigpu.evidence.topology`, :mod:`multigpu.evidence.claims.topology` and
:mod:`multigpu.evidence.measurements` with a calibration passed in (its figures and drawn topologies are
:mod:`multigpu.book.ch02_figures`).

Its words come in both editions' languages (:mod:`multigpu.book.lang`): the tables' Chinese headers and label cells are the messages of :data:`TABLE_HEADERS` and the ``*_LABELS``
tuples, and :func:`facts` holds every text fact in English and, as ``<name>_zh``, in Chinese."""

from __future__ import annotations

import pandas as pd

from multigpu.book import claim_values, glue, schematics
from multigpu.book.glue import Facts, plain
from multigpu.book.glue import verdict_facts as glue_verdicts
from multigpu.book.lang import N_, _
from multigpu.book.vocabulary import CHECK_LABELS  # noqa: F401  (the chapter's table translates them)
from multigpu.comm import calibration, collectives
from multigpu.comm.calibration import Calibration
from multigpu.common.units import GiB, KiB, MiB
from multigpu.evidence import claims, generations, measurements, topology
from multigpu.evidence.claims import topology as checks

# ------------------------------------------------------------------ the words of figures and tables
# The evidence layer names its systems, algorithms, patterns and rows in English; these messages are their
# Chinese (multigpu.book.lang.label: a label missing here fails the notebook in Chinese, not just the check).

#: The systems' short names that hold words (:data:`multigpu.evidence.topology.LABELS` of the compared three,
#: :data:`multigpu.evidence.topology.SCALING_LABELS`), for legends and the wiring table.
SYSTEM_LABELS = (N_("NVSwitch (HGX H200)"), N_("full mesh (8x H200, hypothetical)"), N_("PCIe Gen4 (8x L40S)"),
                 N_("HGX H200 nodes (8 GPUs, NDR)"), N_("DGX A100 nodes (8 GPUs, HDR)"),
                 N_("GB200 NVL72 racks (72 GPUs, NDR)"))
#: The all-reduce algorithms as the chapter prints them (:data:`multigpu.evidence.topology.ALLREDUCE_ALGORITHMS`).
ALGORITHM_LABELS = (N_("ring"), N_("tree"), N_("NVLS"), N_("one-shot"), N_("two-shot (MultiShot)"))
#: The traffic patterns of :func:`multigpu.evidence.topology.rack_patterns`.
PATTERN_LABELS = (N_("one pair alone"), N_("permutation across the bisection (i to i + n/2)"),
                  N_("one GPU to all others (fan-out)"), N_("all others to one GPU (incast)"), N_("all-to-all"))
#: The row groups of :func:`multigpu.evidence.topology.error_summary`.
ROWS_LABELS = (N_("large messages and rates"), N_("small messages (< 64 MiB)"), N_("fitted on"),
               N_("not fitted on"), N_("all"))
#: What each row of :func:`multigpu.evidence.topology.model_vs_measurement` measured.
WHAT_LABELS = (N_("GPU-GPU copy, both ways"), N_("GPU-GPU copy, one way"), N_("all-to-all, per-GPU NIC rate"),
               N_("allgather busbw (ring)"), N_("allreduce busbw (nvls)"), N_("allreduce busbw (ring)"),
               N_("alltoall busbw (direct)"), N_("host-to-GPU copy"), N_("reducescatter busbw (ring)"))
#: The units of the chapter's claims (:mod:`multigpu.evidence.claims.topology`).
UNIT_LABELS = (
    N_("year; GPUs; GB/s per pair (bidirectional, line rate)"),
    N_("first switch generation with SHARP; NVLS / ring busbw"),
    N_("TB/s (72 x per-GPU bidirectional: a sum, not a bisection)"),
    N_("GB/s per direction per peer (one GPU sending to 71 peers at once)"),
    N_("GB/s per link (bidirectional): 900 / 7"), N_("GB/s per pair (bidirectional) while all 8 GPUs exchange data"),
    N_("switch / mesh bandwidth (line rate)"),
    N_("steps for N = 8 (chunks passed around a ring until every rank holds the sum)"),
    N_("us per added GPU (ring latency term, LL protocol, NVLink)"),
    N_("x faster than ring all-reduce at best (8x H200)"),
    N_("x NVLink / HDR port, per GPU, one direction (H100)"))
#: The columns whose cells are words to translate, in every table the notebook shows through
#: :func:`multigpu.book.tables.use_for_dataframes` (the rest is data: numbers, ids, system names).
LABEL_COLUMNS = claim_values.label_columns("verdict", "algorithm", "pattern", "rows", "what", "check", "known_miss")
#: The wiring table's label column too (elsewhere ``system`` holds catalogue ids): the notebook shows it with
#: :func:`multigpu.book.tables.show_table`.
WIRING_LABEL_COLUMNS = ("system",)

#: The headers of the chapter's tables (:func:`multigpu.book.tables.header` of their columns, the two-level ones
#: flattened by :func:`multigpu.book.tables.flat_columns`), as messages.
TABLE_HEADERS = (
    N_("System"), N_("Wiring"), N_("GPUs"), N_("GPU (GB/s per direction)"), N_("GPU (GB/s, both directions)"),
    N_("Pair (GB/s per direction)"), N_("Pair (GB/s, both directions)"), N_("Pair share (%)"),
    N_("Blog P2P (GB/s, both directions)"), N_("Model mesh GPU (GB/s, both directions)"),
    N_("Blog switch (GB/s, both directions)"), N_("Model switch GPU (GB/s, both directions)"),
    N_("Model mesh pair (GB/s, both directions)"), N_("Model switch pair (GB/s, both directions)"),
    N_("All-reduce time (µs): NVSwitch (HGX H200)"), N_("All-reduce time (µs): Full mesh (8x H200, hypothetical)"),
    N_("All-reduce time (µs): PCIe Gen4 (8x L40S)"), N_("All-to-all time (µs): NVSwitch (HGX H200)"),
    N_("All-to-all time (µs): Full mesh (8x H200, hypothetical)"), N_("All-to-all time (µs): PCIe Gen4 (8x L40S)"),
    N_("All-reduce bus bandwidth (GB/s): NVSwitch (HGX H200)"),
    N_("All-reduce bus bandwidth (GB/s): Full mesh (8x H200, hypothetical)"),
    N_("All-reduce bus bandwidth (GB/s): PCIe Gen4 (8x L40S)"),
    N_("All-to-all bus bandwidth (GB/s): NVSwitch (HGX H200)"),
    N_("All-to-all bus bandwidth (GB/s): Full mesh (8x H200, hypothetical)"),
    N_("All-to-all bus bandwidth (GB/s): PCIe Gen4 (8x L40S)"),
    N_("Algorithm"), N_("Protocol"), N_("From (KiB)"), N_("To (KiB)"), N_("Latency (µs)"),
    N_("Bus bandwidth (GB/s, limit)"), N_("Steps"), N_("Latency LL (µs)"), N_("Latency simple (µs)"),
    N_("Bytes factor"), N_("Ring small (µs)"), N_("Ring large (µs)"), N_("NVLS small (µs)"),
    N_("Ring bus bandwidth (GB/s)"), N_("NVLS bus bandwidth (GB/s)"), N_("Gain (×)"), N_("Auto algorithm"),
    N_("Measured bus bandwidth (GB/s)"), N_("Measured algorithm"), N_("Pattern"), N_("Flows"),
    N_("Per flow (GB/s per direction)"), N_("Most sent by one GPU (GB/s per direction)"), N_("Delivered (TB/s)"),
    N_("GPUs per domain"), N_("NVLink (GB/s per direction)"), N_("NIC (GB/s per direction)"), N_("Ratio (×)"),
    N_("Node NIC (GB/s per direction)"), N_("All-reduce bus bandwidth 1 (GB/s)"),
    N_("All-reduce bus bandwidth 2 (GB/s)"), N_("All-to-all bus bandwidth 1 (GB/s)"),
    N_("All-to-all bus bandwidth 2 (GB/s)"), N_("Nodes"), N_("Tree bus bandwidth (GB/s)"),
    N_("Hierarchical bus bandwidth (GB/s)"), N_("Rows"), N_("Count"), N_("Median absolute error (%)"),
    N_("Worst absolute error (%)"), N_("Worst ID"), N_("ID"), N_("What"), N_("Size (MiB)"), N_("Measured (GB/s)"),
    N_("Predicted (GB/s)"), N_("Error (%)"), N_("Fitted"), N_("Check"), N_("Within tolerance"), N_("Known miss"),
    N_("Verdict"), N_("Seed value"), N_("Model value"), N_("Unit"),
)


# ------------------------------------------------------------------ plots (in the current language)


# ------------------------------------------------------------------ figures, with their house-style set-up
# Each draws in the current language (multigpu.book.lang): plotting.show_both(figure_...) shows both.


# ------------------------------------------------------------------ the model's diagrams (multigpu.book.diagrams)


# ------------------------------------------------------------------ the article's claims

#: The claims chapter 2 checks (:mod:`multigpu.evidence.claims.topology`).
CLAIMS = ("C05", "C06", "C07", "C08", "C09", "C10", "C11", "C14", "C15", "C19", "C25")
def verdicts(cal: Calibration | None = None) -> dict[str, claims.Verdict]:
    """The verdicts of :data:`CLAIMS` by id, checked with calibration ``cal`` (None: the shipped one)."""
    inputs = claims.Inputs(cal=cal)
    return {claim_id: claims.check(claim_id, inputs) for claim_id in CLAIMS}


def claims_table(cal: Calibration | None = None) -> pd.DataFrame:
    """The chapter's claims indexed by ``id``: ``verdict``, ``seed_value`` (the article's, as text),
    ``model_value`` and ``unit`` (the model's value and its unit, per claim)."""
    frame = pd.DataFrame([v.to_dict() for v in verdicts(cal).values()]).set_index("id")
    return frame[["verdict", "seed_value", "model_value", "unit"]]


# ------------------------------------------------------------------ the prose's numbers
# Each function returns the named values one section of the chapter cites (myst-nb glue names), computed by
# multigpu.evidence (wiring, claims.topology, measurements) with calibration ``cal`` (None: the shipped one);
# facts() gathers them all. Bandwidths are GB/s (1e9 B/s), per direction unless the name says bidir; busbw in
# the nccl-tests convention; times in µs (``_us``) or ms (``_ms``); ``_x`` are dimensionless ratios.

#: Measurement ids (data/measurements.csv) whose model error the chapter names; the two whose time gap it gives.
NAMED_ERRORS = (8, 10, 11, 63, 65, 66, 73)
GAP_ROWS = (10, 11)
#: Exercise inputs: tensor parallelism over 4 GPUs with a large and a decode-size all-reduce (bytes), and a
#: 1 GB KV-cache slice sent to 8 peers of an NVL72.
EX1_GPUS, EX1_LARGE, EX1_SMALL = 4, 1 * GiB, 64 * KiB
EX2_SYSTEM, EX2_PEERS, EX2_SLICE_GB = "gb200-nvl72", 8, 1


def verdict_facts(cal: Calibration | None = None) -> Facts:
    """``{id}_verdict`` (in bold) and ``{id}_tests`` (what decided it) for each claim of :data:`CLAIMS`, with
    their Chinese as ``{id}_verdict_zh`` and ``{id}_tests_zh`` (the tests' findings rendered from the catalogs)."""
    checked = verdicts(cal)
    return glue.per_language(lambda: glue_verdicts(checked))


def wiring_facts() -> Facts:
    """Three ways to wire eight GPUs, at line rate: each GPU's budget (``sw_gpu_bidir``, ``mesh_gpu_bidir``,
    bidirectional), one pair's share (``sw_pair``, ``mesh_pair``, ``pcie_pair``; ``mesh_share`` %), and the
    numbers of claims C05 (``c05_*``: years, GPU count, GB/s) and C09 (``c09_*``: GB/s, peer count); the
    all-reduce schematics' GPUs and buffer (``schematic_gpus``, ``schematic_GB``, GB = 1e9 bytes)."""
    table = topology.wiring_table().set_index("system")
    switch, mesh, pcie = (table.loc[topology.label(s)] for s in topology.COMPARED)
    out: Facts = {"schematic_gpus": schematics.SCHEMATIC_GPUS, "schematic_GB": schematics.SCHEMATIC_BYTES / 1e9,
                  "sw_gpu_bidir": switch["gpu_GBps_bidir"], "mesh_gpu_bidir": mesh["gpu_GBps_bidir"],
                  "sw_pair": switch["pair_GBps_per_dir"], "mesh_pair": mesh["pair_GBps_per_dir"],
                  "mesh_share": mesh["pair_share_pct"], "pcie_pair": pcie["pair_GBps_per_dir"]}
    c05 = checks.first_nvswitch()
    for key in ("year", "gpus", "pair_GBps_per_dir", "pair_GBps_bidir", "alltoall_pair_GBps_per_dir",
                "first8_year", "first8_pair_GBps_bidir"):
        out[f"c05_{key}"] = c05[key]
    c09 = checks.mesh_link()
    for key in ("gpu_GBps_bidir", "peers", "split_GBps_bidir", "split_GBps_per_dir", "link_GBps_bidir",
                "link_GBps_per_dir"):
        out[f"c09_{key}"] = c09[key]
    return out


def pair_facts(cal: Calibration | None = None) -> Facts:
    """One pair, or everyone at once (line rate): NVIDIA's Table 1 beside the model (``t1_*``, bidirectional),
    one GPU sending to 1..7 peers (``fan_*``), the PCIe server's lone fifth GPU (``pcie_a2a5``), and claim
    C10's pair in an 8-GPU all-to-all on switch and mesh (``c10_switch``, ``c10_mesh``, bidirectional)."""
    table1 = topology.blog_table1().set_index("gpus")
    out: Facts = {"t1_mesh8": table1.loc[8, "model_mesh_gpu_GBps_bidir"],
                  "t1_switch8": table1.loc[8, "model_switch_gpu_GBps_bidir"],
                  "t1_sw_pair8": table1.loc[8, "model_switch_pair_GBps_bidir"],
                  "t1_sw_pair4": table1.loc[4, "model_switch_pair_GBps_bidir"],
                  "t1_mesh_pair8": table1.loc[8, "model_mesh_pair_GBps_bidir"]}
    fan_switch, fan_mesh, fan_pcie = (topology.fanout(s).set_index("peers") for s in topology.COMPARED)
    out |= {"fan_sw_total": fan_switch.loc[7, "total_GBps_per_dir"],
            "fan_sw_peer7": fan_switch.loc[7, "per_peer_GBps_per_dir"],
            "fan_mesh_total7": fan_mesh.loc[7, "total_GBps_per_dir"],
            "fan_pcie_total": fan_pcie.loc[1, "total_GBps_per_dir"],
            "fan_pcie_peer7": fan_pcie.loc[7, "per_peer_GBps_per_dir"]}
    groups = topology.group_bandwidth()
    pcie_groups = groups[groups["system"] == topology.label(topology.PCIE)].set_index("gpus")
    out["pcie_a2a5"] = pcie_groups.loc[5, "gpu_alltoall_GBps_per_dir"]
    c10 = checks.switch_vs_mesh((2, 8), cal=cal)
    out["c10_switch"] = c10["switch_pair_in_alltoall_GBps_bidir"][-1]
    out["c10_mesh"] = c10["mesh_pair_in_alltoall_GBps_bidir"][-1]
    return out


def collective_facts(cal: Calibration | None = None) -> Facts:
    """From wiring to collectives (1 GiB): NCCL's NVLink efficiency on Hopper (``sm_eff_pct``, %), the fewest
    GPUs NVLS runs on (``nvls_from``), the mesh's 6-GPU ring packing (``mesh6_ring_pct``, % of its all-to-all),
    claim C11's switch / mesh ratios (``c11_*``, x) and switch / PCIe all-reduce busbw on 8 GPUs
    (``sw_over_pcie8``, x)."""
    resolved = calibration.resolve(cal)
    groups = topology.group_bandwidth()
    mesh_groups = groups[groups["system"] == topology.label(topology.MESH)].set_index("gpus")
    out: Facts = {"mesh6_ring_pct": 100 * mesh_groups.loc[6, "gpu_ring_GBps_per_dir"]
                  / mesh_groups.loc[6, "gpu_alltoall_GBps_per_dir"],
                  "sm_eff_pct": 100 * resolved.value("sm_efficiency", "nvlink.hopper")}
    groups_1GiB = topology.collective_table(nbytes=1 * GiB, cal=cal)
    switch_groups = groups_1GiB[groups_1GiB["system"] == topology.label(topology.SWITCH)]
    out["nvls_from"] = int(switch_groups[switch_groups["allreduce_algorithm"] == "nvls"]["gpus"].min())
    c11 = checks.switch_vs_mesh(cal=cal)
    counts = c11["gpus"]
    out |= {"c11_pair2": c11["pair_ratio_x"][counts.index(2)],
            "c11_a2a8": c11["alltoall_gpu_ratio_x"][counts.index(8)],
            "c11_a2a_busbw2": c11["alltoall_busbw_ratio_x"][counts.index(2)],
            "c11_a2a_busbw8": c11["alltoall_busbw_ratio_x"][counts.index(8)],
            "c11_ar8": c11["allreduce_busbw_ratio_x"][counts.index(8)],
            "c11_ar4": c11["allreduce_busbw_ratio_x"][counts.index(4)]}
    busbw_8 = topology.wide(groups_1GiB, "allreduce_busbw_GBps").loc[8]
    out["sw_over_pcie8"] = busbw_8[topology.label(topology.SWITCH)] / busbw_8[topology.label(topology.PCIE)]
    return out


def size_facts(cal: Calibration | None = None) -> Facts:
    """All-reduce time against message size (8x H200): the latency- and bandwidth-bound ranges
    (``lat_bound_MiB``, ``bw_bound_MiB``), the mesh's time over the switch's at 1 KiB and 16 GiB
    (``mesh_small_x``, ``mesh_large_x``), the crossovers (``nccl_cross_MiB``, ``oneshot_to_KiB``,
    ``twoshot_to_MiB``); the ring's steps, latency (µs) and bytes per byte (``c14_*``, ``c15_slope`` µs per GPU,
    ``ring_*``, ``nvls_small72`` µs); and claim C19's two-shot figures (``c19_*``: µs, steps, x, MiB)."""
    regions = topology.regimes(cal=cal)
    out: Facts = {"lat_bound_MiB": regions["latency_bound_to_bytes"] / MiB,
                  "bw_bound_MiB": regions["bandwidth_bound_from_bytes"] / MiB}
    mesh = collectives.evaluate("allreduce", topology.MESH, 8, topology.SIZES, cal=cal)["time_us"]
    switch = collectives.evaluate("allreduce", topology.SWITCH, 8, topology.SIZES, cal=cal)["time_us"]
    out["mesh_small_x"] = mesh[0] / switch[0]
    out["mesh_large_x"] = mesh[-1] / switch[-1]
    out["nccl_cross_MiB"] = topology.fastest_ranges(cal=cal)["to_KiB"].iloc[0] / KiB
    names = topology.ALLREDUCE_ALGORITHMS
    ranges = topology.fastest_ranges(algorithms=tuple(names), cal=cal).set_index("algorithm")
    out["oneshot_to_KiB"] = ranges.loc[names["direct"], "to_KiB"]
    out["twoshot_to_MiB"] = ranges.loc[names["two-shot"], "to_KiB"] / KiB
    checked = verdicts(cal)
    at = topology.ring_terms(cal=cal).set_index("gpus")
    out |= {"c14_steps8": checked["C14"].model_value, "c14_steps72": at.loc[72, "steps"],
            "c15_slope": checked["C15"].model_value}
    for n in (2, 8, 72):
        out[f"ring_lat{n}"] = at.loc[n, "latency_ll_us"]
        out[f"ring_bytes{n}"] = at.loc[n, "bytes_factor"]
    out |= {"ring_small_x": at.loc[72, "ring_small_us"] / at.loc[8, "ring_small_us"],
            "ring_large_x": at.loc[72, "ring_large_us"] / at.loc[8, "ring_large_us"],
            "nvls_small72": at.loc[72, "nvls_small_us"]}
    c19 = checks.multishot(cal=cal)
    for key in ("latency_us", "latency_spread_us", "steps_ring", "small_vs_ring_x", "max_vs_ring_x",
                "large_vs_ring_x", "max_vs_nccl_x", "large_vs_nccl_x"):
        out[f"c19_{key}"] = c19[key]
    out["c19_max_MiB"] = c19["max_vs_ring_bytes"] / MiB
    return out


def nvls_facts(cal: Calibration | None = None) -> Facts:
    """In-switch reduction: claim C06's figures (``c06_*``: year, bytes per byte, busbw GB/s at 16 GiB, gains x,
    the fewest GPUs it pays on) and NVLS over ring on 2 GPUs at 8 GiB (``nvls_gain2``, x)."""
    c06 = checks.first_in_switch_reduction(cal=cal)
    out: Facts = {f"c06_{key}": c06[key] for key in (
        "year", "ring_bytes_factor", "nvls_bytes_factor", "model_gain_x", "measured_gain_x", "ring_busbw_GBps",
        "nvls_busbw_GBps", "pays_from_gpus")}
    out["nvls_gain2"] = topology.nvls_gain(cal=cal).set_index("gpus").loc[2, "gain_x"]
    return out


def rack_facts() -> Facts:
    """The Vera Rubin NVL72 at line rate: its aggregate (``rack_*``: GPUs, TB/s) and the per-flow rate of a
    fan-out and a permutation (``rack_fan``, ``rack_perm``, GB/s per direction) and an incast's total
    (``rack_incast``, TB/s)."""
    rack = topology.rack_aggregate("vr-nvl72")
    out: Facts = {f"rack_{key}": rack[key] for key in (
        "gpus", "gpu_TBps_bidir", "gpu_TBps_per_dir", "sum_bidir_TBps", "delivered_TBps", "bisection_TBps_per_dir")}
    patterns = topology.rack_patterns("vr-nvl72").set_index("pattern")
    out |= {"rack_fan": patterns.loc[topology.FAN_OUT, "per_flow_GBps_per_dir"],
            "rack_incast": patterns.loc[topology.INCAST, "delivered_TBps"],
            "rack_perm": patterns.loc[topology.PERMUTATION, "per_flow_GBps_per_dir"]}
    return out


def scale_out_facts(cal: Calibration | None = None) -> Facts:
    """Beyond the NVLink domain (busbw GB/s at 1 GiB): claim C25's figures (``c25_*``: NVLink / NIC x, node NIC
    GB/s, busbw in one and two nodes), all-to-all busbw of 72 and 144 GPUs on NVL72 racks and 72 GPUs on HGX H200
    nodes, and all-reduce busbw over two HGX H200 nodes by algorithm (``mn_*``)."""
    out: Facts = {f"c25_{key}": value for key, value in checks.scale_out(cal=cal).items()}
    scaled = topology.scaling(cal=cal)
    nvl = scaled[scaled["system"] == topology.SCALING_LABELS["gb200-nvl72"]].set_index("gpus")
    h200 = scaled[scaled["system"] == topology.SCALING_LABELS["hgx-h200"]].set_index("gpus")
    out |= {"nvl72_a2a72": nvl.loc[72, "alltoall_busbw_GBps"], "h200_a2a72": h200.loc[72, "alltoall_busbw_GBps"],
            "nvl72_a2a144": nvl.loc[144, "alltoall_busbw_GBps"]}
    two = topology.multinode_allreduce(topology.SWITCH, nodes=(2, 8), cal=cal).set_index("nodes").loc[2]
    out |= {"mn_nvls2": two["nvls_busbw_GBps"], "mn_ring2": two["ring_busbw_GBps"],
            "mn_hier2": two["hierarchical_busbw_GBps"]}
    return out


def measurement_facts(comparison: pd.DataFrame | None = None, cal: Calibration | None = None) -> Facts:
    """Model against measurement: row count and median absolute errors (``err_*``, %), the error of each row of
    :data:`NAMED_ERRORS` (``err_{id}``, %), the time gaps of :data:`GAP_ROWS` (``gap{id}``, µs, and ``pred10``),
    NVLS's latency (``nvls_latency``, µs) and the out-of-sample checks within tolerance (``oos_*``, counts)."""
    comparison = measurements.compare(cal=cal) if comparison is None else comparison
    summary = topology.error_summary(comparison).set_index("rows")
    out: Facts = {"err_rows": summary.loc[topology.ERRORS_ALL, "count"],
                  "err_median": summary.loc[topology.ERRORS_ALL, "median_abs_error_pct"],
                  "err_fitted_median": summary.loc[topology.ERRORS_FITTED, "median_abs_error_pct"],
                  "err_unfitted_median": summary.loc[topology.ERRORS_UNFITTED, "median_abs_error_pct"],
                  "err_large_median": summary.loc[topology.ERRORS_LARGE, "median_abs_error_pct"]}
    errors = topology.model_vs_measurement(comparison).set_index("id")["error_pct"]
    out |= {f"err_{row_id}": errors[row_id] for row_id in NAMED_ERRORS}
    gaps = {row_id: topology.time_gap_us(row_id, cal=cal) for row_id in GAP_ROWS}
    out |= {f"gap{row_id}": gap["gap_us"] for row_id, gap in gaps.items()}
    out["pred10"] = gaps[10]["predicted_us"]
    out["nvls_latency"] = calibration.resolve(cal).value("hop_latency_us", "nvlink.nvls.simple")
    oos = topology.out_of_sample_table(cal=cal)
    out |= {"oos_rows": len(oos), "oos_within": int(oos["within_tolerance"].sum())}
    return out


def takeaway_facts(cal: Calibration | None = None) -> Facts:
    """The key takeaways' ratios (x): switch / mesh for a pair and per GPU in an 8-GPU all-to-all, NVLS's gain,
    MultiShot's best gain over the ring, NVLink / NIC per GPU with NDR and HDR on the H100."""
    c11 = checks.switch_vs_mesh(cal=cal)
    return {"tk_pair2": c11["pair_ratio_x"][c11["gpus"].index(2)],
            "tk_gpu8": c11["alltoall_gpu_ratio_x"][c11["gpus"].index(8)],
            "tk_nvls8": checks.first_in_switch_reduction(cal=cal)["model_gain_x"],
            "tk_multishot": checks.multishot(cal=cal)["max_vs_ring_x"],
            "tk_ndr": checks.scale_out(cal=cal)["h100_ndr_x"], "tk_hdr": checks.scale_out(cal=cal)["h100_hdr_x"]}


def exercise_facts(cal: Calibration | None = None) -> Facts:
    """The exercises: 1, tensor parallelism over :data:`EX1_GPUS` GPUs on switch and mesh (line-rate GB/s,
    all-reduce times in ms and µs, NCCL's choice and two-shot); 2, one GPU of an NVL72 feeding
    :data:`EX2_PEERS` peers (GB/s per flow, ms per :data:`EX2_SLICE_GB` GB slice); 3, the ring-to-NVLS crossover
    (KiB) and both plans' latency (µs) and busbw limit (GB/s)."""
    pair = (topology.SWITCH, topology.MESH)
    s_label, m_label = topology.label(topology.SWITCH), topology.label(topology.MESH)
    large = topology.collective_table(pair, counts=(EX1_GPUS,), nbytes=EX1_LARGE, cal=cal).set_index("system")
    small = topology.collective_table(pair, counts=(EX1_GPUS,), nbytes=EX1_SMALL, cal=cal).set_index("system")
    gb = topology.group_bandwidth(pair, counts=(EX1_GPUS,)).set_index("system")
    out: Facts = {"ex1_sw_gpu": gb.loc[s_label, "gpu_alltoall_GBps_per_dir"],
                  "ex1_mesh_gpu": gb.loc[m_label, "gpu_alltoall_GBps_per_dir"],
                  "ex1_sw_pair": gb.loc[s_label, "pair_in_alltoall_GBps_per_dir"],
                  "ex1_mesh_pair": gb.loc[m_label, "pair_in_alltoall_GBps_per_dir"],
                  "ex1_large_x": large.loc[m_label, "allreduce_time_us"] / large.loc[s_label, "allreduce_time_us"],
                  "ex1_sw_large_ms": large.loc[s_label, "allreduce_time_us"] / 1e3,
                  "ex1_mesh_large_ms": large.loc[m_label, "allreduce_time_us"] / 1e3,
                  "ex1_sw_small_us": small.loc[s_label, "allreduce_time_us"],
                  "ex1_mesh_small_us": small.loc[m_label, "allreduce_time_us"]}
    for key, system_id in (("sw", topology.SWITCH), ("mesh", topology.MESH)):
        out[f"ex1_{key}_2shot_us"] = collectives.time_us("allreduce", system_id, EX1_GPUS, EX1_SMALL,
                                                         algorithm="two-shot", cal=cal)
    fan = topology.fanout(EX2_SYSTEM, peers=(1, EX2_PEERS)).set_index("peers")
    out |= {"ex2_fan_peer": fan.loc[EX2_PEERS, "per_peer_GBps_per_dir"],
            "ex2_fan_ms": generations.transfer_time_ms(EX2_SLICE_GB, fan.loc[EX2_PEERS, "per_peer_GBps_per_dir"]),
            "ex2_pair": fan.loc[1, "per_peer_GBps_per_dir"],
            "ex2_pair_ms": generations.transfer_time_ms(EX2_SLICE_GB, fan.loc[1, "per_peer_GBps_per_dir"])}
    names = topology.ALLREDUCE_ALGORITHMS
    plans = topology.fastest_ranges(cal=cal).set_index("algorithm")
    ring, nvls = plans.loc[names["ring"]], plans.loc[names["nvls"]]
    out |= {"ex3_cross_KiB": ring["to_KiB"], "ex3_ring_lat": ring["latency_us"],
            "ex3_ring_bw": ring["busbw_GBps_limit"], "ex3_nvls_lat": nvls["latency_us"],
            "ex3_nvls_bw": nvls["busbw_GBps_limit"]}
    return out


def in_short(f: Facts) -> str:
    """The chapter's answer in two sentences in the current language, from its pair, collective and NVLS facts
    (``f``: :func:`facts`' values; ratios x, GB/s)."""
    even = abs(f["c11_a2a8"] - 1) < 0.05
    edge = (_("the wiring alone gives the switch no edge") if even else
            _("the switch keeps {ratio:.2f}x the mesh's all-to-all bandwidth", ratio=f["c11_a2a8"]))
    return _("An NVSwitch gives one pair of GPUs the whole port, {pair2:.1f}x a mesh link; with all 8 GPUs talking at "
             "once each pair gets {switch8:.0f} GB/s through the switch and {mesh8:.0f} on a mesh, so {edge}. What the "
             "switch adds at 8 GPUs is in-switch reduction: an all-reduce {allreduce8:.2f}x as fast as on the mesh.",
             pair2=f["c11_pair2"], switch8=f["t1_sw_pair8"], mesh8=f["t1_mesh_pair8"], edge=edge,
             allreduce8=f["c11_ar8"])


def facts(cal: Calibration | None = None, comparison: pd.DataFrame | None = None) -> Facts:
    """Every value chapter 2's prose cites, by glue name (the section functions above, merged), computed with
    calibration ``cal`` (None: the shipped one), as plain Python numbers or Markdown text. ``comparison``:
    a :func:`multigpu.evidence.measurements.compare` already made with ``cal``, to reuse. Each text fact is
    there in English and, as ``<name>_zh``, in Chinese (:func:`multigpu.book.glue.per_language`); the numbers
    once, for both editions."""
    merged: Facts = {}
    for part in (verdict_facts(cal), wiring_facts(), pair_facts(cal), collective_facts(cal), size_facts(cal),
                 nvls_facts(cal), rack_facts(), scale_out_facts(cal), measurement_facts(comparison, cal),
                 takeaway_facts(cal), exercise_facts(cal)):
        merged |= part
    merged |= glue.per_language(lambda: {"in_short": in_short(merged)})
    return {name: plain(value) for name, value in merged.items()}
