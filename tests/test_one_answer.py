"""A question asked in two places gets one answer: the model size from which an NVLink class is the cheapest
way to train is read by chapter 4's size table, chapter 5's guide, claim C26 and the CLI's ``claims`` from one
computation (:func:`multigpu.evidence.guide.training_size_lines`).

Before, chapter 4 (the cost workloads, one instance each) put the reserved-price line at 8-14.8B and chapter 5
(the guide's jobs, within a deadline) at 14.8-70.6B.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from multigpu.book import ch04_cost as ch04
from multigpu.cli.app import main
from multigpu.evidence import claims, guide
from multigpu.evidence.claims import cost as cost_claims
from multigpu.market import prices


@pytest.fixture(scope="module")
def table():
    return prices.default_table()


@pytest.fixture(scope="module")
def decided(table):
    return guide.decisions(table)  # chapter 5's decisions, training and serving


def test_chapters_and_the_claim_read_one_size_line(table, decided):
    lines = cost_claims.size_lines(table)
    chapter5 = guide.thresholds(decided)
    chapter5 = chapter5[chapter5["kind"] == "train"].reset_index(drop=True)
    pd.testing.assert_frame_equal(lines.reset_index(drop=True), chapter5)
    sizes = ch04.size_table(table)  # chapter 4's table: the same ratios as chapter 5's decisions
    train = decided[decided["kind"] == "train"]
    for row in train.dropna(subset=["nvlink_over_pcie"]).itertuples():
        cell = sizes.loc[sizes["model"] == row.model, f"{row.pricing}: NVLink / PCIe cost"].iloc[0]
        assert cell == pytest.approx(row.nvlink_over_pcie, rel=1e-12)
    verdict = claims.check("C26", claims.Inputs(prices=table))
    for record in lines.to_dict("records"):
        assert f"{record['pricing']}: {cost_claims._line_text(record)}" in verdict.model_value


def test_the_cli_gives_the_same_answer(table, capsys):
    expected = claims.check("C26", claims.Inputs(prices=table))
    assert main(["claims", "C26", "--format", "json"]) == 0  # in this process: the searches come from the memo
    (row,) = json.loads(capsys.readouterr().out)
    assert row["model_value"] == expected.model_value and row["verdict"] == expected.verdict
