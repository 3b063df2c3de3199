"""Chapter 1's book module (multigpu.book.ch01_generations): the facts its prose cites, figures, claims table."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import editions
import matplotlib.pyplot as plt
import numpy as np
import pytest
from editions import CHINESE
from glue_citations import check_cited, roles

from multigpu.book import ch01_generations as ch01
from multigpu.book import lang, plotting, tables
from multigpu.evidence import claims, generations
from multigpu.hardware import catalog
from multigpu.market import prices

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "chapters" / "01-nvlink-generations.ipynb"
GOOD_PRICES = ROOT / "tests" / "data" / "prices" / "good.csv"


@pytest.fixture(scope="module")
def facts():
    return ch01.facts()


def _patch_link(monkeypatch, link_id, **changes):
    links = catalog.links()
    links[link_id] = dataclasses.replace(links[link_id], **changes)
    monkeypatch.setattr(catalog, "_links", lambda: links)


def _patch_gpu(monkeypatch, gpu_id, **changes):
    gpus = catalog.gpus()
    gpus[gpu_id] = dataclasses.replace(gpus[gpu_id], **changes)
    monkeypatch.setattr(catalog, "_gpus", lambda: gpus)


# ------------------------------------------------------------------ the facts as the notebook uses them


def test_facts_cover_every_glue_name_the_chapter_cites(facts):
    check_cited(facts, NOTEBOOK)
    assert {"text", "md"} <= set(roles(NOTEBOOK).values())


def test_facts_are_plain_python_values(facts):
    for name, value in facts.items():
        assert type(value) in (int, float, str), (name, type(value))  # numpy scalars print np.float64(...)
        assert not (isinstance(value, float) and math.isnan(value)), name


def test_facts_do_not_depend_on_the_price_file(facts):
    other = ch01.facts(claims.Inputs(prices=prices.load_table(GOOD_PRICES)))
    assert other == facts


# ------------------------------------------------------------------ each section, from the catalogue


def test_convention_facts_are_the_h100s_nvlink_in_both_conventions():
    f = ch01.convention_facts()
    h100 = catalog.gpu("h100-sxm")
    assert f == {"h100_bidir": h100.nvlink_GBps_bidir, "h100_per_dir": h100.nvlink_GBps_per_dir}
    assert f["h100_bidir"] == 2 * f["h100_per_dir"]


def test_generation_facts_follow_the_links_file(monkeypatch):
    f = ch01.generation_facts()
    for n, link_id in enumerate(generations.FAMILIES["nvlink"], start=1):
        link = catalog.link(link_id)
        assert f[f"nvl{n}_links"] == link.links_per_gpu and f[f"nvl{n}_dir"] == link.per_gpu_GBps_per_dir
        assert f[f"nvl{n}_link"] * f[f"nvl{n}_links"] == pytest.approx(f[f"nvl{n}_dir"])
    nvlink6 = catalog.link("nvlink6")
    assert f["nvl6_bidir_TBps"] == pytest.approx(2 * f["nvl6_dir_TBps"]) == nvlink6.per_gpu_GBps_bidir / 1e3
    assert f["nvl6_lanes"] is None  # NVIDIA publishes no NVLink 6 signalling: facts() leaves it out
    assert "nvl6_lanes" not in ch01.facts()
    _patch_link(monkeypatch, "nvlink4", lane_Gbps=106.25)
    assert ch01.generation_facts()["nvl4_lane"] == 106.25


def test_switch_facts_count_the_gpus_of_the_largest_domain():
    f = ch01.switch_facts()
    first = generations.FAMILIES["nvswitch"][0]
    sizes = [s.gpus_per_node for s in catalog.systems().values() if s.nvswitch == first]
    assert f["sw1_domain"] == max(sizes) == 16  # the DGX-2
    assert f["sw1_year"] == catalog.link(first).year
    assert f["sw4_domain"] == 72


def test_pcie_facts_separate_data_rate_and_signalling():
    f = ch01.pcie_facts()
    assert f["pcie5_dir"] < f["pcie5_raw"] == 64  # 16 lanes x 32 GT/s / 8, before the line code
    assert f["pcie6_dir"] < f["pcie6_raw"] == 2 * f["pcie5_raw"]
    assert f["pcie6_year"] < f["pcie6_first_year"] == generations.first_gpu("pcie6-x16").year


def test_growth_facts_are_the_family_growth_table():
    f = ch01.growth_facts()
    for key in ("nvlink", "pcie", "ib"):
        years = f[f"{key}_last_year"] - f[f"{key}_first_year"]
        assert f[f"{key}_doubling"] == pytest.approx(years / math.log2(f[f"{key}_growth"]), abs=0.01)
    assert f["nvlink_doubling"] < f["ib_doubling"] < f["pcie_doubling"]


def test_ratio_facts_bound_every_flagship():
    f = ch01.ratio_facts()
    b200 = catalog.gpu("b200")
    assert f["ratio_b200"] == pytest.approx(b200.nvlink_GBps_per_dir / catalog.link(b200.pcie).per_gpu_GBps_per_dir,
                                            abs=0.005)
    assert f["ratio_min"] <= f["ratio_b300"] < f["ratio_b200"] <= f["ratio_max"]


def test_bytes_per_flop_and_variant_facts_are_quotients_of_the_catalogue():
    f = ch01.bytes_per_flop_facts()
    h100 = catalog.gpu("h100-sxm")
    assert f["bpf_h100"] == pytest.approx(h100.nvlink_GBps_per_dir / h100.bf16_dense_TFLOPS, abs=5e-4)
    assert f["bpf_drop"] == pytest.approx(f["bpf_first"] / f["bpf_last"])
    v = ch01.variant_facts()
    h800 = catalog.gpu("h800-sxm")
    assert v["h800_link_pct"] == pytest.approx(100 * h800.nvlink_GBps_per_dir / h100.nvlink_GBps_per_dir, abs=0.05)
    assert v["h800_compute_pct"] == 100
    assert v["h20_bpf_x"] > 1 > v["h800_bpf_x"]  # the H20 cuts compute, the H800 the link


def test_claim_facts_quote_the_checks():
    f = ch01.claim_facts()
    for claim_id in ch01.CLAIMS:
        assert f[f"{claim_id.lower()}_verdict"] == f"**{lang.label(claims.check(claim_id).verdict, 'en')}**"
    assert f["c01_year"] == catalog.link("nvlink1").year
    for n in (4, 5, 6):
        assert f[f"c04_bw{n}"] == 2 * f[f"c04_dir{n}"] == catalog.link(f"nvlink{n}").per_gpu_GBps_bidir
    assert f["c04_gap"] == pytest.approx((f["c04_year6"] - f["c04_year4"]) / 2)
    assert f["c20_x"] == pytest.approx(f["c20_peak"] / f["c20_gb200_bf16"])
    assert f["c03_ratio_mixed"] == pytest.approx(2 * f["c03_ratio_bidir"])


def test_claim_facts_follow_the_catalogue(monkeypatch):
    _patch_link(monkeypatch, "nvlink6", year=2028)
    f = ch01.claim_facts()
    assert f["c04_year6"] == 2028 and f["c04_gap"] == pytest.approx(3.0)


def test_exercise_facts_divide_bytes_by_the_per_direction_rate(monkeypatch):
    f = ch01.exercise_facts()
    assert f["ex1_h800_ms"] == pytest.approx(1e3 * ch01.EX1_SHARD_GB / f["ex1_h800_dir"])
    assert f["ex1_h800_wrong_ms"] == pytest.approx(f["ex1_h800_ms"] / 2)
    assert f["ex1_h100_ms"] < f["ex1_h800_ms"]
    assert f["ex2_ratio_mixed"] == pytest.approx(2 * f["ex2_ratio"], abs=0.01)
    v = ch01.variant_facts()
    assert f["ex3_h20"] == pytest.approx(1 / v["h20_bpf_x"]) and f["ex3_h800"] == pytest.approx(1 / v["h800_bpf_x"])
    h800 = catalog.gpu("h800-sxm")
    _patch_gpu(monkeypatch, "h800-sxm", nvlink_GBps_per_dir=2 * h800.nvlink_GBps_per_dir)
    assert ch01.exercise_facts()["ex1_h800_ms"] == pytest.approx(f["ex1_h800_ms"] / 2)


# ------------------------------------------------------------------ figures and the claims table


@pytest.mark.parametrize(("make", "title", "series"), [
    (ch01.figure_timeline, "Per-GPU interconnect bandwidth by generation", 3),
    (ch01.figure_nvlink_pcie_ratio, "NVLink per GPU against the same GPU's PCIe x16 port", 2),
    (ch01.figure_bytes_per_flop, "Interconnect bytes per 1,000 FLOP of dense 16-bit compute", 2),
    (ch01.figure_export_variants, "China-market variants as a share of their parent GPU", 3),
])
def test_figures_have_the_house_style_and_their_series(make, title, series):
    fig = make()
    try:
        ax = fig.axes[0]
        assert fig._suptitle.get_text() == title
        assert any(t.get_text().startswith("Source: ") for t in fig.texts)
        assert ax.get_xlabel() and ax.get_ylabel()
        assert len(ax.get_legend().get_texts()) == series
        svg = plotting.to_svg(fig)
        assert "<svg" in svg and "Date" not in svg
    finally:
        plt.close(fig)


def test_timeline_plots_every_generation():
    fig = ch01.figure_timeline()
    ax = fig.axes[0]
    plt.close(fig)
    timeline = generations.bandwidth_timeline()
    assert sum(len(line.get_xdata()) for line in ax.lines) == len(timeline)
    assert np.allclose(sorted(np.concatenate([line.get_ydata() for line in ax.lines])),
                       sorted(timeline["per_gpu_GBps_per_dir"]))


def test_claims_table_lists_the_chapters_claims():
    table = ch01.claims_table()
    assert list(table.columns) == ["id", "verdict", "seed_value", "model_value", "unit"]
    assert tuple(table["id"]) == ch01.CLAIMS
    assert list(table["verdict"]) == [claims.check(i).verdict for i in ch01.CLAIMS]


# ------------------------------------------------------------------ both editions


PAGE = "chapters/01-nvlink-generations"


def test_every_text_fact_has_its_chinese_with_the_same_numbers(facts):
    editions.check_chinese_twins(facts, required={"in_short", "c01_verdict", "c04_tests"})
    assert facts["c04_verdict_zh"] == "**有误导性**" and "*不成立*：" in facts["c04_tests_zh"]


def test_the_english_tests_are_the_checks_own_words(facts):
    for claim_id in ch01.CLAIMS:
        assert facts[f"{claim_id.lower()}_tests"] == claims.tests_markdown(claims.check(claim_id))


def test_the_chinese_catalog_cites_the_chinese_facts(facts):
    """The page's Chinese cites ``name_zh`` for every Markdown fact (computed in Chinese), numbers by their own name."""
    editions.check_catalog_cites_twins(facts, PAGE)


