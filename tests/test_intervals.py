"""Prediction intervals for collectives (issue 44): from residuals of deployments the fit did not see, and held-out
coverage within binomial limits."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multigpu.compute import efficiency
from multigpu.evidence import intervals, sweeps, topology
from multigpu.evidence.intervals import Regime


def test_the_stored_residuals_come_from_today_s_data_and_calibration():
    """``data/interval_residuals.csv`` was computed from the sweeps and calibration as they are now (else: run
    ``python -m multigpu.evidence.intervals write``), and holds one residual per fit point, none of another split."""
    assert intervals.stored_digest() == intervals.inputs_digest(), "run: python -m multigpu.evidence.intervals write"
    stored = intervals.residuals()
    fit = {s.sweep for s in sweeps.sweeps() if s.split == "fit" and not s.reason}
    assert set(stored["sweep"]) == fit
    assert not stored.duplicated(["sweep", "bytes"]).any()
    assert set(stored["fold"]) == set(range(intervals.FOLDS))


def test_the_stored_residuals_are_what_today_s_model_predicts_with_each_fold_s_constants():
    """Predicting each fold's points with the constants its refit gave (``data/interval_folds.csv``) gives the
    stored residuals again: a change to the model's code that moves a prediction is seen without the refit."""
    assert intervals.stored_digest(intervals.FOLDS_CSV) == intervals.inputs_digest()
    again = intervals.cross_validated(intervals.stored_constants())
    stored = intervals.residuals()
    assert list(again["sweep"]) == list(stored["sweep"]) and list(again["bytes"]) == list(stored["bytes"])
    assert np.abs(again["log_ratio"].to_numpy() - stored["log_ratio"].to_numpy()).max() < 2e-6


def test_the_runs_fold_kernels_come_from_today_s_data():
    """``data/run_folds.csv`` (each stack's kernels refitted without each fold of the published runs) was computed
    from the runs, the stacks' fit and the compute line as they are now (else: run
    ``python -m multigpu.evidence.intervals write``), for every fold and every stack with kernels of its own."""
    assert intervals.stored_digest(intervals.RUN_FOLDS_CSV) == intervals.inputs_digest(intervals.RUN_INPUTS)
    stored = intervals.stored_run_kernels()
    assert set(stored) == set(range(intervals.FOLDS))
    assert all(set(k) == {"megatron", "nemo", "pytorch-ddp", "pytorch-fsdp", "maxtext"} for k in stored.values())
    assert intervals.stored_digest(intervals.RELEASE_FOLDS_CSV) == intervals.inputs_digest(intervals.RUN_INPUTS)
    releases = intervals.stored_run_releases()
    assert set(releases) == set(range(intervals.FOLDS))
    shipped = set(efficiency.release_rows()) | set(efficiency.pipeline_host_rows())
    assert all(set(f) == shipped for f in releases.values())
    hosts = intervals.stored_run_releases(column="iteration_host_s")
    assert all(set(h) == shipped and min(h.values()) >= 0 for h in hosts.values())


def test_a_fold_s_runs_are_predicted_without_their_own_fit():
    """A run of the fit split is predicted with kernels refitted without its source: its cross-validated
    residual differs from its in-sample one, and the calibration set is the whole fit split, each run once."""
    cross = intervals.run_residuals(("fit",), ("training step time",))
    from multigpu.evidence import runs

    shipped = runs.compare(splits=("fit",))
    assert sorted(cross["id"]) == sorted(shipped["id"])
    merged = cross.merge(shipped.assign(in_sample=-np.log1p(shipped["rel_error"]))[["id", "in_sample"]], on="id")
    assert (merged["log_ratio"] - merged["in_sample"]).abs().max() > 0.01


def test_a_fold_s_serving_rows_take_release_factors_fitted_without_them():
    """A serving row of the fit split that states a release is predicted with that release's factor refitted
    without its fold: its residual moves from its in-sample one, and the release's rows of other folds set it."""
    cross = intervals.run_residuals(("fit",), ("serving throughput",))
    from multigpu.evidence import serving

    shipped = serving.compare(("fit",)).query("metric == 'throughput'")
    merged = cross.merge(shipped.assign(in_sample=-np.log1p(shipped["rel_error"]))[["id", "in_sample", "release"]],
                         on="id")
    assert len(merged) == len(shipped)
    moved = (merged["log_ratio"] - merged["in_sample"]).abs()
    assert moved[merged["release"] == ""].max() < 1e-9
    assert moved[merged["release"] == "0.10.0"].max() > 0.01


