"""The price file contract: validation with file/line/column errors, FX conversion, stamp, CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from multigpu.book import inputs
from multigpu.common.errors import InputError
from multigpu.hardware import catalog
from multigpu.market import prices

DATA = Path(__file__).parent / "data" / "prices"
DEFAULT = prices.DEFAULT_PRICES
HEADER = "provider,instance,gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,observed,source"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m multigpu ARGS`` in a fresh interpreter (text output)."""
    return subprocess.run([sys.executable, "-m", "multigpu", *args], capture_output=True, text=True,
                          env=None if env is None else os.environ | env)


# (file, physical line, column or None, words the message must contain): one bad input each.
BAD = [
    ("bad_empty.csv", 1, None, "is empty"),
    ("bad_header_only.csv", 1, None, "no rows"),
    ("bad_missing_column.csv", 1, "source", "is missing"),
    ("bad_misspelt_column.csv", 1, "price_per_hr", "did you mean 'price_per_hour'"),
    ("bad_empty_cell.csv", 2, "provider", "is empty"),
    ("bad_price_not_number.csv", 3, "price_per_hour", "'abc' is not a number"),
    ("bad_price_negative.csv", 2, "price_per_hour", "'-31.92' is not above 0"),
    ("bad_price_zero.csv", 4, "price_per_hour", "'0' is not above 0"),
    ("bad_unknown_gpu.csv", 2, "gpu", "unknown GPU 'H100'; expected a catalogue id such as h100-sxm"),
    ("bad_unknown_interconnect.csv", 3, "interconnect", "unknown interconnect 'nvlink9'"),
    ("bad_unknown_currency.csv", 2, "currency", "unknown currency 'RMB'; expected one of the FX table: CNY"),
    ("bad_date_format.csv", 2, "observed", "'20/09/2026' is not an ISO date; expected YYYY-MM-DD"),
    ("bad_not_a_date.csv", 2, "observed", "'2026-02-30' is not a calendar date"),
    ("bad_future_date.csv", 3, "observed", "2999-01-01 is in the future"),
    ("bad_duplicate.csv", 4, "instance", "duplicate offer: same provider, instance, pricing, region and "
                                         "currency as line 2"),
    ("bad_gpus_fraction.csv", 2, "gpus_per_instance", "'8.5' is not a whole number"),
    ("bad_gpus_zero.csv", 2, "gpus_per_instance", "'0' is below 1"),
    ("bad_pricing_value.csv", 2, "pricing", "'ondemand' is not allowed; expected one of on-demand, spot"),
    ("bad_no_system.csv", 3, "interconnect", "no catalogue system has GPU 'rtx-4090' joined by 'nvswitch3'"),
    ("bad_unknown_system.csv", 2, "system", "unknown system 'hgx-h900'"),
    ("bad_wrong_gpu_system.csv", 2, "system", "system 'dgx-a100' has GPU 'a100-sxm4-80gb'"),
    ("bad_excel_line5.csv", 5, "price_per_hour", "'ten' is not a number"),  # BOM, CRLF, blank line 3
]


