"""The introduction's answer (multigpu.evidence.answer, multigpu.book.intro): the decision table and the five
lines are computed from the model and the price file, by a stated rule, and change when the prices do."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import editions
import nbformat
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from editions import CHINESE
from glue_citations import check_cited

from multigpu.book import intro, lang
from multigpu.compute import models
from multigpu.evidence import answer, guide, pcieside
from multigpu.market import premium, prices, workloads

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
NOTEBOOK = ROOT / "book" / "intro.ipynb"


def scaled_prices(tmp_path: Path, gpu: str, factor: float) -> prices.PriceTable:
    """The packaged price file with every offer of ``gpu`` priced ``factor`` times as much."""
    with open(prices.DEFAULT_PRICES, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row["gpu"] == gpu:
            row["price_per_hour"] = f"{float(row['price_per_hour']) * factor:.4f}"
    path = tmp_path / f"{gpu}-x{factor}.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return prices.load_table(path)


@pytest.fixture(scope="module")
def default() -> pd.DataFrame:
    return answer.decision_table(prices.default_table())


@pytest.fixture(scope="module")
def size_lines() -> pd.DataFrame:
    """The guide's training size lines on the packaged prices (the whole guide: computed once)."""
    return guide.training_size_lines(prices.default_table())


@pytest.fixture(scope="module")
def default_facts(default, size_lines) -> dict:
    return intro.facts(default, prices.default_table(), size_lines=size_lines)


@pytest.mark.parametrize(("break_even", "charged", "band", "expected"), [
    (50.0, 10.0, 10.0, "NVLink-class cheaper"),   # 1.10 < 1.50 x 0.9
    (10.0, 50.0, 10.0, "PCIe cheaper"),           # 1.50 > 1.10 x 1.1
    (10.0, 15.0, 10.0, "too close to call"),      # 1.15 within 1.10 x (1 -/+ 0.1)
    (math.inf, 15.0, 10.0, "PCIe cannot run it"),
    (10.0, math.nan, 10.0, "no pair to price"),
    (math.nan, 15.0, 10.0, "neither runs it"),
])
def test_the_rule(break_even, charged, band, expected):
    assert answer.verdict(break_even, charged, band) == expected


def test_a_wider_error_band_only_widens_too_close_to_call():
    assert answer.verdict(10.0, 25.0, 5.0) == "PCIe cheaper"
    assert answer.verdict(10.0, 25.0, 20.0) == "too close to call"


@settings(max_examples=300, deadline=None)
@given(st.floats(-50, 300), st.floats(-50, 300), st.floats(0, 40))
def test_a_verdict_rests_only_on_the_numbers_shown(break_even, charged, band):
    """Premiums and bands are shown in whole per cent; the verdict is a function of what is shown, so two rows
    that show the same numbers never get different verdicts (7.4 % and 7.2 % both show as 7)."""
    assert answer.verdict(break_even, charged, band) == answer.verdict(
        answer.shown(break_even), answer.shown(charged), answer.shown(band))


def test_two_rows_that_show_the_same_numbers_get_the_same_verdict():
    # the packaged file's 8B and 14B pre-training rows: break-even 7.16 % and 7.41 %, both shown as 7
    assert answer.verdict(7.16, 15.9, 7.97) == answer.verdict(7.41, 15.9, 7.97) == "PCIe cheaper"
    assert answer.shown(15.5) == 16 and answer.shown(-0.5) == 0 and answer.shown(math.inf) == math.inf


def test_one_row_per_named_workload_from_the_model_and_the_file(default):
    table = prices.default_table()
    assert list(default["workload"]) == list(workloads.workloads_table())
    row = default.iloc[0]
    value = premium.interconnect_value(row["nvlink_system"], row["pcie_system"])
    assert default["break_even_premium_pct"].tolist() == pytest.approx(value["break_even_premium_pct"].tolist(),
                                                                       nan_ok=True)
    pair = answer.pair(table)
    charged = premium.charged_premiums(table)
    nvswitch = charged[charged["interconnect_class"] == "NVSwitch"]["premium_pct"]
    assert len(pair.charged_pct) == row["charged_pairs"] > 0 and set(pair.charged_pct) <= set(nvswitch)
    assert row["charged_premium_pct"] == pytest.approx(pd.Series(pair.charged_pct).median())
    sides = pcieside.verdict_errors()
    for r in default.itertuples():
        assert r.error_band_pct == sides[answer.BAND[r.kind]].band_pct
        assert r.verdict == answer.verdict(r.break_even_premium_pct, r.charged_premium_pct, r.error_band_pct)


