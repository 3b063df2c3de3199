"""Chapter 3's page module (multigpu.book.ch03_bottlenecks): the values its prose cites, its figures, its verdicts.

The prose of book/chapters/03-communication-bottlenecks.ipynb cites values by glue name; they all come from
``ch03.facts`` (one ``glue_all`` call in the notebook). These tests tie the notebook's citations to the
module, check that each value is the model's (consistent with the tables it is read from, and moved by a
what-if calibration), and that every format the prose applies works on it. Chapter 3 cites no prices.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import editions
import matplotlib.pyplot as plt
import pytest
from editions import CHINESE, NUMBER
from glue_citations import check_cited
from matplotlib.figure import Figure

from multigpu.book import ch03_bottlenecks as ch03
from multigpu.book import ch03_figures as ch03fig
from multigpu.book import lang, plotting, tables
from multigpu.evidence import bottlenecks, claims, moe, trainingruns, underload
from multigpu.evidence.claims import bottlenecks as claim_checks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "book" / "chapters" / "03-communication-bottlenecks.ipynb"
PAGE = "chapters/03-communication-bottlenecks"
#: A what-if calibration under which every communication time of the chapter changes.
SLOW = bottlenecks.scaled_network(bandwidth=0.5, latency=2.0)


@pytest.fixture(scope="module")
def facts() -> dict:
    return ch03.facts()


@pytest.fixture(scope="module")
def slow() -> dict:
    return ch03.facts(SLOW)


def test_every_citation_of_the_prose_is_a_fact_in_the_form_its_role_needs(facts):
    check_cited(facts, NOTEBOOK, at_least=151, nonempty_md=True)


def test_facts_are_plain_python_values(facts):
    assert all(type(v) in (int, float, str) for v in facts.values())
    english = {f"{c.lower()}_{part}" for c in claim_checks.CLAIM_IDS for part in ("verdict", "tests")} | \
        {"v_out_worst", "in_short", "se_pcie_dp_lat"} | DECODE_SENTENCES | MOE_SENTENCES | LOAD_SENTENCES | \
        HYBRID_NAMES
    assert {k for k, v in facts.items() if isinstance(v, str)} == english | {f"{k}_zh" for k in english}


#: sentences about decode communication that follow the model's ratios
DECODE_SENTENCES = {"dr_above_text", "dr_trend_text", "dr_takeaway", "c16_where", "ar_fp8_vs_nv"}
#: the MoE section's sentence, which follows the break-even premiums
MOE_SENTENCES = {"moe_software_text", "moe_srv_checked_text"}
#: the sentence of serving under load, which follows the two ratios of the A100 servers
LOAD_SENTENCES = {"ul_gap_text", "ul_split_text"}
#: the names hybrid sharding's paragraph cites: the model and the two systems
HYBRID_NAMES = {"hs_model", "hs_slow_name", "hs_fast_name"}


def test_decode_sentences_follow_the_ratios(facts):
    found = claim_checks.decode_outlasts()
    rises = found["pcie8"]["rises"]
    assert facts["dr_trend_text"].startswith("rises" if rises else "falls")
    where = claim_checks.pcie8_phrase(found)
    if found["pcie8"]["first_batch"] is None:
        assert "stay shorter" in facts["dr_takeaway"] and facts["c16_where"].startswith("nowhere")
    else:
        assert facts["dr_takeaway"].endswith(where) and where in facts["c16_where"]


def test_training_step_values_are_the_breakdowns(facts):
    b = bottlenecks.training_breakdown().set_index(["setup", "layout"])
    assert facts["tb_pcie_tp8_comm"] == b.loc[("8x A100, PCIe", "TP 8"), "comm_pct"]
    assert facts["tb_mesh_tp2pp2_comm"] == b.loc[("8x H200, NVLink mesh", "TP 2 x PP 2"), "comm_pct"]
    assert facts["tb_multi_dp_step"] == b.loc[("4 x 8 H200, NVSwitch + IB", "DP only"), "step_s"]
    assert facts["tb_pcie_tp8_slow"] == pytest.approx(facts["tb_pcie_tp8_step"] / facts["tb_a100sw_tp8_step"])
    assert facts["tb_bubble_max"] == b["bubble_pct"].max()
    assert facts["mesh_link"] == 64.0  # one of the seven 128 GB/s-bidirectional links of NVIDIA's mesh


def test_section_values_agree_with_each_other(facts):
    # Amdahl: the bound is one GPU's step over the exposed communication; the exercise halves it
    assert facts["am_pcie_limit"] == pytest.approx(facts["ex2_t1"] / facts["ex2_c"])
    assert facts["ex2_limit_half"] == pytest.approx(2 * facts["am_pcie_limit"])
    assert facts["am_pcie_c_pct"] == pytest.approx(100 * facts["ex2_c"] / facts["ex2_t1"])
    # decode: two all-reduces per layer, one step per output token
    assert facts["ex1_dec_n"] == facts["dec_allreduces"] * facts["osl"]
    assert facts["ex1_ms"] == pytest.approx(1e3 * facts["ex1_fp8_tp4"] / facts["ex1_per_dir"])
    # the strong-scaling batch is one node's worth of the per-GPU batch
    assert facts["strong_batch"] == 8 * facts["seqs_per_gpu"]
    assert facts["cx_pcie_tokens"] == facts["cx_pcie"] * facts["seq"]
    # C12's value is the BF16, TP=2 volume per query of the table
    assert facts["c12_bf16"] == pytest.approx(facts["c12_gib"] * 2**30 / 1e9, abs=0.005)


def test_crossover_and_exercise_batches_are_the_first_under_their_threshold(facts):
    sweep = bottlenecks.dp_batch_sweep().set_index(["setup", "seqs_per_gpu"])["dp_comm_pct"]
    pcie, eth = ch03.SETUPS["pcie"].label, ch03.ETHERNET.label
    first = int(facts["cx_pcie"])
    assert sweep[(pcie, first)] < 50 <= sweep[(pcie, first // 2)]
    under = facts["ex3_under10"]
    assert sweep[(eth, under)] < ch03.EXERCISE_SHARE_PCT <= sweep[(eth, under // 2)]
    assert facts["ex3_global"] == under * ch03.ETHERNET.gpus == under * 32
    assert facts["ex3_share4"] == sweep[(eth, ch03.EXERCISE_SEQS)]


def test_measured_run_values_name_the_worst_run(facts):
    runs = trainingruns.training_validation()
    unfitted = runs[~runs["fitted"]].set_index("run")["error_pct"].abs()
    assert facts["v_out_n"] == len(unfitted)
    assert unfitted[facts["v_out_worst"]] == facts["v_out_max"] == unfitted.max()
    # the TFLOP/s the model's time implies: 138 reported x measured / model time
    assert facts["v75_tflops"] == pytest.approx(138 * facts["v75_measured"] / facts["v75_model"])


def test_verdicts_are_the_claim_checks(facts):
    table = ch03.verdict_table()
    assert tuple(table.index) == claim_checks.CLAIM_IDS
    for cid in claim_checks.CLAIM_IDS:
        verdict = claims.check(cid)
        assert table.loc[cid, "verdict"] == verdict.verdict
        assert facts[f"{cid.lower()}_verdict"] == f"**{lang.label(verdict.verdict, 'en')}**"


@pytest.mark.parametrize("section", [
    ch03.training_step_facts, ch03.decode_step_facts, ch03.scaling_facts, ch03.amdahl_facts, ch03.dp_batch_facts,
    ch03.decode_ratio_facts, ch03.sensitivity_facts, ch03.batching_facts, ch03.transfer_facts,
    ch03.fixed_batch_facts, ch03.at_rate_facts, ch03.exercise_facts])
def test_each_section_uses_the_calibration_it_is_given(section, facts, slow):
    changed = {k for k, v in section(SLOW).items() if v != facts[k]}
    assert changed, section.__name__


def test_slower_links_lengthen_the_communication_the_prose_cites(facts, slow):
    for name in ("tb_pcie_tp8_comm", "dec_pcie8_ar", "c13_sw_1", "c18_tot_sw", "ex1_dec_ms"):
        assert slow[name] > facts[name], name
    assert slow["am_pcie_limit"] < facts["am_pcie_limit"]
    # what the calibration does not touch stays: bytes, token counts, NVIDIA's printed tables
    for name in ("seq", "c12_bf16", "se_tp_GB", "dec_allreduces", "ar_nv_lo", "id30_mesh", "fx_nv_32"):
        assert slow[name] == facts[name], name


@pytest.mark.parametrize("make, axes", [
    (lambda: ch03fig.figure_training_breakdown(bottlenecks.training_breakdown()), 1),
    (lambda: ch03fig.figure_decode_breakdown(bottlenecks.decode_breakdown()), 1),
    (lambda: ch03fig.figure_scaling(bottlenecks.scaling()), 3),
    (lambda: ch03fig.figure_dp_share(bottlenecks.dp_batch_sweep()), 1),
    (lambda: ch03fig.figure_decode_ratio(bottlenecks.decode_ratio()), 1),
    (lambda: ch03fig.figure_switch_benefit(bottlenecks.compare_fixed_batch()), 1),
    (lambda: ch03fig.figure_throughput_vs_rate(), 1),
])
def test_figures_have_a_title_a_source_and_their_panels(make, axes):
    fig = make()
    assert isinstance(fig, Figure) and len(fig.axes) == axes
    assert fig._suptitle is not None and fig._suptitle.get_text()
    sources = [t.get_text() for t in fig.texts if t.get_text().startswith("Source: ")]
    assert len(sources) == 1
    assert all(ax.lines or ax.containers for ax in fig.axes)
    plt.close(fig)


def test_figure_sources_state_the_modelled_case(monkeypatch):
    fig = ch03fig.figure_training_breakdown(bottlenecks.training_breakdown())
    source = next(t.get_text() for t in fig.texts if t.get_text().startswith("Source: "))
    plt.close(fig)
    assert f"seq {bottlenecks.SEQ}, {bottlenecks.SEQS_PER_GPU} sequences per GPU per step" in source
    assert "Llama 3.1 8B" in source
    monkeypatch.setattr(bottlenecks, "INPUT_TOKENS", 4096)
    fig = ch03fig.figure_switch_benefit(bottlenecks.compare_fixed_batch())
    source = next(t.get_text() for t in fig.texts if t.get_text().startswith("Source: "))
    plt.close(fig)
    assert source.endswith("4K/256")


# ------------------------------------------------------------------ both editions


#: Chinese text, its full-width punctuation included ("TP（%）").
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_every_text_fact_has_its_chinese_with_the_same_numbers(facts):
    # a number, and names the same in both (a model's, a system's without a Chinese name)
    editions.check_chinese_twins(facts, data=("se_pcie_dp_lat", *HYBRID_NAMES))
    assert facts["c13_verdict_zh"] == "**有误导性**" and "*不成立*：" in facts["c13_tests_zh"]
    assert facts["ar_fp8_vs_nv_zh"] == {"higher": "更高", "lower": "更低"}[facts["ar_fp8_vs_nv"]]


def test_the_english_tests_are_the_checks_own_words(facts):
    for claim_id in claim_checks.CLAIM_IDS:
        assert facts[f"{claim_id.lower()}_tests"] == claims.tests_markdown(claims.check(claim_id))


def test_the_chinese_decode_sentences_follow_the_ratios(facts, slow):
    found = claim_checks.decode_outlasts()
    first = found["pcie8"]["first_batch"]
    if first not in (None, 1):
        assert f"从批大小 {first} 起" in facts["dr_takeaway_zh"] and f"{first}" in facts["c16_where_zh"]
    assert facts["dr_trend_text_zh"].startswith("随批大小上升" if found["pcie8"]["rises"] else "随批大小下降")
    for name in DECODE_SENTENCES:  # a what-if calibration moves them in both languages alike
        assert (slow[name] == facts[name]) == (slow[f"{name}_zh"] == facts[f"{name}_zh"]), name


def test_the_chinese_catalog_cites_the_chinese_facts(facts):
    """The page's Chinese cites ``name_zh`` for every Markdown fact (computed in Chinese), numbers by their own name."""
    editions.check_catalog_cites_twins(facts, PAGE)