@pytest.fixture(scope="module")
def cli_results() -> dict[str, subprocess.CompletedProcess]:
    """``prices check`` on every bad file, the interpreters started together to keep the suite fast."""
    procs = {name: subprocess.Popen([sys.executable, "-m", "multigpu", "prices", "check", str(DATA / name)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, *_ in BAD}
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        results[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return results


def expected_prefix(name: str, line: int, column: str | None) -> str:
    where = f"{DATA / name}:{line}: "
    return where + (f"column '{column}': " if column else "")


@pytest.mark.parametrize(("name", "line", "column", "words"), BAD, ids=[case[0] for case in BAD])
def test_bad_file_is_one_error_line_exit_2(cli_results, name, line, column, words):
    result = cli_results[name]
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: " + expected_prefix(name, line, column)), result.stderr
    assert words in result.stderr
    assert "; expected" in result.stderr or "did you mean" in result.stderr


@pytest.mark.parametrize(("name", "line", "column", "words"), BAD, ids=[case[0] for case in BAD])
def test_bad_file_raises_input_error_with_file_line_column(name, line, column, words):
    path = str(DATA / name)
    with pytest.raises(InputError) as info:
        prices.load_table(path).offers
    error = info.value
    assert (error.file, error.line, error.column) == (path, line, column)
    assert str(error).startswith(expected_prefix(name, line, column)) and words in str(error)


def test_default_file_validates_and_is_curated():
    frame = prices.load_table(DEFAULT).offers
    assert 30 <= len(frame) <= 60
    assert set(frame["currency"]) >= {"USD", "CNY"}
    assert set(frame["pricing"]) <= set(prices.PRICING)
    assert all("http" in source for source in frame["source"])
    assert max(frame["observed"]) <= date.today()
    assert set(frame["gpu"]) <= set(catalog.gpus()) and set(frame["interconnect"]) <= set(catalog.links())
    assert set(frame["system"]) <= set(catalog.systems())
    # same-provider SXM vs PCIe pairs, hyperscaler 8-GPU nodes, PCIe boxes, China-market offers in CNY
    crusoe = frame[frame["provider"] == "Crusoe"]
    assert {"dgx-a100", "pcie-a100-8"} <= set(crusoe["system"])
    assert {"p4de.24xlarge", "p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"} <= set(frame["instance"])
    assert {"l40s", "rtx-4090", "rtx-5090"} <= set(frame["gpu"])
    assert {"h20-141gb", "rtx-4090"} <= set(frame.loc[frame["currency"] == "CNY", "gpu"])
    per_gpu = frame["price_per_hour_usd"] / frame["gpus_per_instance"]
    assert (per_gpu - frame["price_per_gpu_hour_usd"]).abs().max() < 1e-12
    assert frame["price_per_gpu_hour_usd"].between(0.1, 20).all()  # USD per GPU-hour, sane for 2026


def test_default_file_check_summary():
    result = run("prices", "check", str(DEFAULT))
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.count("\n") == 1
    stamp = prices.load_table(DEFAULT).stamp()
    providers = len({line.split(",")[0] for line in DEFAULT.read_text().splitlines()[1:] if line})
    assert f"{stamp['offers']} offers from {providers} providers" in result.stdout
    assert f"observed {stamp['observed_from']} to {stamp['observed_to']}" in result.stdout


def test_template_documents_every_column_and_ends_with_the_default_file(tmp_path):
    result = subprocess.run([sys.executable, "-m", "multigpu", "prices", "template"], capture_output=True)
    assert result.returncode == 0
    assert result.stdout.endswith(DEFAULT.read_bytes())
    comments = [line for line in result.stdout.decode().splitlines() if line.startswith("#")]
    for column in prices.Offer.required() + prices.Offer.optional():
        assert any(line.startswith(f"#   {column}: ") for line in comments), column
    copy = tmp_path / "template.csv"
    copy.write_bytes(result.stdout)
    assert prices.load_table(copy).offers.drop(columns=[]).equals(prices.default_table().offers)


def test_spreadsheet_export_reads_like_a_plain_file():
    raw = (DATA / "excel_bom_crlf.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw and raw.endswith(b"\r\n\r\n\r\n")
    frame = prices.load_table(DATA / "excel_bom_crlf.csv").offers
    assert list(frame.columns[:2]) == ["provider", "instance"]  # no BOM glued to the first name
    assert list(frame["provider"]) == ["Lambda", "Crusoe", "SMM quote"]
    assert frame["notes"].iloc[1] == "quoted, with a comma"
    assert frame["price_per_hour"].iloc[0] == 31.92


def test_good_file_extra_columns_regions_and_pinned_system():
    frame = prices.load_table(DATA / "good.csv").offers
    assert len(frame) == 6 and "contract" in frame.columns
    assert frame.loc[frame["instance"] == "NVIDIA A100 NVLink", "system"].item() == "pcie-a100-8"  # pinned wins


def test_system_for_offer_follows_the_wiring():
    base = {"gpu": "a100-pcie-80gb", "interconnect": "pcie4-x16"}
    assert prices.system_for_offer(base) == "pcie-a100-8"
    assert prices.system_for_offer(base | {"interconnect": "nvlink-bridge-a100"}) == "pcie-a100-bridged-2"
    assert prices.system_for_offer({"gpu": "h100-sxm", "interconnect": "nvswitch3"}) == "hgx-h100"
    assert prices.system_for_offer({"gpu": "h100-nvl", "interconnect": "nvlink-bridge-h100"}) == "pcie-h100-nvl-pairs"
    assert prices.system_for_offer({"gpu": "mi300x", "interconnect": "infinity-fabric-mi300x"}) == "mi300x-8"
    assert prices.system_for_offer(base | {"system": "pcie-a100-bridged-2"}) == "pcie-a100-bridged-2"
    # a wiring variant is used only when named: the measured default otherwise (catalogue notes, O9-O13)
    rtx = {"gpu": "rtx-5090", "interconnect": "pcie5-x16", "gpus_per_instance": 8}
    assert prices.system_for_offer(rtx) == "pcie-rtx5090-8"
    assert prices.system_for_offer(rtx | {"system": "pcie-rtx5090-8-switch"}) == "pcie-rtx5090-8-switch"
    nvl = {"gpu": "h100-nvl", "interconnect": "nvlink-bridge-h100", "system": "pcie-h100-nvl-pairs-nv12"}
    assert prices.system_for_offer(nvl) == "pcie-h100-nvl-pairs-nv12"
    with pytest.raises(InputError) as info:
        prices.system_for_offer({"gpu": "l40s", "interconnect": "nvswitch3"})
    assert info.value.column == "interconnect"


def test_usd_cny_round_trip_keeps_usd_per_gpu_hour(tmp_path):
    table = prices.default_table()
    fx = table.fx
    offer = "Lambda,8x NVIDIA H100 SXM,h100-sxm,8,nvswitch3,{price},{currency},on-demand,2026-09-20,https://x.org"
    cny = table.from_usd(31.92, "CNY")
    assert cny == pytest.approx(31.92 / fx["CNY"].usd_per_unit)
    assert table.to_usd(cny, "CNY") == pytest.approx(31.92, rel=1e-12)
    in_usd, in_cny = tmp_path / "usd.csv", tmp_path / "cny.csv"
    in_usd.write_text(f"{HEADER}\n{offer.format(price=31.92, currency='USD')}\n")
    in_cny.write_text(f"{HEADER}\n{offer.format(price=repr(cny), currency='CNY')}\n")
    usd_rate = prices.load_table(in_usd).offers["price_per_gpu_hour_usd"].item()
    cny_rate = prices.load_table(in_cny).offers["price_per_gpu_hour_usd"].item()
    assert usd_rate == 3.99 and math.isclose(cny_rate, usd_rate, rel_tol=1e-12)


def test_fx_table_is_dated_and_sourced():
    fx = prices.load_fx(prices.DEFAULT_FX)
    assert fx["USD"].usd_per_unit == 1
    assert 0.12 < fx["CNY"].usd_per_unit < 0.16  # 6.3 to 8.3 CNY per USD
    assert all(rate.source and rate.date <= date.today() for rate in fx.values())


def test_multigpu_fx_overrides_and_is_validated(tmp_path, monkeypatch):
    table = tmp_path / "fx.csv"
    table.write_text("currency,usd_per_unit,date,source\nUSD,1,2026-09-10,identity\nCNY,0.2,2026-09-10,test\n")
    monkeypatch.setenv("MULTIGPU_FX", str(table))
    frame = inputs.price_table(DATA / "good.csv").offers
    assert frame.loc[frame["currency"] == "CNY", "price_per_hour_usd"].item() == pytest.approx(10.14 * 0.2)
    table.write_text("currency,usd_per_unit,date,source\nUSD,1,2026-09-10,identity\nCNY,-0.2,2026-09-10,test\n")
    with pytest.raises(InputError) as info:
        inputs.price_table(DATA / "good.csv")
    assert (info.value.file, info.value.line, info.value.column) == (str(table), 3, "usd_per_unit")


def test_multigpu_prices_changes_the_stamp(monkeypatch):
    default = inputs.price_table().stamp()
    assert default["name"] == "prices.csv" and len(default["sha256_12"]) == 12
    monkeypatch.setenv("MULTIGPU_PRICES", str(DATA / "good.csv"))
    assert inputs.prices_path() == DATA / "good.csv"
    other = inputs.price_table().stamp()
    assert other != default
    assert other == {"name": "good.csv", "sha256_12": other["sha256_12"], "offers": 6,
                     "observed_from": "2026-07-03", "observed_to": "2026-09-20", "fx_name": "fx_rates.csv",
                     "fx_rates": "6.7063 CNY per USD (2026-09-10)"}
    assert inputs.price_table().stamp_markdown() == (f"Prices: `good.csv` (sha256 {other['sha256_12']}), "
                                                     "6 offers observed 2026-07-03 to 2026-09-20; converted with "
                                                     "`fx_rates.csv`, 6.7063 CNY per USD (2026-09-10).")


def test_multigpu_prices_missing_file_is_an_error(monkeypatch, tmp_path):
    missing = str(tmp_path / "nope.csv")
    monkeypatch.setenv("MULTIGPU_PRICES", missing)
    with pytest.raises(InputError) as info:
        inputs.prices_path()
    assert info.value.file == missing
    result = run("prices", "list", env={"MULTIGPU_PRICES": missing})
    assert result.returncode == 2 and result.stderr.startswith(f"error: {missing}: MULTIGPU_PRICES names no such file")


def test_list_formats_and_env():
    good = str(DATA / "good.csv")
    result = run("prices", "--format", "json", "list", "--prices", good)
    assert result.returncode == 0
    rows = json.loads(result.stdout)
    assert len(rows) == 6 and rows[0]["price_per_gpu_hour_usd"] == 3.99 and rows[0]["observed"] == "2026-09-20"
    assert rows[3]["region"] is None
    table = run("prices", "list", env={"MULTIGPU_PRICES": good})
    assert table.returncode == 0 and table.stdout.startswith("Prices: `good.csv` (sha256 ")


def test_analyst_file_is_never_written(tmp_path):
    analyst = tmp_path / "my prices.csv"
    analyst.write_bytes((DATA / "good.csv").read_bytes())
    os.utime(analyst, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before = (analyst.read_bytes(), analyst.stat().st_mtime_ns)
    assert run("prices", "check", str(analyst)).returncode == 0
    assert run("prices", "list", "--prices", str(analyst), "--format", "csv").returncode == 0
    prices.load_table(analyst).stamp()
    assert (analyst.read_bytes(), analyst.stat().st_mtime_ns) == before


def test_prices_without_action_is_a_usage_error():
    result = run("prices")
    assert result.returncode == 2 and result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_bridged_offer_maps_to_the_smallest_node_that_holds_it():
    # two catalogue systems are A100 PCIe GPUs joined by the A100 NVLink bridge: a 2-GPU pair and an 8-GPU box
    offer = {"gpu": "a100-pcie-80gb", "interconnect": "nvlink-bridge-a100", "system": None}
    assert prices.system_for_offer({**offer, "gpus_per_instance": 8}) == "pcie-a100-nvl-pairs"
    assert prices.system_for_offer({**offer, "gpus_per_instance": 2}) == "pcie-a100-bridged-2"
    assert prices.system_for_offer({**offer, "gpus_per_instance": 16}) == "pcie-a100-nvl-pairs"
