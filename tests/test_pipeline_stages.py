"""Pipeline stages as they are: the output layer's work on the last stage, stated first- and last-stage layer
counts, training stacks, and the search choosing the last stage's layers (issue 46, deliverable 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.compute.layout import TRAINING_STACKS, Layout
from multigpu.evidence import runs
from multigpu.market import search

#: Llama 3.1 8B on one H100 node, 128 sequences of 8192 tokens: the job of the issue's seven-layout sweep.
EIGHT_B = dict(model_id="llama3.1-8b", system_id="hgx-h100", gpus=8, tp=1, global_batch=128, micro_batch=1,
               seq=8192)


def test_an_even_split_gives_every_stage_the_busiest_count():
    assert [x.item() for x in Layout(pp=4).stage_layers(32)] == [8, 8, 8]
    assert [x.item() for x in Layout(pp=1).stage_layers(32)] == [32, 0, 0]
    assert [x.item() for x in Layout(pp=2).stage_layers(32)] == [16, 0, 16]
    # Llama 3.1 405B's 126 layers on 16 stages: the busiest hold 8
    assert [x.item() for x in Layout(pp=16).stage_layers(126)] == [8, 8, 8]
    assert [x.item() for x in Layout(pp=4, interleave=3).stage_layers(32)] == [9, 9, 9]


def test_stated_counts_leave_the_rest_to_the_other_stages():
    """Llama 3 (arXiv:2407.21783, section 3.3.2) took one layer off the first and the last of 16 stages: 7, 8, 7."""
    first, middle, last = Layout(pp=16, pp_first_layers=7, pp_last_layers=7).stage_layers(126)
    assert (first.item(), middle.item(), last.item()) == (7, 8, 7)
    first, middle, last = Layout(pp=8, pp_last_layers=2).stage_layers(32)
    assert (first.item(), middle.item(), last.item()) == (5, 5, 2)
    layouts = Layout(pp=np.array([1, 2, 8]), pp_last_layers=np.array([0, 12, 2])).stage_layers(32)
    assert [list(x) for x in layouts] == [[32, 20, 5], [0, 0, 5], [0, 12, 2]]


@pytest.mark.parametrize("options, message", [
    (dict(pp=1, pp_last_layers=3), "need pipeline parallelism"),
    (dict(pp=8, pp_last_layers=30), "each stage needs at least one"),
    (dict(pp=2, pp_first_layers=10, pp_last_layers=10), "are not the 32 layers"),
    (dict(pp=2, stack="deepspeed"), "unknown training stack 'deepspeed'"),
])
def test_impossible_stage_counts_and_stacks_are_refused(options, message):
    pp = options.pop("pp")
    with pytest.raises(InputError, match=message):
        training.step(**{**EIGHT_B, "pp": pp}, **options)


def test_the_output_layer_makes_eight_stages_slower_than_two():
    """The issue's sweep: on one node PP 8 was measured 37 % slower than PP 2 x DP 4, and predicted equal while the
    output layer's work was spread over the stages. On the last stage, with a 128k vocabulary, it is the slowest."""
    pp8, pp2 = training.step(**EIGHT_B, pp=8), training.step(**EIGHT_B, pp=2)
    assert pp8.step_time_s > 1.25 * pp2.step_time_s
    assert pp8.stage_layers == (4, 4, 4)


def test_taking_layers_off_the_last_stage_pays_and_the_search_finds_it():
    even = training.step(**EIGHT_B, pp=8)
    lighter = training.step(**EIGHT_B, pp=8, pp_last_layers=2)
    assert lighter.stage_layers == (5, 5, 2) and lighter.step_time_s < even.step_time_s
    table = search.evaluate_layouts("llama3.1-8b", "hgx-h100", 8, 128, 8192, zero_stages=(1,))
    pp8 = table[(table["pp"] == 8) & (table["interleave"] == 1) & (table["micro_batch"] == 1)
                & (table["recompute"] == "none")]
    assert pp8.loc[pp8["step_time_s"].idxmin(), "pp_last_layers"] > 0


def test_a_stated_last_stage_changes_the_memory_of_the_stages():
    """The first stage holds pp micro-batches in flight: giving it the last stage's layers raises its memory."""
    even = training.step(**EIGHT_B, pp=8)
    lighter = training.step(**EIGHT_B, pp=8, pp_last_layers=1)
    assert lighter.memory_per_gpu_GB > even.memory_per_gpu_GB


@settings(max_examples=30, deadline=None)
@given(pp=st.sampled_from([2, 4, 8]), mb=st.sampled_from([1, 2]), dp=st.sampled_from([1, 2]))
def test_balancing_the_stages_never_slows_a_step(pp, mb, dp):
    """nanotron's balanced stages try the even split too, so they are never slower than it (same switches
    otherwise: neither megatron nor nanotron overlaps TP communication)."""
    job = {**EIGHT_B, "tp": 2, "gpus": 2 * pp * dp, "micro_batch": mb, "global_batch": 64}
    even = training.step(**job, pp=pp)
    balanced = training.step(**job, pp=pp, stack="nanotron")
    assert balanced.step_time_s <= even.step_time_s * (1 + 1e-12)
    assert sum(balanced.stage_layers[::2]) + max(0, pp - 2) * balanced.stage_layers[1] >= 32


