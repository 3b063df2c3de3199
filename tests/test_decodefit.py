"""The per-layer fixed time of a forward pass: fitted on decode benchmarks' fit split, checked on the held-out rows.

Sources: InternLM/lmdeploy docs/en/benchmark/a100_fp16.md @3e391df (static benchmark, A100-80G, FP16, prompt 1,
128 output tokens, median per-token latency), pytorch-labs/gpt-fast README.md @32971d3 (batch 1, A100-80GB).
"""

from __future__ import annotations

import hashlib

import pytest

from multigpu.common.errors import InputError
from multigpu.compute import efficiency
from multigpu.comm.calibration import DETERMINED
from multigpu.evidence import decodefit, fitquality


def test_shipped_constant_is_the_fit_and_names_its_rows():
    # one linear least-squares constant, determined (multigpu.evidence.fitquality: standard error under 10 %)
    shipped = efficiency.constants().decode_layer_overhead_s
    fitted, row = decodefit.fit_result(), efficiency.rows()["decode_layer_overhead_s"]
    assert fitted.status == row.fit_status == DETERMINED
    assert row.std_error == pytest.approx(fitted.std_error, rel=0.05)
    assert fitquality.agrees(shipped, fitted, (0.0, 1.0))
    assert shipped == pytest.approx(fitted.value, rel=0.005)  # the file's 4 digits
    with open(efficiency.EFFICIENCY_CSV) as f:
        row = next(line for line in f if line.startswith("decode_layer_overhead_s,"))
    fit_ids = [r.id for r in decodefit.load(("fit",))]
    assert fit_ids and all(i in row for i in fit_ids)
    assert not any(r.id in row for r in decodefit.load(("holdout", "sealed")))


def test_splits_follow_the_hash_rule_and_keep_a_third_out_of_the_fit():
    rows = decodefit.load(decodefit.SPLITS)
    for r in rows:
        d = int(hashlib.sha256(r.id.encode()).hexdigest()[0], 16)
        assert r.split == ("fit" if d <= 4 else "holdout" if d <= 10 else "sealed"), r.id
    assert sum(r.split != "fit" for r in rows) >= len(rows) / 3


def test_the_fixed_time_is_microseconds_per_layer_and_closes_the_gap_on_the_fit_rows():
    # a dozen kernels per layer at a few microseconds each: tens of microseconds, not milliseconds
    assert 10e-6 < decodefit.fit() < 200e-6
    fit = decodefit.compare(("fit",))
    assert (fit["without_overhead_ms"] < fit["measured_ms"]).mean() >= 0.5  # the term was missing
    assert fit["rel_error"].abs().median() < 0.05


def test_held_out_decode_rows_within_their_bound():
    held = decodefit.compare(("holdout",))
    assert len(held) >= 2
    assert held["rel_error"].abs().median() <= 0.15 and held["rel_error"].abs().max() <= 0.25


def test_sealed_rows_are_not_compared_by_default():
    assert set(decodefit.compare()["split"]) <= {"fit", "holdout"}


def test_a_bad_decode_row_names_file_line_and_column(tmp_path):
    text = decodefit.DECODE_CSV.read_text().splitlines()
    bad = tmp_path / "decode.csv"
    bad.write_text("\n".join([text[0], text[1].replace(",fp16,", ",fp4,", 1)]) + "\n")
    with pytest.raises(InputError) as err:
        decodefit.load(path=bad)
    assert "decode.csv" in str(err.value) and ":2:" in str(err.value) and "dtype" in str(err.value)


@pytest.mark.parametrize("old, new, column", [
    (",tpot_p50,0.009,s,", ",tpot_p50,0.009,tokens/s,", "unit"),  # a latency given as a rate
    (",a100-sxm4-80gb,dgx-a100,", ",h100-sxm,dgx-a100,", "gpu"),  # a GPU the system does not have
])
def test_a_row_that_contradicts_itself_names_its_column(tmp_path, old, new, column):
    text = decodefit.DECODE_CSV.read_text().splitlines()
    assert old in text[1]
    bad = tmp_path / "decode.csv"
    bad.write_text("\n".join([text[0], text[1].replace(old, new, 1)]) + "\n")
    with pytest.raises(InputError) as err:
        decodefit.load(path=bad)
    assert ":2:" in str(err.value) and column in str(err.value)