#: The chapter's tables as its notebook shows them (in order), with the columns whose cells are words.
TABLES = [
    (lambda: bottlenecks.training_breakdown()[["setup", "layout", "tp", "pp", "dp", "step_s", "step_s_lo",
                                               "step_s_hi", "compute_pct", "bubble_pct", "tp_pct", "pp_pct",
                                               "dp_pct", "mfu_pct"]],
     ch03.LABEL_COLUMNS),
    (bottlenecks.decode_breakdown, ch03.LABEL_COLUMNS), (bottlenecks.amdahl, ch03.LABEL_COLUMNS),
    (lambda: bottlenecks.dp_crossover(bottlenecks.dp_batch_sweep()), ch03.LABEL_COLUMNS),
    (lambda: underload.best(underload.layouts()), ch03.LABEL_COLUMNS),
    (underload.split_layouts, ch03.LABEL_COLUMNS),
    (bottlenecks.sensitivity, ch03.LABEL_COLUMNS),
    (lambda: moe.dispatch_table().drop(columns="kernel"), ch03.LABEL_COLUMNS),
    (moe.training_table, ch03.LABEL_COLUMNS), (lambda: moe.rack_premium(moe.training_table()), ch03.LABEL_COLUMNS),
    (moe.serving_table, ch03.LABEL_COLUMNS),
    (bottlenecks.tp_bytes_per_query, ch03.LABEL_COLUMNS),
    (bottlenecks.volume_vs_batch, ch03.LABEL_COLUMNS), (bottlenecks.transfer_times, ch03.LABEL_COLUMNS),
    (bottlenecks.compare_fixed_batch, ch03.LABEL_COLUMNS), (bottlenecks.compare_at_rate, ch03.LABEL_COLUMNS),
    (bottlenecks.nvidia_identity, ch03.LABEL_COLUMNS), (trainingruns.training_measurements, ch03.LABEL_COLUMNS),
    (trainingruns.training_validation, ch03.VALIDATION_LABEL_COLUMNS), (ch03.verdict_table, ch03.LABEL_COLUMNS),
]
#: Headers that are names or abbreviations, the same in both languages.
NAMES = {"TP", "PP", "DP", "EP"}


