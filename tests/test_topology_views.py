"""Chapter 2's tables and series (multigpu.evidence.topology): they must agree with the wiring and the model."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from multigpu.book import ch02_figures as ch02fig
from multigpu.book import plotting
from multigpu.comm import calibration, collectives
from multigpu.evidence import intervals, measurements
from multigpu.evidence import topology as views
from multigpu.hardware import catalog, wiring

KiB, MiB, GiB = 2**10, 2**20, 2**30


# ------------------------------------------------------------------ wiring


def test_wiring_table_pair_gets_the_port_on_a_switch_and_one_link_on_a_mesh():
    table = views.wiring_table().set_index("system")
    switch, mesh = table.loc[views.label(views.SWITCH)], table.loc[views.label(views.MESH)]
    assert switch["pair_GBps_per_dir"] == switch["gpu_GBps_per_dir"] == catalog.gpu("h200-sxm").nvlink_GBps_per_dir
    assert mesh["pair_GBps_per_dir"] == catalog.link("nvlink4-p2p-mesh").per_link_GBps_per_dir == 64
    assert mesh["pair_share_pct"] == pytest.approx(100 / 7, abs=0.05)
    assert (table["pair_GBps_bidir"] == 2 * table["pair_GBps_per_dir"]).all()


def test_blog_table1_is_the_per_gpu_total_and_the_model_reproduces_it():
    # NVIDIA's Table 1: point-to-point 128, 3 x 128, 7 x 128 GB/s; NVSwitch 900 (bidirectional)
    table = views.blog_table1()
    assert list(table["blog_p2p_GBps_bidir"]) == [128, 384, 896]
    assert list(table["model_mesh_gpu_GBps_bidir"]) == list(table["blog_p2p_GBps_bidir"])
    assert (table["model_switch_gpu_GBps_bidir"] == 900).all()
    # each pair of the switch gets a 1/(k-1) share of the port while all k GPUs talk
    assert list(table["model_switch_pair_GBps_bidir"]) == pytest.approx([900, 300, 900 / 7], abs=0.05)
    assert (table["model_mesh_pair_GBps_bidir"] == 128).all()


def test_group_bandwidth_switch_keeps_the_gpu_total_mesh_grows_with_links():
    frame = views.group_bandwidth()
    switch = frame[frame["system"] == views.label(views.SWITCH)].set_index("gpus")
    mesh = frame[frame["system"] == views.label(views.MESH)].set_index("gpus")
    for k in range(2, 9):
        assert switch.loc[k, "gpu_alltoall_GBps_per_dir"] == pytest.approx(450)
        assert switch.loc[k, "pair_in_alltoall_GBps_per_dir"] == pytest.approx(450 / (k - 1), abs=0.05)
        assert switch.loc[k, "gpu_ring_GBps_per_dir"] == pytest.approx(450)
        assert mesh.loc[k, "gpu_alltoall_GBps_per_dir"] == pytest.approx(64 * (k - 1))
        assert mesh.loc[k, "pair_in_alltoall_GBps_per_dir"] == pytest.approx(64)
    assert set(frame["system"]) == {views.label(s) for s in views.COMPARED}


def test_fanout_shares_the_senders_port():
    switch, mesh = views.fanout(views.SWITCH), views.fanout(views.MESH)
    assert list(switch["peers"]) == list(range(1, 8))
    assert np.allclose(switch["per_peer_GBps_per_dir"] * switch["peers"], 450, atol=0.5)
    assert (switch["total_GBps_per_dir"] == 450).all() and switch["bottleneck"].str.contains("nvswitch").all()
    assert list(mesh["total_GBps_per_dir"]) == [64 * m for m in range(1, 8)]


def test_rack_aggregate_counts_each_byte_twice_and_the_bisection_is_a_quarter():
    r = views.rack_aggregate("vr-nvl72")
    per_dir = catalog.system("vr-nvl72").nvlink_GBps_per_dir / 1000
    assert r["sum_bidir_TBps"] == pytest.approx(72 * 2 * per_dir) == pytest.approx(259.2)
    assert r["delivered_TBps"] == pytest.approx(r["sum_bidir_TBps"] / 2)
    assert r["bisection_TBps_per_dir"] == pytest.approx(36 * per_dir)
    patterns = views.rack_patterns("vr-nvl72").set_index("pattern")
    assert patterns.loc["one GPU to all others (fan-out)", "per_flow_GBps_per_dir"] == pytest.approx(1800 / 71,
                                                                                                    abs=0.01)
    assert patterns.loc["all others to one GPU (incast)", "delivered_TBps"] == pytest.approx(per_dir)
    assert patterns.loc["all-to-all", "flows"] == 72 * 71


# ------------------------------------------------------------------ collectives


def test_collective_table_matches_the_model_and_the_switch_is_never_slower():
    frame = views.collective_table(counts=(2, 5, 8))
    row = frame[(frame["system"] == views.label(views.MESH)) & (frame["gpus"] == 5)].iloc[0]
    direct = collectives.collective("allreduce", views.MESH, 5, GiB)
    assert row.allreduce_busbw_GBps == pytest.approx(direct.busbw_GBps, abs=0.05)
    assert row.allreduce_algorithm == direct.algorithm
    switch = views.wide(frame, "allreduce_busbw_GBps")[views.label(views.SWITCH)]
    mesh = views.wide(frame, "allreduce_busbw_GBps")[views.label(views.MESH)]
    assert (switch >= mesh).all()
    assert switch[2] / mesh[2] == pytest.approx(450 / 64, rel=0.01)
    assert list(views.wide(frame, "alltoall_time_us").columns) == \
        [views.label(s) for s in views.COMPARED]


def test_fastest_ranges_are_contiguous_and_really_fastest():
    for algorithms in (views.NCCL_ALGORITHMS, tuple(views.ALLREDUCE_ALGORITHMS)):
        table = views.fastest_ranges(algorithms=algorithms)
        assert table["from_KiB"].iloc[0] == 1 and table["to_KiB"].iloc[-1] == 16 * MiB
        assert np.allclose(table["to_KiB"].iloc[:-1].to_numpy(), table["from_KiB"].iloc[1:].to_numpy())
        names = {v: k for k, v in views.ALLREDUCE_ALGORITHMS.items()}
        for row in table.itertuples():
            middle = math.sqrt(row.from_KiB * row.to_KiB) * KiB
            times = {a: collectives.time_us("allreduce", views.SWITCH, 8, middle, algorithm=a) for a in algorithms}
            assert min(times, key=times.get) == names[row.algorithm], (algorithms, row)
    nccl = views.fastest_ranges()
    # NCCL on 8x H200 picks Ring/LL up to 1 MiB and NVLS from 2 MiB (stas00, network/README.md)
    assert list(nccl["algorithm"]) == ["ring", "NVLS"] and list(nccl["protocol"]) == ["ll", "simple"]
    assert 512 <= nccl["to_KiB"].iloc[0] <= 2048


def test_regimes_follow_the_latency_share():
    r = views.regimes()
    assert r["latency_bound_to_bytes"] < r["bandwidth_bound_from_bytes"]
    for size, low, high in ((r["latency_bound_to_bytes"], 0.5, 1.0), (r["bandwidth_bound_from_bytes"], 0.0, 0.1)):
        row = collectives.collective("allreduce", views.SWITCH, 8, size)
        plan = next(p for p in collectives.plans("allreduce", views.SWITCH, 8, algorithm=row.algorithm)
                    if p.protocol == row.protocol)
        share = plan.time_us(np.array([0.0]))[0] / row.time_us
        assert low <= share <= high + 1e-9, (size, share)
    slow_nvls = calibration.default().replace({("hop_latency_us", "nvlink.nvls.simple"): 250.0})
    assert views.regimes(cal=slow_nvls)["bandwidth_bound_from_bytes"] > r["bandwidth_bound_from_bytes"]


def test_two_shot_speedup_is_latency_only():
    frame = views.speedup_vs_size(gpus=8)
    assert frame["speedup_x"].iloc[0] > 1.3  # two synchronisations (7.7 us each, fitted) against 14 ring steps
    # a few per cent at 16 GiB: the ring's fitted one-node ramp reaches full bandwidth only at many GB per rank
    assert frame["speedup_x"].iloc[-1] == pytest.approx(1.0, abs=0.02)
    against_nvls = views.speedup_vs_size(gpus=8, against=views.NCCL_ALGORITHMS)
    assert against_nvls["speedup_x"].iloc[-1] < 0.9  # NVLS wins on large messages
    assert (against_nvls["speedup_x"] <= frame["speedup_x"] + 1e-9).all()


def test_ring_terms_latency_is_linear_and_the_bandwidth_term_tends_to_two():
    terms = views.ring_terms(counts=(2, 4, 8, 72))
    assert list(terms["steps"]) == [2 * (n - 1) for n in terms["gpus"]]
    assert list(terms["bytes_factor"]) == pytest.approx([2 * (n - 1) / n for n in terms["gpus"]], abs=1e-3)
    scale = calibration.default().latency_scale("blackwell")
    hop, base = (scale * calibration.default().value("hop_latency_us", "nvlink.ring.ll"),
                 scale * calibration.default().value("base_latency_us", "ring.ll"))
    assert list(terms["latency_ll_us"]) == pytest.approx([base + 2 * (n - 1) * hop for n in terms["gpus"]], abs=0.05)
    raw_hop = calibration.default().value("hop_latency_us", "nvlink.ring.ll")
    slower_hops = calibration.default().replace({("hop_latency_us", "nvlink.ring.ll"): 2 * raw_hop})
    slower = views.ring_terms(counts=(8,), cal=slower_hops)
    assert slower["latency_ll_us"].iloc[0] == pytest.approx(base + 28 * hop, abs=0.05)
    assert slower["steps"].iloc[0] == 14


def test_nvls_gain_grows_with_gpus_and_meets_the_measurements():
    frame = views.nvls_gain().set_index("gpus")
    assert frame["gain_x"].is_monotonic_increasing
    assert frame.loc[8, "gain_x"] > 1.25 and frame.loc[2, "gain_x"] < 1
    measured = frame.dropna(subset=["measured_busbw_GBps"])
    assert list(measured.index) == [4, 5, 6, 7, 8]  # measurements 15-19
    for k, row in measured.iterrows():
        model = row.nvls_busbw_GBps if row.measured_algorithm == "nvls" else row.ring_busbw_GBps
        assert model == pytest.approx(row.measured_busbw_GBps, rel=0.03), k


def test_every_busbw_of_the_topology_views_carries_its_regimes_prediction_band():
    """nvls_gain (8 GiB, one node) and scaling (1 GiB, one or more domains) bracket each busbw with the band of
    its regime (intervals.band inverted as a rate): a node-internal row and a cross-node row get different bands."""
    nvls = views.nvls_gain()
    inside = intervals.band(intervals.regime(8 * GiB, 1))
    for column in ("ring_busbw_GBps", "nvls_busbw_GBps"):
        for value, lo, hi in zip(nvls[column], nvls[f"{column}_lo"], nvls[f"{column}_hi"]):
            assert lo < value < hi
            assert (lo, hi) == pytest.approx(inside.inverted(value), rel=1e-3)
    scaled = views.scaling()
    for domains, regime_nodes in ((1, 1), (2, 2)):
        row = scaled[scaled["domains"] == domains].iloc[0]
        expected = intervals.band(intervals.regime(GiB, regime_nodes)).inverted(row["allreduce_busbw_GBps"])
        assert (row["allreduce_busbw_GBps_lo"], row["allreduce_busbw_GBps_hi"]) == pytest.approx(expected, rel=1e-3)
    ratio = scaled["allreduce_busbw_GBps_lo"] / scaled["allreduce_busbw_GBps"]
    assert ratio[scaled["domains"] == 1].round(2).nunique() == 1
    assert ratio[scaled["domains"] == 1].mean() != pytest.approx(ratio[scaled["domains"] > 1].mean(), abs=0.01)


def test_the_measured_nvls_points_fall_inside_the_models_band():
    """Measurements 15-19 (nccl-tests, 8x H200, 8 GiB) lie inside the 90 % band of the algorithm NCCL chose."""
    frame = views.nvls_gain().dropna(subset=["measured_busbw_GBps"])
    for row in frame.itertuples():
        column = "nvls_busbw_GBps" if row.measured_algorithm == "nvls" else "ring_busbw_GBps"
        assert getattr(row, f"{column}_lo") <= row.measured_busbw_GBps <= getattr(row, f"{column}_hi"), row.gpus


def test_scale_out_ratio_and_the_second_node():
    table = views.scale_out_table(("dgx-a100", "hgx-h100"),
                                  variants={"H100 + HDR": {"system_id": "hgx-h100", "nic": "infiniband-hdr"}})
    table = table.set_index("system")
    assert table.loc[views.label("dgx-a100"), "ratio_x"] == 300 / 25
    assert table.loc["H100 + HDR", "ratio_x"] == 450 / 25
    assert table.loc["H100 + HDR", "nic_GBps_per_dir"] == catalog.link("infiniband-hdr").per_gpu_GBps_per_dir
    ndr = table.loc[views.label("hgx-h100")]
    assert table.loc["H100 + HDR", "allreduce_busbw_2_GBps"] < ndr["allreduce_busbw_2_GBps"]
    assert table.loc["H100 + HDR", "alltoall_busbw_2_GBps"] < ndr["alltoall_busbw_2_GBps"] / 1.8
    assert ndr["alltoall_busbw_2_GBps"] < ndr["alltoall_busbw_1_GBps"] / 3  # all-to-all falls off the NVLink cliff


def test_scaling_stays_in_the_domain_until_it_is_full():
    frame = views.scaling(cases=(("hgx-h200", 8), ("gb200-nvl72", 72)), gpu_counts=(8, 16, 72, 144))
    h200 = frame[frame["system"] == views.SCALING_LABELS["hgx-h200"]].set_index("gpus")
    nvl = frame[frame["system"] == views.SCALING_LABELS["gb200-nvl72"]].set_index("gpus")
    assert list(h200["domains"]) == [1, 2, 9, 18] and list(nvl["domains"]) == [1, 1, 1, 2]
    assert nvl.loc[72, "alltoall_busbw_GBps"] > 5 * h200.loc[72, "alltoall_busbw_GBps"]
    assert nvl.loc[144, "alltoall_busbw_GBps"] < nvl.loc[72, "alltoall_busbw_GBps"] / 5


# ------------------------------------------------------------------ model against measurement


def test_model_vs_measurement_is_measurements_compare():
    comparison = measurements.compare()
    frame = views.model_vs_measurement(comparison)
    assert list(frame["id"]) == list(comparison["id"])
    assert frame["error_pct"].to_numpy() == pytest.approx(100 * comparison["rel_error"].to_numpy(), abs=0.051)
    assert set(frame["what"]) >= {"allreduce busbw (nvls)", "GPU-GPU copy, one way"}
    summary = views.error_summary(comparison).set_index("rows")
    reference = measurements.summary(comparison).set_index("size_class")
    assert summary.loc["all", "median_abs_error_pct"] == pytest.approx(100 * reference.loc["all", "median_abs_error"],
                                                                       abs=0.05)
    assert summary.loc["all", "count"] == len(comparison)
    assert summary.loc["fitted on", "count"] + summary.loc["not fitted on", "count"] == len(comparison)


def test_out_of_sample_table_flags_the_known_misses():
    table = views.out_of_sample_table()
    misses = table[~table["within_tolerance"]]
    assert len(misses) and (misses["known_miss"] != "").all()


# ------------------------------------------------------------------ figures


@pytest.mark.parametrize("draw, ncols", [
    (lambda ax: ch02fig.plot_group_bandwidth(ax), 2),
    (lambda ax: ch02fig.plot_allreduce_vs_size(ax, regions=views.regimes()), 1),
    (lambda ax: ch02fig.plot_ring_terms(ax), 1),
    (lambda ax: ch02fig.plot_nvls_gain(ax), 1),
    (lambda ax: ch02fig.plot_scaling(ax, views.scaling(gpu_counts=(8, 16, 72, 144))), 2),
    (lambda ax: ch02fig.plot_predicted_vs_measured(ax), 2),
])
def test_figures_draw_with_a_legend(draw, ncols):
    fig, axes = plotting.figure("t", "x (unit)", "y (unit)", source="test", ncols=ncols)
    draw(axes)
    assert any(ax.get_legend() is not None for ax in np.atleast_1d(axes))
    assert all(ax.lines or ax.collections for ax in np.atleast_1d(axes))
    assert "<svg" in plotting.to_svg(fig)
    plt.close(fig)


def test_views_use_the_topology_not_typed_numbers(monkeypatch):
    # a slower mesh link halves what the mesh rows say, and nothing else
    import dataclasses

    links = catalog.links()
    links["nvlink4-p2p-mesh"] = dataclasses.replace(links["nvlink4-p2p-mesh"], per_link_GBps_per_dir=32.0,
                                                    per_gpu_GBps_per_dir=224.0)
    monkeypatch.setattr(catalog, "_links", lambda: links)
    wiring.for_system.cache_clear()
    try:
        table = views.blog_table1()
        assert list(table["model_mesh_gpu_GBps_bidir"]) == [64, 192, 448]
        assert (table["model_switch_gpu_GBps_bidir"] == 900).all()
    finally:
        monkeypatch.undo()
        wiring.for_system.cache_clear()


# ------------------------------------------------------------------ calibration passed in, names as constants


def test_measurement_views_take_the_calibration():
    slow = calibration.default().scaled({"sm_efficiency": 0.5})
    shipped, other = views.model_vs_measurement(), views.model_vs_measurement(cal=slow)
    assert list(other["id"]) == list(shipped["id"])
    assert (other["predicted_GBps"] <= shipped["predicted_GBps"] + 0.05).all()
    assert (other["predicted_GBps"] < shipped["predicted_GBps"]).sum() > len(shipped) / 2
    assert views.error_summary(cal=slow).equals(views.error_summary(measurements.compare(cal=slow)))
    assert not views.error_summary(cal=slow).equals(views.error_summary())
    assert views.time_gap_us(10, cal=slow)["predicted_us"] > views.time_gap_us(10)["predicted_us"]
    oos_shipped, oos_slow = views.out_of_sample_table(), views.out_of_sample_table(cal=slow)
    assert list(oos_slow["check"]) == list(oos_shipped["check"])
    assert (oos_slow["predicted_GBps"] < oos_shipped["predicted_GBps"]).any()


def test_row_and_pattern_names_are_the_modules_constants():
    assert list(views.rack_patterns()["pattern"]) == [views.PAIR, views.PERMUTATION, views.FAN_OUT, views.INCAST,
                                                      views.ALL_TO_ALL]
    assert list(views.error_summary()["rows"]) == [views.ERRORS_LARGE, views.ERRORS_SMALL, views.ERRORS_FITTED,
                                                   views.ERRORS_UNFITTED, views.ERRORS_ALL]
