"""An offline benchmark's finite run (:mod:`multigpu.compute.offline`) and the rows it applies to.

The request counts are TensorRT-LLM's: ``docs/source/performance/perf-overview.md``, table of ``$num_requests`` by
input and output length (the same on the v0.12.0, 258c7540 and 00f37686 versions of the page), and v0.10.0's
``prepare_dataset.py --num-requests=2000``.
"""

import json

import numpy as np
import pytest

from multigpu.cli import main
from multigpu.common.errors import InputError
from multigpu.compute import inference, offline
from multigpu.evidence import serving, trtllmbench

#: A deployment whose decode is memory-bound at small batches: Llama 3.3 70B in NVFP4 over 8 pipeline stages.
PIPELINE = dict(model_id="llama3.1-70b", system_id="pcie-rtxpro6000-8", tp=1, pp=8, dtype="fp4",
                input_tokens=1000, output_tokens=2000, release="1.0", max_num_tokens=2048)
#: The page's request counts, (input, output) -> requests.
PAGE = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (1000, 2000): 1500, (2048, 128): 3000,
        (2048, 2048): 1500, (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}


def test_whole_waves_deliver_the_steady_state():
    steady = inference.run(batch=400, **PIPELINE).tokens_per_s_per_gpu
    got = offline.run(1200, 400, **PIPELINE)
    assert (got.waves, got.last_wave) == (3, 400)
    assert got.tokens_per_s_per_gpu == pytest.approx(steady, rel=1e-9)
    assert got.steady_tokens_per_s_per_gpu == pytest.approx(steady, rel=1e-9)


def test_a_partly_filled_last_wave_costs_nearly_a_whole_cycle():
    """1500 requests with 1393 in flight: one full wave and one of 107. A decode step at 107 queries still
    reads the stage's weights, so the second wave takes well over 107 / 1393 of the first's time."""
    got = offline.run(1500, 1393, **PIPELINE)
    assert (got.waves, got.last_wave) == (2, 107)
    full = inference.run(batch=1393, **PIPELINE).cycle_s
    assert got.run_s > full * (1 + 107 / 1393) * 1.2
    assert got.tokens_per_s_per_gpu < 0.85 * got.steady_tokens_per_s_per_gpu


@pytest.mark.parametrize("requests", [1, 7, 399, 401, 799, 1000, 1601, 30000])
def test_a_finite_run_is_never_faster_than_its_steady_state(requests):
    got = offline.run(requests, 400, **PIPELINE)
    assert got.tokens_per_s_per_gpu <= got.steady_tokens_per_s_per_gpu * (1 + 1e-9)
    assert got.batch == min(400, requests) and got.waves == -(-requests // got.batch)


def test_more_requests_of_the_same_batch_approach_the_steady_state():
    shares = [offline.run(n, 400, **PIPELINE) for n in (401, 4001, 40001)]
    ratios = [r.tokens_per_s_per_gpu / r.steady_tokens_per_s_per_gpu for r in shares]
    assert ratios[0] < ratios[1] < ratios[2] <= 1 + 1e-9
    assert ratios[2] > 0.99


def test_counts_below_one_are_refused():
    with pytest.raises(InputError, match="at least 1"):
        offline.run(0, 10, **PIPELINE)


def test_maximum_load_rows_of_the_benchmark_pages_state_their_request_counts():
    rows = serving.load(("fit", "holdout"))
    tool = [r for r in rows if r.engine_limits == trtllmbench.TOOL and r.batch_or_concurrency is None]
    assert len(tool) > 100
    assert all(r.requests == PAGE[(r.input_tokens, r.output_tokens)] for r in tool)
    v010 = [r for r in rows if r.release == "0.10.0"]
    assert v010 and all(r.requests == 2000 for r in v010)
    assert all(r.requests is None for r in rows if r.kind == "mlperf")


def test_a_row_with_requests_is_priced_as_its_waves():
    row = next(r for r in serving.load(("fit",)) if r.id == "S-trtllm-perfov-llama3370b-rtxpro6000-tp1-pp8-1000-2000")
    call = serving.map_row(row)
    assert call.requests == 1500 and "waves" in call.assumption
    pred = serving.predict(call)
    steady = serving.predict(serving.ModelCall(**{**call.__dict__, "requests": None}))
    assert pred.batch == steady.batch
    expected = offline.run(1500, pred.batch, **{k: PIPELINE[k] for k in ("model_id", "system_id", "tp", "pp",
                           "dtype", "input_tokens", "output_tokens", "release", "max_num_tokens")})
    assert pred.value == pytest.approx(expected.tokens_per_s_per_gpu, rel=1e-9)
    assert pred.value < steady.value


def test_the_waves_bring_the_deep_pipelines_of_the_release_page_closer():
    """The RTX PRO 6000 pipelines of TensorRT-LLM's 1.0 page (fit rows): held in the thousands of queries for
    1500-3000 requests, their runs are one or two waves. Priced as waves, their median |error| falls by more
    than a quarter from the steady state's (42 % to 30 % when this was written)."""
    rows = [r for r in serving.load(("fit",)) if "-rtxpro6000-" in r.id and (r.pp or 1) >= 4]
    assert len(rows) >= 6
    waves = serving.compare_rows(rows)["rel_error"].abs().median()
    steady = serving.compare_rows([r.model_copy(update={"requests": None}) for r in rows])["rel_error"]
    assert waves < 0.75 * np.abs(steady).median()


INFER = ["infer", "--model", "llama3.1-70b", "--system", "pcie-rtxpro6000-8", "--tp", "1", "--pp", "8",
         "--batch", "1393", "--input-tokens", "1000", "--output-tokens", "2000", "--dtype", "fp4",
         "--max-num-tokens", "2048", "--format", "json"]


def test_infer_prices_an_offline_benchmark_of_n_requests(capsys):
    """``infer --offline-requests N`` gives the offline_* fields of :func:`multigpu.compute.offline.run` beside the
    steady state, which stays as it was."""
    assert main(INFER) == 0
    steady = json.loads(capsys.readouterr().out)
    assert main(INFER + ["--offline-requests", "1500"]) == 0
    out = json.loads(capsys.readouterr().out)
    expected = offline.run(1500, 1393, **{k: v for k, v in PIPELINE.items() if k != "release"})
    assert (out["offline_requests"], out["offline_waves"], out["offline_last_wave"]) == (1500, 2, 107)
    assert out["offline_run_s"] == pytest.approx(expected.run_s)
    assert out["offline_tokens_per_s_per_gpu"] == pytest.approx(expected.tokens_per_s_per_gpu)
    assert out["offline_tokens_per_s_per_gpu"] < out["tokens_per_s_per_gpu"] == pytest.approx(
        steady["tokens_per_s_per_gpu"])
    assert "offline_tokens_per_s_per_gpu" not in steady


def test_an_offline_benchmark_takes_no_arrival_rate(capsys):
    assert main(INFER + ["--offline-requests", "1500", "--rate", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--offline-requests" in err[0] and "--rate" in err[0]
