"""Chapter 2's book module (multigpu.book.ch02_topology): the facts its prose cites, figures, claims table."""

from __future__ import annotations

import html
import math
import re
from functools import partial
from pathlib import Path

import editions
import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pandas as pd
import pytest
from editions import CHINESE, NUMBER
from glue_citations import check_cited, roles

from multigpu.book import ch02_figures as ch02fig
from multigpu.book import ch02_topology as ch02
from multigpu.book import diagrams, lang, plotting, schematics, tables
from multigpu.comm import calibration
from multigpu.common.units import GiB
from multigpu.evidence import claims, measurements
from multigpu.evidence import topology as views
from multigpu.evidence.claims import topology as checks
from multigpu.hardware import catalog

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "chapters" / "02-nvswitch-topology.ipynb"


@pytest.fixture(scope="module")
def facts():
    return ch02.facts()


@pytest.fixture(scope="module")
def slow_cal():
    """A what-if calibration: NCCL's kernels reach half the NVLink rate they do in the shipped one."""
    return calibration.default().scaled({"sm_efficiency": 0.5})


@pytest.fixture(scope="module")
def slow_facts(slow_cal):
    return ch02.facts(slow_cal)


# ------------------------------------------------------------------ the facts as the notebook uses them


def test_facts_cover_every_glue_name_the_chapter_cites(facts):
    check_cited(facts, NOTEBOOK)
    assert {"text", "md"} <= set(roles(NOTEBOOK).values())


def test_facts_are_plain_python_values(facts):
    for name, value in facts.items():
        assert type(value) in (int, float, str), (name, type(value))
        assert not (isinstance(value, float) and math.isnan(value)), name


def test_facts_follow_the_calibration_and_line_rates_do_not(facts, slow_facts, slow_cal):
    # the collective model's numbers move with the calibration passed in...
    assert slow_facts["sm_eff_pct"] == pytest.approx(facts["sm_eff_pct"] / 2)
    assert slow_facts["sm_eff_pct"] == pytest.approx(100 * slow_cal.value("sm_efficiency", "nvlink.hopper"))
    for name in ("c06_ring_busbw_GBps", "ex3_ring_bw", "c25_ndr_allreduce_1"):
        assert slow_facts[name] < facts[name], name
    assert slow_facts["ex1_sw_large_ms"] > facts["ex1_sw_large_ms"]
    assert slow_facts["err_median"] > facts["err_median"]  # the shipped calibration fits the measurements better
    # ...and the wiring at line rate does not depend on it
    for name in ("sw_pair", "mesh_pair", "t1_sw_pair8", "fan_sw_peer7", "rack_fan", "ex1_sw_pair", "c10_switch"):
        assert slow_facts[name] == facts[name], name


def test_verdict_facts_are_the_checks_in_bold(slow_cal):
    f = ch02.verdict_facts(slow_cal)
    inputs = claims.Inputs(cal=slow_cal)
    assert set(f) == {f"{claim_id.lower()}_{part}{zh}" for claim_id in ch02.CLAIMS for part in ("verdict", "tests")
                      for zh in ("", "_zh")}
    for claim_id in ch02.CLAIMS:
        verdict = claims.check(claim_id, inputs)
        assert f[f"{claim_id.lower()}_verdict"] == f"**{lang.label(verdict.verdict, 'en')}**"
        assert f[f"{claim_id.lower()}_tests"] == claims.tests_markdown(verdict)  # what decided it, not typed prose
        assert any(t.text in f[f"{claim_id.lower()}_tests"] for t in verdict.rule.tests)


# ------------------------------------------------------------------ each section, from the model


def test_wiring_facts_are_the_port_the_link_and_the_split():
    f = ch02.wiring_facts()
    h200 = catalog.gpu("h200-sxm")
    assert f["sw_pair"] == h200.nvlink_GBps_per_dir and f["sw_gpu_bidir"] == h200.nvlink_GBps_bidir
    assert f["mesh_share"] == pytest.approx(100 * f["mesh_pair"] / (f["mesh_gpu_bidir"] / 2), abs=0.05)
    assert f["c09_split_GBps_bidir"] == pytest.approx(f["c09_gpu_GBps_bidir"] / f["c09_peers"])
    assert f["c05_pair_GBps_bidir"] == 2 * f["c05_pair_GBps_per_dir"]
    assert f["c05_alltoall_pair_GBps_per_dir"] < f["c05_pair_GBps_per_dir"]


