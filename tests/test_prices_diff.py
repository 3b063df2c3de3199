"""``prices diff OLD NEW``: offers added, removed and repriced, and the picks, premiums and verdicts that move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from multigpu.cli import main
from multigpu.evidence import pricediff
from multigpu.market import prices

GOOD = Path(__file__).parent / "data" / "prices" / "good.csv"


@pytest.fixture(scope="module")
def changed(tmp_path_factory) -> Path:
    """good.csv with the on-demand us-east-1 H100 offer at half price, the spot offer gone and a new one."""
    lines = GOOD.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        if ",spot," in line:
            continue  # removed
        if "on-demand,2026-09-20,https://example.com/pricing,us-east-1" in line:
            line = line.replace(",31.92,", ",15.96,")  # repriced
        out.append(line)
    out.append("Crusoe,8x H100,h100-sxm,8,nvswitch3,20.00,USD,on-demand,2026-09-20,https://example.org,,,,")
    path = tmp_path_factory.mktemp("diff") / "new.csv"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def test_offers_added_removed_and_repriced(changed):
    found = pricediff.offer_changes(prices.load_table(GOOD), prices.load_table(changed))
    kinds = [(c.change, c.item.split(":")[0]) for c in found]
    assert kinds == [("added", "Crusoe"), ("removed", "Lambda"), ("repriced", "Lambda")]
    repriced = found[-1]
    assert repriced.change_pct == pytest.approx(-50.0) and "us-east-1" in repriced.item


def test_a_cheaper_offer_moves_picks_and_the_diff_of_a_file_with_itself_is_empty(changed):
    old, new = prices.load_table(GOOD), prices.load_table(changed)
    picks = pricediff.pick_changes(old, new)
    assert picks and all(c.section == "picks" for c in picks)
    assert any("15.96" not in c.new and c.change_pct is not None and c.change_pct < 0 for c in picks)
    assert pricediff.diff(old, old) == []


def test_cli_formats(capsys, changed):
    assert main(["prices", "diff", str(GOOD), str(changed), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {"old", "new", "offers", "picks", "break-even", "verdicts"}
    assert result["old"]["name"] == "good.csv" and len(result["offers"]) == 3
    assert main(["prices", "diff", str(GOOD), str(changed), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "section,change,item,old,new,change_pct" and len(lines) > 3
    assert main(["prices", "diff", str(GOOD), str(GOOD)]) == 0
    assert "No offer, pick, premium or verdict changes." in capsys.readouterr().out
