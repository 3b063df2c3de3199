"""Disaggregated serving (``compute.disaggregated``, ``infer --disagg P,D``): prompts prefilled on one pool, answers
decoded on another, the KV cache moved between them. Checked against physical bounds (the KV bytes over the
links' line rate, no token faster than the hardware), conservation of tokens, and the effect DistServe (Zhong et
al., OSDI 2024, arXiv:2401.09670) and Splitwise (Patel et al., ISCA 2024, arXiv:2311.18677) are built on: with
the prefills on their own GPUs, no prompt's prefill runs between a user's tokens."""

from __future__ import annotations

import json

import pytest

from multigpu.cli.app import main
from multigpu.common.errors import InputError
from multigpu.compute import disaggregated, inference, models, queueing
from multigpu.hardware import catalog

ARGS = dict(model_id="llama3.1-70b", system_id="hgx-h100", tp=4, input_tokens=2048, output_tokens=256,
            max_batch=128, dtype="fp8")


@pytest.fixture(scope="module")
def one_and_one():
    """One prefill copy and one decode copy of Llama 3.1 70B in FP8, 4 H100s each, over the NICs."""
    return disaggregated.split(**ARGS, prefill_copies=1, decode_copies=1)


def test_the_kv_transfer_is_its_bytes_at_the_links_line_rate(one_and_one):
    h100 = catalog.system("hgx-h100")
    per_token = models.kv_cache_bytes_per_token("llama3.1-70b", "fp8")  # FP8 weights, TensorRT-LLM: an FP8 cache
    assert one_and_one.kv_bytes == pytest.approx(2048 * per_token)
    over_nics = 4 * h100.nics_per_node * h100.nic_GBps_per_dir / h100.gpus_per_node * 1e9
    assert one_and_one.transfer_s == pytest.approx(one_and_one.kv_bytes / over_nics)
    nvlink = disaggregated.split(**ARGS, prefill_copies=1, decode_copies=1, kv_link="nvlink")
    assert nvlink.transfer_s == pytest.approx(one_and_one.kv_bytes / (4 * h100.nvlink_GBps_per_dir * 1e9))
    assert nvlink.transfer_s < one_and_one.transfer_s  # a node's NVLink outruns its NICs
    with pytest.raises(InputError, match="no NVLink"):
        disaggregated.split(**dict(ARGS, system_id="pcie-a100-8", dtype="bf16", tp=4), prefill_copies=1,
                            decode_copies=1, kv_link="nvlink")


def test_a_lone_request_sees_one_prefill_then_one_query_s_decode_steps(one_and_one):
    run = disaggregated.simulate(one_and_one, rate=0.01 * one_and_one.capacity_per_s(), requests=200).load
    assert run.ttft_p50_s == pytest.approx(one_and_one.prefill_s, rel=1e-9)
    alone = one_and_one.decode.decode_step_s[0]
    assert run.tpot_p50_s == pytest.approx((one_and_one.transfer_s + 255 * alone) / 255, rel=1e-3)


@pytest.mark.parametrize("share", [0.3, 0.7])
def test_tokens_are_conserved_and_nothing_beats_the_hardware(one_and_one, share):
    rate = share * one_and_one.capacity_per_s()
    run = disaggregated.simulate(one_and_one, rate=rate, requests=3000).load
    assert run.tokens_per_s_per_gpu == pytest.approx(rate * 256 / one_and_one.gpus, rel=0.05)
    assert run.ttft_p50_s >= one_and_one.prefill_s * (1 - 1e-9)
    assert run.tpot_p50_s >= one_and_one.decode.decode_step_s[0]
    assert run.ttft_p50_s <= run.ttft_p99_s and run.tpot_p50_s <= run.tpot_p99_s


def test_no_prefill_runs_between_a_user_s_tokens(one_and_one):
    """The same 8 GPUs and the same load, served two ways: two colocated copies interleave prompts' prefills with
    their decode steps, so a user's time per output token grows with the load; disaggregated, it stays within
    a few per cent of the decode step alone."""
    colocated = queueing.engine(**ARGS)
    for share in (0.3, 0.6):
        rate = share * one_and_one.capacity_per_s()
        apart = disaggregated.simulate(one_and_one, rate=rate).load
        together = queueing.simulate(colocated, rate=rate / 2)
        assert apart.tpot_p99_s < together.tpot_p99_s
    assert apart.tpot_p99_s <= 1.15 * one_and_one.decode.decode_step_s[0]


def test_capacity_is_the_narrower_pool(one_and_one):
    decode = one_and_one.capacity_per_s()
    assert decode <= 1 / one_and_one.prefill_s  # one prefill copy keeps up with one decode copy here
    more = disaggregated.split(**ARGS, prefill_copies=1, decode_copies=8)
    assert more.capacity_per_s() == pytest.approx(1 / more.prefill_s)  # eight decode copies wait on one prefill
    with pytest.raises(InputError, match="at or above"):
        disaggregated.simulate(more, rate=1 / more.prefill_s)
    with pytest.raises(InputError, match="2 or more output tokens"):
        disaggregated.split(**dict(ARGS, output_tokens=1), prefill_copies=1, decode_copies=1)


def test_infer_disagg_adds_the_pools_fields(capsys):
    argv = ["infer", "--model", "llama3.1-8b", "--system", "hgx-h100", "--tp", "1", "--batch", "64",
            "--input-tokens", "1024", "--output-tokens", "128", "--format", "json", "--requests", "400"]
    assert main(argv + ["--rate", "10", "--disagg", "1,2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["load_gpus"] == 3 and out["load_prefill_copies"] == 1 and out["load_decode_copies"] == 2
    assert out["load_kv_bytes"] == pytest.approx(1024 * models.kv_cache_bytes_per_token("llama3.1-8b", "bf16"))
    assert out["load_ttft_p50_s"] >= inference.run("llama3.1-8b", "hgx-h100", 1, 1, 1024, 128).ttft_s * (1 - 1e-9)
    assert main(argv + ["--disagg", "1,2"]) == 2 and "--disagg needs --rate" in capsys.readouterr().err


def test_the_pool_flags_need_disagg_and_the_engine_limit_packs_prefills(capsys):
    argv = ["infer", "--model", "llama3.1-8b", "--system", "hgx-h100", "--tp", "1", "--batch", "8",
            "--input-tokens", "512", "--output-tokens", "64"]
    assert main(argv + ["--kv-link", "nvlink"]) == 2 and "give --disagg P,D too" in capsys.readouterr().err
    assert main(argv + ["--rate", "2", "--prefill-tp", "2"]) == 2 and "--disagg" in capsys.readouterr().err
    # without a load, --max-num-tokens sets how many prompts the steady-state cycle prefills in one pass
    assert main(argv + ["--max-num-tokens", "4096", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["prefill_prompts_per_pass"] == 8
    assert main(argv + ["--rate", "2", "--requests", "200", "--disagg", "1,1", "--kv-link", "nvlink",
                        "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["load_kv_link"] == "nvlink"
