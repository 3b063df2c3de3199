"""The cost model (multigpu.market.cost), its CLI and the claim checks C24 and C26."""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from multigpu.book import inputs
from multigpu.cli import main
from multigpu.cli.progress import progress
from multigpu.comm import calibration
from multigpu.common.errors import InputError
from multigpu.evidence import claims
from multigpu.market import cost, premium, prices, search, sensitivity, workloads

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "data" / "prices" / "good.csv"
TRAIN, SERVE = "train-llama3.2-1b", "serve-llama3.1-70b-30tps"


def _rewrite(src: Path, dst: Path, change) -> Path:
    """Copy a price file, passing every row (a dict) through ``change``."""
    with src.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        fields, rows = reader.fieldnames, [change(dict(row)) for row in reader]
    with dst.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return dst


def _scaled(row: dict, factor: float) -> dict:
    row["price_per_hour"] = repr(float(row["price_per_hour"]) * factor)
    return row


# ------------------------------------------------------------ workloads


def test_workloads_are_sourced_and_sized():
    table = workloads.workloads_table()
    assert {TRAIN, SERVE, "train-llama3.1-8b", "train-llama3.1-70b"} <= set(table)
    for w in table.values():
        assert w.source.startswith("http") and w.rationale
        if w.kind == "train":
            assert w.tokens == pytest.approx(w.tokens_per_param * w.params) and w.steps > 0
        else:
            assert w.input_tokens and w.output_tokens and w.min_tokens_per_s_per_user > 0


def test_bad_workload_file_names_line_and_column(tmp_path):
    text = workloads.WORKLOADS_CSV.read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace(",train,", ",tune,", 1)
    bad = tmp_path / "w.csv"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        workloads.load_workloads(bad)
    assert err.value.line == 3 and err.value.column == "kind"


def test_unknown_workload_is_an_input_error():
    with pytest.raises(InputError, match="unknown workload"):
        cost.offer_costs("train-nothing")


# ---------------------------------------------------------------- costs


@pytest.mark.parametrize("workload_id", [TRAIN, SERVE])
def test_cost_scales_linearly_with_price(tmp_path, workload_id):
    base = cost.offer_costs(workload_id)
    doubled = cost.offer_costs(workload_id, prices.load_table(_rewrite(prices.DEFAULT_PRICES, tmp_path / "x2.csv",
                                                                       lambda r: _scaled(r, 2.0))))
    ok = base["feasible"]
    assert ok.any() and (doubled["feasible"] == ok).all()
    assert (doubled.loc[ok, "cost_usd"] / base.loc[ok, "cost_usd"]).to_numpy() == pytest.approx(2.0, rel=1e-12)
    assert (doubled.loc[ok, "time_h"] == base.loc[ok, "time_h"]).all()
    assert doubled["rank"].astype(object).tolist() == base["rank"].astype(object).tolist()


def test_cost_is_time_times_price_over_utilisation():
    full = cost.offer_costs(TRAIN)
    half = cost.offer_costs(TRAIN, utilisation=0.5)
    row = full[full["feasible"]].iloc[0]
    assert row["cost_usd"] == pytest.approx(row["time_h"] * row["instances"] * row["gpus"]
                                            * row["price_per_gpu_hour_usd"])
    assert half.loc[row.name, "cost_usd"] == pytest.approx(2 * row["cost_usd"])
    with pytest.raises(InputError):
        cost.offer_costs(TRAIN, utilisation=0)


def test_currency_round_trip(tmp_path):
    """A CNY offer costs the same once converted to USD, and its CNY cost converts back."""
    table = prices.default_table()
    fx = table.fx
    cny = cost.offer_costs(TRAIN, table)
    cny = cny[(cny["currency"] == "CNY") & cny["feasible"]]
    assert not cny.empty
    rate = fx["CNY"].usd_per_unit

    def to_usd(row):
        if row["currency"] == "CNY":
            row["price_per_hour"], row["currency"] = repr(float(row["price_per_hour"]) * rate), "USD"
        return row

    usd = cost.offer_costs(TRAIN, prices.load_table(_rewrite(prices.DEFAULT_PRICES, tmp_path / "usd.csv",
                                                             to_usd))).loc[cny.index]
    assert usd["cost_usd"].to_numpy() == pytest.approx(cny["cost_usd"].to_numpy(), rel=1e-12)
    assert (usd["cost"] == usd["cost_usd"]).all()
    assert cny["cost"].to_numpy() == pytest.approx((cny["cost_usd"] / rate).to_numpy(), rel=1e-12)
    back = [table.to_usd(table.from_usd(c, "CNY"), "CNY") for c in cny["cost_usd"]]
    assert back == pytest.approx(cny["cost_usd"].tolist(), rel=1e-12)


