"""The training model's largest held-out misses, each set beside the runs its stack was fitted on
(multigpu.evidence.runmisses)."""

from __future__ import annotations

import functools

import pandas as pd

from multigpu.compute import models
from multigpu.evidence import runmisses, runs


@functools.cache
def _compared() -> pd.DataFrame:
    return runs.compare()


def test_the_misses_are_the_largest_held_out_errors_in_order():
    compared = _compared()
    misses = runmisses.misses(compared)
    held = compared[compared["split"] == "holdout"]
    assert len(misses) == runmisses.MISSES
    assert set(misses["id"]) <= set(held["id"])
    errors = misses["error_pct"].abs().to_numpy()
    assert (errors[:-1] >= errors[1:]).all()
    assert errors[-1] >= 100 * held["rel_error"].abs().nlargest(runmisses.MISSES).min() - 1e-9


def test_outside_means_outside_every_fit_run_of_the_stack():
    """Each count is recomputed here from the stack's fit-split runs: the hidden size and the GPU count outside
    their range, the GPU family and the precision in none of them."""
    compared = _compared()
    for _, miss in runmisses.misses(compared, n=len(compared)).iterrows():
        run = compared.set_index("id").loc[miss["id"]]
        fit = compared[(compared["split"] == "fit") & (compared["stack"] == run["stack"])]
        hidden = [models.model(m).hidden for m in fit["model_id"]]
        assert miss["outside_hidden"] == (not min(hidden) <= models.model(run["model_id"]).hidden <= max(hidden))
        assert miss["outside_gpu"] == (run["gpu_family"] not in set(fit["gpu_family"]))
        assert miss["outside_dtype"] == (run["dtype"] not in set(fit["dtype"]))
        assert miss["outside_gpus"] == (not fit["gpus"].min() <= run["gpus"] <= fit["gpus"].max())


def test_mpt_3b_in_fp8_is_an_extrapolation_of_the_fsdp_stack():
    """MosaicML's MPT 3B (hidden size 2,560, llm-foundry's benchmark config) in FP8 on H100s lies outside the FSDP
    stack's fit runs (MPT 13B and 70B on A100s, hidden 5,120 and 8,192; Llama 3.1 8B on H200s, 4,096), and its
    finding says so with both numbers."""
    compared = _compared()
    misses = runmisses.misses(compared, n=len(compared))
    mpt = misses[misses["id"] == "T-mosaic-h100-mpt-3b-fp8-8-s512"].iloc[0]
    assert mpt["stack"] == "pytorch-fsdp" and mpt["hidden"] == 2560
    assert (mpt["fit_hidden_min"], mpt["fit_hidden_max"]) == (4096, 8192)
    assert mpt["outside_hidden"] and mpt["outside_gpu"] and not mpt["outside_dtype"]
    text = str(runmisses.finding(mpt))
    assert "extrapolation" in text and "2,560" in text and "4,096 to 8,192" in text and "H100" in text


def test_a_run_inside_its_fit_runs_is_not_called_an_extrapolation():
    compared = _compared()
    misses = runmisses.misses(compared, n=len(compared))
    inside = misses[~misses[list(runmisses.COUNTS)].any(axis=1)]
    assert len(inside) > 0
    text = str(runmisses.finding(inside.iloc[0]))
    assert "not priced by extrapolation" in text and inside.iloc[0]["run"] in text
