"""Predictions on record (issue 44, deliverable 7): the file is append-only, each prediction was out of sample when
it was recorded, and a measurement that arrives later scores it."""

from __future__ import annotations

import hashlib
import shutil
from datetime import date

import pandas as pd
import pytest

from multigpu.common.errors import InputError
from multigpu.evidence import predictions, sweeps

#: Every row on record, in order, with the first 16 hex digits of the sha256 of its line. Recording appends rows to
#: ``data/predictions.csv`` (``python -m multigpu.evidence.predictions record``) and their lines here; a row once
#: recorded never changes, so a prediction cannot be improved after the fact.
LEDGER = (
    ("b300-allreduce-1mib", "0c90387a076074b4"),
    ("b300-allreduce-64mib", "e605fe7aaba08065"),
    ("b300-allreduce-1gib", "9e323f4a778251a7"),
    ("b300-allreduce-8gib", "6a8d1f51e402273a"),
    ("gb300-nvl72-allreduce-1mib", "4f0b1be0268e7c41"),
    ("gb300-nvl72-allreduce-64mib", "0603ba914974114e"),
    ("gb300-nvl72-allreduce-1gib", "9a6eb6b764bc4d55"),
    ("gb300-nvl72-allreduce-8gib", "1864bb330e40a2f6"),
    ("h20-141-allreduce-1mib", "a5f637c56c283a6d"),
    ("h20-141-allreduce-64mib", "2b2ed6c24070cb83"),
    ("h20-141-allreduce-1gib", "0bc6ff65140f0af6"),
    ("h20-141-allreduce-8gib", "d80f2b228dd1d6e0"),
    ("b300-train-llama3.1-8b", "1496356d4f510b2b"),
    ("gb300-nvl72-train-llama3.1-70b", "bd75298949ec054c"),
    ("h20-141-train-llama3.1-8b", "6d4f5657e15e8a23"),
    ("b300-serve-llama3.1-70b", "1e3250ba228d9586"),
    ("gb300-nvl72-serve-llama3.1-70b", "9d87a656b70957ee"),
    ("h20-141-serve-llama3.1-70b", "80e411465b111860"),
    ("mi355x-4n-allreduce-1mib", "f48775f26f8af0f3"),
    ("mi355x-4n-allreduce-64mib", "e844250d4252b21e"),
    ("mi355x-4n-allreduce-1gib", "d4c553464ac29ae1"),
    ("mi355x-4n-allreduce-8gib", "3f58048dca7a6e19"),
    ("mi355x-train-llama3.1-8b", "9c52e48926cf7489"),
    ("mi355x-serve-llama3.1-70b", "e178529277198024"),
)


def _lines() -> list[str]:
    return predictions.PREDICTIONS_CSV.read_text(encoding="utf-8").splitlines()


def test_the_record_is_append_only():
    """The file is its header and the ledger's rows, in order, each line as it was recorded."""
    lines = _lines()
    assert lines[0] == ",".join(predictions.COLUMNS)
    found = [(line.split(",")[0], hashlib.sha256(line.encode()).hexdigest()[:16]) for line in lines[1:]]
    assert tuple(found) == LEDGER


def test_each_prediction_is_dated_stamped_and_inside_its_interval():
    data = predictions.recorded()
    assert data["id"].is_unique and set(data["kind"]) <= set(predictions.KINDS)
    assert (pd.to_datetime(data["recorded"]).dt.date <= date.today()).all()
    assert data["model_digest"].str.fullmatch(r"[0-9a-f]{16}").all()
    assert ((data["low"] < data["predicted"]) & (data["predicted"] < data["high"])).all()
    assert set(data["config"]) == {c.id for c in predictions.CONFIGURATIONS}


