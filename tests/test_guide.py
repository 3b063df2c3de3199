"""The selection guide of chapter 5 (multigpu.evidence.guide): classes, picks, size lines, price flips, figures."""

import math
from pathlib import Path

import pandas as pd
import pytest

from multigpu.book import ch05_figures as ch05fig
from multigpu.book import plotting
from multigpu.evidence import guide
from multigpu.market import cost, prices

GOOD = Path(__file__).parent / "data" / "prices" / "good.csv"
MODELS = ("llama3.2-1b", "llama3.1-8b")


@pytest.fixture(scope="module")
def small_guide():
    """The guide on the test price file, two models, at most 16 GPUs per training option (fast)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guide, "MAX_GPUS", 16)
        table = prices.load_table(GOOD)
        yield table, guide.decisions(table, MODELS)


def test_guide_class_of_an_option():
    row = {"interconnect_class": "PCIe only", "instances": 4, "system": "pcie-a100-8"}
    assert guide.guide_class(row) == "PCIe"
    assert guide.guide_class({**row, "interconnect_class": "NVLink bridge", "system": "pcie-h100-nvl-pairs"}) == \
        "NVLink bridge"
    switch = {"interconnect_class": "NVSwitch", "instances": 1, "system": "hgx-h100"}
    assert guide.guide_class(switch) == "NVSwitch node"
    assert guide.guide_class({**switch, "instances": 2}) == "multi-node / NVL72"
    assert guide.guide_class({**switch, "system": "gb200-nvl72"}) == "multi-node / NVL72"
    assert guide.guide_class({**switch, "instances": None}) == "NVSwitch node"
    # serving replicas never talk to each other: many instances of one node keep the node's class
    assert guide.guide_class({**switch, "instances": 6, "tpot_ms": 20.0}) == "NVSwitch node"
    assert guide.guide_class({**switch, "system": "gb200-nvl72", "tpot_ms": 20.0}) == "multi-node / NVL72"


def test_decisions_pick_the_cheapest_within_the_tie(small_guide):
    table, decided = small_guide
    assert list(decided.columns) == list(guide.DECISION_COLUMNS)
    assert len(decided) == len(MODELS) * 2 * len(guide.pricing_types(table))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guide, "MAX_GPUS", 16)
        for r in decided[decided["guide_class"] != "none feasible"].to_dict("records"):
            frame = guide.options(r["model"], r["kind"], table)
            ok = frame[frame["feasible"] & (frame["pricing"] == r["pricing"])]
            floor = ok[guide.cost_column(r["kind"])].min()
            assert floor <= r["cost"] <= floor * (1 + guide.TIE_PCT / 100)
            pcie = ok[ok["guide_class"] == "PCIe"][guide.cost_column(r["kind"])]
            nvl = ok[ok["guide_class"] != "PCIe"][guide.cost_column(r["kind"])]
            assert r["pcie_cost"] == (pcie.min() if len(pcie) else pytest.approx(math.nan, nan_ok=True))
            if len(pcie) and len(nvl):
                assert r["nvlink_over_pcie"] == pytest.approx(nvl.min() / pcie.min())


def synthetic(classes, sizes=(1.0, 3.0, 8.0, 14.0, 70.0)):
    return pd.DataFrame({"kind": "train", "pricing": "on-demand", "params_B": list(sizes), "guide_class": classes})


def test_thresholds_find_the_size_line():
    t = guide.thresholds(synthetic(["PCIe", "PCIe", "PCIe", "NVSwitch node", "multi-node / NVL72"])).iloc[0]
    assert (t["below_B"], t["threshold_B"]) == (8.0, 14.0) and "between 8.0B and 14.0B" in t["text"]
    t = guide.thresholds(synthetic(["NVSwitch node"] * 5)).iloc[0]
    assert t["below_B"] is None and t["threshold_B"] == 1.0 and "from the smallest model" in t["text"]
    t = guide.thresholds(synthetic(["PCIe", "NVSwitch node", "PCIe", "NVSwitch node", "none feasible"])).iloc[0]
    assert (t["below_B"], t["threshold_B"]) == (8.0, 14.0)  # the line is where NVLink wins at every larger size
    t = guide.thresholds(synthetic(["NVSwitch node"] * 4 + ["PCIe"])).iloc[0]
    assert t["threshold_B"] is None and "still the pick" in t["text"]


def test_scale_prices_touches_only_the_given_classes(small_guide):
    table, _ = small_guide
    half = guide.scale_prices(table, 0.5).offers
    offers = table.offers
    pcie = [cost.interconnect_class(s) == cost.PCIE_CLASS for s in offers["system"]]
    for column in ("price_per_hour", "price_per_hour_usd", "price_per_gpu_hour_usd"):
        assert half.loc[pcie, column].tolist() == pytest.approx((offers.loc[pcie, column] * 0.5).tolist())
        assert half.loc[[not p for p in pcie], column].tolist() == offers.loc[[not p for p in pcie], column].tolist()
    assert guide.scale_prices(table, 0.5).key != table.key  # a what-if table is told apart from the original


def test_a_pcie_price_cut_past_the_flip_scale_flips_the_pick(small_guide):
    table, decided = small_guide
    flips = guide.flip_scales(decided)
    assert (flips["pcie_price_scale_to_flip"] == flips["nvlink_cost"] / flips["pcie_cost"]).all()
    nvlink_wins = flips[flips["pcie_price_scale_to_flip"] < 1]
    assert not nvlink_wins.empty, "the test price file should have a case NVLink wins"
    case = nvlink_wins.iloc[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guide, "MAX_GPUS", 16)
        demo = guide.flip_demo(case["model"], case["kind"], case["pricing"], case["pcie_price_scale_to_flip"],
                               table=table)
    assert demo["cheapest class"].iloc[0] != "PCIe" and demo["cheapest class"].iloc[1] != "PCIe"
    assert demo["cheapest class"].iloc[2] == "PCIe"


def test_chapter_tables(small_guide):
    _, decided = small_guide
    ref = guide.reference_pricing(prices.load_table(GOOD))
    assert ref == "on-demand"
    train = guide.summary(decided, ref, "train")
    assert train.index.name == "model" and "cost_usd_per_job" in train and "time_days" in train
    serve = guide.summary(decided, ref, "serve")
    assert "cost_usd_per_1M_tokens" in serve and "time_days" not in serve
    flips = guide.flip_table(decided, ref)
    assert list(flips.columns) == ["params_B", "workload", "cheaper", "nvlink_pick", "PCIe price x to flip"]


def test_figures_draw(small_guide):
    table, decided = small_guide
    fig, ax = plotting.figure("matrix", "workload", "model", source="test")
    ch05fig.plot_decision_matrix(ax, decided)
    assert "<svg" in plotting.to_svg(fig)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guide, "MAX_GPUS", 16)
        fig, axes = plotting.figure("classes", "size", "cost", source="test", ncols=2)
        ch05fig.plot_class_costs(axes[0], guide.class_costs(MODELS, "train", "on-demand", table))
        frame = guide.options("llama3.1-8b", "train", table)
        ch05fig.plot_pareto(axes[1], frame, "8B", deadline_h=guide.DEADLINE_DAYS * 24)
    assert "<svg" in plotting.to_svg(fig)


def test_a_system_has_one_class_label_in_every_chapter():
    """Chapter 4's interconnect class and chapter 5's guide class name a one-node option alike (the 8x MI300X
    point-to-point box is a GPU mesh in both, not an NVSwitch node)."""
    from multigpu.market import cost

    for system_id in ("mi300x-8", "hgx-h100", "pcie-a100-8"):
        row = {"interconnect_class": cost.interconnect_class(system_id), "instances": 1, "system": system_id}
        label = guide.guide_class(row)
        assert label == "PCIe" if row["interconnect_class"] == cost.PCIE_CLASS else label.startswith(
            row["interconnect_class"]), (system_id, label)
    assert guide.guide_class({"interconnect_class": cost.interconnect_class("mi300x-8"), "instances": 1,
                              "system": "mi300x-8"}) == "GPU mesh node"
