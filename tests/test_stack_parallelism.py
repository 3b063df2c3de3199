"""What parallelism a training stack offers: plain PyTorch DDP (``pytorch-ddp``) runs data parallelism alone, every
GPU holding the whole model and optimizer state, so a layout that splits the model is refused and the layout search
tries none."""

from __future__ import annotations

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import training
from multigpu.compute.layout import TRAINING_STACKS
from multigpu.market import search


def test_only_plain_ddp_is_data_parallel_alone():
    assert [name for name, stack in TRAINING_STACKS.items() if stack.data_parallel_only] == ["pytorch-ddp"]


@pytest.mark.parametrize("tp, pp, zero_stage", [(2, 1, 0), (1, 2, 0), (1, 1, 1)])
def test_a_layout_that_splits_the_model_or_its_optimizer_is_refused(tp, pp, zero_stage):
    with pytest.raises(InputError, match="data parallelism alone"):
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
