"""Chapter 4's book module (multigpu.book.ch04_cost): the facts its prose cites, built from the price table.

Every price-dependent fact is checked on the packaged price file and on tests/data/prices/good.csv: the
sentences carry the numbers they are built from (recomputed here from the market layer), and the two files
give different text where their numbers differ.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from glue_citations import roles
from matplotlib.figure import Figure

from multigpu.book import ch04_cost as ch04
from multigpu.evidence.claims import cost as cost_claims
from multigpu.hardware import catalog
from multigpu.market import cost, premium, prices, sensitivity, workloads

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
NOTEBOOK = ROOT / "book" / "chapters" / "04-cost-benefit.ipynb"
FILES = ("default", "good")


@pytest.fixture(scope="module")
def tables() -> dict[str, prices.PriceTable]:
    return {"default": prices.default_table(), "good": prices.load_table(GOOD)}


@pytest.fixture(scope="module")
def facts(tables) -> dict[str, dict]:
    """Every fact of the chapter, for each price file."""
    return {name: ch04.facts(table) for name, table in tables.items()}


# ------------------------------------------------------------------ the page and its facts


def test_facts_are_what_the_page_cites_with_the_right_role(facts):
    cited = roles(NOTEBOOK)
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


def test_landscape_facts_are_the_extremes_of_the_file(tables, facts):
    for name in FILES:
        offers, f = cost.offers(tables[name]), facts[name]
        usd = offers["price_per_gpu_hour_usd"]
        assert f["cheapest_usd"] == usd.min() and f["dearest_usd"] == usd.max()
        assert f["cheapest_gpu"] == catalog.gpu(offers.loc[usd.idxmin(), "gpu"]).name
        assert f["cheapest_pricing"] == offers.loc[usd.idxmin(), "pricing"]
        assert f["dearest_gpu"] == catalog.gpu(offers.loc[usd.idxmax(), "gpu"]).name
        ratios = {f"{g} ({c})": (part.max() / part.min(), len(part))
                  for (g, c), part in offers.groupby(["gpu_name", "interconnect_class"])["price_per_gpu_hour_usd"]}
        assert (f["spread_x"], f["spread_offers"]) == pytest.approx(ratios[f["spread_gpu"]])
        assert f["spread_x"] == pytest.approx(max(x for x, _ in ratios.values()))
    assert facts["default"]["dearest_usd"] != facts["good"]["dearest_usd"]


def test_charged_sentence_is_built_from_the_premiums(tables, facts):
    charged = premium.charged_premiums(tables["default"])["premium_pct"]
    assert len(charged) > 1
    sentence = facts["default"]["charged_sentence"]
    assert f"{len(charged)} such same-provider pairs" in sentence
    for value in (charged.min(), charged.max(), charged.median()):
        assert f"{value:.1f} %" in sentence
    assert facts["default"]["charged_range"] == f"{charged.min():.1f} % to {charged.max():.1f} % in this file"
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
        assert f["be_train_70b"] == value.loc[ch04.TRAIN_70B, "break_even_premium_pct"]
        assert f["train_layout_8b"] == cost.plan(ch04.TRAIN_8B, "dgx-a100", 8).layout
        assert f["be_serve_70b_2k"] == f"{value.loc[ch04.SERVE_70B_2K, 'break_even_premium_pct']:.0f} %"
        be_8k = value.loc[ch04.SERVE_70B, "break_even_premium_pct"]
        if math.isinf(be_8k):  # the PCIe box cannot meet the per-user floor: the sentence says why
            assert value.loc[ch04.SERVE_70B, "pcie_reason"] in f["serve_70b_8k"]
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
        train = cost.offer_costs(ch04.TRAIN_8B, table)
        train = train[train["pricing"] == pricing]
        best = train[train["feasible"]].sort_values("rank").iloc[0]
        assert f["cost_8b"] == f"{best['cost_usd']:,.0f}"
        assert f["time_8b_days"] == f"{best['time_h'] / 24:.0f}"
        assert f["class_8b"] == best["interconnect_class"]
        assert f["offer_8b"].startswith(f"{best['provider']}: ") and f"({pricing}" in f["offer_8b"]
        serve = cost.offer_costs(ch04.SERVE_70B, table)
        serve = serve[serve["pricing"] == pricing]
        assert f["cost_70b_serve"] == f"{serve[serve['feasible']]['cost_usd'].min():.2f}"
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
        assert f"({low['gpu']}, {low['pricing']})" in sentence
    assert facts["default"]["cny_sentence"] != facts["good"]["cny_sentence"]
    assert ch04.market_sentence(tables["good"].of_pricing("on-demand")) == "The file has no offer in CNY."


def test_tornado_facts_describe_the_charts(tables, facts):
    assert ch04.tornado_workload("train", tables["default"]) == ch04.TORNADO_PREFERRED["train"]
    charts = ch04.tornados(tables["default"])
    assert [(kind, wid) for kind, wid, _ in charts] == [("training", ch04.TORNADO_PREFERRED["train"]),
                                                        ("serving", ch04.TORNADO_PREFERRED["serve"])]
    labels = cost.offers(tables["default"]).set_index("offer")["label"]
    for (_, wid, chart), key in zip(charts, ("tornado_train", "tornado_serve")):
        nv, pc = sensitivity.default_pair(wid, tables["default"])
        top = chart.iloc[0]
        text = facts["default"][key]
        assert text.startswith(f"{labels[nv]} against {labels[pc]}: the NVLink offer costs {top['ratio_base']:.2f}")
        assert f"the widest bar is the {top['factor']} ({top['ratio_low']:.2f} to {top['ratio_high']:.2f})" in text
    market = max(c[c["factor"].isin(ch04.MARKET_FACTORS)]["spread"].max() for _, _, c in charts)
    assert f"bars span up to {market:.2f} in the ratio" in facts["default"]["tornado_compare"]
    assert [wid for _, wid, _ in ch04.tornados(tables["good"])] == [None, None]
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
    assert facts["default"]["c24_verdict"] != facts["good"]["c24_verdict"] == "**not-checkable**"


def test_exercise_facts_do_the_exercises_arithmetic():
    f = ch04.exercise_facts()
    assert f["ex1_be"] == pytest.approx(f["ex1_price"] * f["ex1_hp"] / f["ex1_hn"])
    assert f["ex1_pct"] == pytest.approx(100 * (f["ex1_hp"] / f["ex1_hn"] - 1))
    assert f["ex1_hp"] > f["ex1_hn"] > 0
    assert f["ex2_u"] == pytest.approx(100 * f["ex2_spot"] / f["ex2_od"])
    assert f["ex3_days"] == pytest.approx(cost.plan(ch04.TRAIN_8B, "dgx-a100", 8).time_h() / 24)
    assert f["ex3_days_2x"] == pytest.approx(2 * f["ex3_days"])
    assert f["ex3_tokens_B"] == pytest.approx(workloads.workload(ch04.TRAIN_8B).tokens / 1e9)


def test_fmt_reads_right_for_missing_and_infinite_values():
    assert ch04.fmt(1234.5, ",.0f") == "1,234" and ch04.fmt(3.14159, ".1f", " %") == "3.1 %"
    assert ch04.fmt(None) == ch04.fmt(math.nan) == "n/a" and ch04.fmt(math.inf) == "unbounded"


# ------------------------------------------------------------------ tables and figures


def test_interconnect_values_stack_the_two_pairs():
    value = ch04.interconnect_values()
    n = len(workloads.workloads_table())
    assert len(value) == 2 * n
    assert list(zip(value["nvlink_system"], value["pcie_system"]))[::n] == list(ch04.VALUE_PAIRS)


def test_job_summary_and_best_by_class_agree(tables):
    jobs = ch04.job_summary(table=tables["good"])
    best = ch04.best_by_class(table=tables["good"])
    cheapest = best.groupby("workload")["cost_usd"].min()
    per_workload = jobs.groupby("workload")["cost_usd"].min()  # the cheapest pricing type's cheapest offer
    assert per_workload.loc[cheapest.index].to_numpy() == pytest.approx(cheapest.to_numpy())
    assert (jobs["max_cost_usd"].dropna() >= jobs["cost_usd"].dropna()).all()


def test_job_summary_compares_offers_of_one_pricing_type_and_names_them(tables):
    table = tables["default"]
    jobs = ch04.job_summary(table=table)
    offers = cost.offers(table).set_index("offer")
    for row in jobs.dropna(subset=["cheapest_offer"]).itertuples():
        offer = offers.loc[int(row.cheapest_offer)]
        assert offer["pricing"] == row.pricing and row.cheapest == offer["label"]
        assert row.cheapest.startswith(f"{offer['provider']}: ") and f"({row.pricing}" in row.cheapest


def test_figures_name_their_price_file(tables):
    table = tables["good"]
    sha = table.stamp()["sha256_12"]
    figures = [ch04.figure_landscape(table),
               ch04.figure_best_by_class(ch04.best_by_class(table=table), table),
               ch04.figure_break_even(ch04.interconnect_values(), premium.charged_premiums(table), table),
               ch04.figure_tornado("training", None, None, table)]
    for fig in figures:
        assert isinstance(fig, Figure)
        assert any(sha in t.get_text() for t in fig.texts)
        plt.close(fig)
