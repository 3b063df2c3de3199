"""Chapter 4's job summary carries each cheapest cost's 90 % prediction interval, in both editions."""

import math
import re

import pytest

from multigpu.book import ch04_cost, lang
from multigpu.evidence import cost, intervals
from multigpu.market import cost as market_cost
from multigpu.market import prices, workloads

RANGE = re.compile(r"^[\d,.]+ \([\d,.]+–[\d,.]+\)$")


@pytest.fixture(scope="module")
def summary():
    return cost.job_summary()


def test_each_cheapest_cost_sits_inside_its_interval(summary):
    feasible = summary[summary["cost_usd"].notna()]
    assert len(feasible) > 10
    assert (feasible["cost_usd_lo"] <= feasible["cost_usd"] * (1 + 1e-12)).all()
    assert (feasible["cost_usd"] <= feasible["cost_usd_hi"]).all()
    assert summary.loc[summary["cost_usd"].isna(), "cost_usd_lo"].isna().all()


def test_the_interval_is_the_cost_commands_for_that_offer(summary):
    row = summary[summary["cost_usd"].notna()].iloc[0]
    costs = market_cost.offer_costs(row["workload"], prices.resolve(None))
    top = costs[costs["offer"] == row["cheapest_offer"]]
    bounds = intervals.cost_bounds(top, [workloads.workload(row["workload"]).kind])
    assert (row["cost_usd_lo"], row["cost_usd_hi"]) == pytest.approx(
        (bounds["cost_usd_lo"].iloc[0], bounds["cost_usd_hi"].iloc[0]))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_table_prints_value_and_range_and_says_so(language):
    with lang.using(language):
        html = ch04_cost.job_summary_html(prices.resolve(None))
    cells = re.findall(r"<td[^>]*>([^<]*–[^<]*)</td>", html)
    assert cells and all(RANGE.match(c) for c in cells)
    for cell in cells:
        value, low, high = (float(x.replace(",", "")) for x in re.findall(r"[\d,.]+", cell))
        assert low <= value * (1 + 1e-9) and value <= high and math.isfinite(high)
    assert "mg-table-caption" in html and ("90 %" in html)