def test_the_folds_keep_a_source_together():
    """A deployment's sweeps are in one fold, so a residual says how the model transfers to an unseen one."""
    by_address = {}
    for sweep in sweeps.sweeps():
        by_address.setdefault(sweep.source.split()[0], set()).add(intervals.fold_of(sweep))
    assert all(len(folds) == 1 for folds in by_address.values())


@pytest.mark.parametrize("n, region", [(25, (19, 25)), (100, (84, 95)), (10, (7, 10))])
def test_the_acceptance_region_is_binomial(n, region):
    """The issue's example: 19 to 25 of 25 points at 90 %; the others from the binomial distribution."""
    assert intervals.acceptance(n) == region


def test_held_out_coverage_by_sweep_is_within_binomial_limits():
    """At 90 %, counted by sweep (each sweep once, by the share of its points inside: the points of one sweep are
    not independent), each regime's held-out sweeps fall inside their intervals as often as a calibrated
    interval's would (two-sided 95 % binomial region for the number of sweeps)."""
    table = intervals.coverage()
    assert len(table) == 4 and (table["sweeps"] >= 5).all()
    for row in table.itertuples():
        assert row.sweep_acceptance_low <= row.share_by_sweep * row.sweeps <= row.sweep_acceptance_high, row


#: The first look at held-out coverage by point (2026-12-05), taken once the regimes and the method were fixed:
#: large messages across nodes are calibrated; small messages fall inside less often than 90 % (81 % and 80 %),
#: and large messages within a node always (the interval is wider than it needs to be). Held to what it found,
#: so that a change that moves a regime across its binomial region is seen, and the appendix's words with it.
FIRST_LOOK = {("large", "within a node"): "over", ("large", "across nodes"): "calibrated",
              ("small", "within a node"): "under", ("small", "across nodes"): "under",
              ("training step time", "all runs"): "calibrated", ("serving throughput", "all runs"): "calibrated"}


def test_held_out_coverage_by_point_is_as_first_seen():
    """By point (or run), each regime is where the first look found it: inside its binomial region, under it or
    over it."""
    for row in pd.concat([intervals.coverage(), intervals.run_coverage()]).itertuples():
        found = ("under" if row.inside < row.acceptance_low else "over" if row.inside > row.acceptance_high
                 else "calibrated")
        assert found == FIRST_LOOK[(row.size, row.family)], row


def test_a_run_fold_leaves_out_clusters_and_no_stack_loses_every_fit_run():
    """The published runs' folds are deployments (where published, and system): a fold leaves out some clusters,
    so a stack fitted on many keeps enough fit runs outside each fold to be refitted, and its runs are predicted
    by their own stack, not by the reference line. A stack at the minimum of fit runs (MaxText) or fitted on one
    deployment (Megatron-LM's 2021 runs on one DGX A100 cluster) is priced at the reference line when a
    fold takes its runs. Lambda's harness, the one source of PyTorch DDP runs, spans folds."""
    from multigpu.compute import efficiency
    from multigpu.evidence import computefit

    fit = computefit.compared("fit")
    fold = [intervals.run_fold_of(source, system) for source, system in zip(fit["source"], fit["system_id"])]
    fit = fit.assign(fold=fold, deployment=fit["source"].str.split().str[0] + " " + fit["system_id"])
    refitted = {stack for stack in computefit.stack_fits()
                if all((fit[fit["stack"] == stack]["fold"] != f).sum() >= efficiency.MIN_FIT_RUNS
                       for f in range(intervals.FOLDS))}
    assert refitted == {"nemo", "pytorch-ddp", "pytorch-fsdp"}
    ddp = fit[fit["stack"] == "pytorch-ddp"]
    assert ddp["source"].str.split().str[0].str.contains("lambdal/deeplearning-benchmark").all()
    assert ddp["fold"].nunique() >= 3


def test_a_deployment_is_where_a_run_is_published_and_the_system_it_ran_on():
    """Two files of one GitHub snapshot (Lambda's FP16 and FP32 tables at commit 67a9bb51) publish runs of the same
    machines: a system's rows of both share a fold. Another commit of the repository, or another system, is
    another deployment; a source that is not a GitHub file is its own address."""
    base = "https://github.com/lambdal/deeplearning-benchmark/blob/67a9bb51/pytorch/pytorch-train-throughput-{}.csv"
    fp16, fp32 = base.format("fp16") + " (row '2x A100 40GB PCIe')", base.format("fp32") + " (row '2x A100 40GB PCIe')"
    assert intervals.deployment_address(fp16) == intervals.deployment_address(fp32) == \
        "https://github.com/lambdal/deeplearning-benchmark@67a9bb51"
    assert intervals.run_fold_of(fp16, "pcie-a100-40-8") == intervals.run_fold_of(fp32, "pcie-a100-40-8")
    assert intervals.deployment_address(fp16.replace("67a9bb51", "aa5addb6")).endswith("@aa5addb6")
    page = "https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance_summary.html (table)"
    assert intervals.deployment_address(page) == page.split()[0]


