"""Hybrid sharding (PyTorch FSDP's ``HYBRID_SHARD``, MaxText's ``dcn_data_parallelism`` beside its ``fsdp`` axes):
the ZeRO shards span groups of data-parallel ranks and the groups hold copies of them. PyTorch's documentation of
``ShardingStrategy.HYBRID_SHARD`` (https://pytorch.org/docs/stable/fsdp.html): full sharding within a node and
replication across nodes, so that the all-gathers and reduce-scatters stay within the node; the price is memory,
each GPU holding a larger shard."""

from __future__ import annotations

import json

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import models, training
from multigpu.compute.layout import DEFAULT_GRAD_DTYPE, TRAINING_STACKS
from multigpu.compute.shapes import MAXTEXT_SAVES
from multigpu.evidence import runs
from multigpu.hardware import catalog

#: Llama 3.1 70B on 8 HGX H100 nodes, ZeRO 3, short micro-batches whose compute does not hide the gathers
JOB = dict(model_id="llama3.1-70b", system_id="hgx-h100", gpus=64, tp=1, pp=1, global_batch=256, micro_batch=1,
           seq=1024, zero_stage=3, recompute="full")


def _step(**options):
    return training.step(**{**JOB, **options})


def test_one_group_of_every_rank_is_plain_sharding():
    plain, whole = _step(), _step(shard_group=64)
    assert whole.step_time_s == plain.step_time_s and whole.memory_per_gpu_GB == plain.memory_per_gpu_GB
    assert whole.shard_group == 64 and plain.shard_group == 0


def test_sharding_within_a_node_pays_on_a_slow_network_and_costs_memory():
    """Groups of 8 (one node): each micro-batch's weight gathers run over NVLink instead of the network. On AWS
    p4d's four 100 Gb/s EFA links per node that more than halves the step of Llama 3.1 8B on 64 GPUs; on HGX H100
    with a 400 Gb/s NIC per GPU the network gathers about as fast as NVLink, and the all-reduce of the gradient
    shards across the groups makes hybrid sharding the slower. Each GPU holds an eighth of the weights, gradients
    and optimizer state instead of a 64th."""
    job = dict(model_id="llama3.1-8b", gpus=64, tp=1, pp=1, global_batch=256, micro_batch=1, seq=1024, zero_stage=3)
    slow_full, slow_node = (training.step(system_id="hgx-a100-efa", shard_group=g, **job) for g in (0, 8))
    assert slow_node.step_time_s < 0.5 * slow_full.step_time_s
    fast_full, fast_node = (training.step(system_id="hgx-h100", shard_group=g, **job) for g in (0, 8))
    assert fast_node.step_time_s > fast_full.step_time_s
    params = models.model("llama3.1-8b").params_total
    states = lambda shards: sum(float(v) for v in models.model_state_bytes_per_gpu(  # noqa: E731
        params, shards, 3, grad_dtype=DEFAULT_GRAD_DTYPE).values())
    gained = (fast_node.memory_per_gpu_GB - fast_full.memory_per_gpu_GB) * 1e9
    assert gained == pytest.approx(states(8) - states(64), rel=0.01)


def test_the_reduction_across_groups_is_paid_where_nothing_hides_it():
    """With the gradient reduction after the backward pass (nothing overlapped), groups of 8 still reduce every
    gradient: a reduce-scatter within the node, then an all-reduce of each GPU's shard across the 8 nodes; that
    all-reduce alone sends at least 2 x 7/8 of the shard over each GPU's NIC (the catalogue's NDR port)."""
    node = _step(shard_group=8, overlap_grad_reduce=False)
    shard_bytes = models.model("llama3.1-70b").params_total / 8 * 4  # FP32 gradients
    nic_Bps = catalog.link(catalog.system("hgx-h100").nic).per_gpu_GBps_per_dir * 1e9
    assert node.exposed_comm_s.dp >= 2 * 7 / 8 * shard_bytes / nic_Bps


def test_a_group_must_divide_the_ranks_and_shard_something():
    with pytest.raises(InputError, match="does not divide"):
        _step(shard_group=24)
    with pytest.raises(InputError, match="needs ZeRO 1 to 3"):
        _step(shard_group=8, zero_stage=0)


def test_train_takes_the_group_and_names_it(capsys):
    args = ["train", "--model", "llama3.1-70b", "--system", "hgx-h100", "--gpus", "64", "--tp", "1", "--pp", "1",
            "--global-batch", "128", "--micro-batch", "1", "--seq", "4096", "--zero", "3", "--format", "json"]
    assert main(args + ["--shard-group", "8"]) == 0
    assert json.loads(capsys.readouterr().out)["shard_group"] == 8
    assert main(args + ["--shard-group", "24"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_maxtext_runs_read_their_sharding_and_remat_policy():
    """NVIDIA's MaxText recipe (dgxc-benchmarking v25.04, maxtext/configure.sh): FSDP over every GPU up to 32
    nodes, over 128 GPUs (dcn_fsdp 16 x ici_fsdp 8) with the rest data-parallel from 64 nodes on; remat policy
    save_qkv_proj, which keeps the query, key and value projections' outputs."""
    assert TRAINING_STACKS["maxtext"].zero_stage == 3
    maxtext = [r for r in runs.runs() if r.framework.startswith("MaxText")]
    assert len(maxtext) == 10
    for row in maxtext:
        call = runs.plan(row)[0]
        assert call.stack == "maxtext" and call.zero_stage == 3
        assert call.shard_group == (128 if row.gpus >= 512 else 0)
        assert call.recompute == "selective" and not MAXTEXT_SAVES["save_qkv_proj"] & set(call.recompute_modules)
        assert "qkv_proj" not in call.recompute_modules and "out_proj" in call.recompute_modules