def test_infeasible_offers_are_flagged_not_dropped():
    frame = cost.offer_costs(SERVE)
    assert len(frame) == len(prices.default_table().offers)
    bad = frame[~frame["feasible"]]
    assert not bad.empty
    assert bad["reason"].str.len().gt(10).all()
    assert bad["cost_usd"].isna().all() and bad["rank"].isna().all()
    good = frame[frame["feasible"]].sort_values("rank")
    assert good["rank"].tolist() == list(range(1, len(good) + 1))
    assert good["cost_usd"].is_monotonic_increasing
    # a 70B model does not fit one 32 GB card
    assert cost.plan("serve-llama3.1-70b-30tps", "pcie-rtx5090-8", 1).reason.startswith("does not fit")


def test_serving_plan_is_the_serving_search():
    p = cost.plan(SERVE, "hgx-h100", 8)
    w = workloads.workload(SERVE)
    found = search.serve(w.model, "hgx-h100", 8, w.input_tokens, w.output_tokens, w.min_tokens_per_s_per_user)
    best = found.best
    assert p.serving == best and p.job_gpus == best.tp
    one = search.serving_option(w.model, "hgx-h100", best.tp, w.input_tokens, w.output_tokens,
                                w.min_tokens_per_s_per_user)
    assert one.batch == best.batch and one.tokens_per_s_per_gpu == best.tokens_per_s_per_gpu
    assert all(o.tokens_per_s_per_gpu <= best.tokens_per_s_per_gpu for o in found.options)
    assert p.time_h() == pytest.approx(1e6 / (best.tokens_per_s_per_gpu * 3600))


def test_faster_interconnect_never_costs_more_gpu_hours_on_the_same_gpu():
    for wid in (TRAIN, "train-llama3.1-8b", "serve-llama3.1-8b-30tps"):
        nv, pc = cost.plan(wid, "dgx-a100", 8), cost.plan(wid, "pcie-a100-8", 8)
        assert nv.time_h() <= pc.time_h() * 1.05  # A100 SXM and PCIe differ a little in HBM bandwidth too


# ----------------------------------------------------------- break-even


def test_break_even_price_equalises_cost(tmp_path):
    be = premium.break_even("serve-llama3.1-8b-30tps")
    finite = be[be["break_even_price_per_gpu_hour_usd"].map(math.isfinite)]
    assert not finite.empty
    for row in finite.to_dict("records"):
        assert row["gpu_hours"] * row["break_even_price_per_gpu_hour_usd"] == pytest.approx(row["reference_cost_usd"])
        assert row["nvlink_cheaper"] == (row["charged_premium_pct"] < row["break_even_premium_pct"])
        assert row["break_even_premium_pct"] == pytest.approx(100 * (row["gpu_hour_ratio"] - 1))
    # end to end: re-price one NVLink offer at its break-even price; both offers then cost the same
    row = finite.iloc[0]
    table = prices.default_table().offers
    target = table.iloc[int(row["offer"])]
    per_hour = row["break_even_price_per_gpu_hour_usd"] * target["gpus_per_instance"]

    def reprice(r):
        if (r["provider"], r["instance"], r["pricing"]) == (target["provider"], target["instance"], target["pricing"]):
            r["price_per_hour"], r["currency"] = repr(float(per_hour)), "USD"
        return r

    again = cost.offer_costs("serve-llama3.1-8b-30tps",
                             prices.load_table(_rewrite(prices.DEFAULT_PRICES, tmp_path / "be.csv", reprice)))
    assert again.loc[int(row["offer"]), "cost_usd"] == pytest.approx(row["reference_cost_usd"], rel=1e-9)


def test_break_even_is_infinite_when_pcie_cannot_serve():
    # a what-if: PCIe at 1 % of its rate and 1 ms per host-memory hop keeps every PCIe offer under the
    # per-user rate of 70B decode, which must then spread over several GPUs
    slow_pcie = calibration.default().replace({("sm_efficiency", "pcie"): 0.01, ("bounce", "hop_latency_us"): 1000.0})
    be = premium.break_even(SERVE, cal=slow_pcie)
    inf = be[be["reference"] == premium.REFERENCE_KINDS[-1]]
    assert not inf.empty and inf["break_even_premium_pct"].map(math.isinf).all() and inf["nvlink_cheaper"].all()


def test_charged_premiums_pair_comparable_gpus_of_one_provider():
    charged = premium.charged_premiums()
    for row in charged.to_dict("records"):
        assert premium.comparable(row["nvlink_gpu"], row["pcie_gpu"])
        ratio = row["nvlink_usd_per_gpu_hour"] / row["pcie_usd_per_gpu_hour"]
        assert row["premium_pct"] == pytest.approx(100 * (ratio - 1))
    assert not premium.comparable("b200", "rtx-5090") and premium.comparable("a100-sxm4-80gb", "a100-pcie-80gb")


