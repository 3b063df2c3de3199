"""Chapter 4's book module (multigpu.book.ch04_cost): the facts its prose cites, built from the price table.

Every price-dependent fact is checked on the packaged price file and on tests/data/prices/good.csv: the
sentences carry the numbers they are built from (recomputed here from the market layer), and the two files
give different text where their numbers differ. Both editions: every text fact has its Chinese twin
(``<name>_zh``) with the same numbers, money in Chinese is CNY first with USD alongside (converted by the price
table's FX table), and every table and figure is made in both languages, the Chinese ones with a CNY column
before each USD column and CNY money axes.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import editions
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from editions import CHINESE, NUMBER
from glue_citations import roles
from matplotlib.figure import Figure

from multigpu.book import ch04_cost as ch04
from multigpu.book import ch04_figures as ch04fig
from multigpu.book import lang, plotting
from multigpu.book.vocabulary import short_gpu_name
from multigpu.common.numtext import significant
from multigpu.evidence import answer
from multigpu.evidence import cost as analysis
from multigpu.evidence.claims import cost as cost_claims
from multigpu.hardware import catalog
from multigpu.market import cost, premium, prices, sensitivity, workloads

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
NOTEBOOK = ROOT / "book" / "chapters" / "04-cost-benefit.ipynb"
PAGE = "chapters/04-cost-benefit"
FILES = ("default", "good")
#: Text facts that are data, the same in both editions (dates, GPU names, layouts): glued once.
NEUTRAL = {"observed_from", "observed_to", "cheapest_gpu", "dearest_gpu", "train_layout_8b", "train_layout_70b"}


def _cny(usd: float, table: prices.PriceTable) -> float:
    """USD in CNY at the rate the page declares, four decimals ("1 USD = 6.7063 CNY"), so a reader can check it."""
    return usd * round(1 / table.fx["CNY"].usd_per_unit, 4)


@pytest.fixture(scope="module")
def tables() -> dict[str, prices.PriceTable]:
    return {"default": prices.default_table(), "good": prices.load_table(GOOD)}


@pytest.fixture(scope="module")
def facts(tables) -> dict[str, dict]:
    """Every fact of the chapter, for each price file."""
    return {name: ch04.facts(table) for name, table in tables.items()}


# ------------------------------------------------------------------ the page and its facts


def test_facts_are_what_the_page_cites_with_the_right_role(facts):
    cited = roles(NOTEBOOK) | {name: role for role, name in editions.catalog_citations(PAGE)}  # English page, Chinese catalog
    for name in FILES:
        assert set(facts[name]) == set(cited)
        for key, value in facts[name].items():
            if cited[key] == "md":
                assert isinstance(value, str), key
            else:  # {glue:text} with a format spec: a plain Python number (not numpy, not text)
                assert type(value) in (int, float), (key, type(value))


def test_price_facts_follow_the_file(tables, facts):
    for name in FILES:
        table, f = tables[name], facts[name]
        stamp = table.stamp()
        assert f["price_stamp"] == table.stamp_markdown()
        assert f"`{stamp['name']}`" in f["price_stamp"] and stamp["sha256_12"] in f["price_stamp"]
        assert f["n_offers"] == len(table.offers)
        assert f["n_providers"] == table.offers["provider"].nunique()
        assert f["n_gpus"] == table.offers["gpu"].nunique()
        assert (f["observed_from"], f["observed_to"]) == (min(table.offers["observed"]).isoformat(),
                                                          max(table.offers["observed"]).isoformat())
    assert facts["default"]["price_stamp"] != facts["good"]["price_stamp"]
    assert facts["default"]["n_offers"] != facts["good"]["n_offers"]


def test_the_chinese_stamp_states_the_rate_once_with_its_date(tables, facts):
    for name in FILES:
        rate, zh = tables[name].fx["CNY"], facts[name]["price_stamp_zh"]
        assert f"1 USD = {1 / rate.usd_per_unit:.4f} CNY" in zh and rate.date.isoformat() in zh
        assert f"`{tables[name].stamp()['fx_name']}`" in zh and tables[name].stamp()["sha256_12"] in zh
        # the China-market sentence refers to it instead of repeating it
        assert f"{1 / rate.usd_per_unit:.4f}" not in facts[name]["cny_sentence_zh"]


def test_landscape_facts_are_the_extremes_of_the_file(tables, facts):
    for name in FILES:
        offers, f = cost.offers(tables[name]), facts[name]
        usd = offers["price_per_gpu_hour_usd"]
        assert f["cheapest_price"] == f"USD {usd.min():.2f}" and f["dearest_price"] == f"USD {usd.max():.2f}"
        assert f["dearest_price_zh"] == f"¥{_cny(usd.max(), tables[name]):.2f}（\\${usd.max():.2f}）"
        assert f["cheapest_gpu"] == catalog.gpu(offers.loc[usd.idxmin(), "gpu"]).name
        assert f["cheapest_pricing"] == offers.loc[usd.idxmin(), "pricing"]
        assert f["dearest_gpu"] == catalog.gpu(offers.loc[usd.idxmax(), "gpu"]).name
        ratios = {f"{g} ({c})": (part.max() / part.min(), len(part))
                  for (g, c), part in offers.groupby(["gpu_name", "interconnect_class"])["price_per_gpu_hour_usd"]}
        assert (f["spread_x"], f["spread_offers"]) == pytest.approx(ratios[f["spread_gpu"]])
        assert f["spread_x"] == pytest.approx(max(x for x, _ in ratios.values()))
    assert facts["default"]["dearest_price"] != facts["good"]["dearest_price"]


def test_the_charged_premium_is_the_one_the_decision_table_weighs(tables, facts):
    """Chapter 4 states the premium charged that the introduction's decision table uses (one function,
    answer.pair): the same pairs, the same median, in whole per cent as the table shows it."""
    chosen = answer.pair(tables["default"])
    decided = answer.decision_table(tables["default"])
    assert len(chosen.charged_pct) > 1 and (decided["charged_pairs"] == len(chosen.charged_pct)).all()
    assert (decided["charged_premium_pct"] == chosen.median_pct).all()
    sentence = facts["default"]["charged_sentence"]
    assert f"Of these, {len(chosen.charged_pct)} pair" in sentence
    for value in (min(chosen.charged_pct), max(chosen.charged_pct), chosen.median_pct):
        assert f"{answer.shown(value):.0f} %" in sentence
    assert facts["default"]["charged_range"] == (f"{answer.shown(min(chosen.charged_pct)):.0f} % to "
                                                 f"{answer.shown(max(chosen.charged_pct)):.0f} %, median "
                                                 f"{answer.shown(chosen.median_pct):.0f} %, in this file")
    assert premium.charged_premiums(tables["good"]).empty
    assert facts["good"]["charged_sentence"].startswith("The file has no such pair")
    assert facts["good"]["charged_range"] == "this file has no such pair"


def test_break_even_facts_come_from_the_model_and_the_charged_premiums(tables, facts):
    value = premium.interconnect_value("dgx-a100", "pcie-a100-8").set_index("workload")
    one_node = [w for w in value.index if workloads.workload(w).kind == "train" and workloads.workload(w).gpus <= 8]
    for name in FILES:
        f = facts[name]
        assert f["be_train_min"] == value.loc[one_node, "break_even_premium_pct"].min()
        assert f["be_train_max"] == value.loc[one_node, "break_even_premium_pct"].max()
        assert f["be_train_70b"] == value.loc[analysis.TRAIN_70B, "break_even_premium_pct"]
        assert f["train_layout_8b"] == cost.plan(analysis.TRAIN_8B, "dgx-a100", 8).layout
        assert f["be_serve_70b_2k"] == f"{value.loc[analysis.SERVE_70B_2K, 'break_even_premium_pct']:.0f} %"
        be_8k = value.loc[analysis.SERVE_70B, "break_even_premium_pct"]
        if math.isinf(be_8k):  # the PCIe box cannot meet the per-user floor: the sentence says why
            assert value.loc[analysis.SERVE_70B, "pcie_reason"] in f["serve_70b_8k"]
        else:
            assert f["serve_70b_8k"] == f"the break-even premium is {be_8k:.0f} %"
    top = premium.charged_premiums(tables["default"])["premium_pct"].max()
    above = [w for w, v in value["break_even_premium_pct"].items() if v > top]
    assert above and facts["default"]["be_vs_charged"].endswith(", ".join(f"`{w}`" for w in above))
    assert facts["good"]["be_vs_charged"] == "the price file has no same-provider pair to compare them with"


def test_job_facts_are_the_cheapest_offers(tables, facts):
    for name in FILES:
        table, f = tables[name], facts[name]
        pricing = f["job_pricing"]  # offers are compared within one pricing type: the reference one
        train = cost.offer_costs(analysis.TRAIN_8B, table)
        train = train[train["pricing"] == pricing]
        best = train[train["feasible"]].sort_values("rank").iloc[0]
        assert f["cost_8b"] == significant(best["cost_usd"])
        assert f["cost_8b_zh"] == f"¥{significant(_cny(best['cost_usd'], table))}（\\${significant(best['cost_usd'])}）"
        assert f["time_8b_days"] == f"{best['time_h'] / 24:.0f}"
        assert f["class_8b"] == best["interconnect_class"]
        assert f["offer_8b"].startswith(f"{best['provider']}: ") and f"({pricing}" in f["offer_8b"]
        serve = cost.offer_costs(analysis.SERVE_70B, table)
        serve = serve[serve["pricing"] == pricing]
        assert f["cost_70b_serve"] == significant(serve[serve["feasible"]]["cost_usd"].min())
        assert f["n_cases"] == len(workloads.workloads_table()) * len(table.offers)
        every = cost.cost_table(table=table)
        assert f["n_infeasible"] == int((~every["feasible"].astype(bool)).sum()) > 0
        ok = every[every["feasible"].astype(bool) & (every["pricing"] == pricing)].groupby("workload")["cost_usd"]
        spread = ok.max() / ok.min()
        assert (f["job_spread_min"], f["job_spread_max"]) == pytest.approx((spread.min(), spread.max()))
    assert facts["default"]["cost_8b"] != facts["good"]["cost_8b"]


def test_market_sentence_states_the_rate_and_the_lowest_price(tables, facts):
    for name, count in (("default", "5 offers"), ("good", "1 offer")):
        table = tables[name]
        cny = table.offers[table.offers["currency"] == "CNY"]
        low = cny.loc[(cny["price_per_hour"] / cny["gpus_per_instance"]).idxmin()]
        sentence = facts[name]["cny_sentence"]
        assert sentence == ch04.market_sentence(table, "CNY")
        assert sentence.startswith(f"The file has {count} in CNY")
        assert f"{1 / table.fx['CNY'].usd_per_unit:.4f} CNY per USD" in sentence
        assert f"the lowest is {low['price_per_hour'] / low['gpus_per_instance']:.2f} CNY per GPU-hour" in sentence
        assert f"({short_gpu_name(low['gpu'])}, {low['pricing']})" in sentence and low["gpu"] not in sentence
    assert facts["default"]["cny_sentence"] != facts["good"]["cny_sentence"]
    assert ch04.market_sentence(tables["good"].of_pricing("on-demand")) == "The file has no offer in CNY."


def test_tornado_facts_describe_the_charts(tables, facts):
    assert analysis.tornado_workload("train", tables["default"]) == analysis.TORNADO_PREFERRED["train"]
    charts = analysis.tornados(tables["default"])
    assert [(kind, wid) for kind, wid, _ in charts] == [("training", analysis.TORNADO_PREFERRED["train"]),
                                                        ("serving", analysis.TORNADO_PREFERRED["serve"])]
    labels = cost.offers(tables["default"]).set_index("offer")["label"]
    for (_, wid, chart), key in zip(charts, ("tornado_train", "tornado_serve")):
        nv, pc = sensitivity.default_pair(wid, tables["default"])
        top = chart.iloc[0]
        text = facts["default"][key]
        assert text.startswith(f"{labels[nv]} against {labels[pc]}: the NVLink offer costs {top['ratio_base']:.2f}")
        assert f"the widest bar is the {top['factor']} ({top['ratio_low']:.2f} to {top['ratio_high']:.2f})" in text
    market = max(c[c["factor"].isin(analysis.MARKET_FACTORS)]["spread"].max() for _, _, c in charts)
    assert f"bars span up to {market:.2f} in the ratio" in facts["default"]["tornado_compare"]
    assert [wid for _, wid, _ in analysis.tornados(tables["good"])] == [None, None]
    assert facts["good"]["tornado_train"] == "the price file has no NVLink / PCIe pair for it"
    assert facts["good"]["tornado_compare"] == "with no pair in the price file, there is nothing to compare"


def test_claims_facts_follow_the_price_file(tables, facts):
    for name in FILES:
        assert tables[name].stamp()["sha256_12"] in facts[name]["c24_explanation"]
        assert tables[name].stamp()["sha256_12"] in facts[name]["c26_explanation"]
    cases = cost_claims.premium_cases(tables["default"])
    assert cases["cases"] > 0
    assert (f"cheaper per job in {cases['cheaper']} of {cases['cases']} cases ({cases['share_pct']:.0f} %)"
            in facts["default"]["c24_summary"])
    assert f"{cases['serve_share_pct']:.0f} % of the serving ones" in facts["default"]["c24_summary"]
    assert cost_claims.premium_cases(tables["good"])["cases"] == 0
    assert facts["good"]["c24_summary"].endswith("so there is no case to count.")
    assert facts["default"]["c24_verdict"] != facts["good"]["c24_verdict"] == "**cannot be checked**"  # the not-checkable verdict, by its name


def test_exercise_facts_do_the_exercises_arithmetic():
    f = ch04.exercise_facts()
    assert f["ex1_break_even_price"] == f"USD {f['ex1_price'] * f['ex1_hp'] / f['ex1_hn']:.2f}"
    assert f["ex1_pcie_price"] == f"USD {f['ex1_price']:.2f}" and f["ex2_od_price"] == f"USD {f['ex2_od']:.2f}"
    cny = _cny(f["ex2_spot"], prices.default_table())
    assert f["ex2_spot_price_zh"] == f"¥{cny:.2f}（\\${f['ex2_spot']:.2f}）"
    assert f["ex1_pct"] == pytest.approx(100 * (f["ex1_hp"] / f["ex1_hn"] - 1))
    assert f["ex1_hp"] > f["ex1_hn"] > 0
    assert f["ex2_u"] == pytest.approx(100 * f["ex2_spot"] / f["ex2_od"])
    assert f["ex3_days"] == pytest.approx(cost.plan(analysis.TRAIN_8B, "dgx-a100", 8).time_h() / 24)
    assert f["ex3_days_2x"] == pytest.approx(2 * f["ex3_days"])
    assert f["ex3_tokens_B"] == pytest.approx(workloads.workload(analysis.TRAIN_8B).tokens / 1e9)


def test_fmt_reads_right_for_missing_and_infinite_values():
    assert ch04.fmt(1234.5, ",.0f") == "1,234" and ch04.fmt(3.14159, ".1f", " %") == "3.1 %"
    assert ch04.fmt(None) == ch04.fmt(math.nan) == "n/a" and ch04.fmt(math.inf) == "unbounded"


# ------------------------------------------------------------------ tables and figures


def test_interconnect_values_stack_the_two_pairs():
    value = analysis.interconnect_values()
    n = len(workloads.workloads_table())
    assert len(value) == 2 * n
    assert list(zip(value["nvlink_system"], value["pcie_system"]))[::n] == list(analysis.VALUE_PAIRS)


def test_job_summary_and_best_by_class_agree(tables):
    jobs = analysis.job_summary(table=tables["good"])
    best = analysis.best_by_class(table=tables["good"])
    cheapest = best.groupby("workload")["cost_usd"].min()
    per_workload = jobs.groupby("workload")["cost_usd"].min()  # the cheapest pricing type's cheapest offer
    assert per_workload.loc[cheapest.index].to_numpy() == pytest.approx(cheapest.to_numpy())
    assert (jobs["max_cost_usd"].dropna() >= jobs["cost_usd"].dropna()).all()


def test_job_summary_compares_offers_of_one_pricing_type_and_names_them(tables):
    table = tables["default"]
    jobs = analysis.job_summary(table=table)
    offers = cost.offers(table).set_index("offer")
    for row in jobs.dropna(subset=["cheapest_offer"]).itertuples():
        offer = offers.loc[int(row.cheapest_offer)]
        assert offer["pricing"] == row.pricing and row.cheapest == offer["label"]
        assert row.cheapest.startswith(f"{offer['provider']}: ") and f"({row.pricing}" in row.cheapest


def test_figures_name_their_price_file(tables):
    table = tables["good"]
    sha = table.stamp()["sha256_12"]
    figures = [ch04fig.figure_landscape(table),
               ch04fig.figure_best_by_class(analysis.best_by_class(table=table), table),
               ch04fig.figure_break_even(analysis.interconnect_values(), premium.charged_premiums(table), table),
               ch04fig.figure_tornado("training", None, None, table)]
    for fig in figures:
        assert isinstance(fig, Figure)
        assert any(sha in t.get_text() for t in fig.texts)
        plt.close(fig)


# ------------------------------------------------------------------ both editions


def _money(text: str) -> list[tuple[float, float]]:
    """The (CNY, USD) amounts of Chinese prose money, "¥69,323（\\$10,337）"."""
    return [(float(a.replace(",", "")), float(b.replace(",", "")))
            for a, b in re.findall(r"¥([\d,.]+)（\\\$([\d,.]+)）", text)]


def test_every_text_fact_has_its_chinese_with_the_english_numbers(facts):
    for name in FILES:
        f = facts[name]
        texts = [k for k, v in f.items() if isinstance(v, str) and not k.endswith("_zh")]
        assert not [k for k in texts if k not in NEUTRAL and f"{k}_zh" not in f]
        assert not [k for k in NEUTRAL if f"{k}_zh" in f]
        for key in set(texts) - NEUTRAL - {"time_8b_days", "be_serve_70b_2k", "class_8b", "class_70b_serve"}:
            assert re.search(r"[\u4e00-\u9fff（）¥]", f[f"{key}_zh"]), (key, f[f"{key}_zh"])  # Chinese, or its marks
        for key in set(texts) - NEUTRAL - {"cny_sentence"}:  # the Chinese adds CNY, never drops a number
            missing = list(NUMBER.findall(f[f"{key}_zh"]))
            for number in NUMBER.findall(f[key]):
                assert number in missing, (key, number, f[f"{key}_zh"])
                missing.remove(number)
        assert not [k for k in f if k.endswith("_zh") and not isinstance(f[k], str)]


def test_chinese_money_is_cny_first_at_the_tables_rate(tables, facts):
    for name in FILES:
        rate = tables[name].fx["CNY"].usd_per_unit
        amounts = [a for key in ("cost_8b_zh", "cost_70b_serve_zh", "cheapest_price_zh", "dearest_price_zh",
                                 "cny_sentence_zh") for a in _money(facts[name][key])]
        assert len(amounts) == 5
        for cny, usd in amounts:
            assert cny * rate == pytest.approx(usd, rel=0.01, abs=0.01)
        assert "USD" in facts[name]["cost_8b"] or facts[name]["cost_8b"][0].isdigit()  # English: USD only
        assert not any("¥" in v or "CNY per USD" in v for k, v in facts[name].items()
                       if isinstance(v, str) and k.startswith(("cost_", "cheapest_", "dearest_")) and "_zh" not in k)


def test_the_chinese_catalog_cites_the_chinese_facts(facts):
    """The page's Chinese cites ``name_zh`` for every Markdown fact (computed in Chinese), numbers and data by
    their own name."""
    editions.check_catalog_cites_twins(facts["default"], PAGE, neutral=NEUTRAL)


def test_the_claim_texts_are_translated_with_their_words(facts):
    zh = facts["default"]
    assert zh["c24_verdict_zh"] == "**有条件成立**" and zh["c26_verdict_zh"] == "**有误导性**"
    assert "*成立*" in zh["c24_tests_zh"] and re.search(r"训练 \d+ %", zh["c24_tests_zh"])
    assert "按需" in zh["c26_tests_zh"] and "on-demand" not in zh["c26_tests_zh"]
    for key in ("c24_explanation_zh", "c26_explanation_zh", "in_short_zh", "tornado_train_zh", "length_takeaway_zh"):
        assert not re.search(r"\b(?:on-demand|reserved|cheaper|break-even|unbounded|pricing)\b", zh[key]), key
    assert facts["good"]["c24_verdict_zh"] == "**无法核验**"


@pytest.fixture(scope="module")
def chapter_tables(tables) -> dict[str, dict[str, str]]:
    """Every table of the chapter (its ``*_html`` function, as the notebook calls it) per language."""
    table = tables["default"]
    calls = {"workloads": lambda: ch04.workloads_html(), "landscape": lambda: ch04.landscape_html(table),
             "by-provider": lambda: ch04.landscape_html(table, by=("provider_type", "interconnect_class"), csv_name="x"),
             "charged": lambda: ch04.charged_html(table), "break-even": lambda: ch04.break_even_html(
                 analysis.interconnect_values()), "jobs": lambda: ch04.job_summary_html(table),
             "sizes": lambda: ch04.size_html(table), "market": lambda: ch04.market_html(table),
             "claims": lambda: ch04.claims_html(ch04.cost_verdicts(table))}
    for i, (_kind, workload_id, tornado) in enumerate(analysis.tornados(table)):
        calls[f"tornado-{i}"] = lambda i=i, w=workload_id, t=tornado: ch04.tornado_html(i, w, t)
    return {name: lang.per_language(make) for name, make in calls.items()}


#: Headers that are names, the same in both languages.
NAMES = {"GPU", "ID"}


def _heads(page: str) -> list[str]:
    return re.findall(r"<th [^>]*>([^<]*)</th>", page)


def _cells(page: str) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>")[1])
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row)] for row in rows]


def test_every_table_has_chinese_headers_and_the_english_cells(chapter_tables):
    for name, pages in chapter_tables.items():
        heads = _heads(pages["zh"])
        assert all(CHINESE.search(h) or h in NAMES for h in heads), (name, heads)
        en_heads = _heads(pages["en"])
        assert not [h for h in en_heads if CHINESE.search(h) or "CNY" in h] or name == "market", (name, en_heads)
        # the Chinese table is the English one with a CNY column before each USD column
        keep = [i for i, h in enumerate(heads) if not ("CNY" in h and name != "market")]
        assert len(keep) == len(en_heads), name
        en, zh = _cells(pages["en"]), _cells(pages["zh"])
        assert len(en) == len(zh), name
        words = {i for i, h in enumerate(en_heads) if h in {"Workload", "Kind", "Method", "Pricing",
                                                            "Interconnect class", "Provider type", "Cheapest",
                                                            "Cheapest class", "Unit", "Cost unit", "Factor", "Verdict",
                                                            "Seed value", "Model value", "Confidence"}}
        for a, b in zip(en, zh):
            b = [b[i] for i in keep]
            assert [x for i, x in enumerate(a) if i not in words] == [x for i, x in enumerate(b) if i not in words]
        assert "下载此表（CSV）" in pages["zh"] and "Download this table (CSV)" in pages["en"]


def test_chinese_tables_put_cny_before_usd_at_the_tables_rate(tables, chapter_tables):
    rate = tables["default"].fx["CNY"].usd_per_unit
    for name in ("landscape", "by-provider", "charged", "jobs"):
        heads, rows = _heads(chapter_tables[name]["zh"]), _cells(chapter_tables[name]["zh"])
        pairs = [(i, i + 1) for i, h in enumerate(heads) if "CNY" in h]
        assert pairs and all("USD" in heads[j] for _, j in pairs), (name, heads)
        for row in rows:
            for i, j in pairs:
                if row[i] != "—":
                    # an estimate with its interval, "x (lo–hi)", is compared by its value
                    cny, usd = (float(row[k].split(" (")[0].replace(",", "")) for k in (i, j))
                    assert cny * rate == pytest.approx(usd, rel=0.02, abs=0.01), (name, row[i], row[j])


def test_chinese_figures_draw_money_in_cny_and_pass_the_house_checks(tables):
    table = tables["default"]
    value, charged = analysis.interconnect_values(), premium.charged_premiums(table)
    best = analysis.best_by_class(table=table)
    charts = analysis.tornados(table)
    makers = [lambda: ch04fig.figure_landscape(table), lambda: ch04fig.figure_break_even(value, charged, table),
              lambda: ch04fig.figure_best_by_class(best, table),
              *[lambda k=k, w=w, t=t: ch04fig.figure_tornado(k, w, t, table) for k, w, t in charts]]
    for make in makers:
        figs = plotting.draw_editions(make)
        try:
            en, zh = figs["en"], figs["zh"]
            assert CHINESE.search(zh._suptitle.get_text()) and "来源" in " ".join(t.get_text() for t in zh.texts)
            labels = " ".join(a.get_xlabel() + a.get_ylabel() for a in zh.axes)
            assert ("CNY" in labels) == ("USD" in " ".join(a.get_xlabel() + a.get_ylabel() for a in en.axes))
            assert "USD" not in labels and "CNY" not in " ".join(a.get_xlabel() + a.get_ylabel() for a in en.axes)
            if "CNY" in labels:
                assert "6.7063" in " ".join(t.get_text() for t in zh.texts)  # the source line names the rate
            alt = plotting.get_alt(zh)
            assert CHINESE.search(alt) and re.search(r"\d", alt) and alt != plotting.get_alt(en)
            legend = [t.get_text() for a in zh.axes if a.get_legend() for t in a.get_legend().get_texts()]
            assert not [t for t in legend if re.search(r"\b(?:on-demand|spot|setting|premium)\b", t)], legend
            checked = plotting.readability(zh)
            assert checked["min_text_px"] >= plotting.MIN_TEXT_PX and not checked["contrast_problems"]
            assert not checked["overlaps"] and checked["phone_min_width_px"] <= plotting.COLUMN_PX
        finally:
            for fig in figs.values():
                plt.close(fig)


def test_the_landscape_in_cny_is_the_usd_one_converted(tables):
    table = tables["default"]
    figs = plotting.draw_editions(lambda: ch04fig.figure_landscape(table))
    try:
        en = sorted(x for c in figs["en"].axes[0].collections for x, _ in c.get_offsets())
        zh = sorted(x for c in figs["zh"].axes[0].collections for x, _ in c.get_offsets())
        assert zh == pytest.approx([_cny(x, table) for x in en])
    finally:
        for fig in figs.values():
            plt.close(fig)


def test_the_notebook_stores_every_figure_and_table_in_both_editions():
    pages, figures = editions.stored_pages(NOTEBOOK)
    assert len(figures) == 5 and len(pages) == 5 + 12 + 1  # five figures, twelve tables, the price calculator
    assert sum("CNY" in p.split('<div class="mg-lang-zh"')[1] for p in figures) == 2  # landscape, cheapest offers
    assert not any("CNY" in p.split('<div class="mg-lang-zh"')[0] for p in figures)


def test_the_chinese_table_frames_keep_the_english_csv_columns(tables):
    table = tables["default"]
    with lang.using("zh"):
        frame, shown = ch04.money_columns(pd.DataFrame({"a": [1], "cost_usd": [7.0]}), ["a", "cost_usd"], table)
    assert shown == ["a", "cost_cny", "cost_usd"] and frame["cost_cny"].iloc[0] == pytest.approx(_cny(7.0, table))
    assert ch04.money_columns(frame, ["a"], table)[1] == ["a"]
