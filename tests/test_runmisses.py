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


def test_maxtext_on_128_gpus_is_an_extrapolation_of_its_stack():
    """NVIDIA's MaxText recipe on 128 H100s lies below the 512 to 1,024 GPUs of the MaxText stack's fit runs, and
    its finding says so with both numbers. (MPT 3B in FP8 on H100s was such a case, by its hidden size, until
    llm-foundry's whole tables put MPT 3B and H100 runs among the FSDP stack's fit runs.)"""
    compared = _compared()
    misses = runmisses.misses(compared, n=len(compared))
    run = misses[misses["id"] == "T-dgxc2504-h100-maxtext-llama3-70b-fp8-128"].iloc[0]
    assert run["stack"] == "maxtext" and run["gpus"] == 128
    assert (run["fit_gpus_min"], run["fit_gpus_max"]) == (512, 1024)
    assert run["outside_gpus"] and not (run["outside_hidden"] or run["outside_gpu"] or run["outside_dtype"])
    text = str(runmisses.finding(run))
    assert "extrapolation" in text and "128 GPUs" in text and "512 to 1,024" in text


def test_a_run_inside_its_fit_runs_is_not_called_an_extrapolation():
    compared = _compared()
    misses = runmisses.misses(compared, n=len(compared))
    inside = misses[~misses[list(runmisses.COUNTS)].any(axis=1)]
    assert len(inside) > 0
    text = str(runmisses.finding(inside.iloc[0]))
    assert "not priced by extrapolation" in text and inside.iloc[0]["run"] in text


def test_a_model_is_named_without_its_catalogue_note():
    """The catalogue's bracketed notes ("llm-foundry benchmark config") are for the data file, not for a reader:
    run names, and the validation appendix's scaling and layout tables, use the name without them."""
    assert models.plain_name("mpt-3b") == "MPT 3B"
    assert models.plain_name("llama3.1-8b") == models.model("llama3.1-8b").name