def test_pair_facts_share_one_port_among_the_peers(facts):
    f = ch02.pair_facts()
    assert f["fan_sw_peer7"] == pytest.approx(f["fan_sw_total"] / 7, abs=0.05)
    assert f["fan_mesh_total7"] == pytest.approx(7 * ch02.wiring_facts()["mesh_pair"])
    assert f["c10_switch"] == pytest.approx(f["t1_sw_pair8"], abs=0.05)
    assert f["c10_mesh"] == f["t1_mesh_pair8"]
    assert f["pcie_a2a5"] < f["fan_pcie_total"]


def test_collective_facts_read_the_collective_model():
    f = ch02.collective_facts()
    table = views.collective_table(nbytes=2**30)
    switch = table[table["system"] == views.label(views.SWITCH)]
    assert f["nvls_from"] == int(switch[switch["allreduce_algorithm"] == "nvls"]["gpus"].min())
    c11 = checks.switch_vs_mesh()
    assert f["c11_pair2"] == c11["pair_ratio_x"][0] and f["c11_ar8"] == c11["allreduce_busbw_ratio_x"][-1]
    assert f["c11_a2a_busbw8"] < f["c11_a2a_busbw2"]  # the gap closes as the group grows
    assert f["sw_over_pcie8"] > 10
    assert 0 < f["mesh6_ring_pct"] < 100


def test_size_facts_order_the_regimes_and_count_ring_steps():
    f = ch02.size_facts()
    assert f["lat_bound_MiB"] < f["bw_bound_MiB"]
    assert f["oneshot_to_KiB"] < 1024 * f["twoshot_to_MiB"]
    assert f["c14_steps8"] == 2 * (8 - 1) and f["c14_steps72"] == 2 * (72 - 1)
    assert f["ring_bytes8"] == pytest.approx(2 * 7 / 8, abs=1e-3) and f["ring_bytes2"] == pytest.approx(1, abs=1e-3)
    assert f["ring_lat2"] < f["ring_lat8"] < f["ring_lat72"]
    assert f["c19_steps_ring"] == f["c14_steps8"]
    assert f["c19_max_vs_ring_x"] >= f["c19_small_vs_ring_x"]


def test_nvls_and_takeaway_facts_agree_with_the_checks():
    f = ch02.nvls_facts()
    assert f["c06_model_gain_x"] == pytest.approx(f["c06_nvls_busbw_GBps"] / f["c06_ring_busbw_GBps"])
    assert f["nvls_gain2"] < 1  # NVLS would be slower on 2 GPUs
    tk = ch02.takeaway_facts()
    assert tk["tk_nvls8"] == f["c06_model_gain_x"]
    assert tk["tk_ndr"] == checks.scale_out()["h100_ndr_x"] < tk["tk_hdr"]


def test_rack_facts_count_each_byte_once():
    f = ch02.rack_facts()
    assert f["rack_sum_bidir_TBps"] == pytest.approx(f["rack_gpus"] * f["rack_gpu_TBps_bidir"])
    assert f["rack_delivered_TBps"] == pytest.approx(f["rack_sum_bidir_TBps"] / 2)
    assert f["rack_incast"] == pytest.approx(f["rack_gpu_TBps_per_dir"])
    assert f["rack_perm"] == pytest.approx(1000 * f["rack_gpu_TBps_per_dir"])
    assert f["rack_fan"] == pytest.approx(f["rack_perm"] / (f["rack_gpus"] - 1), abs=0.01)


def test_scale_out_facts_leave_the_domain():
    f = ch02.scale_out_facts()
    assert f["nvl72_a2a72"] > f["h200_a2a72"] and f["nvl72_a2a144"] < f["nvl72_a2a72"]
    assert f["mn_hier2"] < f["mn_ring2"] < f["mn_nvls2"]
    assert f["c25_hdr_alltoall_2"] < f["c25_ndr_alltoall_2"] < f["c25_ndr_alltoall_1"]


def test_measurement_facts_are_the_comparison(slow_cal):
    comparison = measurements.compare(cal=slow_cal)
    f = ch02.measurement_facts(cal=slow_cal)
    assert f == ch02.measurement_facts(comparison, slow_cal)
    assert f["err_rows"] == len(comparison)
    errors = 100 * comparison.set_index("id")["rel_error"]
    for row_id in ch02.NAMED_ERRORS:
        assert f[f"err_{row_id}"] == pytest.approx(errors[row_id], abs=0.051)
    gap = views.time_gap_us(10, cal=slow_cal)
    assert f["gap10"] == gap["gap_us"] == pytest.approx(gap["measured_us"] - f["pred10"])
    assert f["nvls_latency"] == slow_cal.value("hop_latency_us", "nvlink.nvls.simple")
    assert 0 < f["oos_within"] <= f["oos_rows"] == len(measurements.OUT_OF_SAMPLE)