@pytest.mark.parametrize("make, label_columns", TABLES)
def test_every_table_has_chinese_headers_and_the_same_data(make, label_columns):
    frame = tables._full_frame(make())
    page = tables.dataframe_html(frame, csv_name="t", editions=True, label_columns=label_columns)
    frame = tables.fold_ranges(frame)  # as shown: a value and its interval in one cell
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert len(heads) == len(frame.columns) and all(CJK.search(h) or h in NAMES for h in heads), heads
    cells = [re.findall(r"<td(?: [^>]*)?>([^<]*)</td>", part) for part in (en, zh)]
    labels = {frame.columns.get_loc(c) for c in label_columns if c in frame.columns}
    width = len(frame.columns)
    values = [v for row in frame.itertuples(index=False) for v in row]  # as the evidence gave them
    for i, (a, b) in enumerate(zip(*cells)):
        if i % width in labels and a != "—":
            column = frame.columns[i % width]
            assert b == html.escape(editions.in_chinese(label_columns, column, values[i] if isinstance(values[i], str) else html.unescape(a))), (a, b)
        elif a not in ("yes", "no"):
            assert a == b, (a, b)  # numbers and names alike
    csv = re.findall(r'href="(data:text/csv[^"]*)"', page)
    assert len(csv) == 2 and csv[0] == csv[1]  # one download, the same data, in both editions


