"""Serving with pipeline stages and across nodes: what a token waits for, what the GPUs deliver, what crosses NICs."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multigpu.comm import collectives
from multigpu.common.errors import InputError
from multigpu.compute import inference, models
from multigpu.hardware import catalog

MODEL, IN, OUT = "llama3.1-70b", 2048, 256


def test_one_stage_is_what_it_was():
    # pp = 1 inside a node: the micro-batch is the batch, no stage sends, one node
    r = inference.run(MODEL, "hgx-h100", 8, 16, IN, OUT, max_num_tokens=IN)
    assert r.nodes == 1 and r.prefill_prompts_per_pass == 1 and r.prefill_pass_s == pytest.approx(r.ttft_s)
    assert r.cycle_s == pytest.approx(16 * r.ttft_s + OUT * r.decode_step_s)
    # four prompts a pass (8192 tokens): four passes for the 16 prefills
    packed = inference.run(MODEL, "hgx-h100", 8, 16, IN, OUT)
    assert packed.prefill_prompts_per_pass == 4
    assert packed.cycle_s == pytest.approx(4 * packed.prefill_pass_s + OUT * packed.decode_step_s)


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 128), pp=st.sampled_from([2, 4, 8]))
def test_a_token_is_never_faster_than_its_stage_gpus_can_read_the_weights(batch, pp):
    """With pipeline stages a token passes every stage in turn, and each micro-batch re-reads its stage's weights:
    the time per output token is at least the weights over one stage's ``tp`` GPUs at their nominal
    bandwidth, however many stages share the work."""
    tp = 8 // pp
    r = inference.run(MODEL, "hgx-h100", tp, batch, IN, OUT, pp=pp, dtype="fp8")
    weights = models.decode_bytes_per_step(MODEL, np.ceil(batch / pp), IN + OUT / 2, "fp8", "fp8")["weights_bytes"]
    assert r.tpot_s > weights / tp / (catalog.gpu("h100-sxm").mem_bw_GBps * 1e9)
    # and the GPUs deliver what the cycle holds: every query's prefill (the stages on different prompts at once)
    # and its decode steps
    passes = batch / r.prefill_prompts_per_pass
    assert r.cycle_s == pytest.approx(passes * r.prefill_pass_s / pp + OUT * r.decode_step_s)
    assert r.tokens_per_s_per_gpu == pytest.approx(batch * OUT / r.cycle_s / 8)


def test_at_batch_one_more_tensor_parallel_ranks_beat_more_stages():
    # one user's token reads every weight and KV entry: over 8 GPUs' bandwidth with TP 8, over 4 GPUs' with
    # TP 4 x PP 2 (the stages in turn), so its reading takes twice as long; the layers' fixed time is the same
    tp8 = inference.run(MODEL, "hgx-h100", 8, 1, IN, OUT, dtype="fp8")
    tp4pp2 = inference.run(MODEL, "hgx-h100", 4, 1, IN, OUT, pp=2, dtype="fp8")
    assert tp4pp2.decode_fixed_s == tp8.decode_fixed_s
    reading = [r.decode_compute_s - r.decode_fixed_s for r in (tp8, tp4pp2)]
    assert reading[1] == pytest.approx(2 * reading[0], rel=0.01)
    assert tp4pp2.tpot_s > tp8.tpot_s


def test_a_prompt_runs_its_stages_in_turn():
    # the same GEMMs on a stage's tp GPUs, the same all-reduces, and one send per stage boundary more
    one = inference.run(MODEL, "hgx-h100", 4, 1, IN, OUT, dtype="fp8")
    two = inference.run(MODEL, "hgx-h100", 4, 1, IN, OUT, pp=2, dtype="fp8")
    send = collectives.time_us("sendrecv", "hgx-h100", 2, IN * models.model(MODEL).hidden * 2) * 1e-6
    assert two.ttft_s == pytest.approx(one.ttft_s + send, rel=1e-9)


def test_tensor_parallelism_across_two_nodes_runs_over_the_nics():
    """TP 16 on two 8-GPU nodes: NCCL's all-reduce over both nodes (the stacks' one-shot and two-shot kernels
    work within a node), never below what the links and NICs can carry."""
    tp16 = inference.run(MODEL, "hgx-h100", 16, 32, IN, OUT, dtype="fp8", stack_name="vllm")
    tp8 = inference.run(MODEL, "hgx-h100", 8, 32, IN, OUT, dtype="fp8", stack_name="vllm")
    assert (tp16.nodes, tp8.nodes) == (2, 1)
    nbytes = 32 * models.model(MODEL).hidden * 2
    nccl = collectives.time_us("allreduce", "hgx-h100", 16, nbytes, nodes=2)
    layers = models.model(MODEL).layers
    assert tp16.decode_comm_s == pytest.approx(2 * layers * nccl * 1e-6)
    floor = collectives.lower_bound_us("allreduce", "hgx-h100", 16, nbytes, nodes=2)
    assert tp16.decode_comm_s >= 2 * layers * floor * 1e-6
    assert tp16.decode_comm_s > 2 * tp8.decode_comm_s


def test_vllms_practice_tensor_parallel_inside_a_node_pipeline_across_nodes():
    """vLLM's distributed-serving guide (docs.vllm.ai, v0.8.3, "How to decide the distributed inference
    strategy?"): on several nodes the tensor-parallel size should be the GPUs of a node and the pipeline-parallel
    size the number of nodes. On two 8-GPU H100 nodes serving Llama 3.1 405B in FP8 at a full batch, TP 8 x PP 2
    delivers more tokens per GPU than TP 16, whose all-reduces cross the NICs at every layer."""
    runs = {(tp, pp): inference.run("llama3.1-405b", "hgx-h100", tp, 64, IN, OUT, pp=pp, dtype="fp8")
            for tp, pp in ((8, 2), (16, 1))}
    assert runs[(8, 2)].fits and runs[(16, 1)].fits
    assert runs[(8, 2)].tokens_per_s_per_gpu > runs[(16, 1)].tokens_per_s_per_gpu
    assert runs[(8, 2)].nodes == runs[(16, 1)].nodes == 2


def test_a_stage_boundary_between_nodes_sends_over_the_network():
    inside = inference.run(MODEL, "hgx-h100", 4, 8, IN, OUT, pp=2, dtype="fp8")
    across = inference.run(MODEL, "hgx-h100", 8, 8, IN, OUT, pp=2, dtype="fp8")
    assert (inside.nodes, across.nodes) == (1, 2)
    # a decode step's communication: the all-reduces of a micro-batch of 4 queries, and one send of its
    # activations over the stage boundary, over NVLink inside a node and over the NICs between two
    nbytes = 4 * models.model(MODEL).hidden * 2
    layers = models.model(MODEL).layers
    for run, tp, nodes in ((inside, 4, 1), (across, 8, 2)):
        allreduces = 2 * layers * inference._allreduce_us("hgx-h100", tp, np.array([nbytes]),
                                                          run_cal := inference.calibration.resolve(None))[0] * 1e-6
        send = collectives.time_us("sendrecv", "hgx-h100", 2, nbytes, nodes=nodes, cal=run_cal) * 1e-6
        assert run.decode_comm_s == pytest.approx(allreduces + send, rel=1e-9)
    assert collectives.time_us("sendrecv", "hgx-h100", 2, nbytes, nodes=2) > \
        collectives.time_us("sendrecv", "hgx-h100", 2, nbytes)


def test_a_rack_keeps_its_stages_on_nvlink():
    r = inference.run("llama3.1-405b", "gb200-nvl72", 8, 64, IN, OUT, pp=6, dtype="fp8")
    assert r.nodes == 1


def test_layouts_that_cannot_be_placed_are_refused():
    with pytest.raises(InputError, match="do not fill whole hgx-h100 nodes"):
        inference.run(MODEL, "hgx-h100", 4, 1, IN, OUT, pp=5)
    with pytest.raises(InputError, match="straddle the 8-GPU nodes"):
        inference.run("gpt3-175b", "hgx-h100", 6, 1, IN, OUT, pp=4)


def test_cli_infer_across_nodes_names_the_nodes():
    out = subprocess.run([sys.executable, "-m", "multigpu", "infer", "--model", MODEL, "--system", "hgx-h100",
                          "--tp", "16", "--batch", "8", "--input-tokens", "512", "--output-tokens", "64",
                          "--format", "json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["nodes"] == 2
    assert np.isfinite(json.loads(out.stdout)["tpot_s"])
