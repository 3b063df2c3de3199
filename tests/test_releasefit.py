"""Each TensorRT-LLM release's decode-time factor (``data/release_efficiency.csv``, multigpu.evidence.releasefit):
what the file holds is what the fit-split rows give, the factor slows a decode step's kernels and nothing else,
and the held-out rows of each release it applies to come out closer to their measurements."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from multigpu.cli import main
from multigpu.compute import efficiency, inference
from multigpu.evidence import fitquality, releasefit, serving

STACK = inference.DEFAULT_STACK


@pytest.fixture(scope="module")
def refits():
    return releasefit.release_fits()


def test_the_shipped_factors_are_today_s_fit(refits):
    """Each shipped factor agrees with a refit on the fit-split rows (within its 4 significant digits, the
    bisection's tolerance far below), on the same rows, and no release with rows enough is missing."""
    shipped = efficiency.release_rows()
    assert set(shipped) == set(refits)
    for key, fit in refits.items():
        row = shipped[key]
        assert row.decode_time_factor == pytest.approx(fit.estimate.value, rel=1e-3), key
        assert row.fitted_on.split() == list(fit.fit_runs) and row.fit_runs == len(fit.fit_runs), key
        assert row.holdout_runs == len(fit.holdout_runs) and row.fit_status == fit.estimate.status, key
        assert fitquality.agrees(row.decode_time_factor, fit.estimate, releasefit.BOUNDS), key


def test_half_a_release_s_fit_rows_come_out_too_fast_and_half_too_slow():
    """The factor zeroes the median of the fit rows' log errors; at the model's own kernels the releases
    before 1.0 are too fast (positive) on most of theirs."""
    for (stack, release), row in efficiency.release_rows().items():
        rows = [r for r in serving.load(("fit",)) if r.id in set(row.fitted_on.split())]
        errors = np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy())
        assert abs(np.median(errors)) < 2e-3, release
        with efficiency.trying(releases={(stack, release): 1.0}):
            bare = np.log1p(serving.compare_rows(rows)["rel_error"].to_numpy())
        assert np.median(bare) > 0 if row.decode_time_factor > 1 else np.median(bare) <= 0, release


def test_a_release_needs_three_fit_and_two_held_out_rows():
    """0.8.0's page has 2 fit-split throughput rows the model compares: no factor, so its rows keep the model's
    kernels; a release no row states has none either."""
    assert releasefit.fit_release(STACK, "0.8.0") is None
    assert efficiency.decode_time_factor(STACK, "0.8.0") == 1.0
    assert efficiency.decode_time_factor(STACK, None) == efficiency.decode_time_factor(STACK, "") == 1.0
    assert releasefit.fit_release(STACK, "0.10.0", keep=lambda i: False) is None


def test_fp4_rows_take_the_factor_but_do_not_fit_it():
    fitted = {i for row in efficiency.release_rows().values() for i in row.fitted_on.split()}
    fp4 = {r.id for r in serving.load(("fit",)) if r.dtype == "fp4" and r.release}
    assert fp4 and not fitted & fp4
    row = next(r for r in serving.load(("fit", "holdout")) if r.dtype == "fp4" and r.release == "1.0"
               and serving.metric_kind(r.metric) == "throughput")
    call = serving.map_row(row)
    assert call.release == "1.0"
    with efficiency.trying(releases={(STACK, "1.0"): 2.0}):
        slower = serving.predict(call).value
    assert slower < serving.predict(call).value


def test_the_factor_scales_a_decode_step_s_kernels_only():
    """A decode step's kernel time grows by the factor; its fixed time, its all-reduces, the prefill (TTFT) and
    the memory (so the batch that fits) do not move; throughput falls, and a larger factor is never faster."""
    args = dict(model_id="llama3.1-70b", system_id="hgx-h100", tp=4, batch=np.array([1, 64, 256]),
                input_tokens=2048, output_tokens=2048, dtype="fp8")
    runs = {}
    for factor in (1.0, 1.5, 2.5):
        with efficiency.trying(releases={(STACK, "x"): factor}):
            runs[factor] = inference.run(**args, release="x")
    base = runs[1.0]
    for factor, r in runs.items():
        kernels = np.asarray(r.decode_compute_s) - r.decode_fixed_s
        assert kernels == pytest.approx(factor * (np.asarray(base.decode_compute_s) - base.decode_fixed_s))
        assert np.asarray(r.decode_comm_s) == pytest.approx(np.asarray(base.decode_comm_s))
        assert np.asarray(r.ttft_s) == pytest.approx(np.asarray(base.ttft_s))
        assert np.asarray(r.memory_per_gpu_GB) == pytest.approx(np.asarray(base.memory_per_gpu_GB))
    speeds = [np.asarray(runs[f].tokens_per_s_per_gpu) for f in (1.0, 1.5, 2.5)]
    assert np.all(speeds[0] > speeds[1]) and np.all(speeds[1] > speeds[2])