def test_every_setup_and_row_of_the_evidence_has_its_chinese():
    words = {*(s.label for s in bottlenecks.TRAINING_SETUPS + bottlenecks.DP_SETUPS),
             *(c.label for c, _ in bottlenecks.DECODE_CASES), *(name for name, _, _ in bottlenecks.LAYOUTS),
             *bottlenecks.PART_NAMES.values(), *bottlenecks.sensitivity()["case"],
             *bottlenecks.transfer_times()["method"], *bottlenecks.compare_at_rate()["source"],
             *trainingruns.training_validation()["run"], *trainingruns.training_validation()["source"]}
    same = {"TP 8", "TP 2 x PP 2"}  # the layouts that are only names
    for word in words:
        assert (lang.label(word, "zh") != word) != (word in same), word  # LookupError where one is missing


FIGURES = [lambda: ch03fig.figure_training_breakdown(bottlenecks.training_breakdown()),
           lambda: ch03fig.figure_decode_breakdown(bottlenecks.decode_breakdown()),
           lambda: ch03fig.figure_scaling(bottlenecks.scaling()),
           lambda: ch03fig.figure_dp_share(bottlenecks.dp_batch_sweep()),
           lambda: ch03fig.figure_decode_ratio(bottlenecks.decode_ratio()),
           lambda: ch03fig.figure_under_load(underload.curves(underload.best(underload.layouts()))),
           lambda: ch03fig.figure_switch_benefit(bottlenecks.compare_fixed_batch()),
           ch03fig.figure_throughput_vs_rate]