def test_sensitivity_is_a_tornado_table():
    table = sensitivity.sensitivity("serve-llama3.1-8b-30tps", swing=0.2)
    assert list(table["spread"]) == sorted(table["spread"], reverse=True)
    base = table["ratio_base"].iloc[0]
    price = table.set_index("factor").loc["price of the NVLink offer"]
    assert price["ratio_low"] == pytest.approx(0.8 * base) and price["ratio_high"] == pytest.approx(1.2 * base)
    util = table.set_index("factor").loc["utilisation of the PCIe offer"]
    assert util["ratio_high"] == pytest.approx(base)
    assert util["ratio_low"] == pytest.approx(base * sensitivity.UTILISATION_LOW)


# ------------------------------------------------------------------ CLI


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multigpu", "cost", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT)


def test_cli_json_fields(capsys):
    assert main(["cost", "--workload", TRAIN, "--prices", str(GOOD), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(prices.load_table(GOOD).offers)
    for field in ("provider", "instance", "gpu", "gpus", "interconnect", "price_per_gpu_hour_usd", "time_h",
                  "cost_usd", "feasible", "layout", "system", "rank", "cost_unit"):
        assert field in rows[0]
    assert rows[0]["rank"] == 1 and rows[0]["cost_usd"] > 0


def test_cli_list_and_table(capsys):
    assert main(["cost", "--list-workloads", "--format", "json"]) == 0
    assert TRAIN in {r["id"] for r in json.loads(capsys.readouterr().out)}
    assert main(["cost", "--workload", TRAIN, "--prices", str(GOOD)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Prices: `good.csv`") and "cost_usd" in out and err == ""


@pytest.mark.parametrize("args, message", [
    (("--workload", "train-nothing"), "unknown workload"),
    (("--workload", TRAIN, "--prices", str(ROOT / "tests/data/prices/bad_price_zero.csv")), "bad_price_zero.csv:"),
    (("--workload", TRAIN, "--prices", "no/such/file.csv"), "no/such/file.csv"),
    ((), "--workload"),
])
def test_cli_errors_are_one_line_exit_2(args, message):
    result = _cli(*args)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1 and message in result.stderr


# ------------------------------------------------- another price file


def test_another_price_file_changes_stamp_and_costs(monkeypatch):
    default_stamp, default_costs = inputs.price_table().stamp_markdown(), cost.offer_costs(TRAIN)
    monkeypatch.setenv(inputs.PRICES_ENV, str(GOOD))
    table = inputs.price_table()
    stamp = table.stamp_markdown()
    assert stamp != default_stamp and "`good.csv`" in stamp
    assert table.stamp()["sha256_12"] in stamp
    costs = cost.offer_costs(TRAIN, table)
    assert len(costs) == len(table.offers) != len(default_costs)
    assert set(costs["provider"]) <= set(table.offers["provider"])
    assert cost.offer_costs(TRAIN).equals(default_costs)  # below the edge nothing reads the environment


# --------------------------------------------------------------- claims


@pytest.mark.parametrize("claim_id", ["C24", "C26"])
def test_cost_claims_have_computed_verdicts(claim_id):
    verdict = claims.check(claim_id)
    assert verdict.verdict in claims.VERDICTS and verdict.chapter == "book/chapters/04-cost-benefit"
    assert prices.default_table().stamp()["sha256_12"] in verdict.explanation
    other = claims.check(claim_id, claims.Inputs(prices=prices.load_table(GOOD)))
    assert prices.load_table(GOOD).stamp()["sha256_12"] in other.explanation
    assert claim_id in {v.id for v in claims.check_all()}


def test_c24_counts_agree_with_break_even():
    from multigpu.evidence.claims import cost as cost_claims

    r = cost_claims.premium_cases()
    assert r["cases"] == r["train_cases"] + r["serve_cases"]
    assert r["cheaper"] == int(r["rows"]["nvlink_cheaper"].sum())
    assert (r["rows"]["charged_premium_pct"] > 0).all()


def test_interconnect_value_matches_offer_break_even():
    value = premium.interconnect_value("dgx-a100", "pcie-a100-8", ["train-llama3.1-8b"]).iloc[0]
    be = premium.break_even("train-llama3.1-8b")
    pair = be[(be["system"] == "dgx-a100") & (be["reference_system"] == "pcie-a100-8")]
    assert not pair.empty
    assert pair["gpu_hour_ratio"].to_numpy() == pytest.approx(value["gpu_hour_ratio"], rel=1e-9)


def test_progress_is_drawn_only_on_a_terminal():
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    with progress("offers", io.StringIO()) as update:
        assert update is None  # piped or redirected: nothing is drawn
    screen = Terminal()
    with progress("offers", screen) as update:
        for i in (1, 2, 3):
            update(i, 3)
    assert "offers" in screen.getvalue()
    result = _cli("--workload", TRAIN)  # stderr is a pipe here
    assert result.returncode == 0 and result.stderr == ""