def test_exercise_facts_share_the_senders_port():
    f = ch02.exercise_facts()
    assert f["ex2_fan_peer"] == pytest.approx(f["ex2_pair"] / ch02.EX2_PEERS, abs=0.05)
    assert f["ex2_fan_ms"] == pytest.approx(1e3 * ch02.EX2_SLICE_GB / f["ex2_fan_peer"])
    assert f["ex1_large_x"] == pytest.approx(f["ex1_mesh_large_ms"] / f["ex1_sw_large_ms"])
    assert f["ex1_sw_gpu"] == pytest.approx((ch02.EX1_GPUS - 1) * f["ex1_sw_pair"])
    assert f["ex3_ring_lat"] < f["ex3_nvls_lat"] and f["ex3_ring_bw"] < f["ex3_nvls_bw"]


# ------------------------------------------------------------------ figures and the claims table


FIGURES = [
    (lambda cal: ch02fig.figure_group_bandwidth(),
     "What one GPU sends: to several peers at once, and in an all-to-all", 2),
    (ch02fig.figure_allreduce_vs_size, "All-reduce on 8x H200 (NVSwitch): time by algorithm", 1),
    (ch02fig.figure_ring_terms, "Ring all-reduce as the group grows (one NVLink switch)", 1),
    (ch02fig.figure_nvls_gain, "In-switch reduction (NVLS) against ring all-reduce, 8x H200", 1),
    (ch02fig.figure_scaling, "Leaving the NVLink domain: busbw as the job grows", 2),
    (lambda cal: ch02fig.figure_predicted_vs_measured(cal=cal), "The model against published measurements", 2),
]


@pytest.mark.parametrize(("make", "title", "panels"), FIGURES)
def test_figures_have_the_house_style(make, title, panels):
    fig = make(None)
    try:
        assert fig._suptitle.get_text() == title
        assert len(fig.axes) == panels
        assert any(t.get_text().startswith("Source: ") and "multigpu." in t.get_text() for t in fig.texts)
        assert any(ax.get_legend() is not None for ax in fig.axes)
        assert all(ax.lines or ax.collections for ax in fig.axes)
        assert "<svg" in plotting.to_svg(fig)
    finally:
        plt.close(fig)


def test_figures_draw_what_the_calibration_gives(slow_cal):
    figures = {}
    for name, cal in (("shipped", None), ("slow", slow_cal)):
        fig = ch02fig.figure_nvls_gain(cal)
        ring = fig.axes[0].lines[0]
        figures[name] = np.asarray(ring.get_ydata(), dtype=float)
        plt.close(fig)
    assert list(figures["shipped"]) == list(views.nvls_gain()["ring_busbw_GBps"])
    assert (figures["slow"] < figures["shipped"]).all()
    fig = ch02fig.figure_allreduce_vs_size()
    labels = [line.get_label() for line in fig.axes[0].lines]
    plt.close(fig)
    assert f"{views.label(views.MESH)}: NCCL's choice" in labels
    assert set(views.ALLREDUCE_ALGORITHMS.values()) <= set(labels)
    fig = ch02fig.figure_allreduce_vs_size()
    bands = fig.axes[0].collections  # the model line's band: one wash, behind the lines
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    alt = plotting.get_alt(fig)
    plt.close(fig)
    assert len(bands) == 1 and "90 % prediction interval of NCCL's choice" in texts
    assert "90 % prediction interval" in alt


def test_claims_table_lists_the_chapters_claims(slow_cal):
    table = ch02.claims_table(slow_cal)
    assert tuple(table.index) == ch02.CLAIMS
    assert list(table.columns) == ["verdict", "seed_value", "model_value", "unit"]
    assert table.loc["C06", "model_value"] == claims.check("C06", claims.Inputs(cal=slow_cal)).model_value


# ------------------------------------------------------------------ both editions


PAGE = "chapters/02-nvswitch-topology"


def test_every_text_fact_has_its_chinese_with_the_same_numbers(facts):
    editions.check_chinese_twins(facts, required={"in_short", "c05_verdict", "c25_tests"})
    assert facts["c05_verdict_zh"] == "**错误**" and "*不成立*：" in facts["c05_tests_zh"]