@pytest.mark.parametrize("make", FIGURES)
def test_figures_draw_in_chinese_and_stay_readable(make):
    figs = plotting.draw_editions(make)
    try:
        en, zh = figs["en"], figs["zh"]
        assert CHINESE.search(zh._suptitle.get_text()) and CHINESE.search(plotting.get_alt(zh))
        assert any(t.get_text().startswith("来源：") for t in zh.texts)
        for ax in zh.axes:
            assert CHINESE.search(ax.get_xlabel()) or ax.get_xlabel() == en.axes[0].get_xlabel()
            legend = ax.get_legend()
            if legend is not None:
                assert any(CHINESE.search(t.get_text()) for t in legend.get_texts())
        assert sorted(NUMBER.findall(plotting.get_alt(zh))) == sorted(NUMBER.findall(plotting.get_alt(en)))
        for fig in (en, zh):
            checks = plotting.readability(fig)
            assert checks["min_text_px"] >= plotting.MIN_TEXT_PX
            assert not checks["contrast_problems"] and not checks["overlaps"]
    finally:
        for fig in figs.values():
            plt.close(fig)


def test_the_notebook_stores_every_figure_and_table_in_both_editions():
    pages, figures = editions.stored_pages(NOTEBOOK)
    assert len(pages) == len(TABLES) + len(FIGURES)
    assert len(figures) == len(FIGURES)
    csv_names = re.findall(r'download="([^"]+)"', "".join(pages))
    assert len(set(csv_names)) == len(TABLES) and len(csv_names) == 2 * len(TABLES)


def test_the_hybrid_sharding_paragraph_follows_the_model(facts):
    """"Sharding within a node": on the slow network sharding within each node shortens the step and the
    network's share; on the fast one it lengthens the step; each GPU then holds more. The paragraph says so in
    words, so the model must keep it true."""
    assert facts["hs_slow_node_s"] < facts["hs_slow_full_s"]
    assert facts["hs_slow_node_dp_s"] < facts["hs_slow_full_dp_s"]
    assert facts["hs_fast_node_s"] > facts["hs_fast_full_s"]
    assert facts["hs_mem_node_GB"] > facts["hs_mem_full_GB"]
