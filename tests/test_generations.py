"""Chapter 1's tables and series (multigpu.evidence.generations) and the catalogue columns they added."""

from __future__ import annotations

import csv
import math

import pytest
from csv_edit import rewrite_row

from multigpu.book import ch01_generations as ch01
from multigpu.book import plotting
from multigpu.common.errors import InputError
from multigpu.evidence import generations
from multigpu.hardware import catalog

# ------------------------------------------------------------ generation table


def test_nvlink_per_gpu_bandwidth_doubles_from_generation_4_on():
    # NVIDIA: H100 900 GB/s, Blackwell 1.8 TB/s, Rubin 3.6 TB/s per GPU (bidirectional);
    # A100 600 GB/s. https://www.nvidia.com/en-us/data-center/nvlink/ and the Rubin platform blog.
    table = generations.generation_table("nvlink").set_index("generation")
    per_gpu = table["per_gpu_GBps_bidir"]
    assert list(per_gpu) == sorted(per_gpu) and per_gpu.is_unique
    assert per_gpu["NVLink 4.0"] / per_gpu["NVLink 3.0"] == pytest.approx(1.5)
    assert per_gpu["NVLink 5.0"] / per_gpu["NVLink 4.0"] == pytest.approx(2)
    assert per_gpu["NVLink 6.0"] / per_gpu["NVLink 5.0"] == pytest.approx(2)
    assert per_gpu["NVLink 6.0"] == 3600


@pytest.mark.parametrize("family", generations.FAMILIES)
def test_generation_tables_keep_both_conventions_consistent(family):
    table = generations.generation_table(family)
    assert len(table) == len(generations.FAMILIES[family])
    assert (table["per_gpu_GBps_bidir"] == 2 * table["per_gpu_GBps_per_dir"]).all()
    assert (table["per_link_GBps_bidir"] == 2 * table["per_link_GBps_per_dir"]).all()
    assert list(table["year"]) == sorted(table["year"])
    assert all(name.endswith(("_per_dir", "_bidir")) for name in table if "GBps" in name)


def test_signalling_carries_the_per_link_rate():
    for family in generations.FAMILIES:
        table = generations.generation_table(family).dropna(subset=["lane_Gbps"])
        raw = table["lanes_per_link"].astype(float) * table["lane_Gbps"] / 8
        assert (table["per_link_GBps_per_dir"] <= raw * 1.01).all(), family
        assert (table["per_link_GBps_per_dir"] >= raw * catalog.LINE_CODE_FLOOR).all(), family
    # NVLink 3: 4 lanes x 50 Gb/s; NVLink 4: 2 x 100 (fewer, faster lanes, same 25 GB/s per link).
    nvlink = generations.generation_table("nvlink").set_index("generation")
    assert tuple(nvlink.loc["NVLink 3.0", ["lanes_per_link", "lane_Gbps"]]) == (4, 50)
    assert tuple(nvlink.loc["NVLink 4.0", ["lanes_per_link", "lane_Gbps"]]) == (2, 100)


def test_first_users_come_from_the_catalogue():
    assert generations.first_gpu("nvlink1").id == "p100-sxm2"
    assert generations.first_gpu("pcie6-x16").id == "b300"
    assert generations.first_system("nvswitch1").id == "dgx-2"
    assert generations.first_system("infinity-fabric-mi355x").id == "mi355x-8"
    switches = generations.generation_table("nvswitch").set_index("generation")
    assert switches.loc["NVSwitch gen1", "max_gpus_per_domain"] == 16
    assert not switches.loc["NVSwitch gen2", "in_network_reduction"]
    assert switches.loc["NVSwitch gen3", "in_network_reduction"]


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match="unknown family 'nvlinks'"):
        generations.generation_table("nvlinks")


def test_timeline_has_three_families_in_one_convention():
    data = generations.bandwidth_timeline()
    assert set(data["family"]) == {"NVLink", "PCIe x16", "InfiniBand 4x port"}
    assert (data["per_gpu_GBps_bidir"] == 2 * data["per_gpu_GBps_per_dir"]).all()
    h100 = data[data["generation"] == "NVLink 4.0"].iloc[0]
    assert h100["per_gpu_GBps_per_dir"] == catalog.link("nvlink4").per_gpu_GBps_per_dir == 450


# ------------------------------------------------------------------ ratios


def test_nvlink_pcie_ratio_compares_like_with_like():
    data = generations.nvlink_pcie_ratio().set_index("gpu")
    for gpu_id in generations.FLAGSHIPS:
        gpu = catalog.gpu(gpu_id)
        row = data.loc[gpu.name]
        pcie = catalog.link(gpu.pcie)
        same = row["ratio_same_convention"]
        assert same == pytest.approx(gpu.nvlink_GBps_per_dir / pcie.per_gpu_GBps_per_dir, abs=0.01)
        assert same == pytest.approx(gpu.nvlink_GBps_bidir / pcie.per_gpu_GBps_bidir, abs=0.01)
        assert row["ratio_mixed_convention"] == pytest.approx(2 * row["ratio_same_convention"], abs=0.02)
    # B300 kept NVLink 5 but moved to PCIe Gen6, so its ratio falls below B200's.
    ratio = data["ratio_same_convention"]
    assert ratio[catalog.gpu("b300").name] < ratio[catalog.gpu("b200").name]