def test_each_release_s_held_out_rows_come_closer_to_their_measurements():
    """Out of sample: on the held-out throughput rows of every release with a factor, the median |error| is
    lower with the factor than at the model's kernels, and at most 12 % on every release whose rows are not
    mostly FP4 (1.0's held-out rows are mostly FP4 on Blackwell and RTX PRO 6000 pipelines, their own misses)."""
    table = releasefit.held_out_effect().set_index("release")
    assert len(table) >= 5
    assert (table["held_out_error_with_factor_pct"] < table["held_out_error_without_factor_pct"]).all()
    held = serving.compare(("holdout",)).query("metric == 'throughput'")
    fp4_share = held.groupby("release")["dtype"].apply(lambda d: (d == "fp4").mean())
    mostly_other = [r for r in table.index if fp4_share[r] < 0.5]
    assert len(mostly_other) >= 5
    assert (table.loc[mostly_other, "held_out_error_with_factor_pct"] <= 12).all()


def test_every_row_of_a_release_page_states_the_release_its_source_names():
    """The ``release`` column matches the tag of the page's file or the version the table names, and only
    TensorRT-LLM pages state one."""
    frame = pd.read_csv(serving.SERVING_CSV, dtype={"release": str})
    for row in frame.itertuples():
        tag = re.search(r"/blob/v(\d+\.\d+\.\d+)/", row.source)
        named = re.search(r"generated using version (\d+\.\d+(?:\.\d+)?)", row.source)
        if tag or named:
            assert row.release == (tag or named).group(1), row.id
        if isinstance(row.release, str):
            assert "TensorRT-LLM" in row.source, row.id
    assert frame.loc[frame["kind"] == "mlperf", "release"].isna().all()


INFER = ["infer", "--model", "llama3.1-70b", "--system", "hgx-h100", "--tp", "4", "--batch", "64",
         "--input-tokens", "2048", "--output-tokens", "2048", "--dtype", "fp8", "--format", "json"]


def _infer(capsys, *extra: str) -> dict:
    assert main([*INFER, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_infer_prices_a_named_release_s_decode_kernels(capsys):
    """``infer --release`` takes the release's factor: the decode step's kernels take that many times the
    model's, the prefill does not move, and the output names both; without it, the model's kernels."""
    own, old = _infer(capsys), _infer(capsys, "--release", "0.10.0")
    assert own["release"] is None and own["decode_time_factor"] == 1.0
    factor = efficiency.decode_time_factor(STACK, "0.10.0")
    assert old["release"] == "0.10.0" and old["decode_time_factor"] == factor > 1
    kernels = [r["decode_compute_s"] - r["decode_fixed_s"] for r in (own, old)]
    assert kernels[1] == pytest.approx(factor * kernels[0])
    assert old["ttft_s"] == pytest.approx(own["ttft_s"]) and old["tokens_per_s_per_gpu"] < own["tokens_per_s_per_gpu"]
    from multigpu.cli.commands.step import INFER_FIELDS

    assert "release, decode_time_factor" in INFER_FIELDS  # --help defines the new fields


@pytest.mark.parametrize("extra, words", [
    (("--release", "0.8.0"), "releases with one: 0.9.0, 0.10.0"),
    (("--release", "1.0", "--stack", "vllm"), "releases with one: none"),
])
def test_a_release_without_a_factor_is_refused_in_one_line(capsys, extra, words):
    assert main([*INFER, *extra]) == 2
    error = capsys.readouterr().err
    assert words in error and len(error.strip().splitlines()) == 1


def test_a_disaggregated_deployment_decodes_on_the_release_s_kernels(capsys):
    """``infer --disagg P,D --release R``: the decode pool's steps take the release's kernels, so a user's time per
    output token under the same load is longer with a release slower than the model's (factor above 1), and the
    prefill pool's first token does not move."""
    load = ("--disagg", "1,1", "--rate", "0.5", "--requests", "200")
    own, old = _infer(capsys, *load), _infer(capsys, *load, "--release", "0.10.0")
    assert efficiency.decode_time_factor(STACK, "0.10.0") > 1
    assert old["load_tpot_p50_s"] > own["load_tpot_p50_s"]
    assert old["load_ttft_p50_s"] == pytest.approx(own["load_ttft_p50_s"], rel=1e-6)
