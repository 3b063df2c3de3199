"""Published serving runs against the inference model (``data/serving_runs.csv``, :mod:`multigpu.evidence.serving`).

No test here evaluates a sealed row: the comparisons run on the default splits (fit, holdout) only.
"""

import numpy as np
import pandas as pd
import pytest

from multigpu.common.errors import InputError
from multigpu.evidence import serving

OPEN = ("fit", "holdout")


def synthetic(**cells) -> serving.ServingRow:
    """A made-up row (not from the file), with the cells given overriding a fixed-length H100 TP2 run."""
    base = {"id": "S-test", "kind": "vendor-page", "model": "Llama 3.3 70B Instruct", "gpu": "h100-sxm",
            "system_id": "hgx-h100", "gpus": "2", "tp": "2", "pp": "1", "ep": None, "dtype": "fp8",
            "stack": "tensorrt-llm", "input_tokens": "1000", "output_tokens": "500", "batch_or_concurrency": "8",
            "metric": "tokens_per_s", "measured": "1000", "unit": "tokens/s", "scenario": "fixed-batch",
            "source": "test", "split": "fit", "notes": "model id llama3.1-70b", "max_num_tokens": "8192"}
    base.update(cells)
    return serving.ServingRow.model_validate(base)


def open_ids() -> set[str]:
    return {row.id for row in serving.load(OPEN)}


def test_all_rows_load_with_unique_ids_and_the_default_is_fit_and_holdout():
    every = serving.load(serving.SPLITS, include_unopened=True)
    assert len(every) == 593
    assert len(serving.load(serving.SPLITS)) == 593 - sum(map(serving.unopened, every)) < 593
    # this new rows keep their own sealed third closed: the RTX PRO 6000 rows (14 sealed of 46)
    rtx = [row for row in every if "-rtxpro6000-" in row.id]
    assert (len(rtx), sum(map(serving.unopened, rtx))) == (46, 14)
    assert len({row.id for row in every}) == len(every)
    default = serving.load()
    assert default and {row.split for row in default} <= set(OPEN)
    with pytest.raises(InputError):
        serving.load(("fit", "test"))


def test_sealed_rows_are_never_evaluated_by_default(monkeypatch):
    mapped, predicted = [], []
    real_map = serving.map_row

    def record_map(row, max_load_batch=True):
        mapped.append(row.id)
        return real_map(row, max_load_batch)

    def record_predict(call, cal=None):
        predicted.append(call.id)
        return serving.Prediction(1.0, call.batch or 1, True, 1.0, 80.0)

    monkeypatch.setattr(serving, "map_row", record_map)
    monkeypatch.setattr(serving, "predict", record_predict)
    comparison = serving.compare()
    missing = serving.not_modelled()
    serving.summary(comparison)
    allowed = open_ids()
    assert set(mapped) == allowed  # every fit/holdout row is looked at, and nothing else
    assert predicted and set(predicted) <= allowed
    assert set(comparison["id"]) <= allowed and set(missing["id"]) <= allowed


@pytest.mark.parametrize("value, unit, kind, gpus, expected", [
    (2.5e8, "ns", "ttft", None, 0.25),
    (1.5e7, "ns", "tpot", 8, 0.015),
    (18.5, "ms", "tpot", None, 0.0185),
    (0.7, "s", "ttft", None, 0.7),
    (24000.0, "tokens/s", "throughput", 8, 3000.0),
    (306.0, "tokens/s/GPU", "throughput", 2, 306.0),
])
def test_units_convert_to_seconds_and_tokens_per_s_per_gpu(value, unit, kind, gpus, expected):
    assert serving.to_common_unit(value, unit, kind, gpus) == pytest.approx(expected)


def test_unit_conversion_on_synthetic_rows():
    assert serving.measured_value(synthetic(metric="ttft_mean", measured="250000000", unit="ns")) == \
        (pytest.approx(0.25), "s")
    assert serving.measured_value(synthetic(metric="tpot", measured="18.5", unit="ms")) == (pytest.approx(0.0185), "s")
    assert serving.measured_value(synthetic(gpus="8", measured="24000")) == (pytest.approx(3000.0), "tokens/s/GPU")
    assert serving.measured_value(synthetic(metric="tokens_per_s_per_gpu", unit="tokens/s/GPU", measured="306")) == \
        (pytest.approx(306.0), "tokens/s/GPU")
    call = serving.map_row(synthetic(gpus="8", measured="24000"))
    assert isinstance(call, serving.ModelCall) and call.measured == pytest.approx(3000.0)
    for bad in (dict(unit="ms"), dict(metric="ttft", unit="tokens/s"), dict(gpus=None)):
        with pytest.raises(InputError):
            serving.measured_value(synthetic(**bad))