def test_bytes_per_flop_follows_bandwidth_and_compute():
    data = generations.bytes_per_flop().set_index("gpu")
    h100 = data.loc[catalog.gpu("h100-sxm").name]
    assert h100["nvlink_bytes_per_kFLOP"] == pytest.approx(450 / 989.4, abs=1e-3)
    assert h100["precision"] == "BF16"
    assert data.loc[catalog.gpu("v100-sxm2").name, "precision"] == "FP16"  # V100 has no BF16
    assert catalog.gpu("rubin").name not in data.index  # no published 16-bit rate
    # the links did not keep up: NVLink bytes per FLOP never rise from one flagship to the next
    series = list(data["nvlink_bytes_per_kFLOP"])
    assert all(b <= a for a, b in zip(series, series[1:]))
    assert (data["pcie_bytes_per_kFLOP"] < data["nvlink_bytes_per_kFLOP"]).all()


def test_export_variants_sit_beside_their_parents():
    data = generations.export_variants().set_index("variant")
    assert set(data.index) == {g.name for g in catalog.gpus().values() if g.parent}
    h800, h20 = data.loc[catalog.gpu("h800-sxm").name], data.loc[catalog.gpu("h20").name]
    assert h800["gpu_to_gpu_pct_of_parent"] == pytest.approx(100 * 200 / 450, abs=0.1)
    assert h800["dense_TFLOPS_pct_of_parent"] == 100
    assert h20["gpu_to_gpu_pct_of_parent"] == 100 and h20["dense_TFLOPS_pct_of_parent"] < 20
    assert h20["bytes_per_kFLOP"] > 5 * h20["parent_bytes_per_kFLOP"]
    l20 = data.loc[catalog.gpu("l20").name]  # no NVLink on either: PCIe Gen4 on both
    assert l20["gpu_to_gpu_GBps_per_dir"] == catalog.link("pcie4-x16").per_gpu_GBps_per_dir


def test_rack_compute_multiplies_gpus_by_the_per_gpu_rate():
    data = generations.rack_compute().set_index("system")
    rubin = data.loc["Vera Rubin NVL72"]
    assert rubin["fp4_peak_EFLOPS"] == pytest.approx(72 * 50_000 / 1e6)
    assert math.isnan(rubin["bf16_dense_EFLOPS"])
    gb200 = data.loc["GB200 NVL72"]
    assert gb200["bf16_dense_EFLOPS"] == pytest.approx(72 * catalog.gpu("gb200").bf16_dense_TFLOPS / 1e6)
    assert (data["fp4_peak_EFLOPS"] >= data["fp4_dense_EFLOPS"]).all()


@pytest.mark.parametrize("draw", [ch01.plot_timeline, ch01.plot_nvlink_pcie_ratio,
                                  ch01.plot_bytes_per_flop, ch01.plot_export_variants])
def test_figures_draw_a_legend_and_data(draw):
    fig, ax = plotting.figure("t", "x (unit)", "y (unit)", source="test")
    draw(ax)
    assert ax.get_legend() is not None and (ax.lines or ax.patches)
    plotting.to_svg(fig)


def test_short_names():
    assert generations.short_name("Tesla V100 SXM2 32GB") == "V100"
    assert generations.short_name("H20 96GB (China market)") == "H20"
    assert generations.short_name("B300 (HGX/DGX B300; Blackwell Ultra)") == "B300"


# ------------------------------------------- catalogue columns added for chapter 1





@pytest.mark.parametrize(("changes", "message"), [
    ({"lane_Gbps": "50"}, "does not carry"),          # 2 x 50 / 8 = 12.5 < 25
    ({"lane_Gbps": "200"}, "does not carry"),         # 2 x 200 / 8 = 50: far above 25
    ({"lanes_per_link": ""}, "given together"),
])
def test_signalling_that_cannot_carry_the_link_rate_is_refused(tmp_path, changes, message):
    path = rewrite_row(catalog.LINKS_CSV, tmp_path / "links.csv", "nvlink4", **changes)
    with pytest.raises(InputError, match=message) as caught:
        catalog.load_links(path)
    assert caught.value.column == "lane_Gbps"


def test_fp4_peak_below_dense_is_refused(tmp_path):
    path = rewrite_row(catalog.GPUS_CSV, tmp_path / "gpus.csv", "b200", fp4_peak_TFLOPS="100")
    with pytest.raises(InputError, match="below fp4_dense") as caught:
        catalog.load_gpus(path)
    assert caught.value.column == "fp4_peak_TFLOPS"


def test_optional_columns_may_be_left_out(tmp_path):
    with open(catalog.GPUS_CSV, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    fields = [f for f in rows[0] if not f.startswith("fp4_")]
    path = tmp_path / "gpus.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    assert catalog.load_gpus(path)["b200"].fp4_dense_TFLOPS is None


def test_family_growth_reads_first_and_last_generation():
    data = generations.family_growth().set_index("family")
    nvlink = data.loc["NVLink"]
    assert nvlink["growth_x"] == pytest.approx(1800 / 80)
    assert nvlink["doubling_years"] == pytest.approx((2026 - 2016) / math.log2(1800 / 80), abs=0.01)
    assert data.loc["PCIe x16", "doubling_years"] > nvlink["doubling_years"]


def test_transfer_time_is_bytes_over_per_direction_bandwidth():
    assert generations.transfer_time_ms(20, 450) == pytest.approx(44.44, abs=0.01)
    assert generations.transfer_time_ms(20, 900) < generations.transfer_time_ms(20, 450)
    with pytest.raises(ValueError):
        generations.transfer_time_ms(1, 0)


def test_largest_domain_is_the_biggest_system_behind_the_switch():
    for link_id in generations.FAMILIES["nvswitch"]:
        sizes = [s.gpus_per_node for s in catalog.systems().values() if s.nvswitch == link_id]
        assert generations.largest_domain(link_id) == (max(sizes) if sizes else None)
    assert generations.largest_domain("nvswitch1") == 16  # the DGX-2
    assert generations.largest_domain("pcie5-x16") is None