def test_no_recorded_configuration_is_measured_in_the_data_unless_an_outcome_scores_it():
    """What makes a recorded prediction out of sample: no sweep of the data measures its collective on its system
    with its GPUs and nodes (a 4-GPU GB300 sweep does not measure the 72-GPU rack), and no training run or serving
    row measures its system at all. A measurement added to the data belongs in ``prediction_outcomes.csv``."""
    data = predictions.recorded()
    scored = set(data.set_index("id").loc[predictions.outcomes()["prediction"], "config"])
    swept = {(s.system.partition("@")[0], s.op, s.gpus, s.nodes) for s in sweeps.sweeps() if s.system}
    ran = {kind: set(pd.read_csv(sweeps.DATA_DIR / f"{kind}_runs.csv", usecols=["system_id"])["system_id"].dropna())
           for kind in ("training", "serving")}
    measured = set()
    for config in predictions.CONFIGURATIONS:
        job = dict(config.job)
        if config.kind == "collective" and (config.system_id, job["op"], config.gpus, config.nodes) in swept:
            measured.add(config.id)
        if config.kind != "collective" and config.system_id in ran[config.kind]:
            measured.add(config.id)
    assert not measured - scored


def test_recording_again_adds_nothing_and_a_new_record_predicts_every_configuration(tmp_path):
    copy = tmp_path / "predictions.csv"
    shutil.copy(predictions.PREDICTIONS_CSV, copy)
    assert predictions.record("2026-12-06", copy) == [] and copy.read_bytes() == predictions.PREDICTIONS_CSV.read_bytes()
    fresh = tmp_path / "fresh.csv"
    added = predictions.record("2026-12-06", fresh)
    assert added == [line.split(",")[0] for line in _lines()[1:]]
    assert set(predictions.recorded(fresh)["recorded"]) == {"2026-12-06"}


def _outcomes(tmp_path, rows: list[str]):
    path = tmp_path / "outcomes.csv"
    path.write_text("prediction,measured,observed,source\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_measurement_scores_its_prediction(tmp_path):
    data = predictions.recorded()
    row = data[data["id"] == "b300-allreduce-1gib"].iloc[0]
    path = _outcomes(tmp_path, [f"b300-allreduce-1gib,{row.high * 1.5},2026-12-05,https://example.org/log",
                                f"h20-141-allreduce-1gib,{data.loc[data['id'] == 'h20-141-allreduce-1gib', 'predicted'].iloc[0]},"
                                "2026-12-05,https://example.org/log2"])
    table = predictions.scored(measured=predictions.outcomes(path))
    scored = table.dropna(subset=["measured"]).set_index("id")
    assert not scored.loc["b300-allreduce-1gib", "inside"] and scored.loc["h20-141-allreduce-1gib", "inside"]
    assert scored.loc["h20-141-allreduce-1gib", "error_pct"] == pytest.approx(0)
    assert table["measured"].isna().sum() == len(data) - 2


@pytest.mark.parametrize("row, column", [
    ("no-such-prediction,10,2026-12-05,https://example.org", "prediction"),
    ("b300-allreduce-1gib,10,2026-12-01,https://example.org", "observed"),
    ("b300-allreduce-1gib,-3,2026-12-05,https://example.org", "measured"),
])
def test_a_bad_outcome_is_refused_at_its_line_and_column(tmp_path, row, column):
    with pytest.raises(InputError) as caught:
        predictions.outcomes(_outcomes(tmp_path, [row]))
    assert ":2:" in str(caught.value) and column in str(caught.value)


def test_the_appendix_states_the_record_in_both_editions():
    """The page's facts and table come from the record: every prediction listed, each system named, and the
    sentence on what is scored changes when a measurement arrives."""
    from multigpu.book import app_predictions, lang

    scored = predictions.scored()
    facts = app_predictions.facts(scored)
    assert facts["pr_rows"] == len(scored) and facts["pr_scored"] == scored["measured"].notna().sum()
    with lang.using("zh"):
        table = app_predictions.record_table(scored)
    assert len(table) == len(scored) and not table["What is predicted"].str.contains("bus bandwidth").any()
    one = scored.assign(measured=[scored["predicted"].iloc[0]] + [float("nan")] * (len(scored) - 1),
                        inside=[True] + [False] * (len(scored) - 1))
    assert app_predictions.facts(one)["pr_scored_text"] == (
        f"1 of the {len(scored)} predictions have a measurement; 1 of them fall inside their interval.")