def test_cheaper_nvlink_offers_flip_the_training_verdicts(tmp_path, default):
    """Halving every A100 SXM price makes the NVSwitch board cheaper per GPU-hour than the PCIe server: no workload
    can then be "PCIe cheaper"; doubling it makes the PCIe server the pick for the workloads it runs nearly as
    fast."""
    cheap = answer.decision_table(scaled_prices(tmp_path, "a100-sxm4-80gb", 0.5))
    dear = answer.decision_table(scaled_prices(tmp_path, "a100-sxm4-80gb", 2.0))
    assert (cheap["charged_premium_pct"] < 0).all()
    assert "PCIe cheaper" in set(dear["verdict"]) and "PCIe cheaper" not in set(cheap["verdict"])
    assert (cheap["verdict"] == "NVLink-class cheaper").sum() > (default["verdict"] == "NVLink-class cheaper").sum()
    assert (dear["verdict"] == "PCIe cheaper").sum() > (default["verdict"] == "PCIe cheaper").sum()


def test_the_bottom_line_names_every_workload_by_its_verdict(default):
    """One sentence: each verdict's workloads named by activity and model (no slug), the premium charged as the
    table shows it; every workload's model appears in the part of its verdict."""
    line = answer.bottom_line(default)
    text = str(line)
    assert not re.search(r"\b(?:train|serve|finetune|lora)-", text)  # names, not workload ids
    assert f"At the {answer.shown(default['charged_premium_pct'].iloc[0]):.0f} % more" in text
    for message, verdicts in answer.BOTTOM_PARTS:
        mine = default[default["verdict"].isin(verdicts)]
        assert (message in [p.message for p in line.value("parts").items]) == (not mine.empty)
        for workload_id in mine["workload"]:
            model = models.model(workloads.workload(workload_id).model).name
            part = next(p for p in line.value("parts").items if p.message == message)
            assert model in str(part), (message, workload_id)


def test_the_bottom_line_moves_with_the_prices(tmp_path, default):
    """Doubling the NVSwitch board's price leaves work for the PCIe server, halving it leaves none: the sentence
    changes with the prices."""
    cheap = answer.decision_table(scaled_prices(tmp_path, "a100-sxm4-80gb", 0.5))
    dear = answer.decision_table(scaled_prices(tmp_path, "a100-sxm4-80gb", 2.0))
    before, after = str(answer.bottom_line(dear)), str(answer.bottom_line(cheap))
    assert "rent the PCIe server**" in before and "rent the PCIe server**" not in after
    assert str(answer.bottom_line(default)) not in (before, after)


def test_a_file_without_a_pair_prices_no_verdict():
    table = prices.load_table(GOOD)
    decided = answer.decision_table(table)
    finite = decided[~decided["break_even_premium_pct"].isin([math.inf]) & decided["break_even_premium_pct"].notna()]
    assert decided["charged_premium_pct"].isna().all() and (finite["verdict"] == "no pair to price").all()
    facts = intro.facts(decided, table)
    assert facts["no_pair_note"] and "no same-provider pair" in facts["answer_3"]
    assert set(intro.decision_frame(decided)["charged"]) == {"—"}


def test_the_five_lines_carry_the_table_s_numbers(default, size_lines):
    lines = [str(line) for line in answer.summary(default, size_lines)]
    assert len(lines) == 5
    train = default[default["kind"] == "train"]["break_even_premium_pct"]
    assert f"{train.min():.0f} to {train.max():.0f} %" in lines[0]
    assert f"a median {default['charged_premium_pct'].iloc[0]:.0f} %" in lines[2]
    sides = pcieside.verdict_errors()
    assert f"{answer.shown(sides['training'].band_pct):.0f} % for training" in lines[4]
    assert f"the NVSwitch side misses by {answer.shown(sides['training'].nvswitch_pct):.0f} %" in lines[4]


def test_the_intro_cites_every_fact(default, default_facts):
    english = {name: value for name, value in default_facts.items() if not name.endswith("_zh")}
    check_cited(english, NOTEBOOK, exact=True, at_least=8)
    frame = intro.decision_frame(default)
    assert list(frame.columns) == [*intro.LABELS, "href"]
    assert set(frame["href"]) <= {f"{page}.html" for page in intro.PAGES}


# ------------------------------------------------------------------ both editions



def test_the_intro_s_words_are_the_evidence_s(default, size_lines, default_facts):
    """The book module rebuilds the five lines in each language: in English they are the evidence's own."""
    english = [str(line) for line in answer.summary(default, size_lines)]
    assert intro.summary(default, size_lines) == english
    assert [default_facts[f"answer_{i}"] for i in range(1, 6)] == english
    assert intro.RULE == default_facts["rule"] == answer.RULE[0].upper() + answer.RULE[1:] + "."
    assert set(intro.VERDICT_WORDS) == set(answer.VERDICTS) and set(intro.PAGES) == set(answer.CHAPTER.values())
    assert set(answer.KIND_LINES) == set(answer.CHAPTER)
    for word in [*answer.BAND.values(), *(lead for lead, _ in answer.KIND_LINES.values())]:
        assert lang.label(word, "zh") != word  # the findings' words have their Chinese
    good = answer.decision_table(prices.load_table(GOOD))  # the other branches: no pair, no verdict
    lines = guide.training_size_lines(prices.load_table(GOOD))
    assert intro.summary(good, lines) == [str(line) for line in answer.summary(good, lines)]


