"""Chapter 5's book module (multigpu.book.ch05_guide): the facts its prose cites, built from the numbers of the
guide and the recommender, on the packaged price file and on tests/data/prices/good.csv."""

import base64
import math
import html
import re
from dataclasses import dataclass
from pathlib import Path

import editions
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from editions import CHINESE, NUMBER
from glue_citations import check_cited

from multigpu.book import ch05_figures as ch05fig
from multigpu.book import ch05_guide as ch05
from multigpu.book import glue, lang, money, plotting, tables
from multigpu.book.vocabulary import short_gpu_name
from multigpu.common.numtext import range_text, significant
from multigpu.evidence import claims, guide
from multigpu.evidence.claims import Verdict
from multigpu.evidence.claims import cost as cost_claims
from multigpu.market import prices, recommend

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
NOTEBOOK = ROOT / "book" / "chapters" / "05-selection-guide.ipynb"
MODELS = ("llama3.2-1b", "llama3.1-8b")


@dataclass
class Run:
    """The chapter's inputs on one price file, with the small guide (two models, at most 16 GPUs)."""

    table: prices.PriceTable
    ref: str
    decided: pd.DataFrame
    ex: pd.DataFrame
    sv: pd.DataFrame
    frames: dict[str, pd.DataFrame]
    verdicts: dict[str, Verdict]


