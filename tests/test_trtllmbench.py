"""The engine limits trtllm-bench sets (tensorrt_llm/bench/build/tuning.py) and what they change in the serving
comparison: worked cases of the tool's arithmetic, and the rows they apply to."""

import pytest

from multigpu.compute import models
from multigpu.evidence import serving, trtllmbench


def test_kv_requests_follow_the_tools_arithmetic():
    # Llama 3.1 70B FP8 on 4 H100: 80 GiB x 4 less its weights at 1 byte, 0.95 of it for a KV cache
    # of 80 layers x 8 heads x 2 x 128 B = 160 KiB a token, 2176 tokens a request
    m = models.model("llama3.1-70b")
    weights_gib = m.params_total / 1024**3
    expected = 0.95 * (4 * 80 - weights_gib) / (80 * 8 * 2 * 128 / 1024**3 * 2176)
    got = trtllmbench.kv_requests("llama3.1-70b", "hgx-h100", 4, 1, "fp8", 128, 2048)
    assert got == pytest.approx(expected)
    assert 720 < got < 735


@pytest.mark.parametrize("pp, isl, osl, batch, tokens", [
    (1, 128, 2048, 768, 2048),   # 728 requests: a multiple of 128 above 256; 728 x 1.06 tokens: the 2048 floor
    (8, 128, 128, 512, 2048),    # memory for far more than 4096: 4096 / 8 = 512 a micro-batch, x 2 = 1024 tokens
    (1, 2048, 128, 768, 13312),  # the same 2176 tokens a request: 728 requests, x 17 tokens: by 1024 above 8192
])
def test_limits_round_as_the_tool_does(pp, isl, osl, batch, tokens):
    system = "hgx-h100" if pp == 1 else "pcie-rtxpro6000-8"
    dtype = "fp8" if pp == 1 else "fp4"
    tp = 4 if pp == 1 else 1
    got = trtllmbench.limits("llama3.1-70b", system, tp, pp, dtype, isl, osl)
    raw = min(trtllmbench.kv_requests("llama3.1-70b", system, tp, pp, dtype, isl, osl), 4096) / pp
    assert got.max_batch_size >= raw and got.max_batch_size >= 64
    assert got.max_num_tokens >= min(raw * (1 + isl / osl), 32768) and got.max_num_tokens >= 2048
    assert (got.max_batch_size, got.max_num_tokens) == (batch, tokens)


def test_rows_of_trtllm_bench_pages_hold_no_more_queries_than_the_tool_allows():
    rows = {r.id: r for r in serving.load(("fit", "holdout"))}
    tool = [i for i, r in rows.items() if r.engine_limits == trtllmbench.TOOL and r.batch_or_concurrency is None]
    assert len(tool) > 100
    # the v0.10 page ran gptManagerBenchmark with limits it states (max_num_tokens 2048): not the tool's
    assert not any(r.engine_limits for r in rows.values() if "v0.10.0" in r.source)
    compared = serving.compare(("fit", "holdout")).set_index("id")
    for row_id in tool[:40]:
        row = rows[row_id]
        call = serving.map_row(row)
        if isinstance(call, str):
            continue
        pp = row.pp or 1
        limit = trtllmbench.limits(call.model_id, row.system_id, row.tp, pp, row.dtype, row.input_tokens,
                                   row.output_tokens)
        assert call.max_batch == pp * limit.max_batch_size
        assert call.max_num_tokens == limit.max_num_tokens
        if row_id in compared.index:
            assert compared.loc[row_id, "batch"] <= call.max_batch
