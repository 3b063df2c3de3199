"""Full recomputation of some layers only (Megatron's ``--recompute-num-layers N`` with ``--recompute-method
block``): ``Layout.recompute_layers`` and ``train --recompute-layers`` (multigpu.compute.training)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.cli import main
from multigpu.common.errors import InputError
from multigpu.compute import models, training

#: GPT-3 175B on 64 A100s, 8 stages of 12 layers, as Korthikanti et al. ran it (Table 3), without interleaving
JOB = dict(model_id="gpt3-175b", system_id="dgx-a100", gpus=64, tp=8, pp=8, global_batch=64, micro_batch=1,
           seq=2048, attention="materialised")


def test_recomputing_every_layer_of_a_stage_is_full_recomputation():
    every = training.step(**JOB, recompute="full")
    named = training.step(**JOB, recompute="full", recompute_layers=12)
    assert {**named.to_dict(), "recompute_layers": 0} == every.to_dict()


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 11))
def test_each_more_recomputed_layer_costs_time_and_saves_memory(n):
    fewer, more = (training.step(**JOB, recompute="full", recompute_layers=k) for k in (n, n + 1))
    none = training.step(**JOB)
    assert none.step_time_s <= fewer.step_time_s < more.step_time_s
    assert none.memory_per_gpu_GB >= fewer.memory_per_gpu_GB > more.memory_per_gpu_GB


def test_one_more_recomputed_layer_frees_what_korthikanti_eq2_keeps_less_its_input():
    """[K22] Korthikanti et al. 2022 (https://arxiv.org/abs/2205.05198), eq. 2 and section 5: with tensor
    parallelism alone a layer keeps ``sbh (10 + 24/t + 5as/(ht))`` bytes; fully recomputed it keeps its input,
    ``2sbh``. On the first stage each of the 8 micro-batches in flight holds every layer, so one more recomputed
    layer frees 8 x the difference."""
    m = models.model("gpt3-175b")
    s, b, h, a, t = 2048, 1, m.hidden, m.heads, 8
    kept, recomputed = s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 2 * s * b * h
    one, two = (training.step(**JOB, recompute="full", recompute_layers=k).memory_per_gpu_GB for k in (1, 2))
    assert (one - two) * 1e9 == pytest.approx(8 * (kept - recomputed), rel=1e-9)


@pytest.mark.parametrize("options, message", [
    (dict(recompute="selective", recompute_layers=2), "needs --recompute full"),
    (dict(recompute="full", recompute_layers=13), "more than the 12 layers"),
])
def test_recompute_layers_that_cannot_be_are_errors(options, message):
    with pytest.raises(InputError, match=message):
        training.step(**JOB, **options)


def test_the_cli_takes_and_reports_recompute_layers(capsys):
    args = ["train", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "64", "--tp", "8", "--pp", "8",
            "--global-batch", "64", "--micro-batch", "1", "--recompute", "full", "--format", "json"]
    assert main([*args, "--recompute-layers", "3"]) == 0
    three = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    every = json.loads(capsys.readouterr().out)
    assert three["recompute_layers"] == 3 and every["recompute_layers"] == 0
    assert three["step_time_s"] < every["step_time_s"] and three["memory_per_gpu_GB"] > every["memory_per_gpu_GB"]
    assert main([*args[:-4], "--recompute", "none", "--recompute-layers", "3", "--format", "json"]) == 2
    assert "needs --recompute full" in capsys.readouterr().err
