"""``report``: every price-dependent table as CSV with a provenance stamp and full precision, one workbook,
stable offer ids, and a second run with another price file that only prices (issue 17)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from multigpu.book import report
from multigpu.cli import main
from multigpu.comm import calibration
from multigpu.market import cost, prices

GOOD = Path(__file__).parent / "data" / "prices" / "good.csv"
STAMP = ("price_file", "price_file_sha256", "observed_from", "observed_to", "fx_table", "fx_rates",
         "package_version", "calibration_digest")


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("report")
    result = subprocess.run([sys.executable, "-m", "multigpu", "report", "--prices", str(GOOD), "--out", str(out),
                             "--format", "json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out, json.loads(result.stdout)


def test_every_table_is_a_csv_with_the_stamp(written):
    out, summary = written
    table = prices.load_table(GOOD)
    names = {p.stem for p in out.glob("*.csv")}
    assert {"offers", "costs", "break_even", "job_summary", "guide_decisions", "claims", "c24_cases"} <= names
    assert len(names) == summary["tables"]
    for path in out.glob("*.csv"):
        header = next(csv.reader(path.open(encoding="utf-8")))
        assert header[-len(STAMP):] == list(STAMP), path.name
        for row in rows(path):
            assert row["price_file"] == "good.csv" and row["price_file_sha256"] == table.sha256
            assert row["calibration_digest"] == calibration.default().digest
            assert "CNY = " in row["fx_rates"]


def test_numbers_are_written_at_full_precision_with_stable_offer_ids(written):
    out, _ = written
    table = prices.load_table(GOOD)
    expected = cost.offer_costs("train-llama3.1-8b", table).set_index("offer")
    for row in rows(out / "costs.csv"):
        if row["workload"] == "train-llama3.1-8b" and row["cost_usd"]:
            assert float(row["cost_usd"]) == expected.loc[int(row["offer"]), "cost_usd"]  # exact, not rounded
            assert row["offer_id"] == report.offer_id(table.offers.iloc[int(row["offer"])].to_dict())
    ids = [r["offer_id"] for r in rows(out / "offers.csv")]
    assert len(set(ids)) == len(ids) == len(table.offers)


def test_the_workbook_has_a_readme_and_a_sheet_per_table(written):
    from openpyxl import load_workbook

    out, summary = written
    book = load_workbook(out / "report.xlsx", read_only=True)
    assert book.sheetnames[0] == "README" and len(book.sheetnames) == summary["tables"] + 1
    readme = {r[0]: r[1] for r in book["README"].iter_rows(values_only=True) if r and r[0]}
    assert readme["price_file"] == "good.csv" and readme["package_version"] == summary["package_version"]


def test_a_second_run_reuses_the_searches_and_gives_the_same_tables(written, tmp_path):
    out, _ = written
    again = tmp_path / "again"
    assert main(["report", "--prices", str(GOOD), "--out", str(again), "--cache", str(out / ".cache"),
                 "--format", "json"]) == 0
    for path in out.glob("*.csv"):
        assert (again / path.name).read_bytes() == path.read_bytes(), path.name


def test_a_bad_price_file_writes_nothing(tmp_path, capsys):
    bad = Path(__file__).parent / "data" / "prices" / "bad_price_zero.csv"
    assert main(["report", "--prices", str(bad), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    assert capsys.readouterr().err.startswith(f"error: {bad}:")


def test_the_searches_kept_on_disk_are_found_by_a_new_process(written):
    out, _ = written
    code = ("import sys\n"
            "from multigpu.market import search\n"
            "assert search.load_memo(sys.argv[1]) > 0\n"
            "key = next(iter(search.MEMO.tables['_train_cached']))\n"
            "search._train = None  # a search not found in the memo would fail here\n"
            "# the shipped calibration, made afresh in this process, must find what another process stored\n"
            "found = search.train(*key[:5], dtype=key[5], zero_stages=key[6], top=key[7], method=key[8],\n"
            "                     lora_rank=key[9], cal=None)\n"
            "print(found.evaluated)\n")
    result = subprocess.run([sys.executable, "-c", code, str(out / ".cache")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0


def test_every_cost_carries_its_prediction_interval(written):
    """The costs table brackets each feasible cost by the 90 % interval its workload kind's time carries."""
    out, _ = written
    costs = [r for r in rows(out / "costs.csv") if r["cost_usd"]]
    assert costs and {r["interval_level"] for r in costs} == {"0.9"}
    for r in costs:
        assert float(r["cost_usd_lo"]) <= float(r["cost_usd"]) <= float(r["cost_usd_hi"])
        assert r["interval_regime"] in ("training step time", "serving throughput")
