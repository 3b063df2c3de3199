"""Prediction intervals on the recommender's options (issue 44, deliverable 4): ``recommend --interval P`` brackets
each feasible option's time and cost (training) or capacity, instances and cost (serving), additively."""

import json
import math

import pytest

from multigpu.cli import main
from multigpu.evidence import intervals

TRAIN = ["recommend", "--train", "llama3.1-8b", "--tokens", "2e10", "--pricing", "on-demand", "--max-gpus", "16"]
SERVE = ["recommend", "--serve", "llama3.1-70b", "--tokens-per-s-per-user", "30", "--requests-per-s", "10",
         "--pricing", "on-demand", "--max-gpus", "32"]


def _rows(capsys, argv: list[str]) -> list[dict]:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_training_option_s_hours_and_cost_go_as_its_step_time_s_band(capsys):
    band = intervals.run_band("training step time", 0.9)
    plain = _rows(capsys, TRAIN)
    rows = _rows(capsys, [*TRAIN, "--interval", "0.9"])
    assert [{k: r[k] for k in plain[0]} for r in rows] == plain  # additive: every other field as it was
    feasible = [r for r in rows if r["feasible"]]
    assert feasible and all(r["interval_regime"] == "training step time" for r in feasible)
    for r in feasible:
        for field in ("step_time_s", "time_h", "cost_usd"):
            assert (r[f"{field}_lo"], r[f"{field}_hi"]) == pytest.approx((r[field] * band.low, r[field] * band.high))
        assert r["mfu_lo"] < r["mfu"] < r["mfu_hi"]  # a slower step is a lower MFU
    assert all(r["cost_usd_lo"] is None for r in rows if not r["feasible"])


def test_a_serving_option_rents_at_each_end_the_instances_that_carry_the_same_demand(capsys):
    band = intervals.run_band("serving throughput", 0.9)
    demand = 10 * 256  # queries/s x output tokens (recommend's default)
    rows = [r for r in _rows(capsys, [*SERVE, "--interval", "0.9"]) if r["feasible"]]
    assert rows
    for r in rows:
        per_instance = r["capacity_tokens_per_s"] / r["instances"]
        assert r["capacity_tokens_per_s_lo"] == pytest.approx(r["capacity_tokens_per_s"] * band.low)
        for end, factor in (("hi", band.low), ("lo", band.high)):  # fewer tokens per GPU: more instances
            n = r[f"instances_{end}"]
            assert n * per_instance * factor >= demand * (1 - 1e-9)  # they carry the demand
            assert n == 1 or (n - 1) * per_instance * factor < demand  # and one fewer would not
            assert r[f"cost_per_hour_usd_{end}"] == pytest.approx(n * r["cost_per_hour_usd"] / r["instances"])
        assert r["instances_lo"] <= r["instances"] <= r["instances_hi"]
        assert r["cost_per_million_tokens_usd_lo"] <= r["cost_per_million_tokens_usd"] \
            <= r["cost_per_million_tokens_usd_hi"]


def test_the_table_prints_each_bracketed_number_with_its_range(capsys):
    assert main([*TRAIN, "--top", "1", "--interval", "0.9"]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.count("–") == 2 and line.count("(") >= 2  # time_h and cost_usd as "x (lo–hi)"


@pytest.mark.parametrize("level", ["0", "1", "1.5", "x"])
def test_a_bad_level_is_one_error_with_status_2(capsys, level):
    assert main([*TRAIN, "--interval", level]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--interval" in err[0]


def test_a_level_the_runs_cannot_support_is_refused():
    with pytest.raises(ValueError, match="calibration points"):
        intervals.run_band("serving throughput", 1 - 1e-6)
    assert math.isfinite(intervals.run_band("serving throughput", 0.5).high)
