"""One training-layout search and one serving search: chapter 4 (cost), chapter 5 (the guide), the recommender
and the CLI give the same layout for every named workload on every system the chapters compare.

Before the restructure, chapter 4 and chapter 5 searched separately and disagreed: for train-qwen2.5-14b on
dgx-a100 chapter 4 showed tp1 pp4 dp2 and chapter 5 tp1 pp8 dp1 v6.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from multigpu.evidence import guide
from multigpu.hardware import catalog
from multigpu.market import cost, prices, recommend, search, workloads

#: The 8-GPU systems chapter 4 compares (NVSwitch against PCIe on A100, NVSwitch against a mesh on H200).
SYSTEMS = ("dgx-a100", "pcie-a100-8", "hgx-h200", "h200-p2p-8")
TRAIN = [w for w in workloads.workloads_table().values() if w.kind == "train"]
SERVE = [w for w in workloads.workloads_table().values() if w.kind == "serve"]
HEADER = "provider,instance,gpu,gpus_per_instance,interconnect,price_per_hour,currency,pricing,observed,source,system"


def one_offer(tmp_path: Path, system_id: str) -> prices.PriceTable:
    """A price table with a single 8-GPU offer of ``system_id`` (a system may have no real offer)."""
    system = catalog.system(system_id)
    link = system.nvswitch or system.nvlink or system.pcie
    path = tmp_path / f"{system_id}.csv"
    path.write_text(f"{HEADER}\nTest,{system_id},{system.gpu},8,{link},80,USD,on-demand,2026-09-01,"
                    f"https://example.org,{system_id}\n", encoding="utf-8")
    return prices.load_table(path)


@pytest.mark.parametrize("system_id", SYSTEMS)
@pytest.mark.parametrize("w", TRAIN, ids=lambda w: w.id)
def test_training_layout_is_the_same_everywhere(tmp_path, w, system_id):
    found = search.train(w.model, system_id, w.gpus, w.global_batch, w.seq, dtype=w.dtype, method=w.method,
                         lora_rank=w.lora_rank or 0)
    plan = cost.plan(w.id, system_id, 8)  # chapter 4's cost tables and interconnect_value
    if found.best is None:
        assert not plan.feasible and plan.reason == found.reason
        return
    assert plan.training == found.best
    table = one_offer(tmp_path, system_id)
    options = recommend.train(w.model, w.tokens, table, max_gpus=w.gpus, seq=w.seq, global_batch=w.global_batch,
                              method=w.method, lora_rank=w.lora_rank or 0)
    row = options[options["gpus"] == w.gpus].iloc[0]
    assert row["layout"] == found.best.label and row["step_time_s"] == found.best.step_time_s
    if w.method != "pretrain":  # the guide plans pre-training jobs only
        return
    picked = guide.options(w.model, "train", table)  # chapter 5: the guide's job for this model
    if guide.training_tokens(w.model) == w.tokens and recommend.default_global_batch(w.model) == w.global_batch:
        row = picked[picked["gpus"] == w.gpus].iloc[0]
        assert row["layout"] == found.best.label


@pytest.mark.parametrize("system_id", SYSTEMS)
@pytest.mark.parametrize("w", SERVE, ids=lambda w: w.id)
def test_serving_layout_is_the_same_everywhere(tmp_path, w, system_id):
    found = search.serve(w.model, system_id, 8, w.input_tokens, w.output_tokens, w.min_tokens_per_s_per_user,
                         dtype=w.dtype, max_ttft_s=w.max_ttft_s)
    plan = cost.plan(w.id, system_id, 8)
    assert plan.serving == found.best and plan.feasible == (found.best is not None)
    if found.best is None:
        return
    options = recommend.serve(w.model, w.min_tokens_per_s_per_user, 1.0, one_offer(tmp_path, system_id),
                              input_tokens=w.input_tokens, output_tokens=w.output_tokens, dtype=w.dtype,
                              max_ttft_s=w.max_ttft_s)
    row = options.iloc[0]
    assert (row["tp"], row["batch"]) == (found.best.tp, found.best.batch)


def test_the_search_cli_gives_the_same_layout():
    w = workloads.workload("train-qwen2.5-14b")
    out = subprocess.run([sys.executable, "-m", "multigpu", "search", "--model", w.model, "--system", "dgx-a100",
                          "--gpus", str(w.gpus), "--global-batch", str(w.global_batch), "--seq", str(w.seq),
                          "--format", "json"], capture_output=True, text=True, check=True)
    best = json.loads(out.stdout)["best"]
    assert best["layout"] == cost.plan(w.id, "dgx-a100", 8).layout


def test_a_search_with_no_layout_that_fits_says_why_in_every_format(capsys):
    from multigpu.cli.app import main

    args = ["search", "--model", "llama3.1-405b", "--system", "pcie-rtx4090-8", "--gpus", "2", "--global-batch", "256"]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "does not fit" in table and "GB per GPU" in table
    assert main(args + ["--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["reason"].startswith("does not fit")
