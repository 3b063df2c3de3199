"""Published training and serving runs the model was never fitted on: the error the validation appendix reports
first, held under bounds so that a change cannot lose accuracy quietly (data/training_runs.csv,
data/serving_runs.csv; sealed rows are never compared)."""

from __future__ import annotations

import pytest

from multigpu.evidence import runs, serving


@pytest.fixture(scope="module")
def training():
    return runs.compare()


def test_held_out_training_runs(training):
    """15 held-out runs (H100, B200, GB200; BF16 and FP8; context parallelism and Llama 3.1 405B's uneven
    pipeline stages among them): median 7.5 %, worst 25 % of the step time (the issue's goal: 8 % and 30 %)."""
    held = training[training["split"] == "holdout"]["rel_error"].abs()
    assert len(held) >= 15
    assert held.median() <= 0.08 and held.max() <= 0.30


def test_no_sealed_row_is_compared(training):
    assert "sealed" not in set(training["split"])
    assert "sealed" not in set(serving.compare()["split"])


def test_held_out_serving_throughput():
    """Throughput per GPU on 8 held-out vendor rows: median 12 %. TTFT and TPOT under load are not bounded
    here: the model has no queueing (the appendix reports them)."""
    data = serving.compare()
    held = data[(data["split"] == "holdout") & (data["metric"] == "throughput")]["rel_error"].abs()
    assert len(held) >= 8 and held.median() <= 0.15