@pytest.fixture(scope="module")
def runs():
    """The small guide on the packaged price file and on the test one (fast: 2 models, 16 GPUs); the limits
    stay patched for every test of this module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guide, "MAX_GPUS", 16)
        mp.setitem(ch05.TRAIN_EXAMPLE, "max_gpus", 16)
        out = {}
        for name, table in (("default", prices.default_table()), ("good", prices.load_table(GOOD))):
            ref = guide.reference_pricing(table)
            verdicts = {c: claims.check(c, claims.Inputs(prices=table)) for c in ("C26", "C27")}
            out[name] = Run(table, ref, guide.decisions(table, MODELS), ch05.training_example(table, ref),
                            ch05.serving_example(table, ref), ch05.pareto_options(table, ref), verdicts)
        yield out


def all_facts(run: Run) -> dict:
    facts = {}
    verdicts = run.verdicts
    for part in (ch05.intro_facts(run.table), ch05.training_example_facts(run.ex, run.table),
                 ch05.serving_example_facts(run.sv, run.table),
                 ch05.guide_facts(run.decided, run.ref), ch05.front_facts(run.frames, run.table),
                 ch05.flip_facts(run.decided, run.ref), ch05.claims_facts(verdicts, run.decided),
                 ch05.deadline_exercise_facts(run.ex, run.table, run.ref),
                 ch05.floor_exercise_facts(run.decided, run.table, run.ref)):
        assert not set(part) & set(facts), "two sections glue the same name"
        facts.update(part)
    return facts


def english(facts: dict) -> dict:
    """The facts the English page cites: all but the Chinese twins (``<name>_zh``, cited by the page's catalog)."""
    return {name: value for name, value in facts.items() if not name.endswith("_zh")}


def test_the_notebook_cites_every_fact_with_the_role_of_its_type(runs):
    """Every glue name the Markdown cites is built here, text is cited with {glue:md} and numbers with
    {glue:text}, and nothing is built that the page does not cite."""
    for run in runs.values():
        check_cited(english(all_facts(run)), NOTEBOOK, exact=True)


def test_intro_names_the_price_file(runs):
    default, good = runs["default"], runs["good"]
    for run in (default, good):
        facts = ch05.intro_facts(run.table)
        assert facts["price_stamp"] == run.table.stamp_markdown()
        assert run.table.stamp()["sha256_12"] in facts["price_stamp"]
        assert ch05.source(run.table) == f"price file {run.table.name} (sha256 {run.table.sha256[:12]})"
    assert ch05.intro_facts(default.table)["price_stamp"] != ch05.intro_facts(good.table)["price_stamp"]


def test_training_example_sentences_carry_the_pick_and_the_front(runs):
    texts = []
    for run in runs.values():
        facts = ch05.training_example_facts(run.ex, run.table)
        assert facts["ex_options"] == len(run.ex) == facts["ex_feasible"] + facts["ex_late"] + facts["ex_cannot"]
        assert facts["ex_max_gpus"] == 16 and facts["ex_days"] == ch05.TRAIN_EXAMPLE["deadline_h"] / 24
        top = recommend.best(run.ex)
        assert f"{top['time_h'] / 24:.1f} days and USD {significant(top['cost_usd'])}" in facts["ex_best"]
        assert f"`{top['layout']}`" in facts["ex_best"] and short_gpu_name(top["gpu"]) in facts["ex_best"]
        assert top["gpu"] not in facts["ex_best"], "the GPU's name, not its id"
        front = recommend.pareto(run.ex)
        fast = front.sort_values("time_h").iloc[0]
        assert f"{fast['time_h']:.1f} hours for USD {significant(fast['cost_usd'])}" in facts["ex_front"]
        assert (("only one sits" in facts["ex_front"]) == (len(front) == 1))
        assert len(front) == 1 or f"{len(front)} sit on the Pareto front" in facts["ex_front"]
        texts.append(facts["ex_best"])
    assert texts[0] != texts[1]  # different prices, different picks and costs
    none = ch05.training_example_facts(run.ex.assign(feasible=False), run.table)
    assert none["ex_best"] == "no option meets the deadline" and none["ex_feasible"] == 0
    assert none["ex_front"].startswith("No option meets the deadline")


def test_serving_example_sentence_carries_the_pick(runs):
    texts = []
    for run in runs.values():
        facts = ch05.serving_example_facts(run.sv, run.table)
        top = recommend.best(run.sv)
        assert (f"USD {top['cost_per_hour_usd']:,.2f} per hour or USD {significant(top['cost_per_million_tokens_usd'])} per "
                f"million output tokens") in facts["sv_best"]
        assert f"loaded to {top['load_pct']:.0f} %" in facts["sv_best"]
        assert facts["sv_cannot"] == int(run.sv["cost_per_hour_usd"].isna().sum())
        assert facts["sv_slow_pcie"] <= facts["sv_slow"] <= facts["sv_cannot"]
        texts.append(facts["sv_best"])
    assert texts[0] != texts[1]


def test_guide_facts_follow_the_decisions(runs):
    for run in runs.values():
        facts = ch05.guide_facts(run.decided, run.ref)
        limits = guide.thresholds(run.decided)
        ref = limits[limits["pricing"] == run.ref].set_index("kind")["text"]
        assert (facts["ref_train_line"], facts["ref_serve_line"]) == (ref["train"], ref["serve"])
        for kind in ("train", "serve"):
            part = limits[limits["kind"] == kind]
            assert facts[f"{kind}_lines"] == guide.lines_phrase(part)
            for p, t in zip(part["pricing"], part["text"]):  # every pricing type and its line, each line said once
                assert p in facts[f"{kind}_lines"] and facts[f"{kind}_lines"].count(t) == 1
        pcie = run.decided[(run.decided["kind"] == "serve") & (run.decided["guide_class"] == "PCIe")]
        assert facts["pcie_serve_sentence"] == (f"PCIe picks serve models up to {pcie['params_B'].max():.1f}B, with "
                                                f"tensor parallelism of at most tp{int(pcie['tp'].max())}.")
    # the sentences of the cases the small guide does not reach
    decided = runs["default"].decided
    big = decided.assign(guide_class=["multi-node / NVL72" if k == "train" else "NVSwitch node"
                                      for k in decided["kind"]],
                         pcie_reason=["too slow" if k == "serve" else None for k in decided["kind"]])
    facts = ch05.guide_facts(big, "on-demand")
    smallest = decided["params_B"].min()
    assert facts["train_multi_sentence"].startswith(f"From {smallest:.1f}B up the pick spans several NVLink nodes")
    assert facts["pcie_serve_sentence"] == "at these prices no serving pick is a PCIe box."
    n = int((big["kind"] == "serve").sum())
    assert f"too slow for the floor in {n} of those {n} cases" in facts["pcie_blocked_sentence"]
    late = decided.assign(guide_class="none feasible")
    assert "`llama3.2-1b` at on-demand prices" in ch05.guide_facts(late, "on-demand")["none_train_sentence"]


def test_front_text_is_built_from_the_front(runs):
    for run in runs.values():
        for name, model_id in ch05.PARETO_MODELS.items():
            front = recommend.pareto(run.frames[model_id])
            text = ch05.front_facts(run.frames, run.table)[name]
            if front.empty:
                assert text == "no option runs"
                continue
            cost = f"USD {significant(front['cost_usd'].iloc[0])} in {front['time_h'].iloc[0] / 24:,.1f} days"
            if len(front) == 1:  # one option is the cheapest and the fastest: no "from ... to ..." (issue 43)
                assert text.startswith(f"one option on the front: {cost} (") and " to " not in text
                continue
            assert text.startswith(f"{len(front)} options on the front, from {cost} (")
            assert f"{front['time_h'].min():,.1f} hours" in text
    assert ch05.front_text(runs["default"].frames["llama3.1-8b"].iloc[0:0], runs["default"].table) == "no option runs"


def test_flip_sentences_carry_the_factor_and_the_demo_flips(runs):
    sentences = []
    for run in runs.values():
        case = guide.flip_case(run.decided, run.ref)
        assert case is not None, "both price files should have a case an NVLink class wins"
        facts = ch05.flip_facts(run.decided, run.ref)
        scale = case["pcie_price_scale_to_flip"]
        assert f"must fall to {scale:.3f} times their level, a cut of {100 * (1 - scale):.1f} %" in \
            facts["flip_sentence"]
        assert f"a PCIe price cut of {100 * (1 - scale):.1f} %" in facts["flip_sentence_short"]
        assert f"costs {case['nvlink_cost']:,.2f} and the cheapest PCIe option {case['pcie_cost']:,.2f}" in \
            facts["ex1_question"]
        shown = float(f"{case['nvlink_cost']:.2f}") / float(f"{case['pcie_cost']:.2f}")  # of the printed costs
        assert facts["ex1_answer"].startswith(
            f"To {case['nvlink_cost']:,.2f} / {case['pcie_cost']:,.2f} = {shown:.2f} times their level, a cut of "
            f"about {100 * (1 - shown):.0f} %")
        sentences.append(facts["flip_sentence"])
        demo = ch05.flip_demo(run.decided, run.table, run.ref)
        assert list(demo.index) == [1.0, round(scale * 1.02, 3), round(scale * 0.98, 3)]
        assert demo["cheapest class"].iloc[1] != "PCIe" and demo["cheapest class"].iloc[2] == "PCIe"
    assert sentences[0] != sentences[1]
    no_case = runs["good"].decided.assign(nvlink_over_pcie=math.nan)
    assert ch05.flip_demo(no_case, runs["good"].table, "on-demand") is None
    assert "nothing to demonstrate" in ch05.flip_facts(no_case, "on-demand")["flip_sentence"]


def test_claims_facts_read_the_guide_against_the_size_line(runs):
    for run in runs.values():
        verdicts = run.verdicts
        facts = ch05.claims_facts(verdicts, run.decided)
        assert facts["c26_verdict"] == f"**{lang.label(verdicts['C26'].verdict, 'en')}**"
        assert facts["c27_verdict"] == f"**{lang.label(verdicts['C27'].verdict, 'en')}**"
        assert facts["c26_tests"] == claims.tests_markdown(verdicts["C26"])
        assert facts["c26_explanation"] == verdicts["C26"].explanation and facts["size_line_B"] == cost_claims.SIZE_LINE_B
        limits = guide.thresholds(run.decided)
        assert facts["line_cases"] == len(limits)
        train = run.decided[(run.decided["kind"] == "train") & (run.decided["guide_class"] != "none feasible")]
        nvl = train[train["guide_class"] != "PCIe"]
        if len(nvl):
            assert f"the NVLink-class picks use up to tp{int(nvl['tp'].max())}." in facts["c27_train"]
    # a bracket (8B, 14B) holds the 10B line; (1B, 3B) does not
    synthetic = pd.DataFrame({"kind": ["train"] * 3 + ["serve"] * 3, "pricing": "on-demand",
                              "params_B": [1.0, 8.0, 14.0] * 2, "model": ["a", "b", "c"] * 2,
                              "guide_class": ["PCIe", "PCIe", "NVSwitch node", "PCIe"] + ["NVSwitch node"] * 2,
                              "tp": [1, 2, 8, 1, 4, 8], "exposed_comm_pct": [3.0, 12.4, 1.0] + [math.nan] * 3,
                              "pcie_reason": [None] * 4 + ["too slow", "does not fit"]})
    facts = ch05.claims_facts(run.verdicts, synthetic)
    assert (facts["line_inside"], facts["line_cases"]) == (1, 2)
    assert facts["line_inside_list"] == "training at on-demand prices"
    assert facts["line_inside_list_zh"] == "按需价格下的训练"
    assert facts["c26_where"] == "That is 0 of 1 pricing types for real-time serving and 1 of 1 for training."
    assert facts["c27_train"].startswith("the PCIe picks for training use tensor parallelism of at most tp2, with "
                                         "up to 12 % of the step")
    assert facts["c27_serve"] == ("For serving, the PCIe picks use at most tp1, and from 8.0B up no PCIe option can "
                                  "serve at the floor at all.")


def test_a_tighter_deadline_never_makes_the_pick_cheaper(runs):
    for run in runs.values():
        loose = recommend.best(run.ex)
        tight_h = loose["time_h"] * 0.9  # the earlier pick misses it
        facts = ch05.deadline_exercise_facts(run.ex, run.table, run.ref, tight_h=tight_h)
        tight = recommend.best(ch05.training_example(run.table, run.ref, deadline_h=tight_h))
        assert facts["ex2_hours"] == tight_h
        if tight is None:
            assert facts["ex2_answer"].startswith("No option meets")
            continue
        ratio = tight["cost_usd"] / loose["cost_usd"]
        assert ratio >= 1  # like for like: the same offers, one more constraint
        assert f"USD {tight['cost_usd']:,.0f}, {ratio:.2f} times the" in facts["ex2_answer"]
        missed = int(((run.ex["time_h"] > tight_h) & run.ex["feasible"]).sum())
        assert f"{missed} of the options that met the longer deadline miss the shorter one" in facts["ex2_answer"]
    same = ch05.deadline_exercise_facts(run.ex, run.table, run.ref, tight_h=ch05.TRAIN_EXAMPLE["deadline_h"])
    assert "is still" in same["ex2_answer"] and "times the" not in same["ex2_answer"]  # no ratio of a cost to itself


def test_floor_exercise_reruns_the_same_guide(runs):
    for run in runs.values():
        same = ch05.floor_exercise_facts(run.decided, run.table, run.ref, floor=guide.SERVE["tokens_per_s_per_user"])
        faster = ch05.floor_exercise_facts(run.decided, run.table, run.ref)
        assert same["ex3_changed"] == "none of the models" and same["ex3_line_50"] == same["ex3_line_30"]
        limits = guide.thresholds(run.decided)
        line = limits[(limits["kind"] == "serve") & (limits["pricing"] == run.ref)]["text"].iloc[0]
        assert faster["ex3_line_30"] == line and faster["ex3_floor"] == ch05.FAST_FLOOR


def test_chapter_figures_carry_the_price_file(runs):
    run = runs["good"]
    costs = ch05.class_cost_frames(run.table, run.ref, MODELS)
    figures = [ch05fig.figure_decision_matrix(run.decided, run.table), ch05fig.figure_class_costs(costs, run.table, run.ref),
               ch05fig.figure_pareto(run.frames, run.table, run.ref)]
    for fig in figures:
        assert ch05.source(run.table) in fig.texts[-1].get_text()
        assert "<svg" in plotting.to_svg(fig)
        plt.close(fig)
    assert [ax.get_title() for ax in figures[2].axes] == ["Llama 3.1 8B", "Llama 3.1 70B"]
    # 70B runs on 16 GPUs of good.csv (ZeRO-3: 1.26 TB of model states in 16 x 85 GB); a panel without any
    # option that runs says so
    assert run.frames["llama3.1-70b"]["cost_usd"].notna().any()
    none_run = {**run.frames, "llama3.1-70b": run.frames["llama3.1-70b"].assign(cost_usd=float("nan"))}
    empty = ch05fig.figure_pareto(none_run, run.table, run.ref)
    assert [t.get_text() for t in empty.axes[1].texts] == ["no option runs"]
    plt.close(empty)


# ------------------------------------------------------------------ both editions


PAGE = "chapters/05-selection-guide"
#: English words that must not remain in a Chinese text (file names and ids aside).
ENGLISH_WORDS = re.compile(r"\b(?:the|of|and|at|for|with|is|are|on|to|option|options|pick)\b")


def test_every_text_fact_has_its_chinese_with_the_same_numbers(runs):
    for run in runs.values():
        facts = all_facts(run)
        editions.check_chinese_twins(facts, required={"in_short", "ex_best", "c26_tests", "c27_explanation",
                                                      "ex1_answer", "price_stamp"})
        for name in editions.text_names(facts):
            assert not ENGLISH_WORDS.search(facts[f"{name}_zh"]), (name, facts[f"{name}_zh"])


def test_the_chinese_catalog_cites_the_chinese_facts(runs):
    """The page's Chinese cites ``name_zh`` for every Markdown fact (computed in Chinese), numbers by their own name."""
    facts = all_facts(runs["default"])
    editions.check_catalog_cites_twins(facts, PAGE)


def test_the_guide_s_phrases_translate_with_their_words(runs):
    """Size lines, pricing types and classes inside the guide's English phrases come out Chinese."""
    limits = guide.thresholds(runs["default"].decided)
    with lang.using("zh"):
        for text in limits["text"]:
            assert CHINESE.search(ch05.line_text(text)) and not ENGLISH_WORDS.search(ch05.line_text(text))
        phrase = ch05.lines_phrase(limits[limits["kind"] == "train"])
        assert "按需" in phrase and "on-demand" not in phrase
        assert ch05.word("multi-node / NVL72") == "多节点 / NVL72"
        english = guide.lines_phrase(limits[limits["kind"] == "train"])
        assert sorted(NUMBER.findall(phrase)) == sorted(NUMBER.findall(english))
    assert ch05.lines_phrase(limits) == guide.lines_phrase(limits)  # English: the guide's own words


def test_the_figures_draw_in_both_languages(runs):
    run = runs["good"]
    costs = ch05.class_cost_frames(run.table, run.ref, MODELS)
    for draw in (lambda: ch05fig.figure_decision_matrix(run.decided, run.table),
                 lambda: ch05fig.figure_class_costs(costs, run.table, run.ref),
                 lambda: ch05fig.figure_pareto(run.frames, run.table, run.ref)):
        figs = plotting.draw_editions(draw)
        try:
            en, zh = figs["en"], figs["zh"]
            assert not CHINESE.search(en._suptitle.get_text()) and CHINESE.search(zh._suptitle.get_text())
            assert zh.texts[-1].get_text().startswith("来源：价格文件")
            assert CHINESE.search(plotting.get_alt(zh)) and all(CHINESE.search(ax.get_xlabel()) for ax in zh.axes
                                                                 if ax.get_xlabel())
            legends = [t.get_text() for ax in zh.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
            assert legends and not any(ENGLISH_WORDS.search(t) for t in legends), legends
            html = plotting.editions_html(figs)  # the text floor and alt text, checked on both
            assert '<div class="mg-lang-zh" lang="zh-CN">' in html
        finally:
            for fig in figs.values():
                plt.close(fig)


@pytest.mark.parametrize("make", [lambda r: guide.summary(r.decided, r.ref, "train"),
                                  lambda r: guide.summary(r.decided, r.ref, "serve"),
                                  lambda r: guide.flip_table(r.decided, r.ref),
                                  lambda r: ch05.flip_demo(r.decided, r.table, r.ref)])
def test_every_table_has_chinese_headers_labels_and_the_same_numbers(runs, make):
    frame = tables.fold_ranges(make(runs["default"]))  # a cost with its interval in one cell, as shown
    page = tables.editions_html(frame, csv_name="t", label_columns=ch05.LABEL_COLUMNS)
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert len(heads) == len(tables._full_frame(frame).columns)
    assert all(CHINESE.search(h) or h in {"GPU"} for h in heads), heads
    cells = [re.findall(r"<td(?: [^>]*)?>([^<]*)</td>", part) for part in (en, zh)]
    for a, b in zip(*cells):
        if NUMBER.fullmatch(a.replace(",", "")) or a.startswith(("llama", "qwen", "gpt")):
            assert a == b  # numbers and ids alike
        elif a in guide.CLASSES or a in ("none feasible", "training", "real-time serving"):
            assert CHINESE.search(b) or b == "PCIe", (a, b)


def test_the_guide_s_costs_and_days_show_their_interval_in_both_currencies(runs):
    """Issue 44: the summary prints each pick's days and cost as "x (lo–hi)", the Chinese table its CNY cost too,
    at the page's declared rate, and the download keeps the bounds as numbers."""
    run = runs["default"]
    frame = guide.summary(run.decided, run.ref, "train")
    page = ch05.money_table_html(frame, run.table, key=["model"], csv_name="t")
    en, zh = page.split('\n<div class="mg-lang-zh" lang="zh-CN">')
    first = frame.iloc[0]
    for part in (en, zh):
        assert range_text(first["time_days"], first["time_days_lo"], first["time_days_hi"]) in part
        assert range_text(first["cost_usd_per_job"], first["cost_usd_per_job_lo"], first["cost_usd_per_job_hi"]) in part
    rate = money.declared_rate(run.table)
    assert range_text(first["cost_usd_per_job"] * rate, first["cost_usd_per_job_lo"] * rate,
                      first["cost_usd_per_job_hi"] * rate) in zh
    assert "prediction interval" in en and "预测区间" in zh
    assert "cost_usd_per_job_lo" in base64.b64decode(re.search(r"base64,([^\"]+)", en).group(1)).decode()


def test_the_claims_table_is_chinese_in_the_chinese_edition(runs):
    verdicts = runs["default"].verdicts
    """The confidence in the frame, the claims' values and units by the table's :data:`ch05.LABEL_COLUMNS`."""
    with lang.using("zh"):
        frame = ch05.claims_frame(verdicts)
        shown = {column: [ch05.LABEL_COLUMNS[column](v) for v in frame[column]]
                 for column in ("seed_value", "model_value", "unit")} | {"confidence": list(frame["confidence"])}
    english_frame = ch05.claims_frame(verdicts)
    assert list(english_frame["seed_value"]) == [v.seed_value for v in verdicts.values()]
    assert list(english_frame["confidence"]) == [v.confidence for v in verdicts.values()]
    for column, values in shown.items():
        for value in values:
            assert CHINESE.search(str(value)) and not ENGLISH_WORDS.search(str(value)), (column, value)


def test_the_notebook_stores_every_figure_and_table_in_both_editions():
    pages, figures = editions.stored_pages(NOTEBOOK)
    assert len(pages) == 10 and len(figures) == 3  # seven tables (two of them rankings), three figures
    for page in pages:
        assert CHINESE.search(page.split('<div class="mg-lang-zh" lang="zh-CN">')[1])


def _line(threshold):
    return pd.DataFrame({"threshold_B": [threshold]})


@pytest.mark.parametrize(("old", "new", "changed", "words"), [
    (14.8, 8.0, True, "towards smaller models"), (8.0, 14.8, True, "towards larger models"),
    (14.8, 14.8, True, "stays where it was"), (14.8, 14.8, False, "Nothing moves")])
def test_exercise_3_s_solution_says_the_move_its_numbers_show(old, new, changed, words):
    """The solution's explanation follows the size lines it quotes: it never claims a shift they do not show."""
    assert words in ch05._floor_why(_line(old), _line(new), changed)


def test_exercise_2_s_solution_gives_no_ratio_of_a_cost_to_itself():
    """When the tighter deadline leaves the pick as it was, the answer says so, with no "1.00 times"."""
    table = prices.default_table()
    ref = guide.reference_pricing(table)
    ex = ch05.training_example(table, ref)
    facts = ch05.deadline_exercise_facts(ex, table, ref)
    tight = ch05.training_example(table, ref, deadline_h=ch05.TIGHT_DEADLINE_H)
    same = (recommend.best(ex)["offer"], recommend.best(ex)["instances"]) == (
        recommend.best(tight)["offer"], recommend.best(tight)["instances"])
    assert ("times the" in facts["ex2_answer"]) != same
    assert "1.00 times" not in facts["ex2_answer"]


def test_the_recommender_s_ranking_reads_in_chinese_in_the_chinese_edition():
    """English shows what the command printed; Chinese, the same options as a table with Chinese headers, CNY
    before USD, and each reason rendered from its finding with the same numbers."""
    table = prices.default_table()
    ref = guide.reference_pricing(table)
    options = ch05.training_example(table, ref)
    page = ch05.ranking_html("rank  provider ...", options, table, 5, "t")
    en, zh = page.split('<div class="mg-lang-zh" lang="zh-CN">')
    assert "<pre" in en and "rank  provider" in en and "<table" not in en
    heads = re.findall(r"<th [^>]*>([^<]*)</th>", zh)
    assert all(re.search(r"[\u4e00-\u9fff]", h) or h == "GPU" for h in heads), heads
    assert heads.index("成本（CNY）") + 1 == heads.index("成本（USD）")
    for reason in options.head(5)["reason"]:
        with lang.using("zh"):
            shown = glue.say(reason)
        assert html.escape(shown) in zh and shown != str(reason)