def test_published_runs_are_calibrated_on_the_fit_split_and_scored_on_the_held_out_one():
    """Training step time and serving throughput: one regime each, calibrated on the fit split's runs
    (cross-validated: each stack's kernels refitted without the run's source), scored on the held-out runs, by
    run and by source within binomial limits; time to first token has too few fit rows for a 90 % interval."""
    table = intervals.run_coverage()
    assert list(table["size"]) == list(intervals.RUN_KINDS) and (table["calibration_points"] >= 19).all()
    for row in table.itertuples():
        assert row.sweep_acceptance_low <= row.share_by_sweep * row.sweeps <= row.sweep_acceptance_high, row
        assert row.low < 1 < row.high
    data = intervals.run_residuals(("fit", "holdout"))
    assert set(data["split"]) == {"fit", "holdout"}
    from multigpu.evidence import serving

    ttft = serving.compare(splits=("fit",))
    ttft = ttft[ttft["metric"] == "ttft"]
    with pytest.raises(ValueError, match="needs 19 calibration points"):
        intervals.conformal(-np.log1p(ttft["rel_error"].to_numpy()), 0.9, Regime("ttft", "all runs"), "ttft rows")


def test_a_wider_level_gives_a_wider_interval_around_the_prediction():
    """80 % inside 90 % inside 95 %; a level only where the regime has the points it needs (199 for 99 %)."""
    data = intervals.residuals()
    assert [intervals.least_points(level) for level in (0.9, 0.95, 0.99)] == [19, 39, 199]
    for size in intervals.SIZES:
        for family in intervals.FAMILIES:
            where = Regime(size, family)
            bands = [intervals.band(where, level, data) for level in (0.8, 0.9, 0.95)]
            assert all(a.low >= b.low and a.high <= b.high for a, b in zip(bands, bands[1:]))
            assert bands[0].low < 1 < bands[0].high
            if bands[0].points >= intervals.least_points(0.99):
                assert intervals.band(where, 0.99, data).high >= bands[-1].high
            else:
                with pytest.raises(ValueError, match="needs 199 calibration points"):
                    intervals.band(where, 0.99, data)


@given(st.floats(min_value=0.5, max_value=0.98), st.floats(min_value=1e-3, max_value=1e6))
def test_a_band_brackets_time_and_busbw_alike(level, predicted):
    """The busbw interval is the time interval turned over: the same factors, inverted, and both contain a
    prediction whose band contains 1."""
    band = intervals.band(Regime("large", "within a node"), level)
    t_lo, t_hi = band.around(predicted)
    b_lo, b_hi = band.inverted(predicted)
    assert t_lo <= t_hi and b_lo <= b_hi
    assert math.isclose(t_lo * b_hi, predicted**2, rel_tol=1e-9) and math.isclose(t_hi * b_lo, predicted**2,
                                                                                     rel_tol=1e-9)


def test_a_time_curve_takes_each_sizes_band():
    """NCCL's all-reduce choice over sizes: each time's bounds are its regime's factors, so the curve's band
    changes where the sizes cross from small to large messages, and always holds the prediction."""
    frame = topology.allreduce_choice()
    assert (frame["time_us_lo"] < frame["time_us"]).all() and (frame["time_us"] < frame["time_us_hi"]).all()
    for _, row in frame.iterrows():
        band = intervals.band(intervals.regime(row["bytes"], 1))
        assert math.isclose(row["time_us_lo"], row["time_us"] * band.low, rel_tol=1e-12)
        assert math.isclose(row["time_us_hi"], row["time_us"] * band.high, rel_tol=1e-12)
    ratio = frame["time_us_hi"] / frame["time_us_lo"]
    small, large = frame["bytes"] < sweeps.LARGE_BYTES, frame["bytes"] >= sweeps.LARGE_BYTES
    assert np.allclose(ratio[small], ratio[small].iloc[0]) and np.allclose(ratio[large], ratio[large].iloc[0])
    assert not math.isclose(ratio[small].iloc[0], ratio[large].iloc[0])