@settings(max_examples=30, deadline=None)
@given(tp=st.sampled_from([2, 4, 8]), pp=st.sampled_from([1, 2, 4]), sp=st.booleans())
def test_overlapping_tensor_parallel_communication_is_never_slower(tp, pp, sp):
    # the same kernels on both sides (the reference line), so that only the stack's overlap switch differs
    job = dict(model_id="llama3.1-70b", system_id="hgx-h100", gpus=tp * pp * 2, tp=tp, pp=pp, global_batch=32,
               micro_batch=1, seq=4096, sequence_parallel=sp, reference_kernels=True)
    plain, overlapped = training.step(**job), training.step(**job, stack="nemo")
    assert overlapped.step_time_s <= plain.step_time_s
    assert overlapped.exposed_comm_s.tp <= plain.exposed_comm_s.tp
    assert overlapped.compute_s == pytest.approx(plain.compute_s)


def test_every_stack_names_a_source():
    assert set(TRAINING_STACKS) == {"megatron", "nemo", "nanotron", "pytorch-ddp", "pytorch-fsdp", "maxtext"}
    assert all(stack.source.startswith("https://") for stack in TRAINING_STACKS.values())


def test_runs_that_must_count_the_embedding_and_the_loss_get_their_split():
    """Megatron-Core splits 126 layers over 8 x 8 chunks only with the embedding and the loss counted as layers
    (Megatron-Bridge ``recipes/llama/llama31_405b.py``: account_for_embedding/loss_in_pipeline_split): 15 on
    the first and the last stage, 16 on the others. Llama 3.1 70B's 80 layers divide 8 x 5 chunks: even."""
    assert runs.end_stage_layers(models.model("llama3.1-405b"), 8, 8) == 15
    assert runs.end_stage_layers(models.model("llama3.1-70b"), 8, 5) == 0
    assert runs.end_stage_layers(models.model("llama3.1-405b"), 1, 1) == 0


def test_the_train_command_takes_and_names_the_stack_and_the_stages(capsys):
    args = ["train", "--model", "llama3.1-8b", "--system", "hgx-h100", "--gpus", "8", "--tp", "1", "--pp", "8",
            "--global-batch", "128", "--micro-batch", "1", "--seq", "8192", "--format", "json"]
    assert main([*args, "--stack", "nanotron"]) == 0
    out = capsys.readouterr().out
    assert '"stack": "nanotron"' in out and '"stage_layers": [\n    5,\n    5,\n    1\n  ]' in out
    assert main([*args, "--pp-last-layers", "2", "--attention", "materialised"]) == 0
    out = capsys.readouterr().out
    assert '"attention": "materialised"' in out and '"stack": "megatron"' in out


def test_a_tensor_parallel_group_wider_than_a_node_is_priced_not_refused():
    """nanotron's published sweeps run TP 16 and 32 over several nodes: the model prices their all-reduces over
    the network, so TP 16 across two H100 nodes is slower than TP 8 in each node with 2-way data parallelism."""
    job = dict(model_id="llama3.1-70b", system_id="hgx-h100", gpus=16, pp=1, global_batch=32, micro_batch=1,
               seq=4096, sequence_parallel=True)
    wide, inside = training.step(**job, tp=16), training.step(**job, tp=8)
    assert wide.exposed_comm_s.tp > 2 * inside.exposed_comm_s.tp
    assert wide.step_time_s > inside.step_time_s


def test_the_search_takes_the_stack_and_overlapping_tp_communication_never_slows_its_best(capsys):
    args = ("llama3.1-70b", "hgx-h100", 16, 64, 4096)
    plain, nemo = search.train(*args), search.train(*args, stack="nemo")
    assert (plain.stack, nemo.stack) == ("megatron", "nemo")
    assert nemo.best.step_time_s <= plain.best.step_time_s
    assert main(["search", "--model", "llama3.1-8b", "--system", "hgx-h100", "--gpus", "8", "--global-batch", "64",
                 "--stack", "nanotron", "--format", "json"]) == 0
    assert '"stack": "nanotron"' in capsys.readouterr().out
    with pytest.raises(InputError, match="unknown training stack"):
        search.evaluate_layouts("llama3.1-8b", "hgx-h100", 8, 64, stack="colossal")


def test_published_frameworks_are_named_without_versions():
    names = {runs.framework(row) for row in runs.runs()}
    assert {"Megatron-Bridge", "NeMo", "Megatron-LM", "PyTorch DDP"} <= names
    assert not [name for name in names if name[-1].isdigit() or "(" in name]