def test_the_chinese_tests_follow_the_calibration(slow_facts, facts):
    """The tests are translated from the checks' own English, so a changed number shows in both editions."""
    for name in ("c06_tests", "c19_tests"):
        assert (slow_facts[name] != facts[name]) == (slow_facts[f"{name}_zh"] != facts[f"{name}_zh"]), name


def test_the_chinese_catalog_cites_the_chinese_facts(facts):
    """The page's Chinese cites ``name_zh`` for every Markdown fact (computed in Chinese), numbers by their own name."""
    editions.check_catalog_cites_twins(facts, PAGE)


def _tables():
    """The chapter's tables as its notebook shows them, in order: (frame, label columns)."""
    cal = calibration.default()
    groups = views.collective_table(nbytes=1 * GiB, cal=cal)
    comparison = measurements.compare(cal=cal)
    scale_out = views.scale_out_table(variants=checks.HDR_VARIANT, cal=cal).set_index("system")
    frames = [
        views.blog_table1().set_index("gpus"),
        pd.concat({"allreduce_time_us": views.wide(groups, "allreduce_time_us"),
                   "alltoall_time_us": views.wide(groups, "alltoall_time_us")}, axis=1),
        pd.concat({"allreduce_busbw_GBps": views.wide(groups, "allreduce_busbw_GBps"),
                   "alltoall_busbw_GBps": views.wide(groups, "alltoall_busbw_GBps")}, axis=1),
        views.fastest_ranges(algorithms=tuple(views.ALLREDUCE_ALGORITHMS), cal=cal).set_index("algorithm"),
        views.ring_terms(cal=cal).set_index("gpus"), views.nvls_gain(cal=cal).set_index("gpus"),
        views.rack_patterns("vr-nvl72").set_index("pattern"),
        scale_out[["gpus_per_domain", "nvlink_GBps_per_dir", "nic_GBps_per_dir", "ratio_x", "node_nic_GBps_per_dir"]],
        scale_out[["allreduce_busbw_1_GBps", "allreduce_busbw_2_GBps", "alltoall_busbw_1_GBps",
                   "alltoall_busbw_2_GBps"]],
        views.multinode_allreduce(views.SWITCH, nodes=(2, 8), cal=cal).set_index("nodes"),
        views.error_summary(comparison).set_index("rows"), views.model_vs_measurement(comparison).set_index("id"),
        views.out_of_sample_table(cal=cal).set_index("check"), ch02.claims_table(cal)]
    return ([(views.wiring_table().set_index("system"), ch02.WIRING_LABEL_COLUMNS)]
            + [(tables.flat_columns(f), ch02.LABEL_COLUMNS) for f in frames])


#: Headers that are names, the same in both languages.
NAMES = {"GPU", "NVLink", "PCIe"}


@pytest.mark.parametrize("index", range(15))
def test_every_table_has_chinese_headers_and_the_same_numbers(index):
    frame, label_columns = _tables()[index]
    page = tables.dataframe_html(frame, csv_name="t", editions=True, label_columns=label_columns)
    frame = tables.fold_ranges(frame)  # as shown: a value and its interval in one cell
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    width = len(frame.columns) + frame.index.nlevels
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert len(heads) == width and all(CHINESE.search(h) or h in NAMES for h in heads), heads
    cells = [[html.unescape(c) for c in re.findall(r"<td(?: [^>]*)?>(?:<a [^>]*>)?([^<]*)", part)] for part in (en, zh)]
    names = [*frame.index.names, *frame.columns]
    labels = {i for i, c in enumerate(names) if c in label_columns}
    assert len(cells[0]) == len(cells[1]) == width * len(frame)
    values = [v for row in frame.reset_index().itertuples(index=False) for v in row]  # as the evidence gave them
    for i, (a, b) in enumerate(zip(*cells)):
        if i % width in labels and a != "—":  # a word of a fixed vocabulary or a claim's value, translated
            assert b == editions.in_chinese(label_columns, names[i % width], values[i] if isinstance(values[i], str) else a), (a, b)
        elif a not in ("yes", "no"):
            assert a == b, (a, b)  # numbers and names alike
    assert re.findall(r'href="(data:[^"]*)"', en) == re.findall(r'href="(data:[^"]*)"', zh)  # one CSV


def test_the_notebook_shows_these_tables():
    assert len(_tables()) == 15