def test_an_mlperf_offline_row_runs_at_its_datasets_mean_input_and_its_own_mean_output():
    """MLPerf's datasets vary the lengths by query: the model runs the dataset's mean input (24576 OpenOrca
    samples for llama2-70b, the count each run's log prints as performance_sample_count) and the run's mean
    output, its tokens/s over its samples/s."""
    dataset = serving.mlperf_datasets()["llama2-70b"]
    assert dataset.samples == 24576 and 150 < dataset.mean_input_tokens < 300  # prompts of 48 to 1021 tokens
    row = synthetic(kind="mlperf", model="Llama 2 70B Chat (MLPerf llama2-70b, 99% accuracy target)", gpus="8",
                    input_tokens=None, output_tokens=None, batch_or_concurrency=None, scenario="offline",
                    measured="24000", notes="whole system (samples/s 80)")
    call = serving.map_row(row)
    assert isinstance(call, serving.ModelCall)
    assert (call.input_tokens, call.output_tokens, call.batch) == (round(dataset.mean_input_tokens), 300, None)
    assert "MLPerf" in call.assumption
    # every benchmark of the file's MLPerf rows has its dataset
    named = {serving._MLPERF_BENCHMARK.search(r.model).group(1).lower()
             for r in serving.load(serving.SPLITS, include_unopened=True) if r.kind == "mlperf"}
    assert named <= set(serving.mlperf_datasets())


def test_rows_the_model_cannot_express_get_a_reason():
    assert serving.map_row(synthetic(metric="ttft_p99", unit="ns")) == serving.REASON_TAIL
    # an MLPerf row runs at its dataset's mean lengths only where the benchmark and the run's samples/s are known
    assert serving.map_row(synthetic(kind="mlperf", input_tokens=None, output_tokens=None, scenario="offline",
                                     batch_or_concurrency=None)) == serving.REASON_VARIABLE
    assert serving.map_row(synthetic(kind="mlperf", input_tokens=None, output_tokens=None, scenario="server",
                                     batch_or_concurrency=None)) == serving.REASON_BATCH
    assert serving.map_row(synthetic(tp=None, pp=None)) == serving.REASON_LAYOUT
    assert serving.map_row(synthetic(dtype=None)) == serving.REASON_DTYPE
    assert serving.map_row(synthetic(batch_or_concurrency=None, scenario="server")) == serving.REASON_BATCH
    assert serving.map_row(synthetic(batch_or_concurrency=None, scenario="offline"), max_load_batch=False) == \
        serving.REASON_MAX_LOAD_OFF
    unknown = serving.map_row(synthetic(model="Falcon 180B", notes="Falcon 180B not in the catalogue"))
    assert isinstance(unknown, str) and "Falcon 180B" in unknown


def test_a_row_with_expert_parallelism_runs_with_its_ep():
    """A DeepSeek-V3 row served with EP 8 on one node (DP-attention, infer --ep): the call carries its ep, and the
    prediction differs from the same row without it."""
    row = dict(model="DeepSeek-V3", notes="model id deepseek-v3", gpu="h200-sxm", system_id="hgx-h200", gpus="8",
               tp="8", batch_or_concurrency="256", input_tokens="2048", output_tokens="512")
    with_ep, without = serving.map_row(synthetic(ep="8", **row)), serving.map_row(synthetic(**row))
    assert (with_ep.ep, without.ep) == (8, 1)
    assert serving.predict(with_ep).value != serving.predict(without).value


def test_stand_ins_and_assumptions_are_flagged():
    same = serving.map_row(synthetic())
    assert same.model_id == "llama3.1-70b" and not same.stand_in and same.assumption == ""
    llama2 = serving.map_row(synthetic(model="LLaMA 70B", notes="LLaMA 70B = Llama 2 70B (not in the catalogue)"))
    assert llama2.model_id == "llama3.1-70b" and llama2.stand_in and "Llama 2 70B" in llama2.assumption
    ttft = serving.map_row(synthetic(metric="ttft", unit="ms", output_tokens=None, batch_or_concurrency="1"))
    assert ttft.output_tokens == 1 and "output length" in ttft.assumption
    offline = serving.map_row(synthetic(batch_or_concurrency=None, scenario="offline"))
    assert offline.batch is None and "maximum load" in offline.assumption
    engine = serving.map_row(synthetic(max_num_tokens=None))
    assert engine.max_num_tokens == 8192 and "tokens an engine iteration holds not published" in engine.assumption
    assert serving.map_row(synthetic(max_num_tokens="2048")).max_num_tokens == 2048


