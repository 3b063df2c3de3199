"""Context parallelism in the one layout search (issue 45, deliverable 2: EP x TP x PP x DP x CP in one search):
for long sequences the search also splits each sequence over ``cp`` GPUs, leaving every rank at least
``search.MIN_CP_TOKENS`` of it, as NVIDIA's recipes do (Llama 3.1 70B and 405B at 8,192 tokens with cp 2)."""

from __future__ import annotations

import pytest

from multigpu.compute import models, training
from multigpu.hardware import catalog
from multigpu.market import search

LLAMA_8B, H100 = models.model("llama3.1-8b"), catalog.system("hgx-h100")


def test_short_sequences_are_not_split_and_long_ones_are():
    assert set(search.layouts(LLAMA_8B, H100, 16, 256, seq=4096)["cp"]) == {1}
    frame = search.layouts(LLAMA_8B, H100, 16, 64, seq=32768)
    assert set(frame["cp"]) == {1, 2, 4, 8}  # 32,768 / 8 = 4,096 tokens a rank at the most split
    assert (frame["tp"] * frame["pp"] * frame["cp"] * frame["dp"] == 16).all()
    assert ((32768 // frame["cp"]) >= search.MIN_CP_TOKENS).all() and (32768 % (2 * frame["cp"]) == 0).all()


def test_the_search_finds_the_brute_force_best_over_context_parallelism_too():
    """Every layout and option set of a small long-sequence job, one scalar training step at a time."""
    job = dict(gpus=8, global_batch=8, seq=131072)
    found = search.train("llama3.2-1b", "hgx-h100", job["gpus"], job["global_batch"], job["seq"],
                         zero_stages=(1,)).best
    assert found.cp > 1  # the vectorised search picks a split sequence here
    best = None
    table = search.layouts(models.model("llama3.2-1b"), H100, job["gpus"], job["global_batch"], seq=job["seq"])
    for row in table.to_dict("records"):
        for recompute in search.RECOMPUTE:
            for sp in (False, True) if row["tp"] > 1 else (False,):
                r = training.step("llama3.2-1b", "hgx-h100", job["gpus"], row["tp"], row["pp"], job["global_batch"],
                                  row["micro_batch"], seq=job["seq"], recompute=recompute, sequence_parallel=sp,
                                  interleave=row["interleave"], zero_stage=1, cp=row["cp"],
                                  pp_last_layers=row["pp_last_layers"])
                if r.fits and (best is None or r.step_time_s < best.step_time_s):
                    best = r
    assert found.step_time_s == pytest.approx(best.step_time_s, rel=1e-12) and found.cp == best.cp


def test_a_published_recipe_is_among_the_layouts_searched():
    """dgxc-benchmarking v25.04's Llama 3.1 70B BF16 recipe on 64 H100s: TP 4, PP 4, CP 2, VP 5, DP 2, micro-batch
    1, 128 sequences of 8,192 tokens (``T-dgxc2504-h100-llama31-70b-bf16-64``); the search evaluates it as the step
    model does, and finds nothing slower than its own best."""
    table = search.evaluate_layouts("llama3.1-70b", "hgx-h100", 64, 128, seq=8192, zero_stages=(1,))
    mine = table[(table["tp"] == 4) & (table["pp"] == 4) & (table["cp"] == 2) & (table["interleave"] == 5)
                 & (table["micro_batch"] == 1) & (table["pp_last_layers"] == 0) & (table["recompute"] == "none")
                 & table["sequence_parallel"]]
    assert len(mine) == 1
    step = training.step("llama3.1-70b", "hgx-h100", 64, 4, 4, 128, 1, seq=8192, cp=2, interleave=5,
                         sequence_parallel=True, zero_stage=1)
    assert mine["step_time_s"].iloc[0] == pytest.approx(step.step_time_s, rel=1e-12)
    label = search.train("llama3.1-70b", "hgx-h100", 64, 128, seq=8192).best.label
    assert label.startswith("tp") and " dp" in label