#: The chapter's tables, as its notebook shows them (in order).
TABLES = [lambda: generations.generation_table("nvlink"), lambda: generations.generation_table("nvswitch"),
          lambda: generations.generation_table("pcie"), lambda: generations.generation_table("infiniband"),
          generations.family_growth, generations.nvlink_pcie_ratio, generations.bytes_per_flop,
          generations.export_variants, ch01.claims_table, generations.rack_compute]
#: Headers that are names, the same in both languages.
NAMES = {"GPU", "NVLink", "PCIe"}


@pytest.mark.parametrize("make", TABLES)
def test_every_table_has_chinese_headers_and_the_same_cells(make):
    frame = make()
    page = tables.editions_html(frame, csv_name="t", label_columns=ch01.LABEL_COLUMNS)
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert len(heads) == len(frame.columns) and all(CHINESE.search(h) or h in NAMES for h in heads), heads
    cells = [re.findall(r"<td(?: [^>]*)?>([^<]*)</td>", part) for part in (en, zh)]
    labels = {frame.columns.get_loc(c) for c in ch01.LABEL_COLUMNS if c in frame.columns}
    width = len(frame.columns)
    for i, (a, b) in enumerate(zip(*cells)):
        if i % width not in labels and a not in ("yes", "no"):
            assert a == b, (a, b)  # numbers and names alike


def test_the_notebook_stores_every_figure_and_table_in_both_editions():
    pages, figures = editions.stored_pages(NOTEBOOK)
    assert len(pages) == len(TABLES) + 4  # ten tables, four figures
    assert len(figures) == 4