def test_conformal_ranks_on_a_known_sample():
    """With residuals 1..19 (log), the 90 % interval is the 1st and 19th: rank floor(20 x 0.05) = 1 and
    ceil(20 x 0.95) = 19; 9 residuals are too few (ranks 0 and 10)."""
    data = pd.DataFrame({"size": "large", "family": "within a node", "log_ratio": np.arange(1, 20, dtype=float)})
    band = intervals.band(Regime("large", "within a node"), 0.9, data)
    assert (band.low, band.high) == (pytest.approx(math.e), pytest.approx(math.exp(19)))
    with pytest.raises(ValueError, match="needs 19 calibration points; large messages within a node have 9"):
        intervals.band(Regime("large", "within a node"), 0.9, data.head(9))


def test_the_winkler_score_rewards_sharp_and_punishes_misses():
    """Inside: the width; outside: the width plus 2 / alpha times the miss."""
    scores = intervals.winkler(np.array([0.0, 0.3, -0.2]), -0.1, 0.1, 0.9)
    assert scores == pytest.approx([0.2, 0.2 + 20 * 0.2, 0.2 + 20 * 0.1])
    assert intervals.miss_weight(0.9) == pytest.approx(20) and intervals.miss_weight(0.99) == pytest.approx(200)


def test_sealed_sweeps_are_not_scored_here():
    with pytest.raises(ValueError, match="sealed"):
        intervals.held_out("sealed")


def test_the_collective_command_adds_its_interval_on_request(capsys):
    """``collective --interval P`` adds ``<field>_lo`` and ``<field>_hi`` around time, algbw and busbw (the
    existing fields unchanged), the level and the regime; a level the regime cannot support, or a percentage,
    is refused in one line with status 2."""
    import json

    from multigpu.cli import main

    args = ["collective", "--op", "allreduce", "--system", "hgx-h100", "--gpus", "16", "--nodes", "2", "--bytes",
            "1GiB", "--format", "json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--interval", "0.9"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert {k: row[k] for k in plain} == plain
    band = intervals.band(Regime("large", "across nodes"), 0.9)
    assert row["interval_regime"] == "large messages across nodes" and row["interval_level"] == 0.9
    assert (row["time_us_lo"], row["time_us_hi"]) == pytest.approx(band.around(plain["time_us"]))
    for field in ("time_us", "algbw_GBps", "busbw_GBps"):
        assert row[f"{field}_lo"] < plain[field] < row[f"{field}_hi"]
    for bad, message in (("0.99", "needs 199 calibration points"), ("90", "not in (0, 1)")):
        one_node = ["collective", "--op", "allreduce", "--system", "hgx-h100", "--gpus", "8", "--bytes", "1GiB"]
        assert main([*one_node, "--interval", bad]) == 2  # 99 %: 101 points on one node
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_train_and_infer_add_their_interval_on_request(capsys):
    """``train --interval P`` brackets step time, TFLOP/s and MFU (the rates inverted); ``infer --interval P``
    brackets throughput per GPU; both name the level and the regime and leave the other fields as they were."""
    import json

    from multigpu.cli import main

    train = ["train", "--model", "llama3.1-8b", "--system", "hgx-h100", "--gpus", "8", "--tp", "1", "--pp", "1",
             "--micro-batch", "1", "--global-batch", "64", "--format", "json"]
    infer = ["infer", "--model", "llama3.1-8b", "--system", "hgx-h100", "--tp", "2", "--batch", "8",
             "--input-tokens", "1000", "--output-tokens", "200", "--format", "json"]
    for args, kind, same, inverted in ((train, "training step time", ["step_time_s"], ["model_tflops_per_gpu", "mfu"]),
                                       (infer, "serving throughput", ["tokens_per_s_per_gpu"], [])):
        assert main(args) == 0
        plain = json.loads(capsys.readouterr().out)
        assert main([*args, "--interval", "0.9"]) == 0
        row = json.loads(capsys.readouterr().out)
        assert {k: row[k] for k in plain} == plain
        assert row["interval_regime"] == kind and row["interval_level"] == 0.9
        band = intervals.run_band(kind, 0.9)
        for field in same:
            assert (row[f"{field}_lo"], row[f"{field}_hi"]) == pytest.approx(band.around(plain[field]))
        for field in inverted:
            assert (row[f"{field}_lo"], row[f"{field}_hi"]) == pytest.approx(band.inverted(plain[field]))
    assert main([*train, "--interval", "0.99"]) == 2  # 34 training runs: a 99 % interval needs 199
    assert "needs 199 calibration points" in capsys.readouterr().err
