"""The China market and renting frictions: the H20 141 GB part, CNY offers, and the optional price-file
columns price_basis, scale_out and min_lease_h (parsing, validation, and what they do to costs)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from multigpu.common.errors import InputError
from multigpu.hardware import catalog
from multigpu.market import cost, prices

HEADER = "provider,instance,gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,observed,source"
H100 = "Lambda,8x H100,h100-sxm,8,nvswitch3,31.92,USD,on-demand,2026-09-20,https://example.org/p"
SHORT, LONG, BIG = "train-llama3.2-1b", "train-llama3.1-8b", "train-llama3.1-70b"  # ~15 h, ~500 h; 64 GPUs
SERVE = "serve-llama3.1-8b-30tps"


def write(tmp_path: Path, header: str, *rows: str, name: str = "p.csv") -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def h100(tmp_path: Path, **cells: str) -> prices.PriceTable:
    """A one-offer table: Lambda's 8x H100 with the given extra columns."""
    columns = ",".join(cells)
    header = HEADER + ("," + columns if columns else "")
    row = H100 + ("," + ",".join(cells.values()) if cells else "")
    return prices.load_table(write(tmp_path, header, row))


def one_cost(workload_id: str, table: prices.PriceTable, utilisation: float = 1.0) -> dict:
    return cost.offer_costs(workload_id, table, utilisation).iloc[0].to_dict()


# ------------------------------------------------------------ parsing and validation


def test_new_columns_parse_case_folded_and_default(tmp_path):
    header = HEADER + ",price_basis,scale_out,min_lease_h"
    path = write(tmp_path, header,
                 H100 + ",GPU,Ethernet,720",
                 H100.replace("8x H100", "8x H100 b") + ",,,",
                 H100.replace("8x H100", "8x H100 c") + ",instance,none,0")
    frame = prices.load_table(path).offers
    assert list(frame["price_basis"]) == ["gpu", "instance", "instance"]
    assert list(frame["scale_out"]) == ["ethernet", "infiniband", "none"]  # empty: the catalogue system's NIC
    assert frame["min_lease_h"].iloc[0] == 720 and frame["min_lease_h"].iloc[2] == 0
    assert frame["min_lease_h"].isna().iloc[1]


def test_files_without_the_columns_read_as_before(tmp_path):
    frame = h100(tmp_path).offers
    assert frame["price_per_hour"].item() == 31.92 and frame["price_basis"].item() == "instance"
    assert frame["scale_out"].item() == "infiniband" and frame["system"].item() == "hgx-h100"


# (column, cell, words of the message): one bad value each, on line 2.
BAD = [
    ("price_basis", "node", "unknown price_basis 'node'; expected one of instance, gpu"),
    ("scale_out", "nvlink", "unknown scale_out 'nvlink'; expected one of none, ethernet, infiniband"),
    ("min_lease_h", "-1", "'-1' is not a number of hours >= 0"),
    ("min_lease_h", "a month", "'a month' is not a number"),
    ("min_lease_h", "inf", "is not a number of hours >= 0"),
]


@pytest.mark.parametrize(("column", "cell", "words"), BAD, ids=[f"{c}={v}" for c, v, _ in BAD])
def test_bad_values_name_file_line_and_column(tmp_path, column, cell, words):
    path = write(tmp_path, HEADER + f",{column}", H100 + f",{cell}")
    with pytest.raises(InputError) as info:
        prices.load_table(path)
    assert str(info.value).startswith(f"{path}:2: column '{column}': ") and words in str(info.value)


@pytest.mark.parametrize(("scale_out", "fabric"), [("ethernet", "ib"), ("infiniband", "roce"), ("none", "tcp")])
def test_scale_out_must_agree_with_a_given_fabric(tmp_path, scale_out, fabric):
    path = write(tmp_path, HEADER + ",scale_out,fabric", H100 + f",{scale_out},{fabric}")
    with pytest.raises(InputError) as info:
        prices.load_table(path)
    assert str(info.value).startswith(f"{path}:2: column 'scale_out': ")
    assert f"scale_out '{scale_out}' contradicts fabric '{fabric}'" in str(info.value)


