"""Prediction intervals carried to the money (issue 44, deliverable 3, in part): ``cost --interval P`` brackets
each offer's hours and cost by the interval of the time it rests on, billed as the cost itself is."""

import json

import pytest

from multigpu.cli import main
from multigpu.evidence import intervals
from multigpu.market import cost


def _rows(capsys, *extra: str) -> list[dict]:
    assert main(["cost", "--workload", *extra, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_training_job_s_cost_is_bracketed_by_its_step_time_s_interval(capsys):
    band = intervals.run_band("training step time", 0.9)
    rows = [r for r in _rows(capsys, "train-llama3.1-8b", "--interval", "0.9") if r["feasible"]]
    assert rows and all(r["interval_regime"] == "training step time" and r["interval_level"] == 0.9 for r in rows)
    for r in rows:
        assert r["time_h_lo"] == pytest.approx(r["time_h"] * band.low)
        assert r["time_h_hi"] == pytest.approx(r["time_h"] * band.high)
        assert r["cost_usd_lo"] <= r["cost_usd"] <= r["cost_usd_hi"] and r["cost_lo"] <= r["cost"] <= r["cost_hi"]


def test_a_serving_target_s_cost_goes_as_the_inverse_of_its_throughput_s_interval(capsys):
    band = intervals.run_band("serving throughput", 0.9)
    rows = [r for r in _rows(capsys, "serve-llama3.1-8b-30tps", "--interval", "0.9") if r["feasible"]]
    assert rows
    for r in rows:
        assert r["cost_usd_hi"] == pytest.approx(r["cost_usd"] / band.low)
        assert r["cost_usd_lo"] == pytest.approx(r["cost_usd"] / band.high)


def test_the_fields_are_additive_and_empty_where_an_offer_cannot_run_the_job(capsys):
    plain = _rows(capsys, "serve-llama3.1-70b-50tps")
    assert not any(k.endswith(("_lo", "_hi")) for r in plain for k in r)
    bracketed = _rows(capsys, "serve-llama3.1-70b-50tps", "--interval", "0.9")
    assert [{k: r[k] for k in plain[0]} for r in bracketed] == plain
    assert all(r["cost_usd_lo"] is None for r in bracketed if not r["feasible"])


def test_a_minimum_lease_is_paid_whatever_the_interval_says():
    """A job the model times at 10 h on an instance leased for at least 100 h costs the lease at either end."""
    row = {"time_h": 10.0, "min_lease_h": 100.0, "instances": 1, "gpus": 8, "price_per_gpu_hour_usd": 2.0,
           "cost_usd": 1600.0, "cost": 11600.0}
    low, high = (cost.scaled_costs(row, "train", f) for f in (0.5, 3.0))
    assert low["cost_usd"] == high["cost_usd"] == 1600.0 and low["cost"] == 11600.0
    assert (low["time_h"], high["time_h"]) == (5.0, 30.0)
    longer = cost.scaled_costs(row, "train", 20.0)
    assert longer["gpu_hours"] == 200.0 * 8 and longer["cost_usd"] == 3200.0