#: Every figure of the chapter, as its notebook draws it.
ALL_FIGURES = ([partial(ch02fig.diagram_wiring, s) for s in diagrams.CLASS_EXAMPLES.values()]
               + [ch02fig.diagram_multinode] + [partial(ch02fig.diagram_schematic, a) for a in schematics.SCHEMATICS]
               + [ch02fig.figure_group_bandwidth, ch02fig.figure_allreduce_vs_size, ch02fig.figure_ring_terms,
                  ch02fig.figure_nvls_gain, ch02fig.figure_scaling, ch02fig.figure_predicted_vs_measured])


def _words(fig) -> list[str]:
    return [t.get_text() for t in plotting.drawn_texts(fig)]


@pytest.mark.parametrize("make", ALL_FIGURES)
def test_every_figure_is_chinese_in_the_chinese_edition(make):
    figs = plotting.draw_editions(make)
    try:
        zh = figs["zh"]
        assert CHINESE.search(plotting.title_of(zh)) and CHINESE.search(plotting.get_alt(zh))
        assert any(t.startswith("来源：") for t in _words(zh))
        # English words left in the Chinese figure are ids, names, units and formulas, never prose
        prose = [t for t in _words(zh) if re.search(r"\b(?:the|of|and|per|to|with|from|on|at)\b", t)]
        assert not prose, prose
        assert sorted(NUMBER.findall(plotting.get_alt(zh))) == sorted(NUMBER.findall(plotting.get_alt(figs["en"])))
        checked = plotting.readability(zh)
        assert not checked["contrast_problems"] and not checked["overlaps"], checked
        plotting.editions_html(figs)  # both pass the text floor and alt text checks
    finally:
        for fig in figs.values():
            plt.close(fig)


@pytest.mark.parametrize("make", FIGURES)
def test_the_chinese_charts_keep_axes_legends_and_numbers_in_order(make):
    """As tests/test_plotting.py checks the figures made for both editions: Chinese title, axis labels, source
    line and alt text; as many legend entries as in English; the alt text's numbers in the same order."""
    figs = plotting.draw_editions(partial(make[0], None))
    try:
        zh, en = figs["zh"], figs["en"]
        ax = zh.axes[0]
        for text in (zh._suptitle.get_text(), ax.get_xlabel(), ax.get_ylabel(), plotting.get_alt(zh)):
            assert CHINESE.search(text), text
        assert zh.texts[-1].get_text().startswith("来源：")
        for a, b in zip(zh.axes, en.axes):
            assert (a.get_legend() is None) == (b.get_legend() is None)
            if a.get_legend() is not None:
                assert len(a.get_legend().get_texts()) == len(b.get_legend().get_texts())
        assert NUMBER.findall(plotting.get_alt(zh)) == NUMBER.findall(plotting.get_alt(en))
    finally:
        plt.close(figs["zh"])
        plt.close(figs["en"])


def test_the_notebook_stores_every_figure_and_table_in_both_editions():
    pages, figures = editions.stored_pages(NOTEBOOK)
    assert len(figures) == len(ALL_FIGURES) and len(pages) == len(ALL_FIGURES) + len(_tables())
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # no error, and no printed output but the worked example's (a call of the model a reader can copy and run)
    assert not [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
                if o.get("output_type") == "error" or (o.get("output_type") == "stream" and c.get("id") != "worked-example")]
    assert [c for c in notebook.cells if c.get("id") == "worked-example" and c.get("outputs")]


def test_label_vocabularies_cover_what_the_evidence_layer_prints():
    cal = calibration.default()
    words = {
        "algorithm": set(views.ALLREDUCE_ALGORITHMS.values()),
        "pattern": set(views.rack_patterns("vr-nvl72")["pattern"]),
        "rows": set(views.error_summary()["rows"]), "what": set(views.model_vs_measurement()["what"]),
        "check": set(views.out_of_sample_table(cal=cal)["check"]), "unit": set(ch02.claims_table()["unit"]),
        "system": {views.label(s) for s in views.COMPARED} | set(views.SCALING_LABELS.values())}
    vocabularies = {"algorithm": ch02.ALGORITHM_LABELS, "pattern": ch02.PATTERN_LABELS, "rows": ch02.ROWS_LABELS,
                    "what": ch02.WHAT_LABELS, "check": ch02.CHECK_LABELS, "unit": ch02.UNIT_LABELS,
                    "system": ch02.SYSTEM_LABELS}
    for column, seen in words.items():
        assert seen <= set(vocabularies[column]), (column, seen - set(vocabularies[column]))
        assert all(lang.label(w, "zh") for w in seen), column  # LookupError where a translation is missing
