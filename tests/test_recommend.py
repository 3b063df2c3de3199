"""The recommender: ranked offers x instance counts x layouts for training and serving (multigpu.market.recommend)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from multigpu.cli import main
from multigpu.common.errors import InputError
from multigpu.compute import training
from multigpu.market import prices, recommend, search

GOOD = Path(__file__).parent / "data" / "prices" / "good.csv"
BAD = Path(__file__).parent / "data" / "prices" / "bad_price_zero.csv"
MODEL, TOKENS, MAX_GPUS = "llama3.2-1b", 2.5e10, 16


@pytest.fixture(scope="module")
def table():
    return prices.load_table(GOOD)


@pytest.fixture(scope="module")
def options(table):
    return recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS)


def scaled(table, factor):
    return table.scaled(factor, frozenset(table.offers["system"]))


def test_parse_amount_accepts_exponents_and_suffixes():
    assert recommend.parse_amount("2e11") == 2e11
    assert recommend.parse_amount("200B") == 2e11
    assert recommend.parse_amount("1.5T") == 1.5e12
    assert recommend.parse_amount(4096) == 4096.0
    for bad in ("2x10", "-5", "0", ""):
        with pytest.raises(InputError):
            recommend.parse_amount(bad)


def test_default_global_batch_follows_tokens_per_step():
    # about 1M tokens per step below 5B parameters, 2M below 30B, 4M above (Llama 3's 1M-4M range)
    assert recommend.default_global_batch("llama3.2-1b", 4096) == 256
    assert recommend.default_global_batch("llama3.1-8b", 4096) == 512
    assert recommend.default_global_batch("llama3.1-70b", 4096) == 1024
    assert recommend.default_global_batch("llama3.1-70b", 2048) == 2048
    assert recommend.instance_counts(8, 64) == [1, 2, 4, 8]
    assert recommend.instance_counts(8, 4) == []


def test_columns_ranks_and_every_offer_present(options, table):
    assert list(options.columns) == list(recommend.TRAIN_COLUMNS)
    assert options["rank"].tolist() == list(range(1, len(options) + 1))
    assert set(options["offer"]) == set(range(len(table.offers)))
    ran = options.dropna(subset=["cost_usd"])
    assert (ran["gpus"] == ran["instances"] * ran["gpus_per_instance"]).all()
    assert (ran["gpus"] <= MAX_GPUS).all()
    assert (ran["tp"] * ran["pp"] * ran["dp"] == ran["gpus"]).all()


def test_ranking_is_stable_under_a_uniform_price_scale(options, table):
    tripled = recommend.train(MODEL, TOKENS, scaled(table, 3.0), max_gpus=MAX_GPUS)
    assert tripled[["offer", "instances"]].astype(str).values.tolist() == \
        options[["offer", "instances"]].astype(str).values.tolist()
    ran = options["cost_usd"].notna()
    assert tripled.loc[ran, "cost_usd"].to_numpy() == pytest.approx(3 * options.loc[ran, "cost_usd"].to_numpy())
    assert tripled.loc[ran, "time_h"].to_numpy() == pytest.approx(options.loc[ran, "time_h"].to_numpy())


def test_best_option_time_is_the_training_models_own_evaluation(options):
    best = recommend.best(options)
    assert best is not None and best["rank"] == 1
    r = training.step(MODEL, best["system"], best["gpus"], best["tp"], best["pp"], best["global_batch"],
                      best["micro_batch"], seq=best["seq"], recompute=best["recompute"],
                      sequence_parallel=best["sequence_parallel"], interleave=best["interleave"],
                      zero_stage=best["zero_stage"])
    steps = TOKENS / (best["global_batch"] * best["seq"])
    assert best["step_time_s"] == pytest.approx(r.step_time_s, rel=1e-12)
    assert best["time_h"] == pytest.approx(steps * r.step_time_s / 3600, rel=1e-12)
    per_instance = best["price_per_gpu_hour_usd"] * best["gpus_per_instance"]
    assert best["cost_usd"] == pytest.approx(best["time_h"] * best["instances"] * per_instance, rel=1e-12)


def test_cheapest_first_and_rank_by_time(options, table):
    ok = options[options["feasible"]]
    assert ok["cost_usd"].is_monotonic_increasing
    assert ok.iloc[0]["reason"].startswith("cheapest per job")
    fast = recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS, rank_by="time")
    ok = fast[fast["feasible"]]
    assert ok["time_h"].is_monotonic_increasing and ok.iloc[0]["reason"].startswith("fastest")


def tiers(frame):
    return [0 if f else (1 if pd.notna(c) else 2) for f, c in zip(frame["feasible"], frame["cost_usd"])]


def test_deadline_filter_and_infeasible_never_above_feasible(options, table):
    deadline = float(options["time_h"].median())
    limited = recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS, deadline_h=deadline)
    assert tiers(limited) == sorted(tiers(limited))  # feasible, then misses a limit, then cannot run
    ran = limited.dropna(subset=["time_h"])
    assert (ran["feasible"] == (ran["time_h"] <= deadline)).all()
    late = ran[~ran["feasible"]]
    assert not late.empty and late["reason"].str.startswith("misses the deadline by").all()
    assert limited[limited["feasible"]]["rank"].max() < late["rank"].min()


def test_budget_filter(options, table):
    budget = float(options["cost_usd"].quantile(0.3))
    limited = recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS, budget_usd=budget)
    ran = limited.dropna(subset=["cost_usd"])
    assert (ran["feasible"] == (ran["cost_usd"] <= budget)).all()
    assert ran[~ran["feasible"]]["reason"].str.contains("over budget by USD").all()
    assert tiers(limited) == sorted(tiers(limited))


def test_offers_that_cannot_run_say_why(table):
    big = recommend.train("llama3.1-70b", 1e12, table, max_gpus=8)
    cannot = big[big["cost_usd"].isna()]
    assert not cannot.empty and cannot["reason"].str.startswith("cannot run: ").all()
    assert cannot["reason"].str.contains("does not fit").any()
    assert not cannot["feasible"].any()


def test_pareto_front_is_not_dominated(options):
    front = recommend.pareto(options)
    ran = options.dropna(subset=["cost_usd"])
    assert 1 <= len(front) <= len(ran)
    for _, f in front.iterrows():
        dominated = ran[(ran["cost_usd"] <= f["cost_usd"]) & (ran["time_h"] <= f["time_h"])
                        & ((ran["cost_usd"] < f["cost_usd"]) | (ran["time_h"] < f["time_h"]))]
        assert dominated.empty
    for _, o in ran.drop(front.index).iterrows():
        assert ((front["cost_usd"] <= o["cost_usd"]) & (front["time_h"] <= o["time_h"])).any()
    assert front.iloc[0]["cost_usd"] == ran["cost_usd"].min()


def test_serving_rents_enough_instances_at_the_serving_searchs_tp(table):
    rate, load, out_tokens = 30.0, 10.0, 256
    frame = recommend.serve("llama3.1-8b", rate, load, table, output_tokens=out_tokens)
    assert list(frame.columns) == list(recommend.SERVE_COLUMNS)
    ok = frame[frame["feasible"]]
    assert not ok.empty and ok["cost_per_hour_usd"].is_monotonic_increasing
    assert (ok["capacity_tokens_per_s"] >= load * out_tokens * (1 - 1e-9)).all()
    assert (ok["tokens_per_s_per_user"] >= rate).all()
    per_m = ok["cost_per_hour_usd"] / (load * out_tokens * 3600 / 1e6)
    assert ok["cost_per_million_tokens_usd"].to_numpy() == pytest.approx(per_m.to_numpy())
    top = ok.iloc[0]
    best = search.serve("llama3.1-8b", top["system"], int(top["gpus_per_instance"]), 8192, out_tokens, rate).best
    assert (top["tp"], top["batch"]) == (best.tp, best.batch)
    instance_tps = best.tokens_per_s_per_gpu * top["gpus_per_instance"]
    instances = math.ceil(load * out_tokens / instance_tps)
    assert top["instances"] == instances
    assert top["cost_per_hour_usd"] == pytest.approx(instances * top["price_per_gpu_hour_usd"]
                                                     * top["gpus_per_instance"])


def test_serving_limits_and_scale(table):
    base = recommend.serve("llama3.1-8b", 30, 10, table)
    tripled = recommend.serve("llama3.1-8b", 30, 10, scaled(table, 3.0))
    assert tripled["offer"].tolist() == base["offer"].tolist()
    limited = recommend.serve("llama3.1-8b", 30, 10, table, max_gpus=4,
                              budget_usd_per_hour=float(base["cost_per_hour_usd"].min()) * 2)
    assert tiers(limited.rename(columns={"cost_per_hour_usd": "cost_usd"})) == \
        sorted(tiers(limited.rename(columns={"cost_per_hour_usd": "cost_usd"})))
    late = limited[~limited["feasible"] & limited["cost_per_hour_usd"].notna()]
    assert late["reason"].str.contains("more than the 4 allowed").all()


def test_cli_json_fields(capsys):
    args = ["recommend", "--prices", str(GOOD), "--train", MODEL, "--tokens", "2.5e10", "--max-gpus", "16",
            "--format", "json"]
    assert main(args) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert out.err == ""
    assert list(rows[0]) == list(recommend.TRAIN_COLUMNS)
    assert rows[0]["rank"] == 1 and rows[0]["feasible"] is True and isinstance(rows[0]["reason"], str)
    assert main(["recommend", "--prices", str(GOOD), "--serve", MODEL, "--tokens-per-s-per-user", "30",
                 "--requests-per-s", "5", "--format", "json", "--top", "2"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and list(rows[0]) == list(recommend.SERVE_COLUMNS)


def test_cli_table_and_csv(capsys):
    assert main(["recommend", "--prices", str(GOOD), "--train", MODEL, "--tokens", "25B", "--max-gpus", "16",
                 "--deadline-h", "100", "--top", "3"]) == 0
    out = capsys.readouterr()
    assert out.err == ""  # no progress where stderr is not a terminal
    lines = out.out.splitlines()
    assert lines[0].startswith("Prices: `good.csv`") and "deadline 100 h" in lines[1]
    assert lines[3].split()[:2] == ["rank", "provider"] and len(lines) == 3 + 2 + 3
    assert main(["recommend", "--prices", str(GOOD), "--train", MODEL, "--tokens", "25B", "--max-gpus", "16",
                 "--format", "csv", "--top", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("rank,offer,provider")


@pytest.mark.parametrize("args", [
    ["--train", "no-such-model", "--tokens", "1e9"],
    ["--prices", str(BAD), "--train", MODEL, "--tokens", "1e9"],
    [],
    ["--train", MODEL],
    ["--serve", MODEL, "--tokens-per-s-per-user", "30"],
    ["--train", MODEL, "--tokens", "1e9", "--requests-per-s", "3"],
    ["--train", MODEL, "--tokens", "lots"],
    ["--train", MODEL, "--tokens", "1e9", "--max-gpus", "0"],
])
def test_cli_bad_input_exits_2(args, capsys):
    assert main(["recommend", *args]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("error: ") and out.err.count("\n") == 1


def test_cli_pricing_filter_keeps_one_pricing_type():
    out = subprocess.run([sys.executable, "-m", "multigpu", "recommend", "--serve", "llama3.1-8b",
                          "--tokens-per-s-per-user", "30", "--requests-per-s", "1", "--pricing", "on-demand",
                          "--format", "json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert rows and {row["pricing"] for row in rows} == {"on-demand"}


def test_a_training_stack_searches_the_layouts_under_it(table):
    """``recommend.train(stack=...)``: every row names the stack, and the best option's step time is the training
    model's own evaluation under that stack (NeMo's overlap and fitted kernels)."""
    nemo = recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS, stack="nemo")
    assert set(nemo["stack"]) == {"nemo"} and nemo.attrs["stack"] == "nemo"
    best = recommend.best(nemo)
    r = training.step(MODEL, best["system"], best["gpus"], best["tp"], best["pp"], best["global_batch"],
                      best["micro_batch"], seq=best["seq"], recompute=best["recompute"],
                      sequence_parallel=best["sequence_parallel"], interleave=best["interleave"],
                      zero_stage=best["zero_stage"], stack="nemo")
    assert best["step_time_s"] == pytest.approx(r.step_time_s, rel=1e-12)
    with pytest.raises(InputError, match="unknown training stack|stack"):
        recommend.train(MODEL, TOKENS, table, max_gpus=MAX_GPUS, stack="vllm")


@pytest.mark.parametrize("args, message", [
    (["--train", MODEL, "--tokens", "2.5e10", "--stack", "vllm"], "is a serving stack"),
    (["--serve", "llama3.1-8b", "--tokens-per-s-per-user", "20", "--requests-per-s", "1", "--stack", "nemo"],
     "is a training stack"),
    (["--train", MODEL, "--tokens", "2.5e10", "--dtype", "fp4"], "is a serving format"),
    (["--serve", "llama3.1-8b", "--tokens-per-s-per-user", "20", "--requests-per-s", "1", "--dtype", "tf32"],
     "is a training precision"),
])
def test_recommend_refuses_a_stack_or_precision_of_the_other_kind(args, message, capsys):
    assert main(["recommend", "--prices", str(GOOD), *args]) == 2
    assert message in capsys.readouterr().err
