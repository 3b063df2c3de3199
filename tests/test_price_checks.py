"""Price files as analysts write them: every problem in one pass, spreadsheet habits named, case folded,
typos caught, and plausibility warnings that do not stop the run (issue 17)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from multigpu.common.errors import InputError, InputErrors
from multigpu.market import pricecheck, prices

HEADER = "provider,instance,gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,observed,source"
H100 = "Lambda,8x H100,h100-sxm,8,nvswitch3,{price},USD,on-demand,{date},https://example.org/p"


def offer(price: float = 31.92, date: str = "2026-09-20", **changes: str) -> str:
    row = dict(zip(HEADER.split(","), H100.format(price=price, date=date).split(",")))
    row.update(changes)
    return ",".join(row[c] for c in HEADER.split(","))


def write(tmp_path: Path, *lines: str, name: str = "p.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multigpu", *args], capture_output=True, text=True)


# ---------------------------------------------------------------- errors


def test_every_error_of_a_file_in_one_pass(tmp_path):
    path = write(tmp_path, HEADER, offer(price=-1), offer(instance="b", pricing="weekly"),
                 offer(instance="c", gpus_per_instance="two"), offer(instance="d", date="2026-13-01"))
    with pytest.raises(InputErrors) as info:
        prices.load_table(path)
    found = [(e.line, e.column) for e in info.value.errors]
    assert found == [(2, "price_per_hour"), (3, "pricing"), (4, "gpus_per_instance"), (5, "observed")]
    result = cli("prices", "check", str(path))
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 4 and all(line.startswith(f"error: {path}:") for line in lines)


def test_more_than_twenty_errors_are_counted(tmp_path):
    path = write(tmp_path, HEADER, *(offer(instance=f"i{i}", price=0) for i in range(25)))
    lines = cli("prices", "check", str(path)).stderr.splitlines()
    assert len(lines) == 21 and lines[-1] == f"error: ... and 5 more problems in {path}"


@pytest.mark.parametrize("separator, name", [(";", "semicolons"), ("\t", "tabs")])
def test_other_separators_are_named(tmp_path, separator, name):
    path = write(tmp_path, HEADER.replace(",", separator), offer().replace(",", separator))
    with pytest.raises(InputError, match=f"is separated by {name}"):
        prices.load_table(path)


def test_a_decimal_comma_is_named(tmp_path):
    path = write(tmp_path, HEADER, offer().replace("31.92", "31,92"))
    with pytest.raises(InputError) as info:
        prices.load_table(path)
    assert (info.value.line, info.value.column) == (2, "price_per_hour")
    assert "'31,92' looks like a decimal comma; expected a decimal point, 31.92" in info.value.message


def test_comment_lines_are_skipped_and_noted(tmp_path):
    path = write(tmp_path, "# my prices, September", HEADER, "# the next line is Lambda", offer())
    table = prices.load_table(path)
    assert len(table.offers) == 1 and "2 comment lines" in table.notes[0]


def test_headers_and_enumerated_values_are_case_folded(tmp_path):
    header = HEADER.replace("provider", "Provider").replace("pricing", " PRICING ")
    path = write(tmp_path, header, offer(currency="usd", pricing="On-Demand", gpu="H100-SXM"))
    row = prices.load_table(path).offers.iloc[0]
    assert (row["currency"], row["pricing"], row["gpu"]) == ("USD", "on-demand", "h100-sxm")


@pytest.mark.parametrize("written, known", [("provider_typ", "provider_type"), ("Price Per Hour", "price_per_hour"),
                                            ("regoin", "region")])
def test_a_column_close_to_a_known_one_is_an_error_naming_it(tmp_path, written, known):
    header = HEADER + f",{written}" if known != "price_per_hour" else HEADER.replace("price_per_hour", written)
    row = offer() + (",x" if known != "price_per_hour" else "")
    with pytest.raises(InputError) as info:
        prices.load_table(write(tmp_path, header, row))
    assert info.value.column == written and f"'{known}'" in info.value.message


def test_other_extra_columns_are_kept_and_noted(tmp_path):
    table = prices.load_table(write(tmp_path, HEADER + ",contract,my_id", offer() + ",1y,42"))
    assert table.offers.iloc[0]["contract"] == "1y" and "contract, my_id" in table.notes[0]


# -------------------------------------------------------------- warnings


@pytest.mark.parametrize("line, column, words", [
    (offer(price=1e12), "price_per_hour", "outside the packaged file's range"),
    (offer(price=1e-9), "price_per_hour", "outside the packaged file's range"),
    (offer(gpus_per_instance="1000", price=4000), "gpus_per_instance", "holds 8"),
    (offer(gpus_per_instance="16", price=64), "gpus_per_instance", "holds 8"),
    (offer(price=3.99), "price_per_hour", "is it a per-GPU price?"),
])
def test_suspect_offers_warn_and_still_load(tmp_path, line, column, words):
    path = write(tmp_path, HEADER, line)
    table = prices.load_table(path)
    assert any(w.column == column and words in w.message and w.line == 2 for w in table.warnings), table.warnings
    result = cli("prices", "check", str(path))
    assert result.returncode == 0 and f"warning: {path}:2: column '{column}'" in result.stderr


def test_ages_are_measured_against_the_files_own_dates(tmp_path):
    table = prices.load_table(write(tmp_path, HEADER, offer(), offer(instance="old", date="1999-05-01")))
    old = [w for w in table.warnings if w.column == "observed"]
    assert len(old) == 1 and old[0].line == 3 and "older than the file's newest observation (2026-09-20)" in old[0].message
    recent = prices.load_table(write(tmp_path, HEADER, offer(date="2020-01-01"), name="q.csv"))
    assert not [w for w in recent.warnings if w.column == "observed"]  # one date: nothing older than the newest


def test_a_stale_exchange_rate_warns(tmp_path):
    fx = write(tmp_path, "currency,usd_per_unit,date,source", "USD,1,2026-01-01,identity", "CNY,0.14,2026-01-01,x",
               name="fx.csv")
    table = prices.load_table(write(tmp_path, HEADER, offer(currency="CNY", price=200)), fx)
    assert any("the CNY rate of 2026-01-01" in w.message for w in table.warnings)
    assert not pricecheck.warnings(prices.default_table(), list(range(2, 2 + len(prices.default_table().offers))))


def test_the_packaged_file_has_no_warnings():
    assert prices.default_table().warnings == () and prices.default_table().notes == ()


def test_a_good_file_is_never_written(tmp_path):
    path = write(tmp_path, HEADER, offer(price=1e12))
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    cli("prices", "check", str(path))
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_the_checks_take_the_reference_range_as_an_argument():
    """The checks judge outliers against the range they are given (the loader gives the packaged file's): the
    packaged offers against a range of USD 0.1 per GPU-hour are all more than 10x above it."""
    table = prices.default_table()
    lines = list(range(2, 2 + len(table.offers)))
    found = pricecheck.warnings(table, lines, reference=(("h100-sxm", 0.1),))
    outliers = [w for w in found if "outside the packaged file's range" in w.message]
    assert len(outliers) == int((table.offers["price_per_gpu_hour_usd"] > 1.0).sum()) > 0
    assert prices.reference_prices()[0][0] in set(table.offers["gpu"])
