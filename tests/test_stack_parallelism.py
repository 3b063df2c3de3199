"""What parallelism a training stack offers: plain PyTorch DDP (``pytorch-ddp``) runs data parallelism alone, every
GPU holding the whole model and optimizer state, so a layout that splits the model is refused and the layout search
tries none; PyTorch FSDP (``pytorch-fsdp``) runs ZeRO 3 and no other stage."""

from __future__ import annotations

import json

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import training
from multigpu.compute.layout import TRAINING_STACKS
from multigpu.market import search


def test_only_plain_ddp_is_data_parallel_alone():
    assert [name for name, stack in TRAINING_STACKS.items() if stack.data_parallel_only] == ["pytorch-ddp"]


@pytest.mark.parametrize("tp, pp, zero_stage, message", [(2, 1, 0, "data parallelism alone"),
                                                          (1, 2, 0, "data parallelism alone"),
                                                          (1, 1, 1, "runs ZeRO 0; got ZeRO 1")])
def test_a_layout_that_splits_the_model_or_its_optimizer_is_refused(tp, pp, zero_stage, message):
    with pytest.raises(InputError, match=message):
        training.step("llama3.2-1b", "hgx-h100", 8, tp, pp, 64, 1, seq=2048, stack="pytorch-ddp",
                      zero_stage=zero_stage)


def test_the_search_tries_data_parallel_layouts_only():
    table = search.evaluate_layouts("llama3.2-1b", "pcie-a100-8", 8, 256, seq=2048, stack="pytorch-ddp")
    assert len(table) and (table["tp"] == 1).all() and (table["pp"] == 1).all() and (table["zero_stage"] == 0).all()
    megatron = search.evaluate_layouts("llama3.2-1b", "pcie-a100-8", 8, 256, seq=2048)
    assert (megatron["tp"] > 1).any()


def test_train_defaults_to_zero_0_under_ddp_and_refuses_a_split_in_one_line(capsys):
    args = ["train", "--model", "llama3.2-1b", "--system", "hgx-h100", "--gpus", "8", "--pp", "1",
            "--global-batch", "64", "--micro-batch", "1", "--stack", "pytorch-ddp", "--format", "csv"]
    assert main(args + ["--tp", "1"]) == 0
    capsys.readouterr()
    assert main(args + ["--tp", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the pytorch-ddp stack runs data parallelism alone") and err.count("\n") == 1


def test_fsdp_runs_zero_3_only():
    """PyTorch FSDP shards the weights, gradients and optimizer state over the data-parallel GPUs (ZeRO 3:
    llm-foundry's ``FULL_SHARD``, torchtitan's ``fully_shard``): ``train`` defaults to it, refuses another stage
    in one line, and the layout search tries no other; tensor and pipeline parallelism stay open (torchtitan)."""
    assert TRAINING_STACKS["pytorch-fsdp"].zero_stage == 3 and not TRAINING_STACKS["pytorch-fsdp"].data_parallel_only
    table = search.evaluate_layouts("llama3.1-8b", "hgx-h100", 8, 64, seq=4096, stack="pytorch-fsdp",
                                    zero_stages=(1, 3))
    assert len(table) and (table["zero_stage"] == 3).all() and (table["tp"] > 1).any()


def test_train_defaults_to_zero_3_under_fsdp_and_refuses_another_stage(capsys):
    args = ["train", "--model", "llama3.1-8b", "--system", "hgx-h100", "--gpus", "8", "--tp", "1", "--pp", "1",
            "--global-batch", "64", "--micro-batch", "1", "--stack", "pytorch-fsdp", "--format", "json"]
    memory = {}
    for stack, zero in (("pytorch-fsdp", []), ("megatron", ["--zero", "3"]), ("megatron", ["--zero", "1"])):
        assert main([*args[:-4], "--stack", stack, *zero, "--format", "json"]) == 0
        memory[(stack, tuple(zero))] = json.loads(capsys.readouterr().out)["memory_per_gpu_GB"]
    assert memory[("pytorch-fsdp", ())] == memory[("megatron", ("--zero", "3"))] < memory[("megatron", ("--zero", "1"))]
    assert main(args + ["--zero", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "error: the pytorch-fsdp stack runs ZeRO 3; got ZeRO 1\n"
