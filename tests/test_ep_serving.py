"""Serving with expert parallelism (``infer --ep``): DP-attention groups, experts split over the EP GPUs, the MLA
latent held once per group, and dispatch and combine on the EP kernels (multigpu.comm.expert).

Sources for the deployment: SGLang's DP-attention and DeepEP integration (sgl-project/sglang docs, "DP attention";
LMSYS blog 2025-05-05, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism");
DeepSeek's inference system overview (deepseek-ai/open-infra-index, 202502OpenSourceWeek day 6: decode on EP144
with DeepEP's low-latency kernels, attention data-parallel).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import inference, models

V3 = "deepseek-v3"


def test_without_ep_nothing_changes_and_no_dispatch_is_charged():
    plain = inference.run(V3, "hgx-h200", 8, 32, 1024, 256, dtype="fp8")
    same = inference.run(V3, "hgx-h200", 8, 32, 1024, 256, dtype="fp8", ep=1)
    assert plain == same and plain.ep == 1 and plain.decode_ep_comm_s == 0


def test_dp_attention_holds_the_mla_latent_once_per_group_not_once_per_gpu():
    """Under TP 8 every GPU holds the whole batch's latent; with EP 8 and DP-attention each GPU holds its own
    queries' latent: a query adds 8 times less memory per GPU."""
    def slope(tp: int, ep: int) -> float:
        a, b = (inference.run(V3, "hgx-h200", tp, n, 4096, 512, dtype="fp8", ep=ep).memory_per_gpu_GB
                for n in (64, 128))
        return (b - a) / 64
    latent = models.kv_cache_bytes_per_token(models.model(V3), "fp8") * (4096 + 512) / 1e9
    assert slope(8, 1) == pytest.approx(latent, rel=1e-9)
    assert slope(1, 8) == pytest.approx(latent / 8, rel=1e-9)


def test_each_gpu_reads_its_share_of_the_experts_so_a_wider_ep_reads_less():
    narrow, wide = (inference.run(V3, "hgx-h200", 1, 256, 2048, 256, dtype="fp8", ep=ep) for ep in (16, 32))
    assert wide.decode_compute_s < narrow.decode_compute_s
    assert wide.memory_per_gpu_GB < narrow.memory_per_gpu_GB


def test_one_nvlink_domain_dispatches_faster_than_two_nodes_over_their_nics():
    """Wide EP inside an NVL72 rack never crosses the network; on two 8-GPU nodes half of each token's experts
    are across the NICs."""
    rack = inference.run(V3, "gb200-nvl72", 1, 128, 2048, 256, dtype="fp8", ep=16)
    nodes = inference.run(V3, "hgx-h200", 1, 128, 2048, 256, dtype="fp8", ep=16)
    assert rack.nodes == 1 and nodes.nodes == 2
    assert 0 < rack.decode_ep_comm_s < nodes.decode_ep_comm_s


def test_the_nccl_stack_dispatches_with_an_all_to_all_of_one_copy_per_expert():
    deepep = inference.run(V3, "hgx-h200", 1, 512, 2048, 256, dtype="fp8", ep=32)
    nccl = inference.run(V3, "hgx-h200", 1, 512, 2048, 256, dtype="fp8", ep=32, stack_name="nccl")
    assert nccl.decode_ep_comm_s > deepep.decode_ep_comm_s > 0


def test_throughput_counts_every_ep_gpu_and_an_array_of_batches_matches_one_at_a_time():
    batches = [64, 256]
    many = inference.run(V3, "hgx-h200", 2, batches, 2048, 256, dtype="fp8", ep=16)
    for i, b in enumerate(batches):
        one = inference.run(V3, "hgx-h200", 2, b, 2048, 256, dtype="fp8", ep=16)
        assert many.tpot_s[i] == pytest.approx(one.tpot_s) and many.decode_ep_comm_s[i] == pytest.approx(
            one.decode_ep_comm_s)
        assert one.tokens_per_s_per_gpu == pytest.approx(b * 256 / one.cycle_s / 16)
    assert np.all(np.diff(many.tokens_per_s_per_gpu) > 0)


@pytest.mark.parametrize("kwargs, words", [
    ({"model_id": "llama3.1-8b", "ep": 8}, "no experts"),
    ({"ep": 8, "pp": 2}, "pipeline"),
    ({"ep": 12, "tp": 8}, "multiple of tp"),
    ({"ep": 16, "batch": 8}, "idle"),
])
def test_layouts_the_model_does_not_take_are_refused(kwargs, words):
    args = {"model_id": V3, "system_id": "hgx-h200", "tp": 1, "batch": 64, "input_tokens": 1024,
            "output_tokens": 128, "dtype": "fp8"} | kwargs
    with pytest.raises(InputError, match=words):
        inference.run(**args)


def test_the_infer_command_takes_ep_and_names_its_fields(capsys):
    assert main(["infer", "--model", V3, "--system", "hgx-h200", "--tp", "1", "--ep", "16", "--batch", "128",
                 "--input-tokens", "2048", "--output-tokens", "256", "--dtype", "fp8", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ep"] == 16 and out["nodes"] == 2 and 0 < out["decode_ep_comm_s"] <= out["decode_comm_s"]
    from multigpu.cli.commands.step import INFER_FIELDS

    assert "decode_ep_comm_s" in INFER_FIELDS and "\n  ep " in INFER_FIELDS  # --help defines the new fields


def test_every_tensor_parallel_rank_reads_the_whole_mla_latent():
    """An MLA latent is not split by heads: at TP 8 each decode step reads all of the batch's latent on every
    GPU (memory-bound steps, every expert touched by both batches)."""
    def per_query_s(model: str, batches: tuple[int, int]) -> float:
        a, b = (inference.run(model, "hgx-h200", 8, n, 2048, 512, dtype="fp8").decode_compute_s for n in batches)
        kv = models.kv_cache_bytes_per_token(models.model(model), "fp8") * (2048 + 256)
        gpu = inference.catalog.gpu("h200-sxm")
        read_Bps = gpu.mem_bw_GBps * 1e9 * inference.hbm_read_efficiency(gpu.id)
        return (b - a) / (batches[1] - batches[0]) * read_Bps / kv
    assert per_query_s(V3, (512, 1024)) == pytest.approx(1.0, rel=1e-4)


def test_a_data_parallel_group_packs_only_its_own_prompts():
    """Under expert parallelism each attention group prefills its own queries: a pass never holds more prompts
    than one group has, however many the whole batch holds (64 queries over 8 groups of TP 1: 8 a pass at most,
    though 8,192 tokens would hold 64 prompts of 128)."""
    run = inference.run("deepseek-v3", "gb200-nvl72", 1, 64, 128, 128, dtype="fp8", ep=8)
    assert run.prefill_prompts_per_pass == 8
