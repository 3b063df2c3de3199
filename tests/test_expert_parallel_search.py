"""Expert parallelism in the one layout search (issue 45, deliverable 2): a mixture-of-experts model's layouts
include every ep that divides both the data-parallel ranks and the routed experts; a dense model's stay at ep 1."""

from __future__ import annotations

import pytest

from multigpu.compute import models, training
from multigpu.hardware import catalog
from multigpu.market import recommend, search


def test_moe_layouts_split_the_experts_over_data_parallel_ranks_and_dense_ones_do_not():
    mixtral, system = models.model("mixtral-8x7b"), catalog.system("hgx-h100")
    frame = search.layouts(mixtral, system, 16, 256)
    assert set(frame["ep"]) == {1, 2, 4, 8}  # Mixtral has 8 experts
    assert ((frame["dp"] % frame["ep"]) == 0).all() and ((mixtral.experts % frame["ep"]) == 0).all()
    assert (frame["tp"] * frame["pp"] * frame["dp"] == 16).all()
    dense = search.layouts(models.model("llama3.1-8b"), system, 16, 256)
    assert set(dense["ep"]) == {1}


def test_the_search_finds_the_brute_force_best_over_expert_parallelism_too():
    """Every layout and option set of a small MoE job, one scalar training step at a time."""
    found = search.train("mixtral-8x7b", "hgx-h100", 16, 64, 2048, zero_stages=(1,)).best
    best = None
    for row in search.layouts(models.model("mixtral-8x7b"), catalog.system("hgx-h100"), 16, 64).to_dict("records"):
        for recompute in search.RECOMPUTE:
            for sp in (False, True) if row["tp"] > 1 else (False,):
                r = training.step("mixtral-8x7b", "hgx-h100", 16, row["tp"], row["pp"], 64, row["micro_batch"],
                                  seq=2048, recompute=recompute, sequence_parallel=sp, interleave=row["interleave"],
                                  zero_stage=1, ep=row["ep"], pp_last_layers=row["pp_last_layers"])
                if r.fits and (best is None or r.step_time_s < best.step_time_s):
                    best = r
    assert found.step_time_s == pytest.approx(best.step_time_s, rel=1e-12)


def test_deepseek_v3_under_zero_1_needs_wide_expert_parallelism_as_it_was_trained():
    """DeepSeek-V3 trained with ZeRO-1 data parallelism and EP 64 on 2048 H800s (arXiv 2412.19437, section 3.2):
    without expert parallelism every GPU would hold all 256 experts of its layers, which no 80 GB GPU can; the
    search's best spreads them as widely as DeepSeek did, within a factor of 2."""
    found = search.train("deepseek-v3", "hgx-h800", 2048, 15360, 4096, dtype="fp8", zero_stages=(1,),
                         keep_table=True)
    fits = found.table[found.table["fits"]]
    assert not fits.empty and fits["ep"].min() >= 8  # ep 1, 2 and 4 fit nowhere
    assert 32 <= found.best.ep <= 128


def test_expert_parallel_all_to_all_is_counted_in_the_recommender_s_exposed_communication():
    b = search.train("mixtral-8x7b", "hgx-h100", 64, 512, 4096, zero_stages=(1,)).best
    assert b.ep > 1 and b.ep_s > 0 and b.exposed_comm_s == pytest.approx(b.tp_s + b.pp_s + b.dp_s + b.ep_s)
    assert "ep" in recommend.TRAIN_COLUMNS and f"ep{b.ep}" in b.label
