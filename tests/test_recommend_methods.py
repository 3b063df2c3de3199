"""The recommender plans fine-tuning (full and LoRA) as well as pre-training, and honours ``scale_out none``
(multigpu.market.recommend.train, ``recommend --train ... --method --lora-rank``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from multigpu.cli import main
from multigpu.common.errors import InputError
from multigpu.hardware import catalog
from multigpu.market import cost, prices, recommend, workloads

GOOD = Path(__file__).parent / "data" / "prices" / "good.csv"
HEADER = "provider,instance,gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,observed,source,system"
LORA = workloads.workload("lora-llama3.1-8b")
FULL = workloads.workload("finetune-llama3.1-8b")


def one_offer(tmp_path: Path, system_id: str, scale_out: str | None = None) -> prices.PriceTable:
    """A price table with a single 8-GPU offer of ``system_id``, with a ``scale_out`` cell when given."""
    system = catalog.system(system_id)
    link = system.nvswitch or system.nvlink or system.pcie
    head, tail = (HEADER, "") if scale_out is None else (f"{HEADER},scale_out", f",{scale_out}")
    path = tmp_path / f"{system_id}-{scale_out}.csv"
    path.write_text(f"{head}\nTest,{system_id},{system.gpu},8,{link},80,USD,on-demand,2026-09-01,"
                    f"https://example.org,{system_id}{tail}\n", encoding="utf-8")
    return prices.load_table(path)


def _finetune(table: prices.PriceTable, method: str, lora_rank: int = 0, max_gpus: int = 8) -> pd.DataFrame:
    return recommend.train(LORA.model, LORA.tokens, table, max_gpus=max_gpus, seq=LORA.seq,
                           global_batch=LORA.global_batch, method=method, lora_rank=lora_rank)


def test_the_defaults_are_pretraining():
    table = prices.load_table(GOOD)
    plain = recommend.train("llama3.2-1b", 2.5e10, table, max_gpus=16)
    explicit = recommend.train("llama3.2-1b", 2.5e10, table, max_gpus=16, method="pretrain", lora_rank=0)
    pd.testing.assert_frame_equal(plain, explicit)
    assert plain.attrs["method"] == "pretrain" and plain.attrs["lora_rank"] == 0


def test_lora_is_cheaper_than_full_fine_tuning_on_the_same_offers():
    table = prices.load_table(GOOD)
    full, lora = _finetune(table, "full"), _finetune(table, "lora", LORA.lora_rank)
    assert full.attrs["method"] == "full" and lora.attrs["lora_rank"] == LORA.lora_rank
    assert recommend.best(lora)["cost_usd"] < recommend.best(full)["cost_usd"]
    key = ["offer", "instances"]
    both = full[full["feasible"]].merge(lora[lora["feasible"]], on=key, suffixes=("_full", "_lora"))
    assert not both.empty
    assert (both["cost_usd_lora"] < both["cost_usd_full"]).all()
    # LoRA needs ~2/3 of the FLOPs; on H100s with memory to spare the time follows them (on 24 GB cards the
    # frozen weights also free memory for a faster layout, so the gain can be larger there)
    h100 = both[both["system_full"] == "hgx-h100"]
    assert not h100.empty
    ratio = h100["time_h_lora"] / h100["time_h_full"]
    assert ((ratio > 0.55) & (ratio < 0.85)).all(), ratio


@pytest.mark.parametrize("system_id", ["hgx-h100", "dgx-a100"])
def test_lora_best_option_is_the_cost_plan(tmp_path, system_id):
    table = one_offer(tmp_path, system_id)
    plan = cost.plan(LORA.id, system_id, 8)
    best = recommend.best(_finetune(table, "lora", LORA.lora_rank, max_gpus=LORA.gpus))
    if not plan.feasible:
        assert best is None
        return
    assert best["gpus"] == LORA.gpus
    assert best["layout"] == plan.training.label and best["step_time_s"] == plan.training.step_time_s
    priced = cost.offer_costs(LORA.id, table).iloc[0]
    assert best["time_h"] == pytest.approx(priced["time_h"])
    assert best["cost_usd"] == pytest.approx(priced["cost_usd"])


def test_method_and_rank_are_checked():
    table = prices.load_table(GOOD)
    for method, rank in (("lora", 0), ("full", 16), ("pretrain", 8), ("qlora", 0), ("lora", 2.5)):
        with pytest.raises(InputError):
            _finetune(table, method, rank)


def test_the_cli_plans_lora(capsys):
    args = ["recommend", "--train", LORA.model, "--tokens", "1e9", "--global-batch", str(LORA.global_batch),
            "--max-gpus", "8", "--format", "json", "--prices", str(GOOD)]
    assert main([*args, "--method", "lora", "--lora-rank", "16"]) == 0
    lora = json.loads(capsys.readouterr().out)
    assert main([*args, "--method", "full"]) == 0
    full = json.loads(capsys.readouterr().out)
    expected = recommend.records(recommend.train(LORA.model, 1e9, prices.load_table(GOOD), max_gpus=8,
                                                 global_batch=LORA.global_batch, method="lora", lora_rank=16))
    assert lora == expected
    assert lora[0]["cost_usd"] < full[0]["cost_usd"]
    assert main([*args, "--method", "lora", "--lora-rank", "16", "--format", "table"]) == 0
    assert "LoRA (rank 16) fine-tune llama3.1-8b" in capsys.readouterr().out


REC = ("recommend", "--train", "llama3.2-1b", "--tokens", "2e10", "--max-gpus", "8")
BAD = [
    ((*REC, "--method", "lora"), "--lora-rank"),
    ((*REC, "--lora-rank", "16"), "--method lora"),
    ((*REC, "--method", "full", "--lora-rank", "16"), "--method lora"),
    ((*REC, "--method", "lora", "--lora-rank", "0"), "--lora-rank:"),
    ((*REC, "--method", "lora", "--lora-rank", "x"), "--lora-rank:"),
    ((*REC, "--method", "qlora"), "--method:"),
    (("recommend", "--serve", "llama3.1-8b", "--tokens-per-s-per-user", "30", "--requests-per-s", "1",
      "--method", "full"), "--method"),
]


@pytest.mark.parametrize("args, words", BAD, ids=[" ".join(a[-3:]) for a, _ in BAD])
def test_bad_method_flags_are_one_line_and_exit_2(capsys, args, words):
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert words in err, err


def test_no_network_between_instances(tmp_path):
    model, tokens = "llama3.2-1b", 2.5e10
    networked = recommend.train(model, tokens, one_offer(tmp_path, "hgx-h100"), max_gpus=32)
    alone = recommend.train(model, tokens, one_offer(tmp_path, "hgx-h100", "none"), max_gpus=32)
    assert networked["feasible"].all() and sorted(networked["instances"]) == [1, 2, 4]
    assert sorted(alone["instances"]) == [1, 2, 4]

    def one_instance(options: pd.DataFrame) -> pd.DataFrame:
        # the rank and the head of the reason ("cheapest per job", "1.2x the cost of #1") follow the ranking
        one = options[options["instances"] == 1].drop(columns="rank").reset_index(drop=True)
        return one.assign(reason=one["reason"].str.split("; ", n=1).str[1])

    pd.testing.assert_frame_equal(one_instance(alone), one_instance(networked), check_dtype=False)
    assert alone.iloc[0]["instances"] == 1 and alone.iloc[0]["feasible"]
    many = alone[alone["instances"] > 1].sort_values("instances")
    assert not many["feasible"].any() and many["layout"].eq("").all()
    assert many["cost_usd"].isna().all() and many["time_h"].isna().all()
    assert list(many["reason"]) == [f"no network between instances: the job needs {g} GPUs and one instance has 8 "
                                    f"(scale_out none)" for g in (16, 32)]
    assert recommend.pareto(alone)["instances"].tolist() == [1]


def test_no_network_reason_is_the_cost_models(tmp_path):
    # a 64-GPU job on one 8-GPU offer with no network: cost.offer_costs and the recommender say the same
    w = workloads.workload("train-llama3.1-70b")
    table = one_offer(tmp_path, "hgx-h100", "none")
    priced = cost.offer_costs(w.id, table).iloc[0]
    options = recommend.train(w.model, w.tokens, table, max_gpus=w.gpus, seq=w.seq, global_batch=w.global_batch)
    row = options[options["gpus"] == w.gpus].iloc[0]
    assert not priced["feasible"] and not row["feasible"]
    assert row["reason"] == priced["reason"]
