"""Published layout sweeps against the training model's order of the layouts (data/layout_sweeps*.csv,
multigpu.evidence.layoutorder): the data's own rules, and what the held-out sweeps show."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd
import pytest

from multigpu.common.errors import InputError
from multigpu.compute import models
from multigpu.evidence import layoutorder
from multigpu.hardware import catalog


def test_every_sweep_is_one_job_of_at_least_five_layouts_split_by_its_hash():
    counts = collections.Counter(row.sweep for row in layoutorder.layouts())
    assert set(counts) == set(layoutorder.sweeps())
    for sid, job in layoutorder.sweeps().items():
        distinct = {(r.tp, r.pp, r.micro_batch, r.sequence_parallel, r.zero_stage)
                    for r in layoutorder.layouts() if r.sweep == sid}
        assert len(distinct) >= 5, sid
        assert job.split == layoutorder.split_of(sid)
        assert job.model_id in models.models() and job.system_id in catalog.systems()
        assert job.source.startswith("https://")
    for row in layoutorder.layouts():
        assert row.tp * row.pp * row.dp == layoutorder.sweeps()[row.sweep].gpus


def test_a_third_of_the_sweeps_stays_sealed_and_is_never_scored_by_default():
    splits = collections.Counter(job.split for job in layoutorder.sweeps().values())
    assert splits["sealed"] >= 10 and splits["holdout"] >= 20
    assert not set(layoutorder.scores()["sweep"]) & set(layoutorder.selected("sealed"))
    with pytest.raises(InputError, match="unknown split"):
        layoutorder.selected("test")


def test_layouts_within_the_noise_are_ties():
    values = np.array([10.0, 10.05, 10.5, 12.0, 12.1])
    assert list(layoutorder.tied(values)) == [10.0, 10.0, 10.5, 12.0, 12.0]
    assert list(layoutorder.tied(values, noise=0.0)) == list(values)


def test_a_sweep_in_the_model_s_own_order_scores_one_and_a_reversed_one_minus_one(monkeypatch):
    """score() on predictions made up for the purpose: the model's times as measured (one refused layout left
    out), then in the reverse order; ties within the noise do not break the order."""
    measured = [10.0, 10.05, 11.0, 12.0, 13.0, 14.0]
    table = pd.DataFrame({"measured_s": measured, "predicted_s": [1.0, 1.0, 2.0, 3.0, 4.0, float("nan")]})
    monkeypatch.setattr(layoutorder, "predictions", lambda sweep: table)
    same = layoutorder.score("s")
    assert (same.layouts, same.refused, same.best_rank) == (5, 1, 1) and same.spearman == pytest.approx(1.0)
    assert same.meets_goal
    table["predicted_s"] = [5.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    reversed_ = layoutorder.score("s")
    assert reversed_.spearman == pytest.approx(-1.0) and reversed_.best_rank == 5 and not reversed_.meets_goal


#: What the first look at the 23 held-out sweeps found (2026-12-05), with the output layer on the last pipeline
#: stage, nanotron's balanced stages and the nemo stack in the model: the issue's goal (rank correlation >= 0.8
#: on every sweep, the measured best in the model's top 2) holds on 6 of them, at a median correlation of 0.63
#: (0.65 since tensor-parallel groups wider than a node are modelled, not refused: nanotron's sweeps over 128
#: GPUs and more run some). Before those changes the same sweeps gave a median correlation of 0.61 and 7 sweeps
#: meeting the goal (without ties for noise). The misses: Hagemann et al.'s 30B on 256 A100s is measured slower
#: the more memory a layout takes (35 s at tp 4 pp 1 against 23 s at tp 2 pp 4), which the model, pricing no
#: allocator pressure, puts within 10 % of each other.
FIRST_LOOK = {"sweeps": 23, "median_spearman": 0.63, "meets_goal": 6, "best_in_top": 10}


@pytest.fixture(scope="module")
def held_out():
    return layoutorder.scores("holdout")


def test_the_held_out_sweeps_keep_at_least_their_first_look(held_out):
    assert len(held_out) == FIRST_LOOK["sweeps"]
    assert held_out["spearman"].median() >= FIRST_LOOK["median_spearman"] - 0.01
    assert held_out["meets_goal"].sum() >= FIRST_LOOK["meets_goal"]
    assert (held_out["best_rank"] <= layoutorder.TOP).sum() >= FIRST_LOOK["best_in_top"]


def test_the_appendix_s_account_of_where_the_order_holds(held_out):
    """The validation appendix says where the order holds (Hagemann et al.'s 65B sweeps and 13B sequence-parallel
    study, nanotron's 1B on one node) and where it is lost (their 30B on 256 A100s, measured slower the more
    memory a layout takes), and that the model is too fast on almost every layout: kept true here."""
    by = held_out.set_index("sweep")
    for sid in ("AA_13B_8k_64gpu_fa2rms_nockpt_SPstudy", "AA_65B_2k_128gpu_fa1_ckpt", "AA_65B_2k_128gpu_fa2_ckpt",
                "AA_65B_2k_128gpu_fa2_nockpt", "USP_1B_8gpu"):
        assert by.loc[sid, "spearman"] >= layoutorder.GOAL_RHO and by.loc[sid, "best_rank"] <= layoutorder.TOP
    thirty = by[by.index.str.startswith("AA_30B_2k_256gpu")]
    assert len(thirty) == 3 and (thirty["spearman"] < 0.2).all()  # no order left: from -0.10 to +0.06
    assert (held_out["median_error_pct"] < 0).sum() >= len(held_out) - 1
