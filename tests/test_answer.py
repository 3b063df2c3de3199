"""The introduction's answer (multigpu.evidence.answer, multigpu.book.intro): the decision table and the five
lines are computed from the model and the price file, by a stated rule, and change when the prices do."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd
import pytest
from glue_citations import check_cited

from multigpu.book import intro
from multigpu.evidence import answer, claims, guide
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
    bands = claims.bands()
    for r in default.itertuples():
        assert r.error_band_pct == bands[answer.BAND[r.kind]]
        assert r.verdict == answer.verdict(r.break_even_premium_pct, r.charged_premium_pct, r.error_band_pct)


def test_cheaper_nvlink_offers_flip_the_training_verdicts(tmp_path, default):
    """Halving every A100 SXM price makes the NVSwitch board cheaper per GPU-hour than the PCIe server:
    no workload can then be "PCIe cheaper"."""
    cheap = answer.decision_table(scaled_prices(tmp_path, "a100-sxm4-80gb", 0.5))
    assert (cheap["charged_premium_pct"] < 0).all()
    assert "PCIe cheaper" in set(default["verdict"]) and "PCIe cheaper" not in set(cheap["verdict"])
    assert (cheap["verdict"] == "NVLink-class cheaper").sum() > (default["verdict"] == "NVLink-class cheaper").sum()


def test_a_file_without_a_pair_prices_no_verdict():
    table = prices.load_table(GOOD)
    decided = answer.decision_table(table)
    finite = decided[~decided["break_even_premium_pct"].isin([math.inf]) & decided["break_even_premium_pct"].notna()]
    assert decided["charged_premium_pct"].isna().all() and (finite["verdict"] == "no pair to price").all()
    facts = intro.facts(decided, table)
    assert facts["no_pair_note"] and "no same-provider pair" in facts["answer_3"]
    assert set(intro.decision_frame(decided)["charged"]) == {"—"}


def test_the_five_lines_carry_the_table_s_numbers(default):
    table = prices.default_table()
    lines = answer.summary(default, guide.training_size_lines(table))
    assert len(lines) == 5
    train = default[default["kind"] == "train"]["break_even_premium_pct"]
    assert f"{train.min():.0f} to {train.max():.0f} %" in lines[0]
    assert f"a median {default['charged_premium_pct'].iloc[0]:.0f} %" in lines[2]
    bands = claims.bands()
    assert f"{bands['training']:.0f} % for training" in lines[4]


def test_the_intro_cites_every_fact():
    table = prices.default_table()
    decided = answer.decision_table(table)
    check_cited(intro.facts(decided, table), NOTEBOOK, exact=True, at_least=8)
    frame = intro.decision_frame(decided)
    assert list(frame.columns) == [*intro.LABELS, "href"]
    assert set(frame["href"]) <= {f"{page}.html" for page in intro.PAGES}