def test_bad_file_is_one_error_line_and_exit_status_2(tmp_path):
    path = write(tmp_path, HEADER + ",scale_out", H100 + ",wifi")
    result = subprocess.run([sys.executable, "-m", "multigpu", "prices", "check", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"error: {path}:2: column 'scale_out': unknown scale_out 'wifi'")
    assert result.stderr.count("\n") == 1


def test_template_documents_the_friction_columns():
    text = prices.template()
    for column in ("price_basis", "scale_out", "min_lease_h"):
        assert f"#   {column}: " in text


# ------------------------------------------------------------ price basis


def test_price_basis_gpu_multiplies_by_gpus_per_instance(tmp_path):
    per_gpu = prices.load_table(write(tmp_path, HEADER + ",price_basis",
                                      H100.replace(",31.92,", ",3.99,") + ",gpu")).offers.iloc[0]
    assert per_gpu["price_per_hour"] == pytest.approx(3.99 * 8)
    assert per_gpu["price_per_gpu_hour_usd"] == pytest.approx(3.99)
    assert per_gpu["price_per_hour_usd"] == pytest.approx(31.92)
    same = prices.load_table(write(tmp_path, HEADER, H100, name="q.csv"))
    basis = prices.load_table(write(tmp_path, HEADER + ",price_basis", H100.replace(",31.92,", ",3.99,") + ",gpu",
                                    name="r.csv"))
    assert one_cost(SHORT, basis)["cost_usd"] == pytest.approx(one_cost(SHORT, same)["cost_usd"], rel=1e-12)


# ------------------------------------------------------------ scale-out


def test_scale_out_maps_onto_the_catalogue_fabric():
    def system(**cells):
        return prices.system_for_offer({"gpu": "h100-sxm", "interconnect": "nvswitch3", **cells})

    assert catalog.system("hgx-h100").fabric == "ib" and catalog.system("hgx-h20").fabric == "roce"
    assert system(scale_out="infiniband") == "hgx-h100"
    assert system(scale_out="ethernet") == "hgx-h100@tcp"  # an IB node rented with Ethernet between instances
    assert system(scale_out="ethernet", fabric="roce") == "hgx-h100@roce"  # the fabric wins
    assert system(scale_out="none") == "hgx-h100"
    h20 = {"gpu": "h20", "interconnect": "nvswitch3"}
    assert prices.system_for_offer(h20 | {"scale_out": "ethernet"}) == "hgx-h20"  # its own RoCE
    assert prices.system_for_offer(h20 | {"scale_out": "infiniband"}) == "hgx-h20@ib"
    assert prices.scale_out_of("pcie-rtx4090-8") == "ethernet" and prices.scale_out_of("hgx-h100@tcp") == "ethernet"


def test_no_network_makes_a_multi_instance_job_infeasible(tmp_path):
    isolated = one_cost(BIG, h100(tmp_path, scale_out="none"))
    assert not isolated["feasible"] and isolated["reason"].startswith("no network between instances")
    assert math.isnan(isolated["cost_usd"]) and isolated["instances"] is None
    networked = one_cost(BIG, h100(tmp_path, scale_out="infiniband"))
    assert networked["feasible"] and networked["instances"] == 8


def test_no_network_leaves_a_one_instance_job_unchanged(tmp_path):
    isolated, default = one_cost(SHORT, h100(tmp_path, scale_out="none")), one_cost(SHORT, h100(tmp_path))
    assert isolated["feasible"] and isolated["instances"] == 1
    for key in ("time_h", "gpu_hours", "cost_usd", "layout"):
        assert isolated[key] == default[key], key


# ------------------------------------------------------------ minimum lease


def test_min_lease_raises_a_short_job_to_the_term(tmp_path):
    base, leased = one_cost(SHORT, h100(tmp_path)), one_cost(SHORT, h100(tmp_path, min_lease_h="720"))
    assert base["time_h"] < 720
    assert leased["time_h"] == base["time_h"] and leased["billed_h"] == 720
    assert leased["cost_usd"] == pytest.approx(31.92 * 720 * leased["instances"])
    assert leased["cost_usd"] == pytest.approx(leased["gpu_hours"] * leased["price_per_gpu_hour_usd"])
    # at half utilisation the job rents twice its hours, still under the term: the cost stays the term's
    assert one_cost(SHORT, h100(tmp_path, min_lease_h="720"), 0.5)["cost_usd"] == pytest.approx(leased["cost_usd"])


def test_min_lease_leaves_a_long_job_unchanged(tmp_path):
    base, leased = one_cost(LONG, h100(tmp_path)), one_cost(LONG, h100(tmp_path, min_lease_h="100"))
    assert base["time_h"] > 100
    assert leased["cost_usd"] == pytest.approx(base["cost_usd"], rel=1e-12)
    assert leased["cost_usd"] == pytest.approx(base["time_h"] * 31.92)


def test_min_lease_does_not_change_serving_costs(tmp_path):
    base, leased = one_cost(SERVE, h100(tmp_path)), one_cost(SERVE, h100(tmp_path, min_lease_h="720"))
    assert base["feasible"] and leased["cost_usd"] == base["cost_usd"] and math.isnan(leased["billed_h"])


# ------------------------------------------------------------ the packaged file and catalogue


def test_h20_141gb_is_its_own_gpu_on_the_hgx_h20_board():
    gpu, h20 = catalog.gpu("h20-141gb"), catalog.gpu("h20")
    assert gpu.memory_GB == 141 and gpu.memory_type == "HBM3e" and h20.memory_GB == 96
    assert (gpu.bf16_dense_TFLOPS, gpu.nvlink, gpu.nvlink_GBps_per_dir) == (h20.bf16_dense_TFLOPS, h20.nvlink,
                                                                           h20.nvlink_GBps_per_dir)
    assert "secondary" in gpu.notes and "1cnz.cn" in gpu.source  # the reference file's (secondary) sources
    board, base = catalog.system("hgx-h20-141"), catalog.system("hgx-h20")
    assert board.gpu == "h20-141gb"
    for field in ("gpus_per_node", "topology", "nvlink", "nvlink_links_per_gpu", "nvswitch", "in_switch_reduction",
                  "nvlink_GBps_per_dir", "nic", "nics_per_node", "fabric"):
        assert getattr(board, field) == getattr(base, field), field


def test_the_h20_141gb_offer_maps_to_the_new_gpu():
    frame = prices.default_table().offers
    rows = frame[frame["instance"].str.contains("H20 141GB")]
    assert len(rows) >= 1
    assert set(rows["gpu"]) == {"h20-141gb"} and set(rows["system"]) == {"hgx-h20-141"}
    costs = cost.offer_costs(SHORT).set_index("instance")
    assert costs.loc["H20 141GB 8-GPU server", "system"] == "hgx-h20-141"


def test_every_cny_offer_converts_with_the_dated_fx_table():
    table = prices.default_table()
    rate = table.fx["CNY"]
    assert rate.date.isoformat() in table.stamp()["fx_rates"] and rate.source.startswith("ECB")
    cny = table.offers[table.offers["currency"] == "CNY"]
    assert len(cny) >= 5
    assert (cny["price_per_hour_usd"] - cny["price_per_hour"] * rate.usd_per_unit).abs().max() < 1e-9
    assert ((cny["price_per_hour_usd"] / cny["gpus_per_instance"] - cny["price_per_gpu_hour_usd"]).abs() < 1e-12).all()


def test_monthly_cny_leases_have_a_one_month_term():
    frame = prices.default_table().offers
    monthly = frame[frame["notes"].fillna("").str.contains("monthly lease")]
    assert len(monthly) >= 5 and set(monthly["currency"]) == {"CNY"}
    assert (monthly["min_lease_h"] == 720).all()
    assert (frame.loc[~frame.index.isin(monthly.index), "min_lease_h"].isna()).all()


def test_packaged_file_loads_and_checks_clean():
    table = prices.load_table(prices.DEFAULT_PRICES)
    assert set(table.offers["pricing"]) <= set(prices.PRICING) and table.offers["pricing"].notna().all()
    assert set(table.offers["scale_out"]) <= set(prices.SCALE_OUTS)
    assert set(table.offers["price_basis"]) == {"instance"}
    assert table.warnings == ()
    result = subprocess.run([sys.executable, "-m", "multigpu", "prices", "check", str(prices.DEFAULT_PRICES)],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == "" and ": ok, " in result.stdout