def test_every_text_fact_has_its_chinese_with_the_same_numbers(default_facts):
    facts = default_facts
    editions.check_chinese_twins(facts, required={"answer_1", "answer_5", "rule", "price_stamp"},
                                 data={"nvlink_name", "pcie_name"})  # the systems' names are data
    assert facts["nvlink_name_zh"] == facts["nvlink_name"]
    assert "NVLink 级更便宜" in facts["answer_1_zh"] and "按需" in facts["answer_4_zh"]
    table = prices.load_table(GOOD)
    other = intro.facts(answer.decision_table(table), table)
    assert CHINESE.search(other["no_pair_note_zh"]) and "报价" in other["answer_3_zh"]


def test_the_chinese_catalog_cites_the_chinese_facts(default_facts):
    editions.check_catalog_cites_twins(default_facts, "intro")


def test_the_decision_table_in_both_editions(default):
    page = intro.decision_table_html(default)
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    assert 'id="decision-table"' in en and 'id="decision-table-zh"' in zh
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert len(heads) == len(intro.LABELS) and all(CHINESE.search(h) for h in heads), heads
    rows = [re.findall(r"<tr>(<td .*?)</tr>", part) for part in (en, zh)]  # the body's rows
    assert len(rows[0]) == len(rows[1]) == len(default)
    titles = [w.title_zh for w in map(workloads.workload, default["workload"])]
    for row_en, row_zh, title in zip(*rows, titles):
        cells_en = re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row_en)
        cells_zh = re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row_zh)
        # columns: workload, verdict (first, for a phone), break-even, charged, confidence, both sides' model
        # error, chapter
        assert cells_zh[0] == title and CHINESE.search(cells_zh[1]) and CHINESE.search(cells_zh[6])
        assert cells_en[3] == cells_zh[3]  # the premium charged, the same number
        assert cells_en[5] == cells_zh[5] and re.fullmatch(r"(\d+|—) / (\d+|—)", cells_en[5])
        assert cells_en[2] == cells_zh[2] or (cells_en[2], cells_zh[2]) == ("unbounded", "无上限")
        assert cells_en[4] == "—" or CHINESE.search(cells_zh[4])
    with lang.using("zh"):
        assert set(intro.decision_frame(default)["verdict"]) <= {lang.label(v) for v in answer.VERDICTS}


def test_the_notebook_stores_the_table_in_both_editions():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    pages = [o["data"]["text/html"] for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if "text/html" in o.get("data", {})]
    assert len(pages) == 1
    assert pages[0].startswith('<div class="mg-lang-en">') and '<div class="mg-lang-zh" lang="zh-CN">' in pages[0]


def test_the_stack_comparison_prices_every_training_workload_under_each_stack():
    """``answer.stack_effect``: each training workload under Megatron-LM's defaults, NeMo's recipes and PyTorch
    FSDP, each row's verdict by the decision table's rule; overlapping the tensor-parallel collectives with the
    GEMMs (NeMo) lowers the 70B pre-training job's break-even premium on the A100 pair, where its PCIe layout leans
    on tensor parallelism; chapter 4's sentence counts what the table shows."""
    from multigpu.book import ch04_cost

    table = prices.resolve(None)
    frame = answer.stack_effect(table)
    training = [w for w in workloads.workloads_table() if workloads.workload(w).kind == "train"]
    assert sorted(frame["workload"].unique()) == sorted(training)
    assert set(frame["stack"]) == set(answer.COMPARED_STACKS)
    assert len(frame) == len(answer.COMPARED_STACKS) * len(training)
    chosen, band = answer.pair(table), pcieside.verdict_errors()[answer.BAND["train"]].band_pct
    for row in frame.itertuples():
        assert row.verdict == answer.verdict(row.break_even_premium_pct, chosen.median_pct, band)
    be = frame.set_index(["workload", "stack"])["break_even_premium_pct"]
    assert be[("train-llama3.1-70b", "nemo")] < be[("train-llama3.1-70b", "megatron")]
    facts = ch04_cost.stack_facts(table)
    assert facts["st_n"] == len(training)
    for stack in answer.COMPARED_STACKS:
        mine = frame[frame["stack"] == stack]
        assert facts[f"st_nv_{stack.replace('-', '_')}"] == (mine["verdict"] == "NVLink-class cheaper").sum()
    same = frame.groupby("workload")["verdict"].nunique() == 1
    assert facts["st_same"] == same.sum() < len(training)  # the stack moves some verdict