def test_a_max_load_row_runs_at_the_largest_batch_that_fits():
    call = serving.map_row(synthetic(batch_or_concurrency=None, scenario="offline", input_tokens="2048",
                                     output_tokens="128"))
    pred = serving.predict(call)
    assert pred.fits and 1 <= pred.batch <= serving.MAX_BATCH
    bigger = serving.predict(serving.ModelCall(**{**call.__dict__, "batch": pred.batch + 1}))
    assert not bigger.fits


def test_every_fit_and_holdout_row_is_compared_or_has_a_reason():
    comparison = serving.compare()
    missing = serving.not_modelled()
    assert set(comparison["id"]).isdisjoint(missing["id"])
    assert set(comparison["id"]) | set(missing["id"]) == open_ids()
    assert missing["reason"].str.len().gt(10).all()
    assert set(comparison["split"]) <= set(OPEN) and set(missing["split"]) <= set(OPEN)
    assert set(comparison["metric"]) <= {"ttft", "tpot", "throughput"}
    assert np.allclose(comparison["rel_error"], comparison["predicted"] / comparison["measured"] - 1)
    assert (comparison["predicted"] > 0).all()
    assert comparison.loc[comparison["stand_in"], "assumption"].str.contains("stand|modelled as").all()


def test_model_errors_and_memory_become_reasons(monkeypatch):
    calls = [c for c in map(serving.map_row, serving.load()) if isinstance(c, serving.ModelCall)]
    raising, too_big = calls[0].id, calls[1].id

    def fake(call, cal=None):
        if call.id == raising:
            raise InputError("no rate for this dtype")
        return serving.Prediction(2.0, call.batch or 1, call.id != too_big, 90.0, 80.0)

    monkeypatch.setattr(serving, "predict", fake)
    reasons = serving.not_modelled().set_index("id")["reason"]
    assert reasons[raising] == "the model raises: no rate for this dtype"
    assert reasons[too_big].startswith(serving.REASON_FITS)
    comparison = serving.compare()
    assert {raising, too_big}.isdisjoint(comparison["id"])


def test_summary_gives_median_and_worst_by_kind_split_and_metric():
    comparison = pd.DataFrame({
        "id": list("abcdef"), "kind": ["mlperf", "mlperf", "mlperf", "vendor-page", "vendor-page", "mlperf"],
        "split": ["fit", "fit", "fit", "fit", "holdout", "holdout"],
        "metric": ["ttft", "ttft", "ttft", "ttft", "throughput", "tpot"],
        "rel_error": [0.1, -0.3, 0.2, -0.5, 0.05, 0.0]})
    table = serving.summary(comparison).set_index(["source_kind", "split", "metric"])
    assert table.loc[("mlperf", "fit", "ttft"), "rows"] == 3
    assert table.loc[("mlperf", "fit", "ttft"), "median_abs_error"] == pytest.approx(0.2)
    assert table.loc[("mlperf", "fit", "ttft"), "worst_abs_error"] == pytest.approx(0.3)
    assert table.loc[("mlperf", "fit", "ttft"), "worst_id"] == "b"
    assert table.loc[("other", "fit", "ttft"), "worst_id"] == "d"
    assert table.loc[("all", "fit", "ttft"), "rows"] == 4
    assert table.loc[("all", "fit", "ttft"), "median_abs_error"] == pytest.approx(0.25)
    assert ("other", "holdout", "throughput") in table.index
    assert serving.summary(comparison.iloc[:0]).empty


def test_short_prompts_at_maximum_load_are_no_longer_priced_one_prefill_at_a_time():
    """TensorRT-LLM's release pages time 128-token prompts and answers at maximum load. Prefilled one prompt a
    pass, the model was 33 % too slow on the fit split's rows (median); packed into passes of the engine's
    max_num_tokens (2048 in v0.10's engines, as its page states, else the 8192 default), it is within the release
    pages' other lengths' spread: within 20 % at the median, on the fit split."""
    compared = serving.compare(("fit",))
    short = compared[(compared["metric"] == "throughput") & (compared["kind"] == "trtllm-perf")
                     & (compared["input_tokens"] == 128) & (compared["output_tokens"] == 128)]
    assert len(short) >= 20
    assert abs(short["rel_error"].median()) <= 0.20
