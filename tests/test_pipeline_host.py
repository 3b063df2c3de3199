"""A serving release's pipeline loop and its host time per iteration (``data/pipeline_host.csv``,
:func:`multigpu.evidence.releasefit.fit_pipeline_host`).

TensorRT-LLM's PyTorch executor runs ``_executor_loop_pp`` when ``pp_size > 1`` and its overlap scheduler only with
one stage (``tensorrt_llm/_torch/pyexecutor/py_executor.py``, ``PyExecutor.__init__``), so the host's work of each
iteration sits on a pipelined engine's path. What the file holds is what the fit-split pipelined rows give, the
host time lengthens each token's pass through the stages by pp times its value and nothing else, and the held-out
pipelined rows come closer to their measurements.
"""

import json

import numpy as np
import pytest

from multigpu.cli import main
from multigpu.compute import efficiency, inference
from multigpu.evidence import fitquality, releasefit, serving

STACK = inference.DEFAULT_STACK
#: Llama 3.3 70B in NVFP4 on RTX PRO 6000 cards, as TensorRT-LLM's 1.0 page runs it.
ARGS = dict(model_id="llama3.1-70b", system_id="pcie-rtxpro6000-8", tp=1, batch=np.array([8, 256, 1024]),
            input_tokens=1000, output_tokens=1000, dtype="fp4", max_num_tokens=2048)


@pytest.fixture(scope="module")
def refits():
    factors = {key: row.decode_time_factor for key, row in efficiency.release_rows().items()}
    return releasefit.pipeline_host_fits(factors=factors)


def test_the_shipped_host_times_are_today_s_fit(refits):
    shipped = efficiency.pipeline_host_rows()
    assert set(shipped) == set(refits) == {(STACK, "1.0")}
    for key, fit in refits.items():
        row = shipped[key]
        assert row.iteration_host_s == pytest.approx(fit.estimate.value, rel=1e-3), key
        assert fitquality.agrees(row.iteration_host_s, fit.estimate, releasefit.HOST_BOUNDS), key
        assert row.fit_runs == len(fit.fit_runs) >= efficiency.MIN_FIT_RUNS
        assert row.holdout_runs == len(fit.holdout_runs) >= efficiency.MIN_HOLDOUT_RUNS
        assert set(row.fitted_on.split()) == set(fit.fit_runs)


def test_the_host_time_zeroes_the_median_of_the_pipelined_fit_rows():
    """At the shipped value half the fit rows come out too fast; with stages that never wait on their host the
    model is too fast on most of them (their measured output per card falls as the pipeline deepens)."""
    rows = [r for r in serving.load(("fit",)) if r.release == "1.0" and (r.pp or 1) > 1]
    assert len(rows) >= efficiency.MIN_FIT_RUNS
    assert all(serving.map_row(r).pp > 1 for r in rows)
    fitted = np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy())
    assert abs(np.median(fitted)) < 0.01
    with efficiency.trying(hosts={(STACK, "1.0"): 0.0}):
        bare = np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy())
    assert np.median(bare) > 0.05


def test_one_stage_and_an_unnamed_release_never_wait_on_the_host():
    with efficiency.trying(hosts={(STACK, "x"): 0.01}):
        one = inference.run(**ARGS, pp=1, release="x")
        none = inference.run(**ARGS, pp=4)
        four = inference.run(**ARGS, pp=4, release="x")
    assert one.pipeline_host_s == none.pipeline_host_s == 0.0
    assert four.pipeline_host_s == pytest.approx(0.04)
    assert efficiency.pipeline_iteration_host_s(STACK, None) == 0.0
    assert efficiency.pipeline_iteration_host_s(STACK, "0.8.0") == 0.0


@pytest.mark.parametrize("pp", [2, 4, 8])
def test_the_host_time_adds_pp_times_its_value_to_each_pass_and_nothing_else(pp):
    """A decode step and a lone prompt's prefill each wait pp x the host time once; the kernels, the
    communication and the memory do not move; throughput falls, and more host time is never faster."""
    runs = {}
    for host in (0.0, 0.002, 0.006):
        with efficiency.trying(hosts={(STACK, "x"): host}):
            runs[host] = inference.run(**ARGS, pp=pp, release="x")
    base = runs[0.0]
    for host, r in runs.items():
        assert np.asarray(r.tpot_s) - np.asarray(base.tpot_s) == pytest.approx(pp * host)
        assert np.asarray(r.ttft_s) - np.asarray(base.ttft_s) == pytest.approx(pp * host)
        assert np.asarray(r.decode_compute_s) == pytest.approx(np.asarray(base.decode_compute_s))
        assert np.asarray(r.decode_comm_s) == pytest.approx(np.asarray(base.decode_comm_s))
        assert np.asarray(r.memory_per_gpu_GB) == pytest.approx(np.asarray(base.memory_per_gpu_GB))
    speeds = [np.asarray(runs[h].tokens_per_s_per_gpu) for h in (0.0, 0.002, 0.006)]
    assert np.all(speeds[0] > speeds[1]) and np.all(speeds[1] > speeds[2])


def test_the_held_out_pipelined_rows_come_closer_to_their_measurements():
    """Out of sample: on the held-out rows of more than one stage, the median |error| with the host time is lower
    than without it and within 10 %."""
    rows = [r for r in serving.load(("holdout",)) if r.release == "1.0" and (r.pp or 1) > 1]
    assert len(rows) >= 10
    with_host = serving.compare_rows(rows)["rel_error"].abs().median()
    with efficiency.trying(hosts={(STACK, "1.0"): 0.0}):
        without = serving.compare_rows(rows)["rel_error"].abs().median()
    assert with_host < without and with_host <= 0.10


def test_infer_prices_a_release_s_pipeline_loop(capsys):
    args = ["infer", "--model", "llama3.1-70b", "--system", "pcie-rtxpro6000-8", "--tp", "1", "--batch", "256",
            "--input-tokens", "1000", "--output-tokens", "1000", "--dtype", "fp4", "--format", "json"]
    out = {}
    for name, extra in {"bare": ["--pp", "4"], "release": ["--pp", "4", "--release", "1.0"],
                        "one": ["--pp", "1", "--release", "1.0"]}.items():
        assert main(args + extra) == 0
        out[name] = json.loads(capsys.readouterr().out)
    host = efficiency.pipeline_iteration_host_s(STACK, "1.0")
    assert host > 0
    assert out["bare"]["pipeline_host_s"] == 0 and out["one"]["pipeline_host_s"] == 0
    assert out["release"]["pipeline_host_s"] == pytest.approx(4 * host)
    assert out["release"]["tokens_per_s_per_gpu"] < out["bare"]["tokens_per_s_per_gpu"]
